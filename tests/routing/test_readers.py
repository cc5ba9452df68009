"""The readers' mechanics on small files made here: list-index paths, cut-off words, grade letters, provider
prefixes, reward scales, several files, folders and globs, and the closest-format hint. (The eval tools' own
files are in test_eval_formats.py.)"""

import json

import pytest
from rowkit import MODEL, rows_from_passes

from pick_a_method import routing
from pick_a_method.routing import InputError, read_rows
from pick_a_method.common.identity import relation, without_provider
from pick_a_method.routing.readers import registry
from pick_a_method.routing.readers.base import Probe


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("columnar", [False, True])
def test_a_fields_path_indexes_lists_first_and_last(tmp_path, monkeypatch, columnar):
    from pick_a_method.routing.readers import columnar as fast

    monkeypatch.setattr(fast, "SMALL_BYTES", 0 if columnar else 1 << 40)
    rows = [{"id": f"t{i}", "traces": [{"rewards": {"ok": {"score": float(i % 2)}},
                                        "calls": [{"finish_reason": "stop"}, {"finish_reason": "length" if i == 3 else "stop"}]}]}
            for i in range(6)]
    got = read_rows(write(tmp_path / "r.jsonl", rows), fields={"task_id": "id", "reward": "traces.0.rewards.ok.score",
                                                             "truncated": "traces.0.calls.-1.finish_reason"})
    assert got.reward.tolist() == [0, 1, 0, 1, 0, 1]
    assert got.truncated.tolist() == [False, False, False, True, False, False]
    assert got.stated.all()


def test_a_path_past_the_end_of_a_list_reads_as_missing():
    from pick_a_method.routing.fields import get_path

    row = {"a": [{"b": 1}, {"b": 2}]}
    assert [get_path(row, p) for p in ("a.0.b", "a.1.b", "a.-1.b", "a.-2.b", "a.2.b", "a.-3.b", "a.x.b")] == \
        [1, 2, 2, 1, None, None, None]


@pytest.mark.parametrize("word, cut", [("length", True), ("max_tokens", True), ("model_length", True),
                                       ("MAX_TOKENS", True), ("max_output_tokens", True), ("stop", False),
                                       ("end_turn", False), ("STOP", False), ("tool_calls", False)])
def test_cut_off_in_every_vocabulary(word, cut):
    rows = [{"task_id": "a", "reward": 1, "finish_reason": word}, {"task_id": "b", "reward": 0, "stop_reason": word}]
    got = routing.as_rows(rows)
    assert got.truncated.tolist() == [cut, cut] and got.stated.all()
    assert routing.truncated_passes(rows).verdict == ("fix_reward" if cut else "ok")


def test_an_unknown_finish_reason_is_named_with_the_argument_never_read_as_not_cut_off():
    rows = [{"task_id": f"t{i}", "reward": 1, "finish_reason": "budget_exhausted"} for i in range(4)]
    got = routing.as_rows(rows)
    assert not got.stated.any()  # unknown, not "not cut off"
    note = next(n for n in got.notes if "budget_exhausted" in n)
    assert 'fields={"cut_off": "budget_exhausted"}' in note
    mapped = routing.as_rows(rows, fields={"cut_off": "budget_exhausted"})
    assert mapped.truncated.all() and routing.truncated_passes(mapped).verdict == "fix_reward"


def test_inspect_grade_letters_read_as_numbers():
    got = routing.as_rows([{"task_id": "a", "reward": v} for v in "CIPN"])
    assert got.reward.tolist() == [1.0, 0.0, 0.5, 0.0]


@pytest.mark.parametrize("name", ["vllm/Qwen/Qwen3-8B", "hf/Qwen/Qwen3-8B", "openai/Qwen/Qwen3-8B",
                                  "openai-api/standin/Qwen/Qwen3-8B", "together/Qwen/Qwen3-8B"])
def test_provider_prefixes_both_ways(name):
    assert without_provider(name) == "Qwen/Qwen3-8B"
    assert relation(name, "Qwen/Qwen3-8B")[0] == "same"
    assert relation("Qwen/Qwen3-8B", name)[0] == "same"
    assert relation(name, "Qwen/Qwen3-32B")[0] == "other"
    assert routing.on_policy(rows_from_passes([1, 2, 3], model=name), "Qwen/Qwen3-8B").verdict == "yes"


