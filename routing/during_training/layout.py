"""What a run folder holds, found by the names the trainers give their files (upstream sources in rollouts.py):
the step files of the trainer that wrote them, its metrics log, or a folder of per-checkpoint evals.

Given a folder, every trainer's names are looked for; files of two trainers mixed is said, and the trainer with
more steps is read. A step whose file is still being written (a half-written last line, or changed within
TRACK_SETTLE_SECONDS) is held back for the next read.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import defaults as D
from pick_a_method.common.errors import InputError

# (trainer, glob under the run folder, the step's pattern in the path). The run folder may be the trainer's output
# folder or the dump folder itself.
STEP_FILES = (
    ("verl", "*.jsonl", re.compile(r"^(\d+)\.jsonl$")),
    ("verl", "rollout*/*.jsonl", re.compile(r"^(\d+)\.jsonl$")),
    ("trl", "completions_*.parquet", re.compile(r"^completions_(\d+)\.parquet$")),
    ("trl", "completions/completions_*.parquet", re.compile(r"^completions_(\d+)\.parquet$")),
    ("prime-rl", "rollouts/step_*/train/all/traces.jsonl", re.compile(r"step_(\d+)/train/all/traces\.jsonl$")),
    ("prime-rl", "step_*/train/all/traces.jsonl", re.compile(r"step_(\d+)/train/all/traces\.jsonl$")),
    ("nemo-rl", "train_data_step*.jsonl", re.compile(r"^train_data_step(\d+)\.jsonl$")),
)
# Scalars where no rollouts were kept: TRL's trainer_state.json (the newest checkpoint's while training), verl's
# file logger ($VERL_FILE_LOGGER_ROOT/{project}/{experiment}.jsonl, verl/utils/tracking.py), prime-rl's
# metrics.jsonl (src/prime_rl/monitors/file.py).
METRIC_FILES = ("trainer_state.json", "checkpoint-*/trainer_state.json", "metrics.jsonl", "*.jsonl")
CHECKPOINT = re.compile(r"^(?:checkpoint-|global_step_|step_)(\d+)$")


@dataclass(frozen=True)
class StepFile:
    step: int
    path: Path
    size: int
    mtime_ns: int


@dataclass
class Layout:
    run: Path
    trainer: str | None  # the trainer whose step files are read; None: metrics or evals only
    steps: list[StepFile] = field(default_factory=list)
    held_back: list[StepFile] = field(default_factory=list)  # being written: read at the next call
    metrics: Path | None = None
    checkpoints: list[tuple[int, Path]] = field(default_factory=list)  # per-checkpoint eval folders
    warnings: list[str] = field(default_factory=list)


def _stat(p: Path) -> os.stat_result | None:
    try:
        return p.stat()
    except OSError:  # gone between the listing and the stat (a trainer rotating files): not read
        return None


def find_steps(run: Path) -> dict[str, list[StepFile]]:
    """Every trainer's step files under `run`, by trainer (one file a step: the first pattern that finds it)."""
    found: dict[str, dict[int, StepFile]] = {}
    for trainer, pattern, step_re in STEP_FILES:
        for p in run.glob(pattern):
            m = step_re.search(p.relative_to(run).as_posix() if "/" in step_re.pattern else p.name)
            st = _stat(p) if m else None
            if st is None or not p.is_file():
                continue
            found.setdefault(trainer, {}).setdefault(int(m.group(1)), StepFile(int(m.group(1)), p, st.st_size,
                                                                               st.st_mtime_ns))
    return {t: sorted(s.values(), key=lambda f: f.step) for t, s in found.items()}


def _is_metrics(p: Path) -> bool:
    """A metrics log by its first line: verl's {"step", "data"}, prime-rl's {"step", ...scalars}; or TRL's state."""
    if p.name == "trainer_state.json":
        return True
    try:
        with p.open("rb") as f:
            head = f.readline(1 << 16)
    except OSError:
        return False
    return head.startswith(b"{") and b'"step"' in head and (b'"data"' in head or b'"time"' in head) and \
        b'"output"' not in head and b'"traces"' not in head


