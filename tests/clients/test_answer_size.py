"""Every tool's largest realistic answer fits what Claude Code accepts, and structuredContent alone is enough.

Claude Code refuses an MCP result over 25,000 tokens by default (MAX_MCP_OUTPUT_TOKENS); at about 4 characters a
token that is 100,000 characters, counted here over both channels (JSON of structuredContent + the text blocks).
When structuredContent is present Claude Code gives the model only that, so it must carry verdict, summary and
next_step by itself.

The large case: 1,000,000 rows over 100,000 tasks (10 rollouts each, UUID task ids, ungraded and non-binary
rewards mixed in, 25 sampler checkpoints), written once per module. The client is opened inside each test
(pytest-asyncio#1191).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from mcp import Client

from rowkit import MODEL, TEACHER
from pick_a_method.server.app import create_server

CAP_TOKENS = 25_000  # Claude Code's default MAX_MCP_OUTPUT_TOKENS
CHARS_PER_TOKEN = 4
CAP_CHARS = CAP_TOKENS * CHARS_PER_TOKEN
N_TASKS, K = 100_000, 10  # 1,000,000 rows
MEASURED: dict[str, int] = {}  # case -> characters, printed at the end of the module (pytest -s)


def task_id(t: int) -> str:  # 36 characters, like the UUIDs most rollout logs carry
    return f"{t:08x}-7a3c-4e1b-9d2f-{(t * 2654435761) % 16 ** 12:012x}"


def write_rows(path, *, seed: int, model: str, truncated_every: int = 0) -> None:
    """N_TASKS x K rows; task pass rates spread over [0, 1] so most tasks split; 1% ungraded, 1% reward 0.5."""
    rng = np.random.default_rng(seed)
    p = np.repeat(rng.beta(0.6, 0.6, N_TASKS), K)
    i = np.arange(N_TASKS * K)
    passed = rng.random(N_TASKS * K) < p
    reward = np.where(passed, "1.0", "0.0").astype(object)
    reward[i % 89 == 0] = "0.5"
    reward[i % 97 == 0] = "null"
    truncated = (i % truncated_every == 0) if truncated_every else np.zeros(len(i), bool)
    with open(path, "w") as f:
        for t in range(N_TASKS):
            tid = task_id(t)
            f.write("".join(f'{{"task_id":"{tid}","reward":{reward[j]},"truncated":{"true" if truncated[j] else "false"},'
                            f'"model":"{model}@step-{j % 25}"}}\n' for j in range(t * K, (t + 1) * K)))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """Student rows (clean) and teacher rows (with truncated passes), 1M rows each, written once."""
    d = tmp_path_factory.mktemp("big-rows")
    write_rows(d / "student.jsonl", seed=0, model=MODEL)
    write_rows(d / "teacher.jsonl", seed=1, model=TEACHER, truncated_every=7)
    trajectories = d / "trajectories.jsonl"
    rng = random.Random(0)
    with open(trajectories, "w") as f:  # a full logged batch (4096, the most preview_update reads) of off-policy rollouts
        for _ in range(4096):
            lp = [round(-rng.random() * 2, 4) for _ in range(64)]
            f.write(json.dumps({"reward": float(rng.random() < 0.4), "logprobs": lp,
                                "behavior_logprobs": [round(x - rng.random() * 0.3, 4) for x in lp]}) + "\n")
    yield {"student": str(d / "student.jsonl"), "teacher": str(d / "teacher.jsonl"), "trajectories": str(trajectories)}
    if MEASURED:
        print("\nlargest answers (characters, structuredContent + text):")
        for case, n in sorted(MEASURED.items(), key=lambda kv: -kv[1]):
            print(f"  {case:28s} {n:>9,}  ({n / CAP_CHARS:.0%} of the cap)")


def size(result) -> int:
    structured = json.dumps(result.structured_content, separators=(",", ":")) if result.structured_content else ""
    return len(structured) + sum(len(getattr(block, "text", "") or "") for block in result.content)


async def call(name: str, args: dict, case: str):
    async with Client(create_server()) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        if name == "pass_at" and args.get("per_task_limit") == "max":
            args = {**args, "per_task_limit": tools["pass_at"].input_schema["properties"]["per_task_limit"]["maximum"]}
        result = await c.call_tool(name, args)
    assert not result.is_error, result.content[0].text
    MEASURED[case] = size(result)
    assert MEASURED[case] < CAP_CHARS, f"{case}: {MEASURED[case]:,} characters > {CAP_CHARS:,} (~{CAP_TOKENS:,} tokens)"
    return result


def self_sufficient(structured: dict) -> None:
    """What Claude Code shows the model: the decision, the reason and the next call, without the text block."""
    assert structured, "no structuredContent"
    assert isinstance(structured.get("verdict"), str) and structured["verdict"]
    assert isinstance(structured.get("summary"), str) and len(structured["summary"]) > 20
    assert isinstance(structured.get("next_step"), dict) and structured["next_step"].get("why")


async def test_route_through_every_question(big):
    args = {"rows_path": big["student"], "model": MODEL, "teacher_rows_path": big["teacher"], "taskset": "math-v1"}
    out = (await call("route", args, "route (grpo, teacher)")).structured_content
    self_sufficient(out)
    assert out["n_rows"] == N_TASKS * K and out["n_tasks"] == N_TASKS
    # the longest trace: question 0 in two parts (the grader read off the replies, then anything graded), then 1-6
    assert [(t["question"], t["name"]) for t in out["trace"]][:2] == [(0, "grader"), (0, "graded")], out["trace"]
    assert [t["question"] for t in out["trace"]][1:] == [0, 1, 2, 3, 4, 5, 6], out["trace"]
    assert out["next_step"]["tool"] == "prime_rl_config" and out["warnings"]


async def test_route_stopped_by_truncated_passes(big):
    out = (await call("route", {"rows_path": big["teacher"], "model": MODEL}, "route (fix_reward)")).structured_content
    self_sufficient(out)
    assert out["route"] == "fix_reward"


async def test_truncated_passes_lists_a_capped_sample(big):
    out = (await call("truncated_passes", {"rows_path": big["teacher"]}, "truncated_passes")).structured_content
    self_sufficient(out)
    assert out["verdict"] == "fix_reward" and out["count"] > 50_000
    assert out["examples_omitted"] == out["count"] - len(out["examples"]) > 0  # capped, and says how many it left out


async def test_band(big):
    out = (await call("band", {"rows_path": big["student"]}, "band")).structured_content
    self_sufficient(out)
    assert out["verdict"] == "mixed" and out["n_tasks"] == N_TASKS


async def test_pass_at_default_page(big):
    out = (await call("pass_at", {"rows_path": big["student"]}, "pass_at")).structured_content
    self_sufficient(out)
    assert out["per_task_omitted"] == N_TASKS - len(out["per_task"]) > 0


async def test_pass_at_at_the_largest_page(big):
    out = (await call("pass_at", {"rows_path": big["student"], "per_task_limit": "max"}, "pass_at (per_task max)")
           ).structured_content
    self_sufficient(out)
    # a page stops at the listing's character budget (routing.defaults.LIST_CHARS) before per_task_limit
    assert 500 <= len(out["per_task"]) <= 1000 and out["per_task_omitted"] == N_TASKS - len(out["per_task"])
    assert len(json.dumps(out["per_task"])) <= 50_000


async def test_teacher_clears_on_two_large_files(big):
    out = (await call("teacher_clears", {"teacher_rows_path": big["teacher"], "student_rows_path": big["student"]},
                      "teacher_clears")).structured_content
    self_sufficient(out)
    assert out["paired"]["n_shared"] == N_TASKS


async def test_holdout_size_from_before_and_after_rows(big):
    out = (await call("holdout_size", {"before_rows_path": big["student"], "after_rows_path": big["teacher"]},
                      "holdout_size")).structured_content
    self_sufficient(out)
    assert out["sd_source"] == "rows"


@pytest.mark.parametrize("method,knobs", [
    ("opd", {"teacher": TEACHER, "base_url": "http://127.0.0.1:8001/v1"}),
    ("async", {"method": "grpo", "correction": "ipo"}),
])
async def test_prime_rl_config(method, knobs):
    out = (await call("prime_rl_config", {"taskset": "math-v1", "method": method, "model": MODEL, "knobs": knobs,
                                          "overrides": {"trainer.optim.lr": 2e-5}},
                      f"prime_rl_config ({method})")).structured_content
    self_sufficient(out)
    assert "[" in out["text"]  # the TOML itself


async def test_preview_update_on_a_full_batch(big):
    out = (await call("preview_update", {"method": "FlashReinforce", "path": big["trajectories"]}, "preview_update")
           ).structured_content
    self_sufficient(out)
    assert out["n_trajectories"] == 4096 and out["rows_omitted"] == 4096 - len(out["rows"]) > 0


# --- rows keyed by their prompt (the design's third task key): every listed task name is a whole prompt ---------

PROMPT_CHARS = 1_500


@pytest.fixture(scope="module")
def prompt_keyed(tmp_path_factory):
    """2,000 tasks x 10 rollouts whose task is their prompt text (about 1,500 characters, a typical math or
    coding prompt), every tenth rollout cut off."""
    rnd = random.Random(0)
    words = "the of a to and in is for that with on as be by this are from or an at which it find prove".split()
    path = tmp_path_factory.mktemp("prompt-keyed") / "rows.jsonl"
    with open(path, "w") as f:
        for t in range(2_000):
            prompt = f"Problem {t}. " + " ".join(rnd.choice(words) for _ in range(PROMPT_CHARS // 4))
            for j in range(10):
                f.write(json.dumps({"prompt": prompt[:PROMPT_CHARS], "reward": float(rnd.random() < 0.5),
                                    "truncated": j == 0, "model": MODEL}) + "\n")
    return str(path)


@pytest.mark.parametrize("tool,args", [
    ("route", {}),
    ("band", {}),
    ("truncated_passes", {}),
    ("pass_at", {}),
    ("pass_at", {"per_task_limit": "max"}),
])
async def test_prompt_keyed_rows_stay_under_the_cap(prompt_keyed, tool, args):
    result = await call(tool, {"rows_path": prompt_keyed, **args}, f"prompt-keyed {tool}{' max' if args else ''}")
    self_sufficient(result.structured_content)
