"""Question 0 over many simulated evals (tests/gradersim.py): how often it raises anything on clean program graders
(the false alarms), and how often it names each broken grader (the power).

    python bench/grader_bench.py                 # 2,000 evals a case (about a minute on 2 cores)
    python bench/grader_bench.py --evals 500

An eval has 30-400 tasks at k = 2, 4, 8 or 16 (drawn per eval); lengths vary by task, by sampler and at random, on
half the clean sets wrong answers ramble (run longer), 30% of tasks are short answers given again and again, 1% of
replies are blank (and fail), replies past the cap are cut off (and fail). Also times check_grader on 1M rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import gradersim as S  # noqa: E402

from pick_a_method.routing.before_training.grader import check_grader  # noqa: E402

CASES = {  # name -> (make, what counts as a hit: "any" finding, or the finding named)
    "clean: program grader": (S.clean, "any"),
    "clean: two samplers a task": (lambda r: S.clean(r, samplers=2), "any"),
    "clean: length and grade unrelated": (lambda r: S.clean(r, ramble=False), "any"),
    "clean: second grader agrees": (lambda r: S.two_graders(r, wrong=0.0), "any"),
    "blank passes (2% of rollouts)": (lambda r: S.blank_passes(r, share=0.02), "blank_passes"),
    "blank passes (1 rollout)": (lambda r: S.blank_passes(r, share=0.0), "blank_passes"),
    "flaky grader (flip 10%)": (lambda r: S.flaky(r, flip=0.1), "graded_both_ways"),
    "flaky grader (flip 2%)": (lambda r: S.flaky(r, flip=0.02), "graded_both_ways"),
    "length-biased judge (beta 0.5)": (lambda r: S.length_judge(r, beta=0.5), "length_bias"),
    "length-biased judge (beta 1)": (lambda r: S.length_judge(r, beta=1.0), "length_bias"),
    "length-biased judge (beta 2)": (lambda r: S.length_judge(r, beta=2.0), "length_bias"),
    "second grader wrong on 5%": (lambda r: S.two_graders(r, wrong=0.05), "graders_differ"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{'case':36} {'evals':>6} {'rate':>7}  {'decided':>7}  (rate: any finding on clean rows; else the one named)")
    for name, (make, what) in CASES.items():
        rng = np.random.default_rng(args.seed)
        hits = decided = 0
        for _ in range(args.evals):
            c = check_grader(make(rng))
            found = c.answer.split(", ")
            hits += (c.answer not in ("ok", "no_replies")) if what == "any" else what in found
            decided += c.decided
        print(f"{name:36} {args.evals:>6} {hits / args.evals:>7.3f}  {decided / args.evals:>7.3f}", flush=True)
    rng = np.random.default_rng(args.seed)
    rows = S.clean(rng, n_tasks=125_000, k=8)
    t0 = time.perf_counter()
    check_grader(rows)
    print(f"check_grader on {len(rows):,} rows: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
