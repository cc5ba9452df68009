"""Simulated evals with a known grader, for question 0 (routing/before_training/grader.py): clean program graders on replies whose
lengths vary for reasons other than the grade, and graders broken in each way question 0 looks for. The tests
measure false alarms and power over many of them; bench/grader_bench.py measures more.

Each eval is built as the readers leave rows (GradedRows: a hash and a length per reply, never the text), so that
thousands of evals cost seconds. A reply is (task, variant): short-answer tasks repeat a few variants (the same text
given again), long-form tasks write a new reply each rollout.
"""

from __future__ import annotations

import numpy as np

from pick_a_method.routing.rows import GradedRows

CAP = 4000  # characters at the token cap: a longer reply is cut off there (and a sound grader fails it)


def as_rows(task, reward, reply_len, reply_hash, truncated, *, model=None, graders=None, judged_by=None):
    """GradedRows from columns, as a reader leaves them (one sampler unless `model` codes name several)."""
    n = len(task)
    model = np.zeros(n, dtype=np.int32) if model is None else np.asarray(model, dtype=np.int32)
    return GradedRows(
        task=np.asarray(task, dtype=np.int32), task_names=[f"t{i}" for i in range(int(task.max()) + 1)],
        reward=np.asarray(reward, dtype=np.float64), truncated=np.asarray(truncated, dtype=bool),
        stated=np.ones(n, dtype=bool), model=model, model_names=[f"m{i}" for i in range(int(model.max()) + 1)],
        max_tokens=np.full(n, np.nan), nan_reward=np.zeros(n, dtype=bool), has_pairs=False,
        reply_hash=np.asarray(reply_hash, dtype=np.int64), reply_len=np.asarray(reply_len, dtype=np.int32),
        graders=graders or {}, judged_by=judged_by or {})


def world(rng, n_tasks=None, k=None, *, samplers=1, ramble=None):
    """A clean eval's truth: per rollout its task, sampler, whether its answer is right, its reply's identity and
    length. Lengths vary by task (some tasks need long answers), by sampler (one writes longer) and at random; on
    some sets wrong answers run longer (rambling), on some harder tasks run longer; never is a right answer longer
    within a task. Short-answer tasks repeat a few replies; 1% of replies are blank; replies past CAP are cut off."""
    n_tasks = int(rng.integers(30, 400)) if n_tasks is None else n_tasks
    k = int(rng.choice([2, 4, 8, 16])) if k is None else k
    tasks = np.repeat(np.arange(n_tasks), k * samplers)
    model = np.tile(np.repeat(np.arange(samplers), k), n_tasks)
    p = np.clip(rng.beta(0.7, 0.7, size=n_tasks) + 0.1 * rng.normal(size=n_tasks), 0, 1)
    skill = 0.15 * rng.normal(size=samplers)
    right = rng.random(len(tasks)) < np.clip(p[tasks] + skill[model], 0, 1)
    task_len = np.exp(rng.normal(5.5, 0.9, size=n_tasks) - 0.8 * p * rng.random())  # harder tasks longer, sometimes
    sampler_len = np.exp(0.3 * rng.normal(size=samplers))
    ramble = rng.random() < 0.5 if ramble is None else ramble  # wrong answers run longer on half the sets
    length = task_len[tasks] * sampler_len[model] * np.exp(0.4 * rng.normal(size=len(tasks)))
    length *= np.where(~right & ramble, 1.5, 1.0)
    short = rng.random(n_tasks) < 0.3  # short-answer tasks: a few distinct replies, given again and again
    variant = rng.integers(0, 3, size=len(tasks))
    length = np.where(short[tasks], 20 + 10 * variant + 5 * (~right & ramble), length)
    reply = np.where(short[tasks], tasks * 1000 + variant * 2 + right, tasks * 1000 + 100 + np.arange(len(tasks)))
    blank = rng.random(len(tasks)) < 0.01
    length = np.where(blank, 0, np.clip(np.rint(length), 1, CAP)).astype(np.int64)  # a reply has a character
    truncated = length >= CAP
    reply_hash = np.where(blank, -7, reply * 7919 + 13)
    return dict(task=tasks, model=model, right=right & ~blank & ~truncated, length=length, hash=reply_hash,
                truncated=truncated, blank=blank, short=short)


def clean(rng, **kw):
    """A program grader: the reward is whether the answer is right (a blank or cut-off reply fails)."""
    w = world(rng, **kw)
    return as_rows(w["task"], w["right"].astype(float), w["length"], w["hash"], w["truncated"], model=w["model"])


def blank_passes(rng, share=0.02, **kw):
    """A grader that passes blank replies, on `share` of the rollouts (one at least)."""
    w = world(rng, **kw)
    n = len(w["task"])
    blank = np.zeros(n, dtype=bool)
    blank[rng.choice(n, size=max(1, round(share * n)), replace=False)] = True
    reward = np.where(blank, 1.0, w["right"].astype(float))
    return as_rows(w["task"], reward, np.where(blank, 0, w["length"]), np.where(blank, -7, w["hash"]),
                   w["truncated"] & ~blank, model=w["model"])


def flaky(rng, flip=0.1, **kw):
    """A grader not a function of the reply: each grading flips the right answer's grade with chance `flip` (a judge
    at temperature, a flaky test)."""
    w = world(rng, **kw)
    flips = (rng.random(len(w["task"])) < flip) & ~w["truncated"] & ~w["blank"]
    reward = w["right"] ^ flips
    return as_rows(w["task"], reward.astype(float), w["length"], w["hash"], w["truncated"], model=w["model"])


def length_judge(rng, beta=1.0, **kw):
    """A judge that favours long replies: it passes a reply with log-odds beta x its length's z within the task
    added to the truth's."""
    w = world(rng, **kw)
    task, length = w["task"], np.log1p(w["length"])
    mean = np.bincount(task, weights=length) / np.bincount(task)
    sd = np.sqrt(np.maximum(np.bincount(task, weights=length ** 2) / np.bincount(task) - mean ** 2, 1e-9))
    z = (length - mean[task]) / sd[task]
    logit = np.where(w["right"], 1.5, -1.5) + beta * z
    reward = (rng.random(len(task)) < 1 / (1 + np.exp(-logit))) & ~w["truncated"] & ~w["blank"]
    return as_rows(task, reward.astype(float), w["length"], w["hash"], w["truncated"], model=w["model"])


def two_graders(rng, wrong=0.0, **kw):
    """A program grader read as the reward, beside a second grader that is wrong on `wrong` of the rows."""
    w = world(rng, **kw)
    reward = w["right"].astype(float)
    other = np.where(rng.random(len(reward)) < wrong, 1 - reward, reward)
    return as_rows(w["task"], reward, w["length"], w["hash"], w["truncated"], model=w["model"],
                   graders={"second": other})
