"""What the summary tests share: the table's columns compared, and a verdict without what only rows can give."""

from __future__ import annotations

import json

from pick_a_method.routing.before_training.grader import SUMMARY_NO_REPLIES

TABLE = ("task", "model", "arm", "n_rows", "n", "c", "truncated", "truncated_passes", "ungraded", "nonbinary",
         "reward_sum", "reward_sq", "tokens_sum", "tokens_n")


def strip_q0(d: dict) -> dict:
    """A verdict without question 0 (which needs the replies), the finish-reason note (rows name the words), and
    with the summary's path read as its rows' (the next step re-reads what it was given)."""
    d = json.loads(json.dumps(d, default=str).replace(".summary.parquet", ".parquet"))
    d["trace"] = [t for t in d.get("trace", []) if t["question"] != 0 or t["name"] != "grader"]
    d["warnings"] = [w for w in d.get("warnings", []) if w != SUMMARY_NO_REPLIES and "finish reason" not in w]
    if d.get("route") == "fix_reward":  # question 1 names rows on rows, tasks on a summary
        d.pop("summary"), d.pop("next_step")
    return d
