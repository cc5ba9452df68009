"""`track`: its arguments (declared once, server/declare.py: the MCP schema and the command's flags), and the command
line's `--follow`, which reads the run again every few seconds and prints each new window as it lands (only new
steps are read: routing/during_training/cache.py), until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, TextIO

from pick_a_method.common.next_step import Tool

from .declare import Arguments, Cli, arg
from .rows_tools import picture_arg, threshold_arg

FOLLOW_SECONDS = 10.0  # between reads of a followed run: a step of RL takes tens of seconds to minutes


class TrackArguments(Arguments):
    """During training: read a run's rollouts; keep going, stop, switch, or fix the grader."""

    tool, title = Tool.TRACK, "Track a training run"
    answers = "pick_a_method.routing:Track"
    pictured, reads_more, reads_itself = True, True, True
    run: str = arg(description="Run or dump folder", cli=Cli(
        positional=True, metavar="RUN", help="the trainer's output folder or its rollout folder (verl "
                                             "trainer.rollout_data_dir, TRL output_dir, prime-rl output_dir, NeMo-RL "
                                             "log_dir), a metrics log, or a folder of per-checkpoint evals"))
    window: int | None = arg(None, "Steps a window", ge=1, cli=Cli(
        metavar="K", help="dumped steps a window holds (default: 10)"))
    group_size: int | None = arg(None, "Rollouts a prompt", ge=1, cli=Cli(
        metavar="K", help="rollouts per prompt, for TRL and NeMo-RL dumps (default: read off the prompts)"))
    pass_threshold: float = threshold_arg()
    picture: bool = picture_arg()

    def call(self, *, roots: Any = None) -> Any:
        from pick_a_method import routing
        from pick_a_method.common.paths import confine

        run = confine(self.run, "run", roots) if roots is not None else self.run
        return routing.track(run, window=self.window, pass_threshold=self.pass_threshold,
                             group_size=self.group_size)

    @classmethod
    def cli_flags(cls, parser: Any) -> None:
        follow_flags(parser)

    def follow(self, every: float = FOLLOW_SECONDS) -> int:
        return follow(self, every=every)

    def cli_picture(self, args: Any, verdict: Any) -> tuple[str, str]:
        from .track_plot import track_lines  # drawn from the verdict's own windows

        return track_lines(args, verdict)

    def words(self, verdict: Any) -> str:
        from pick_a_method.routing.during_training.text import track_text

        return track_text(verdict)


def follow_flags(c: argparse.ArgumentParser) -> None:
    c.add_argument("--follow", action="store_true", help="keep reading the run and print each new window as it "
                                                         "lands; Ctrl-C stops")
    c.add_argument("--every", type=float, default=FOLLOW_SECONDS, metavar="S",
                   help=f"seconds between reads with --follow (default: {FOLLOW_SECONDS:g})")


def follow(a: TrackArguments, every: float = FOLLOW_SECONDS, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
           rounds: int | None = None, sleep: Callable[[float], None] = time.sleep) -> int:
    """Print the run's state, then each new whole window, new alarm and changed verdict as they land, with a
    progress line on stderr; Ctrl-C ends it (exit 0). `rounds` bounds the reads (tests)."""
    from pick_a_method.routing.during_training.text import HEADER, track_text, window_line

    printed, alarms, verdict, n = -1, set(), None, 0
    try:
        while rounds is None or n < rounds:
            n += 1
            try:
                t = a.call()
            except ValueError as e:  # no steps yet: the trainer has not dumped one
                print(f"\rwaiting: {e}"[:200], end="", file=err, flush=True)
                sleep(every)
                continue
            whole = [w for w in t.windows if not w.partial]
            if printed < 0:
                print(track_text(t), file=out, flush=True)
                printed = whole[-1].index if whole else -1
                printed = max(printed, 0) if whole else -1
            else:
                fresh = [w for w in whole if w.index > printed]
                if fresh and printed < 0:
                    print(HEADER, file=out)
                for w in fresh:
                    print(window_line(w), file=out, flush=True)
                    printed = w.index
                for x in t.alarms:
                    if x.name not in alarms:
                        print(f"alarm {x.name} at step {x.first_step}: {x.evidence}", file=out, flush=True)
                if t.verdict != verdict:
                    print(f"{t.verdict}: {t.summary}", file=out, flush=True)
            alarms, verdict = {x.name for x in t.alarms}, t.verdict
            part = next((w for w in t.windows if w.partial), None)
            said = (f"{part.steps} of {t.run.window_steps} steps of the next window read (to step {part.last_step})"
                    if part else f"read to step {t.run.last_step}")
            print(f"\r{time.strftime('%H:%M:%S')} {said}; {t.verdict}; Ctrl-C stops ", end="", file=err, flush=True)
            sleep(every)
    except KeyboardInterrupt:
        print("\nstopped following", file=err, flush=True)
    return 0
