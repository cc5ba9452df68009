"""`track`'s answer: the windows of steps, the alarms with the step each fired at, the trends, and one verdict."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..verdicts import Interval, NextStep, Verdict

AlarmName = Literal["blank_passes", "cut_off_passes", "graded_both_ways", "cut_off_rising", "length_follows_grade",
                    "band_emptied", "band_floor", "collapsed"]
TrackVerdict = Literal["fix_reward", "length_hacking", "band_emptied", "band_floor", "collapsed", "plateau",
                       "learning", "too_early"]
# The precedence, first that holds wins: a grader that can be gamed makes every number after it a lie; length
# hacking is a grader flaw the policy already found; an empty band (or floor) leaves nothing to learn whatever the
# replies; collapse is read on groups that still split; plateau and learning only once nothing is wrong.
PRECEDENCE: tuple[str, ...] = ("fix_reward", "length_hacking", "band_emptied", "band_floor", "collapsed",
                               "too_early", "plateau", "learning")


class Window(BaseModel):
    """A window of consecutive steps: the band, the reward, the cut-offs, the replies."""

    index: int
    first_step: int
    last_step: int
    steps: int
    partial: bool = Field(False, description="Fewer steps than a window holds (the run's newest): not judged yet.")
    rows: int = 0
    groups: int = Field(0, description="Groups with 2+ graded rollouts.")
    all_pass_share: float | None = None
    all_fail_share: float | None = None
    split_share: float | None = Field(None, description="Groups with signal (rewards differ): 1 - zero-advantage share.")
    split_ci95: Interval | None = None
    split_per_step: float | None = Field(None, description="Groups with signal per step.")
    reward: float | None = None
    reward_ci95: Interval | None = None
    cut_off_share: float | None = None
    cut_off_ci95: Interval | None = None
    cut_off_passes: int | None = None
    length_mean: float | None = None
    length_p90: float | None = None
    length_unit: Literal["characters", "tokens"] | None = None
    length_rho: float | None = Field(None, description="Question 0's within-group Spearman of length and grade.")
    length_z: float | None = None
    blank_passes: int | None = None
    repeated_replies: int | None = None
    graded_both_ways: int | None = None
    distinct_share: float | None = Field(None, description="Distinct replies / replies, per group of 2+.")
    distinct_ci95: Interval | None = None
    entropy: float | None = None
    kl: float | None = None


class Alarm(BaseModel):
    name: AlarmName
    first_step: int = Field(description="The first step of the window (or the step) where it fired.")
    window: int
    holds_now: bool = Field(description="It fired in the newest judged window too.")
    evidence: str
    rows: list[dict[str, Any]] = Field(default_factory=list, description="Rows that show it (the first few).")


class Trend(BaseModel):
    what: str
    per_100_steps: float | None = Field(description="Weighted least-squares slope over the judged windows.")
    ci95: Interval | None = None


class EvalPoint(BaseModel):
    step: int
    folder: str
    pass_at_1: float | None
    ci95: Interval | None
    tasks: int
    diff_from_first: float | None = Field(None, description="Paired on the tasks every checkpoint shares.")
    diff_ci95: Interval | None = None


class RunRead(BaseModel):
    """What was read, and what it cannot say."""

    trainer: str | None
    source: Literal["rollouts", "metrics", "evals"]
    path: str
    steps_read: int
    first_step: int | None
    last_step: int | None
    window_steps: int = Field(description="Steps a window holds.")
    windows_omitted: int = Field(0, description="Older windows left out of `windows`.")
    held_back: list[int] = Field(default_factory=list, description="Steps still being written: read next call.")
    new_windows: int = Field(0, description="Windows completed since the last call on this run (for --follow).")
    cannot_judge: list[str] = Field(default_factory=list, description="What these files cannot say, and why.")
    trends: list[Trend] = Field(default_factory=list)
    evals: list[EvalPoint] = Field(default_factory=list, description="The held-out curve, per checkpoint.")


class Track(Verdict):
    """During training: the run's windows, the alarms and when they fired, and whether to keep going."""

    verdict: TrackVerdict
    alarms: list[Alarm] = Field(default_factory=list)
    windows: list[Window] = Field(description="The newest windows (capped; run.windows_omitted says how many before).")
    run: RunRead
    alternatives: list[NextStep] = Field(default_factory=list)
