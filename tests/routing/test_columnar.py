"""The columnar reader on the files it takes: the same rows and line numbers as the careful reader, piece by
piece, blank lines and CRLF included; and the files it must hand to the careful reader, which names the line.

The files here are small, so SMALL_BYTES is lowered to make the columnar reader take them, and PIECE_BYTES
to cut each file into many pieces (every piece boundary is a place a line number could slip).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.routing import InputError, read_rows
from pick_a_method.routing.readers import columnar
from pick_a_method.routing.readers.builder import ColumnBuilder
from pick_a_method.routing.readers.plain import read_careful

from rowkit import rows_from_passes

ROWS = rows_from_passes([0, 1, 2, 3, 4] * 6)  # 30 tasks x 4
LINES = [json.dumps(r) for r in ROWS]
COLUMNS = ("task", "reward", "truncated", "stated", "model", "max_tokens", "nan_reward", "lines")


@pytest.fixture(params=[1 << 24, 300, 1], ids=["one piece", "pieces of a few lines", "a piece per line"])
def pieces(request, monkeypatch):
    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", request.param)
    return request.param


def fast(path, **kwargs):
    """The columnar reader's rows, or None where it hands the file to the careful reader."""
    builder = ColumnBuilder(source=str(path), **kwargs)
    return columnar.read_columnar(path, "jsonl", builder, size=path.stat().st_size, progress=None)


def careful(path):
    builder = ColumnBuilder(source=str(path))
    read_careful(path, "jsonl", builder, size=path.stat().st_size, progress=None, max_bytes=None)
    return builder.finish()


def assert_same(a, b):
    for col in COLUMNS:
        assert np.array_equal(getattr(a, col), getattr(b, col), equal_nan=True), col
    assert a.task_names == b.task_names and a.model_names == b.model_names


LAYOUTS = {
    "plain": "\n".join(LINES) + "\n",
    "no newline at the end": "\n".join(LINES),
    "blank lines between": "\n\n".join(LINES) + "\n",
    "blank lines first and last": "\n\n" + "\n".join(LINES) + "\n\n\n",
    "lines of spaces and tabs": "\n \t \n".join(LINES) + "\n",
    "CRLF": "\r\n".join(LINES) + "\r\n",
    "CRLF with blank lines": "\r\n\r\n".join(LINES) + "\r\n",
    "spaces around objects": "".join(f"  {line}\t\n" for line in LINES),
    "a blank line every few": "".join(line + "\n" + ("\n" if i % 7 == 3 else "") for i, line in enumerate(LINES)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_columnar_reader_takes_the_file_with_the_careful_readers_lines(tmp_path, pieces, layout):
    path = tmp_path / "rows.jsonl"
    path.write_text(LAYOUTS[layout], newline="")
    got = fast(path)
    assert got is not None, "handed to the careful reader"
    assert_same(got, careful(path))
    assert len(got) == len(ROWS)


def test_line_numbers_count_blank_lines_and_reach_the_evidence(tmp_path, pieces):
    rows = [dict(r) for r in ROWS]
    for i in (41, 57):  # truncated passes, cited by line in question 1's evidence
        rows[i].update(truncated=True, reward=1.0)
    text = "".join(json.dumps(r) + "\n" + ("\n" if i % 5 == 0 else "") for i, r in enumerate(rows))
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    lines = text.split("\n")
    expected = [n + 1 for n, line in enumerate(lines) if line.strip()]
    got = fast(path)
    assert got is not None and got.lines.tolist() == expected
    tp = routing.truncated_passes(got)
    assert [json.loads(lines[e.line - 1]) for e in tp.examples] == [rows[41], rows[57]]
    assert got.where(57) == f"line {expected[57]} of {path}"


def test_an_error_after_blank_lines_names_its_line(tmp_path, pieces):
    text = "\n\n".join(LINES[:50]) + "\n\n" + json.dumps({"task_id": "x", "reward": "high"}) + "\n" + "\n".join(LINES[50:])
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    line = 2 * 50 + 1  # 50 rows, each followed by a blank line
    assert text.split("\n")[line - 1].startswith('{"task_id": "x"')
    with pytest.raises(InputError, match=rf"line {line} of .*reward is str 'high'"):
        read_rows(path)


def test_two_objects_on_a_line_beside_a_blank_line_is_not_read_as_rows(tmp_path, pieces):
    # pyarrow reads `{..} {..}` as two rows and skips the blank line: counting lines alone would match
    text = "\n".join(LINES[:10]) + "\n" + LINES[10] + " " + LINES[11] + "\n\n" + "\n".join(LINES[12:]) + "\n"
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    assert fast(path) is None
    with pytest.raises(InputError, match=r"line 11 of .* is not valid JSON"):
        read_rows(path)


def test_an_object_over_two_lines_goes_to_the_careful_reader(tmp_path, pieces):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(LINES[:3]) + '\n{"task_id": "a",\n "reward": 1}\n' + "\n".join(LINES[3:]) + "\n")
    assert fast(path) is None
    with pytest.raises(InputError, match=r"line 4 of .* is not valid JSON"):
        read_rows(path)


def test_a_line_longer_than_a_piece(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 64)
    long = dict(ROWS[0], notes="x" * 1000)
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(LINES[:5] + [json.dumps(long)] + LINES[5:]) + "\n")
    got = fast(path)
    assert got is not None and len(got) == len(ROWS) + 1
    assert_same(got, careful(path))