def find_metrics(run: Path) -> Path | None:
    if run.is_file():
        return run if _is_metrics(run) else None
    state = run / "trainer_state.json"
    if state.is_file():
        return state
    checkpoints = sorted(run.glob("checkpoint-*/trainer_state.json"), key=lambda p: _checkpoint_step(p.parent))
    if checkpoints:
        return checkpoints[-1]  # the newest: TRL writes the state at each save
    for p in [run / "metrics.jsonl", *sorted(run.glob("*.jsonl"))]:
        if p.is_file() and _is_metrics(p):
            return p
    return None


def _checkpoint_step(p: Path) -> int:
    m = CHECKPOINT.match(p.name)
    return int(m.group(1)) if m else -1


def find_checkpoints(run: Path) -> list[tuple[int, Path]]:
    """Per-checkpoint eval folders (checkpoint-300/, global_step_300/, step_300/) that hold eval files, not a
    model's weights (a TRL checkpoint holds config.json and safetensors, not rows)."""
    out = []
    for p in run.iterdir() if run.is_dir() else ():
        m = CHECKPOINT.match(p.name)
        if not (m and p.is_dir()) or (p / "train" / "all").exists():
            continue
        files = [f for f in p.rglob("*") if f.is_file() and f.suffix in (".jsonl", ".json", ".parquet", ".csv",
                                                                           ".eval", ".gz")]
        rows = [f for f in files if f.name not in ("trainer_state.json", "config.json", "generation_config.json",
                                                   "tokenizer.json", "tokenizer_config.json",
                                                   "special_tokens_map.json")]
        if rows:
            out.append((int(m.group(1)), p))
    return sorted(out)


def _settled(f: StepFile, now: float) -> bool:
    if now - f.mtime_ns / 1e9 < D.TRACK_SETTLE_SECONDS:
        return False
    if f.path.suffix == ".jsonl" and f.size:
        with f.path.open("rb") as fh:
            fh.seek(f.size - 1)
            return fh.read(1) == b"\n"
    return True


def layout(run: str | os.PathLike[str], *, now: float | None = None) -> Layout:
    path = Path(run).expanduser()
    if not path.exists():
        raise InputError(f"track: {path} does not exist; pass the trainer's output folder (or its rollout folder)")
    out = Layout(path, None)
    if path.is_dir():
        by_trainer = find_steps(path)
        if by_trainer:
            ranked = sorted(by_trainer, key=lambda t: -len(by_trainer[t]))
            out.trainer = ranked[0]
            out.steps = by_trainer[out.trainer]
            if len(ranked) > 1:
                others = ", ".join(f"{len(by_trainer[t])} of {t}'s" for t in ranked[1:])
                out.warnings.append(f"{path} holds step files of several trainers ({len(out.steps)} of "
                                    f"{out.trainer}'s, {others}): read {out.trainer}'s only; give each run its own "
                                    f"folder")
        else:
            out.checkpoints = find_checkpoints(path)
    out.metrics = find_metrics(path)
    if out.steps:
        now = time.time() if now is None else now
        if not _settled(out.steps[-1], now):  # only the newest step can still be written
            out.held_back.append(out.steps.pop())
    if not (out.steps or out.held_back or out.metrics or out.checkpoints):
        raise InputError(
            f"track: no steps in {path}: no rollout dumps (verl `{{step}}.jsonl` from trainer.rollout_data_dir, TRL "
            f"completions/completions_*.parquet from log_completions=True, prime-rl rollouts/step_*/train/all/"
            f"traces.jsonl, NeMo-RL train_data_step*.jsonl), no metrics log (trainer_state.json, metrics.jsonl, "
            f"verl's file logger) and no per-checkpoint eval folders (checkpoint-N/, global_step_N/, step_N/). "
            f"The README's \"During training\" says how to turn each trainer's dump on")
    return out
