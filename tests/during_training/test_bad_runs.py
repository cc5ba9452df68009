"""Bad input gets a clear error or a warning, never a crash: no steps, two trainers mixed, a missing step, steps
out of order, a filtered (DAPO) dump, a step file that is not what its name says, a half-written last step."""

import json
import os
import time

import pytest
from runs import prime_run, verl_run, verl_step

from pick_a_method import routing
from pick_a_method.routing.during_training import cache


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def test_a_folder_with_no_steps_says_what_it_looked_for(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(routing.InputError, match="no steps in .*rollout_data_dir.*log_completions=True"):
        routing.track(tmp_path)
    with pytest.raises(routing.InputError, match="does not exist"):
        routing.track(tmp_path / "nowhere")


def test_two_trainers_mixed_reads_the_one_with_more_steps_and_says_so(tmp_path):
    verl_run(tmp_path, 6)
    prime_run(tmp_path / "other", 2)
    (tmp_path / "other").rename(tmp_path / "x")
    for s in (1, 2):
        (tmp_path / "x" / "rollouts" / f"step_{s}").rename(tmp_path / f"step_{s}")
    t = routing.track(tmp_path, window=2)
    assert t.run.trainer == "verl" and any("several trainers" in w for w in t.warnings)


def test_a_missing_step_and_a_file_that_is_not_its_name_are_said(tmp_path):
    verl_run(tmp_path, 8)
    (tmp_path / "4.jsonl").unlink()
    (tmp_path / "6.jsonl").write_text(json.dumps({"loss": 1.0}) + "\n")
    t = routing.track(tmp_path, window=2, now=time.time() + 60)
    assert any("missing" in w and "4" in w for w in t.warnings)
    assert any("not what their names say" in w and "6.jsonl" in w for w in t.warnings)
    assert t.run.steps_read == 6  # 1-3, 5, 7, 8


def test_steps_out_of_order_and_a_step_inside_another_name(tmp_path):
    verl_run(tmp_path, 6)
    old = time.time() - 3600
    for s in range(1, 7):  # step 2 written last (a restart into the same folder)
        os.utime(tmp_path / f"{s}.jsonl", (old + s, old + (10_000 if s == 2 else s)))
    text = (tmp_path / "3.jsonl").read_text().replace('"step": 3', '"step": 9')
    (tmp_path / "3.jsonl").write_text(text)
    os.utime(tmp_path / "3.jsonl", (old + 3, old + 3))
    t = routing.track(tmp_path, window=2)
    assert any("out of step order" in w for w in t.warnings)
    assert any("3.jsonl holds step 9" in w for w in t.warnings)


def test_a_filtered_dapo_dump_turns_the_band_off(tmp_path):
    verl_run(tmp_path, 20, rate=0.5, prompts=8, k=2)
    for p in tmp_path.glob("*.jsonl"):  # keep the split groups only, as DAPO's filter does
        rows = [json.loads(x) for x in p.read_text().splitlines()]
        by = {}
        for r in rows:
            by.setdefault(r["input"], []).append(r)
        kept = [r for g in by.values() if len({x["score"] for x in g}) > 1 for r in g]
        p.write_text("".join(json.dumps(r) + "\n" for r in kept))
    t = routing.track(tmp_path, window=5)
    assert any("group filter" in w and "cannot be measured" in w for w in t.warnings)
    assert not any(a.name.startswith("band") for a in t.alarms)


def test_a_half_written_last_step_is_waited_for(tmp_path):
    verl_run(tmp_path, 4)
    with (tmp_path / "4.jsonl").open("a") as f:
        f.write('{"input": "prompt 0", "output": "trunc')  # the writer thread mid-line
    t = routing.track(tmp_path, window=1)
    assert t.run.held_back == [4] and t.run.last_step == 3
    verl_step(tmp_path, 5)  # written a moment ago: may still be written
    t = routing.track(tmp_path, window=1)
    assert 5 in t.run.held_back
    t = routing.track(tmp_path, window=1, now=time.time() + 60)  # settled: read
    assert t.run.last_step == 5 and 4 in [w.first_step for w in t.windows]


def test_a_half_written_trl_parquet_is_not_an_error(tmp_path):
    (tmp_path / "completions").mkdir()
    (tmp_path / "completions" / "completions_00001.parquet").write_bytes(b"PAR1 not yet")
    (tmp_path / "completions" / "completions_00002.parquet").write_bytes(b"PAR1 not yet")
    with pytest.raises(routing.InputError, match="could be read"):
        routing.track(tmp_path, now=time.time() + 60)