def test_progress_rises_piece_by_piece_to_the_size(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 1000)
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    seen = []
    read_rows(path, progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert len(seen) >= size // 1000 and all(a[0] < b[0] for a, b in zip(seen, seen[1:]))
    assert seen[-1] == (size, size) and all(total == size for _, total in seen)


def test_the_row_cap_stops_the_read_between_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    monkeypatch.setattr(columnar, "PIECE_BYTES", 1000)
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(LINES) + "\n")
    seen = []
    with pytest.raises(InputError, match=r"more than 50 rows; raise the cap with --max-rows"):
        read_rows(path, max_rows=50, progress=lambda done, total: seen.append(done))
    assert seen and seen[-1] < path.stat().st_size / 2  # stopped early, not at the end of the file


@pytest.mark.parametrize("rows", [
    [{"task_id": f"t{i % 3}", "reward": 1} for i in range(12)],  # one run per row
    [{"task_id": "a", "reward": 1, "model": m} for m in ("m1", None, None, "m2", "m1", None)],  # null runs
    [{"task_id": "a", "reward": 0, "arm": "x"}, {"task_id": "a", "reward": 1}, {"task_id": "a", "reward": 1, "arm": "x"}],
    [{"scenario_id": "s", "reward": 1}, {"task_id": "s", "reward": 0}, {"task_id": "u", "reward": 0}],  # coalesced
    [{"task_id": i % 4, "reward": 1} for i in range(10)],  # integer ids are their digits
])
def test_codes_by_runs_match_the_careful_codes(tmp_path, pieces, rows):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = fast(path)
    assert got is not None
    slow = careful(path)
    assert_same(got, slow)
    assert got.arm_names == slow.arm_names and np.array_equal(got.arms, slow.arms)


def careful_with(path, **kwargs):
    builder = ColumnBuilder(source=str(path), **kwargs)
    read_careful(path, "jsonl", builder, size=path.stat().st_size, progress=None, max_bytes=None)
    return builder.finish()


MESSAGES = [
    [{"role": "user", "content": "q"}, {"role": "assistant", "content": "the answer is 4"}],
    [{"role": "user", "content": "q"}, {"role": "assistant", "content": " \n"}],  # blank
    [{"role": "assistant", "content": None, "tool_calls": None}],  # blank
    [{"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]}, {"role": "tool", "content": "42"},
     {"role": "assistant", "content": "done"}],  # a tool trajectory
    [],  # nothing written
    None,  # no reply
    [{"role": "user", "content": "q"}],  # no assistant message: an empty reply
]
REPLY_COLUMNS = {
    "strings": lambda i: ["the answer is 4", "", "  ", None, "ünïcode\u3000", "the answer is 4", "x" * 300][i % 7],
    "message lists": lambda i: MESSAGES[i % len(MESSAGES)],
    "trace nodes": lambda i: None if i % 5 == 4 else [{"message": {"role": "user", "content": "q"}},
                                                      {"message": {"role": "assistant", "content": "n" * (i % 3)}}],
}


@pytest.mark.parametrize("shape", REPLY_COLUMNS)
def test_replies_and_other_grades_read_alike_by_both_readers(tmp_path, pieces, shape):
    rows = [dict(r, completion=REPLY_COLUMNS[shape](i), judge=float(i % 3 == 0), scores={"x": i % 2})
            for i, r in enumerate(ROWS)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = {"other_rewards": "judge, scores.x"}
    got = fast(path, fields=fields)
    assert got is not None, "handed to the careful reader"
    slow = careful_with(path, fields=fields)
    assert_same(got, slow)
    assert np.array_equal(got.reply_len, slow.reply_len) and np.array_equal(got.reply_hash, slow.reply_hash)
    assert got.graders.keys() == slow.graders.keys() == {"judge", "scores.x"}
    assert all(np.array_equal(got.graders[k], slow.graders[k], equal_nan=True) for k in got.graders)
    same = [r["completion"] == rows[0]["completion"] for r in rows]  # equal replies, equal hashes
    have = got.reply_len >= 0
    assert np.array_equal((got.reply_hash == got.reply_hash[0]) & have, np.array(same) & have)


def test_a_reply_of_content_parts_goes_to_the_careful_reader(tmp_path, pieces):
    rows = [dict(r, completion=[{"role": "assistant", "content": [{"type": "text", "text": f"part {i}"}]}])
            for i, r in enumerate(ROWS)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fast(path) is None  # content parts: only the careful reader joins them
    got = read_rows(path)
    assert got.reply_len.tolist() == [len(f"part {i}") for i in range(len(ROWS))]
