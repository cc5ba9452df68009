"""verl's rollout dumps (`trainer.rollout_data_dir`): `<step>.jsonl`, one line per rollout with `input` (the prompt
text), `output`, `gts`, `score`, `step` and the reward function's extra fields.

The prompt is the task; `score` is the reward; each step's rollouts are their own arm (a step's policy is not the
next step's), so rows of several steps are never pooled. verl records neither the model nor why a reply ended.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..rows import GradedRows
from .base import Format, Probe, ReadArgs, merged, read_plain

FIELDS = {"task_id": "input", "reward": "score", "arm": "step", "completion": "output"}


def _sniff(probe: Probe) -> bool:
    return probe.has("input", "output", "score", "step") and "task_id" not in (probe.first or {})


def _read(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
    rows = read_plain(p, "jsonl", args, merged(FIELDS, args))
    rows.formats.append("verl rollout dump")
    if not rows.n_truncation_stated:
        rows.notes.append("verl's rollout dumps do not record why a reply ended, so question 1 (can a cut-off reply "
                          "pass?) stays unknown: check that the reward fails a reply cut at max_response_length")
    if rows.arm is not None and len(np.unique(rows.arm)) > 1:
        rows.notes.append(f"rows from {len(rows.arm_names)} training steps: each step's rollouts are grouped apart; "
                          f"route one step's file to read the policy as it was then")
    return rows


FORMATS = (Format(name="verl rollout dump", tool="verl 0.9 (trainer.rollout_data_dir)", sniff=_sniff, read=_read,
                  keys=("input", "output", "gts", "score", "step")),)
