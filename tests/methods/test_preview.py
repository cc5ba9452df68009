"""preview_update: verdicts, next steps, capping, file reading and the errors an agent sees."""

import json
import random

import pytest

from pick_a_method.methods import RAE, UpdatePreview, preview_update


def logged(n=60, stale=0, seed=0, reward=None, shift=1.5):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        lp = [-rnd.uniform(0.05, 2.0) for _ in range(12)]
        off = shift if i < stale else 0.0
        blp = [min(0.0, x + off * rnd.choice([-1, 1])) for x in lp]
        r = float(rnd.random() < 0.5) if reward is None else reward
        out.append({"reward": r, "logprobs": lp, "behavior_logprobs": blp, "values": [rnd.uniform(0.1, 0.9) for _ in lp], "task_id": f"t{i // 4}"})
    return out


def test_ok_verdict_fields_and_row_cap(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in logged()) + "\n\n")
    p = preview_update("FlashReinforce", path=str(path))
    assert isinstance(p, UpdatePreview)
    assert p.verdict == "ok" and p.method == "flash_reinforce"
    assert p.n_trajectories == 60 and p.n_admitted == 60 and p.admitted_share == 1.0
    assert len(p.rows) == 50 and p.rows_omitted == 10
    assert p.rows[0].drift == 0.0 and p.rows[0].mean_ratio == pytest.approx(1.0)
    assert p.next_step.tool is None and "update" in p.next_step.why
    assert p.drift["max"] == 0.0 and p.knobs["trust"] == 0.003
    json.dumps(p.model_dump())  # serializable for the MCP tool


def test_too_stale_and_nothing_admitted_suggest_a_next_step():
    p = preview_update("FlashReinforce", trajectories=logged(stale=40))
    assert p.verdict == "too_stale" and p.n_admitted == 20
    assert p.next_step.tool == "preview_update" and p.next_step.arguments["knobs"]["trust"] > 0.003
    assert "stale" in p.summary
    q = preview_update("FlashReinforce", trajectories=logged(stale=60))
    assert q.verdict == "nothing_admitted" and q.n_admitted == 0
    s = preview_update("SAO", {"ratio": [0.9, 1.1]}, trajectories=logged(stale=60, shift=0.5))
    assert s.verdict in ("too_stale", "nothing_admitted") and s.next_step.arguments["method"] == "SAO"


def test_no_signal_and_off_policy():
    p = preview_update("FlashReinforce", trajectories=logged(reward=1.0))
    assert p.verdict == "no_signal" and p.next_step.tool == "band"
    # a critic still has signal when every reward is the same (A = R - V)
    assert preview_update("BPCO", trajectories=logged(reward=1.0)).verdict == "ok"
    g = preview_update("grpo", {"group_size": 4}, trajectories=logged(stale=30))
    assert g.verdict == "off_policy"
    assert g.next_step.arguments == {"method": "Async", "knobs": {"method": "grpo", "correction": "icepop"}}
    a = preview_update("Async", {"method": "grpo", "correction": "icepop"}, trajectories=logged())
    assert a.verdict == "ok" and a.next_step.tool == "prime_rl_config"


def test_preview_does_not_move_rae_baselines():
    r = RAE()
    preview_update(r, trajectories=logged(n=8))
    assert r.baselines == {}


def test_max_trajectories_and_small_batch_warnings():
    p = preview_update("FlashReinforce", trajectories=logged(n=12), max_trajectories=5)
    assert p.n_trajectories == 5
    assert any("7 more were left out" in w for w in p.warnings)
    assert any("only 5 trajectories" in w for w in p.warnings)


def test_opd_preview_without_a_teacher_name():
    p = preview_update("OPD", trajectories=[{"reward": 0, "logprobs": [-1.0, -0.5], "teacher_logprobs": [-0.5, -0.5]}])
    assert p.stats["reverse_kl"] == pytest.approx(-0.25)
    assert any("teacher" in w for w in p.warnings)
    a = preview_update("Async", {"method": "opd"}, trajectories=[{"reward": 0, "logprobs": [-1.0], "teacher_logprobs": [-0.5]}])
    assert a.method == "async opd" and a.stats["reverse_kl"] == pytest.approx(-0.5)


def test_errors_say_what_to_fix(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reward": 1, "logprobs": [-1.0]}\n{oops\n')
    with pytest.raises(ValueError, match="line 2: not valid JSON"):
        preview_update("FlashReinforce", path=str(bad))
    with pytest.raises(ValueError, match="no such file"):
        preview_update("FlashReinforce", path=str(tmp_path / "missing.jsonl"))
    with pytest.raises(ValueError, match="not both"):
        preview_update("FlashReinforce", trajectories=[], path=str(bad))
    with pytest.raises(ValueError, match="unknown method 'sft'"):
        preview_update("sft", trajectories=logged(n=2))
    with pytest.raises(ValueError, match="trust must be a number"):
        preview_update("FlashReinforce", {"trust": -1}, trajectories=logged(n=2))
    with pytest.raises(ValueError, match="trajectory 1: reward"):
        preview_update("FlashReinforce", trajectories=[{"reward": 1, "logprobs": [-1.0]}, {"logprobs": [-1.0], "reward": None}])
    with pytest.raises(ValueError, match="SAO needs values"):
        preview_update("SAO", trajectories=[{"reward": 1, "logprobs": [-1.0]}])


def test_a_reward_too_large_to_average_is_refused():
    batch = [{"reward": 1e300, "logprobs": [-0.5, -1.2]}, {"reward": 0.0, "logprobs": [-0.7]}]
    with pytest.raises(ValueError, match=r"trajectory 0: reward .* rescale"):
        preview_update("FlashReinforce", trajectories=batch)


def test_trajectory_files_are_capped_and_decoding_errors_named(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b'{"reward": 1.0, "logprobs": [-0.5]}\n{"reward": 0.0, "logprobs": [-0.7], "x": "\xff"}\n')
    with pytest.raises(ValueError, match=r"line 2: not UTF-8"):
        preview_update("FlashReinforce", path=str(path))
    with pytest.raises(ValueError, match=r"over the cap of 10"):
        preview_update("FlashReinforce", path=str(path), max_bytes=10)