def test_a_reward_on_another_scale_is_never_thresholded_at_1_in_silence():
    rows = [{"task_id": f"t{t}", "reward": float((t + j) % 11), "model": MODEL} for t in range(10) for j in range(4)]
    r = routing.route(rows, MODEL)
    assert r.route == "grade_first" and "0 to 10" in r.summary and "pass_threshold=10" in r.summary
    assert r.next_step.tool == "route" and r.next_step.arguments["pass_threshold"] == 10
    band = routing.band(rows)
    assert any("pass_threshold" in w for w in band.warnings) and band.summary.startswith("Undecided: rewards run")
    ok = routing.route(rows, MODEL, pass_threshold=10)
    assert ok.route != "grade_first"
    assert not any("not 0 to 1" in w for w in ok.warnings)


def test_several_files_are_one_set_and_tasks_with_one_name_are_one_task(tmp_path):
    a = write(tmp_path / "a.jsonl", [{"task_id": f"t{i}", "reward": 1.0, "model": MODEL} for i in range(5)])
    b = write(tmp_path / "b.jsonl", [{"task_id": f"t{i}", "reward": float(i % 2), "model": MODEL} for i in range(5)])
    got = read_rows([str(a), str(b)])
    assert len(got) == 10 and got.n_tasks == 5 and got.model_names == [MODEL]
    assert routing.rollouts_per_task(got).k == 2
    assert routing.band(got).next_step.arguments["rows_path"] == [str(a), str(b)]
    glob = read_rows(str(tmp_path / "*.jsonl"))
    assert len(glob) == 10 and glob.n_tasks == 5
    folder = read_rows(tmp_path)
    assert len(folder) == 10
    assert routing.band(folder).next_step.arguments["rows_path"] == str(tmp_path)


def test_a_folder_passes_over_sidecars_and_says_when_it_holds_no_rows(tmp_path):
    write(tmp_path / "rows.jsonl", rows_from_passes([1, 2, 3]))
    (tmp_path / "config.json").write_text('{"lr": 1e-6}')
    (tmp_path / "notes.txt").write_text("hello")
    assert len(read_rows(tmp_path)) == 12
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text('{"lr": 1e-6}')
    with pytest.raises(InputError, match="is a folder with no rows file"):
        read_rows(empty)
    with pytest.raises(InputError, match="matches no file"):
        read_rows(str(tmp_path / "nothing-*.jsonl"))


def test_a_file_of_no_known_format_names_the_closest_one(tmp_path):
    rows = [{"example_id": i, "reward": 1.0} for i in range(3)]
    with pytest.raises(InputError, match=r"has no task_id.*closest known format: verifiers 0.3"):
        read_rows(write(tmp_path / "r.jsonl", rows))


def test_detection_reads_the_content_not_the_name(tmp_path):
    rows = [{"example_id": 0, "prompt": [{"role": "user", "content": "q"}], "completion": [], "reward": 1.0}]
    p = write(tmp_path / "whatever.jsonl", rows)
    assert registry.detect(Probe.of(p)).name == "verifiers 0.3 results"
    plain = write(tmp_path / "results.jsonl", rows_from_passes([1]))
    assert registry.detect(Probe.of(plain)).name == "rows (jsonl)"


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
@pytest.mark.parametrize("columnar", [False, True])
def test_a_csv_with_semicolons_or_tabs_reads_like_one_with_commas(tmp_path, monkeypatch, delimiter, columnar):
    from pick_a_method.routing.readers import columnar as fast

    monkeypatch.setattr(fast, "SMALL_BYTES", 0 if columnar else 1 << 40)
    lines = [delimiter.join(["task_id", "reward", "truncated", "model"])]
    lines += [delimiter.join([f"t{t}", str(float(j < t % 4)), "false", MODEL]) for t in range(12) for j in range(4)]
    path = tmp_path / "rows.csv"
    path.write_text("\n".join(lines) + "\n")
    got = read_rows(path)
    assert len(got) == 48 and got.n_tasks == 12 and got.model_names == [MODEL]
    assert float(got.reward.sum()) == sum(t % 4 for t in range(12))


@pytest.mark.parametrize("delimiter,name", [(",", "comma"), (";", "semicolon"), ("\t", "tab")])
def test_a_csv_row_with_a_cell_too_many_names_the_files_own_delimiter(tmp_path, delimiter, name):
    path = tmp_path / "rows.csv"
    path.write_text(delimiter.join(["task_id", "reward"]) + "\n" + delimiter.join(["t0", "1", "2"]) + "\n")
    with pytest.raises(InputError, match=rf"line 2 .* quote cells that contain a {name}, the file's delimiter"):
        read_rows(path)


def test_a_csv_split_by_another_character_says_which_delimiters_are_told(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("task_id|reward\nt0|1\n")
    with pytest.raises(InputError, match=r"not a CSV header of named columns split by a comma .*comma, semicolon or tab"):
        read_rows(path)
