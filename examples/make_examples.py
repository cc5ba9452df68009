"""Writes the example graded-row files (deterministic; run from anywhere: python examples/make_examples.py).

Each file shows one route of the skill. Rows are one rollout each: task_id, reward, truncated, model
(and max_tokens where the teacher comparison needs it).
"""

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
STUDENT, TEACHER = "Qwen/Qwen3-8B", "Qwen/Qwen3-32B"
BASE, R1 = "Qwen/Qwen3-8B-Base", "acme/Qwen3-8B-Base-r1"


def rollouts(n_tasks, k, rate, *, model=STUDENT, prefix="refund", seed=0, truncate=0.0, max_tokens=4096):
    """k rollouts per task; each task's pass rate is drawn by `rate(rng)`."""
    rng = random.Random(seed)
    rows = []
    for t in range(n_tasks):
        p = rate(rng)
        for _ in range(k):
            passed = rng.random() < p
            cut = rng.random() < truncate
            rows.append({"task_id": f"{prefix}-{t:03d}", "reward": 1.0 if passed and not cut else 0.0,
                         "truncated": cut, "model": model, "max_tokens": max_tokens})
    return rows


def traces(n, *, seed, lag_sd=0.02):
    """Logged single-rollout trajectories for preview_update: the policy's log-probs now, the sampler's
    (behavior) log-probs when it wrote them, a reward; a few were sampled long ago and drifted further."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        length = rng.randint(8, 40)
        now = [round(-abs(rng.gauss(0.6, 0.5)), 4) for _ in range(length)]
        sd = lag_sd * (10 if i % 16 == 0 else 1)
        then = [round(min(0.0, x + rng.gauss(0, sd)), 4) for x in now]
        out.append({"task_id": f"prod-{i:03d}", "reward": float(rng.random() < 0.55), "logprobs": now,
                    "behavior_logprobs": then})
    return out


def two_checkpoints(seed=11):
    """One suite of 140 tasks scored twice, 4 rollouts each: the base model and the checkpoint trained from it
    (r1), one `model` per row. r1 gains about 0.09 on the tasks the base half-solves."""
    rng = random.Random(seed)
    rows = []
    for t in range(140):
        p = rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
        for model, q in ((BASE, p), (R1, min(1.0, p + (0.2 if 0 < p < 1 else 0.0)))):
            for _ in range(4):
                rows.append({"task_id": f"gsm-{t:03d}", "reward": 1.0 if rng.random() < q else 0.0,
                             "truncated": False, "model": model, "max_tokens": 4096})
    return rows


def sdk_rows(seed=12):
    """Rows in the anchor SDK's own format: scenario_id, reward, finish_reason, the sampler in sampling.model and
    model_version, token counts under usage."""
    rng = random.Random(seed)
    rows = []
    for t in range(60):
        p = rng.choice([0.25, 0.5, 0.75])
        for _ in range(4):
            cut = rng.random() < 0.05
            rows.append({"scenario_id": f"refund-{t:03d}", "reward": 0.0 if cut or rng.random() >= p else 1.0,
                         "finish_reason": "length" if cut else "stop", "model_version": f"{STUDENT}@step-120",
                         "sampling": {"model": f"{STUDENT}@step-120", "temperature": 1.0, "max_tokens": 4096},
                         "usage": {"completion_tokens": rng.randint(200, 4096 if cut else 3000)}})
    return rows


def correct_two_arms(seed=13):
    """A two-arm experiment graded `correct: true/false` (no `reward` field): control and treatment prompts."""
    rng = random.Random(seed)
    rows = []
    for t in range(50):
        p = rng.choice([0.2, 0.5, 0.8])
        for arm, q in (("control", p), ("treatment", min(1.0, p + 0.1))):
            for _ in range(4):
                rows.append({"task_id": f"arith-{t:03d}", "correct": rng.random() < q, "arm": arm,
                             "model": STUDENT, "truncated": False})
    return rows


def write(name, rows):
    with open(HERE / name, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main():
    # Mixed, on-policy: most tasks split at k = 8. Route: grpo.
    write("mixed.jsonl", rollouts(80, 8, lambda r: r.choice([0.0, 0.15, 0.3, 0.5, 0.7, 0.85, 1.0])))
    # A grader that passes cut-off replies: a keyword landed before the cap. Route: fix_reward.
    cut = rollouts(30, 4, lambda r: 0.5, seed=1)
    for i, row in enumerate(cut):
        if i % 7 == 0:
            row.update(truncated=True, reward=1.0)
    write("cut_off.jsonl", cut)
    # Production traces, one per prompt. Route: single_rollout.
    write("one_per_prompt.jsonl", rollouts(50, 1, lambda r: 0.6, seed=2))
    # Every task fails. Route: floor (OPSD at 8B).
    write("floor.jsonl", rollouts(40, 4, lambda r: 0.0, seed=3))
    # Every task passes. Route: saturated.
    write("saturated.jsonl", rollouts(40, 4, lambda r: 1.0, seed=4))
    # Rows a stronger model wrote for the data set. Route: sft.
    write("off_policy.jsonl", rollouts(60, 4, lambda r: r.choice([0.25, 0.5, 0.75]), model=TEACHER, seed=5))
    # An async sampler: older checkpoints of the trained model. Route: grpo wrapped in Async.
    stale = rollouts(60, 8, lambda r: r.choice([0.25, 0.5, 0.75]), seed=6)
    for i, row in enumerate(stale):
        row["model"] = f"{STUDENT}@step-{40 + (i // 120) * 4}"
    write("async_sampler.jsonl", stale)
    # The student and two candidate teachers on the same 48 held-out tasks, at the student's budget.
    write("student.jsonl", rollouts(48, 4, lambda r: r.choice([0.5, 0.75, 0.75, 1.0]), seed=7, prefix="held"))
    write("teacher_strong.jsonl", rollouts(48, 4, lambda r: 1.0, model=TEACHER, seed=8, prefix="held"))
    write("traces.jsonl", traces(64, seed=10))
    # Two checkpoints of one suite in one file: route for either; the other is scored as a teacher. Route for R1: grpo.
    write("two_checkpoints.jsonl", two_checkpoints())
    # The anchor SDK's row format, read natively (sampler in sampling.model / model_version). Route: grpo (Async).
    write("sdk_rows.jsonl", sdk_rows())
    # Graded `correct`, two arms: routes only with fields={"reward": "correct"}; arms are never pooled.
    write("correct_two_arms.jsonl", correct_two_arms())
    write("teacher_weak.jsonl", rollouts(48, 4, lambda r: r.choice([0.25, 0.5, 0.75, 1.0]), model=TEACHER,
                                         seed=9, prefix="held"))


if __name__ == "__main__":
    main()
