"""Reading rows from files: every format, and every way a file goes wrong."""

import gzip
import json

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing import InputError, read_rows

from rowkit import EXAMPLES, rows_from_passes

ROWS = rows_from_passes([0, 1, 2, 3, 4])


def jsonl(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


def same_columns(a, b):
    return (a.task_names == b.task_names and np.array_equal(a.task, b.task)
            and np.array_equal(a.reward, b.reward, equal_nan=True) and np.array_equal(a.truncated, b.truncated))


@pytest.mark.parametrize("name, write", [
    ("rows.jsonl", lambda p: p.write_text(jsonl(ROWS))),
    ("rows.jsonl.gz", lambda p: p.write_bytes(gzip.compress(jsonl(ROWS).encode()))),
    ("rows.json", lambda p: p.write_text(json.dumps(ROWS))),
    ("rows.json", lambda p: p.write_text(json.dumps({"rows": ROWS}))),
    ("rows.jsonl", lambda p: p.write_bytes(b"\xef\xbb\xbf" + jsonl(ROWS).replace("\n", "\r\n").encode())),
    ("rows.jsonl", lambda p: p.write_text(jsonl(ROWS).replace("\n", "\n\n"))),  # blank lines
    ("rows.txt", lambda p: p.write_text(jsonl(ROWS))),  # sniffed
    ("rows.csv", lambda p: p.write_text("task_id,reward,truncated,model\n" + "".join(
        f"{r['task_id']},{r['reward']},{str(r['truncated']).lower()},{r['model']}\n" for r in ROWS))),
])
def test_every_format_reads_the_same_rows(tmp_path, name, write):
    path = tmp_path / name
    write(path)
    got = read_rows(path)
    assert same_columns(got, routing.as_rows(ROWS))
    assert got.source == str(path)
    assert routing.route(got, "Qwen/Qwen3-8B").route == "grpo"


def test_parquet_reads_the_same_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    got = read_rows(path)
    assert same_columns(got, routing.as_rows(ROWS)) and got.lines is None
    assert routing.route(got, "Qwen/Qwen3-8B").route == "grpo"


def test_line_numbers_point_at_the_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(ROWS[:3]) + "\n" + json.dumps({"task_id": "x", "reward": "bad"}) + "\n")
    with pytest.raises(InputError, match=r"line 5 of .*rows.jsonl: reward is str 'bad'") as e:
        read_rows(path)
    assert e.value.field == "reward"


def test_truncated_last_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(ROWS[:4]) + '{"task_id": "t9", "rew')
    with pytest.raises(InputError, match=r"line 5 .*cut off mid-write"):
        read_rows(path)


@pytest.mark.parametrize("make, words", [
    (lambda p: p, "no such file"),
    (lambda p: (p.mkdir(), p)[1], "is a folder"),
    (lambda p: (p.write_bytes(b'{"task_id": "a", "reward": 1}\n{"task_id": "\xff\xfe", "reward": 1}\n'), p)[1],
     "not valid JSON"),
    (lambda p: (p.write_text("[1, 2"), p.rename(p.with_suffix(".json")), p.with_suffix(".json"))[-1], "not valid JSON"),
    (lambda p: (p.write_text('{"a": 1}'), p.rename(p.with_suffix(".json")), p.with_suffix(".json"))[-1],
     "not an array"),
])
def test_file_errors_say_what_is_wrong(tmp_path, make, words):
    path = make(tmp_path / "rows.jsonl")
    with pytest.raises(InputError, match=words):
        read_rows(path)


def test_non_utf8_csv_names_the_line(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_bytes(b"task_id,reward\na,1\nb\xff,0\n")
    with pytest.raises(InputError, match=r"line 3 .* not UTF-8"):
        read_rows(path)


def test_csv_header_typo_gets_a_hint(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("taskid,reward\na,1\n")
    with pytest.raises(InputError, match=r"did you mean 'taskid'"):
        read_rows(path)
    path.write_text("task_id,rewrd\na,1\nb,0\nc,1\n")
    verdict = routing.route(read_rows(path), "m")
    assert verdict.route == "grade_first"
    assert any("did you mean 'rewrd'" in w for w in verdict.warnings)


def test_empty_file_is_no_rows(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("")
    rows = read_rows(path)
    assert len(rows) == 0
    assert routing.band(rows).verdict == "empty"


def test_unknown_format(tmp_path):
    path = tmp_path / "rows.bin"
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_rows(path)


def test_caps_name_themselves(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(ROWS))
    with pytest.raises(InputError, match=r"more than 5 rows; raise the cap with --max-rows"):
        read_rows(path, max_rows=5)
    with pytest.raises(InputError, match=r"over the cap of 100 bytes"):
        read_rows(path, max_bytes=100)
    gz = tmp_path / "rows.jsonl.gz"
    gz.write_bytes(gzip.compress(jsonl(ROWS * 20).encode()))
    with pytest.raises(InputError, match="once decompressed"):
        read_rows(gz, max_bytes=gz.stat().st_size + 10)  # the file fits, its content does not


def test_progress_is_reported_and_rises(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(rows_from_passes([1, 2, 3] * 20_000)))
    seen = []
    read_rows(path, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2 and all(a[0] < b[0] for a, b in zip(seen, seen[1:]))
    assert seen[-1][1] == path.stat().st_size


def test_chunks_share_task_codes(tmp_path):
    rows = [{"task_id": f"t{i % 7}", "reward": float(i % 2)} for i in range(routing.readers.CHUNK_ROWS + 100)]
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(rows))
    got = read_rows(path)
    assert got.n_tasks == 7 and len(got) == len(rows)
    assert same_columns(got, routing.as_rows(rows))


def test_example_files_read(tmp_path):
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        assert len(read_rows(path)) > 0, path


def test_a_path_passed_as_rows_is_explained():
    with pytest.raises(InputError, match="read_rows"):
        routing.band("rows.jsonl")


def test_an_object_split_across_lines_is_not_two_rows(tmp_path):
    # joined with commas these two lines would parse as two objects; as JSONL the first line is cut
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a", "reward": 1, "x": [1\n2]}\n{"task_id": "b", "reward": 0}\n')
    with pytest.raises(InputError, match=r"line 1 of .* is not valid JSON"):
        read_rows(path)


def test_a_line_that_is_not_an_object_is_named(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(jsonl(ROWS[:2]) + "[1, 2]\n")
    with pytest.raises(InputError, match=r"line 3 of .* is a JSON list, not an object"):
        read_rows(path)
