"""`track`'s picture, as data: the band's shares over steps (stacked), the reward and the reply length over steps,
each alarm marked at its step. Read off the verdict's own windows (nothing computed twice); server/track_plot.py
draws it, server/track_sketch.py prints it. numpy-free: pydantic only."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .models import Track


class TrackPoint(BaseModel):
    step: float = Field(description="The window's middle step.")
    all_pass: float | None
    split: float | None
    all_fail: float | None
    reward: float | None
    reward_low: float | None
    reward_high: float | None
    length: float | None
    cut_off: float | None


class Mark(BaseModel):
    name: str
    step: int


class TrackPicture(BaseModel):
    title: str
    caption: str
    points: list[TrackPoint]
    marks: list[Mark]
    length_unit: str | None


def track_picture(t: Track) -> TrackPicture:
    points = [TrackPoint(step=(w.first_step + w.last_step) / 2, all_pass=w.all_pass_share, split=w.split_share,
                         all_fail=w.all_fail_share, reward=w.reward,
                         reward_low=w.reward_ci95[0] if w.reward_ci95 else None,
                         reward_high=w.reward_ci95[1] if w.reward_ci95 else None, length=w.length_mean,
                         cut_off=w.cut_off_share) for w in t.windows]
    unit = next((w.length_unit for w in t.windows if w.length_unit), None)
    alarms = "; ".join(f"{a.name.replace('_', ' ')} at step {a.first_step}" for a in t.alarms) or "no alarm"
    r = t.run
    return TrackPicture(title=f"track: {t.verdict.replace('_', ' ')} ({r.trainer or 'run'}, steps {r.first_step}-"
                              f"{r.last_step}, windows of {r.window_steps})",
                        caption=f"{alarms}. {t.summary}", points=points,
                        marks=[Mark(name=a.name, step=a.first_step) for a in t.alarms], length_unit=unit)
