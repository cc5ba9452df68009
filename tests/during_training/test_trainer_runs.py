"""track on each trainer's files: the real fixtures (TRL's GRPOTrainer, verl's own writer), prime-rl's episode
records and NeMo-RL's dumps in their record shapes, and metrics logs alone."""

import json

import pytest
from runs import FIXTURES, prime_run, verl_run

from pick_a_method import routing
from pick_a_method.routing.during_training import cache


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def test_trl_fixture_finds_the_blank_replies_its_reward_passes():
    t = routing.track(FIXTURES / "trl" / "run", window=2)
    assert t.run.trainer == "trl" and t.run.steps_read == 12 and t.verdict == "fix_reward"
    blank = next(a for a in t.alarms if a.name == "blank_passes")
    assert blank.first_step == 1 and blank.rows and blank.rows[0]["file"].endswith("completions_00001.parquet")
    assert t.windows[0].groups == 4  # 8 rows a generation batch, groups of num_generations = 4 read off the prompts
    assert t.windows[0].cut_off_share is not None  # TRL's completions/clipped_ratio from trainer_state.json
    assert any("reward columns (parity, blank_ok)" in w for w in t.warnings)
    assert t.next_step.tool == "route" and t.next_step.command.startswith("pick-a-method route ")


def test_verl_fixture_says_the_band_emptied_at_its_step():
    t = routing.track(FIXTURES / "verl" / "rollouts")
    assert t.run.trainer == "verl" and t.run.steps_read == 40
    assert t.verdict == "band_emptied"
    alarm = next(a for a in t.alarms if a.name == "band_emptied")
    assert alarm.first_step == 21 and alarm.holds_now
    assert t.windows[0].split_share > 0.4 and t.windows[-1].split_share < 0.1
    assert any("why a reply ended" in c for c in t.run.cannot_judge)  # verl writes no cut-off flag


def test_verl_v1_uid_groups_by_prompt_uid(tmp_path):
    verl_run(tmp_path, 4, uid=True)
    t = routing.track(tmp_path, window=2)
    assert t.windows[0].groups == 16  # 8 prompts x 2 steps, each group 4 rollouts by its uid's prompt part


def test_prime_rl_records_reward_and_cut_off_computed_as_prime_rl_does(tmp_path):
    prime_run(tmp_path, 20, cut_pass_at=12)
    t = routing.track(tmp_path, window=5)
    assert t.run.trainer == "prime-rl" and t.verdict == "fix_reward"
    cut = next(a for a in t.alarms if a.name == "cut_off_passes")
    assert cut.first_step == 12 and cut.rows[0]["file"].endswith("traces.jsonl") and cut.rows[0]["line"] == 1
    assert t.windows[0].cut_off_share == pytest.approx(1 / 32)  # one stop_condition max_output_tokens in 32
    assert t.windows[0].entropy is not None  # from metrics.jsonl


def test_nemo_rl_message_logs_group_by_prompt(tmp_path):
    for s in (1, 2, 3):
        rows = [{"content": [{"role": "user", "content": f"q{g}"}, {"role": "assistant", "content": f"a{g}{i}{s}"}],
                 "rewards": float(i % 2)} for g in range(4) for i in range(4)]
        (tmp_path / f"train_data_step{s}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = routing.track(tmp_path, window=1)
    assert t.run.trainer == "nemo-rl" and t.windows[0].groups == 4 and t.windows[0].split_share == 1.0


def test_metrics_alone_say_what_they_cannot_judge(tmp_path):
    with (tmp_path / "exp.jsonl").open("w") as f:  # verl's file logger
        for s in range(1, 41):
            f.write(json.dumps({"step": s, "data": {"critic/score/mean": 0.3 + s / 100,
                                                    "response_length/mean": 200.0}}) + "\n")
    t = routing.track(tmp_path)
    assert t.run.source == "metrics" and t.run.trainer == "verl" and len(t.windows) == 4
    assert any("need the replies" in c for c in t.run.cannot_judge)
    assert any("band" in c for c in t.run.cannot_judge)
    state = {"log_history": [{"step": s, "reward": 0.5, "frac_reward_zero_std": 0.9 if s > 20 else 0.3}
                             for s in range(1, 41)]}
    (tmp_path / "trl").mkdir()
    (tmp_path / "trl" / "trainer_state.json").write_text(json.dumps(state))
    t = routing.track(tmp_path / "trl")
    assert t.run.trainer == "trl" and t.windows[-1].split_share == pytest.approx(0.1)
