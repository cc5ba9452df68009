"""Files through the MCP tools: odd files read to the right answer or a clear error, a million rows stream,
and prime_rl_config's `out` never clobbers, never escapes the write roots and never leaves a partial file.

tests/routing/test_rows.py covers the reader's formats and line-numbered errors on the core; here the same
kinds of files (and the ones it does not cover: pipes, devices, symlinks, damaged gzip, bombs) go through
the server, where an uncaught exception would become the SDK's bare "Error executing tool band".
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from rowkit import MODEL, rows_from_passes
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions
from pick_a_method.server.cli import _options, _parser

MIXED = rows_from_passes([0, 1, 2, 3, 4] * 4)  # 20 tasks x 4: band "mixed"
GOOD = "".join(json.dumps(r) + "\n" for r in MIXED).encode()
CAP = 20 << 20  # --max-bytes for these tests


def call(options: ServerOptions, tool: str, args: dict, limit: float = 60):
    """One call on a fresh in-memory client; returns (is_error, text, structured)."""
    async def go():
        async with Client(create_server(options)) as c:
            with anyio.fail_after(limit):
                r = await c.call_tool(tool, args)
        return r.is_error, (r.content[0].text if r.content else ""), r.structured_content

    return anyio.run(go)


def _unblock_fifo(path: Path) -> None:
    """If a reader is stuck opening the pipe, let it through (so a regression fails instead of hanging exit)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        assert e.errno == errno.ENXIO  # nobody is reading: the server did not open it
        return
    os.close(fd)


# name -> (how to make it, "mixed"/"empty" for the band verdict, or words the tool error must contain)
FILES = {
    "good.jsonl": (lambda p: p.write_bytes(GOOD), "mixed"),
    "bom_crlf.jsonl": (lambda p: p.write_bytes(b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n")), "mixed"),
    "good.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(GOOD)), "mixed"),
    "bom_crlf.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n"))),
                          "mixed"),
    "gzip_without_gz_name.jsonl": (lambda p: p.write_bytes(gzip.compress(GOOD)), "mixed"),
    "no_newline_at_end.jsonl": (lambda p: p.write_bytes(GOOD.rstrip(b"\n")), "mixed"),
    "empty.jsonl": (lambda p: p.write_bytes(b""), "empty"),
    "only_bom.jsonl": (lambda p: p.write_bytes(b"\xef\xbb\xbf"), "empty"),
    "blank.jsonl": (lambda p: p.write_bytes(b"\n \r\n\t\n"), "empty"),
    "empty.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(b"")), "empty"),
    "cut_mid_line.jsonl": (lambda p: p.write_bytes(GOOD[:-17]), ["line 80", "cut off mid-write"]),
    "cut.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(GOOD)[:-20]), ["gzip stream is cut off or damaged"]),
    "damaged.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(GOOD)[:30] + b"\xff" * 40 + gzip.compress(GOOD)[70:]),
                         ["gzip stream is cut off or damaged"]),
    "bad_gzip_header.jsonl.gz": (lambda p: p.write_bytes(b"\x1f\x8b\x00garbage"), ["gzip"]),
    "utf16.jsonl": (lambda p: p.write_bytes(GOOD.decode().encode("utf-16")), ["line 1", "not valid JSON"]),
    "latin1.csv": (lambda p: p.write_bytes("task_id,reward\ncafé,1\n".encode("latin-1")), ["line 2", "not UTF-8"]),
    "big_cell.csv": (lambda p: p.write_bytes(b"task_id,reward\n" + b"a" * 200_000 + b",1\n"),
                     ["line 2", "not valid CSV", "write the rows as JSONL"]),  # not the csv module's words
    "two_values_a_line.jsonl": (lambda p: p.write_bytes(b'{"task_id": "a", "reward": 1} {"task_id": "b"}\n'),
                                ["line 1"]),
    "huge_int_reward.jsonl": (lambda p: p.write_bytes(b'{"task_id": "a", "reward": 1' + b"0" * 400 + b"}\n"),
                              ["line 1", "reward"]),
    "huge_int_max_tokens.jsonl": (lambda p: p.write_bytes(b'{"task_id": "a", "reward": 1, "max_tokens": 1'
                                                          + b"0" * 400 + b"}\n"), ["line 1", "max_tokens"]),
    "scalar.json": (lambda p: p.write_bytes(b"42"), ["not an array"]),
    "rows.parquet": (lambda p: p.write_bytes(b"PAR1" + b"\x00" * 64), ["parquet"]),
    "rows.bin": (lambda p: p.write_bytes(b"\x00\x01\x02binary"), ["cannot tell the format"]),
    # Past the 20 MB cap only once decompressed: a gzip bomb must stop at the cap, not fill memory first.
    "bomb.json.gz": (lambda p: p.write_bytes(gzip.compress(b"[" + b" " * (64 << 20))),
                     ["once decompressed", "--max-bytes"]),
    "endless_line.csv.gz": (lambda p: p.write_bytes(gzip.compress(b"task_id,reward\n" + b"a" * (64 << 20))),
                            ["once decompressed", "--max-bytes"]),
    "endless_line.jsonl.gz": (lambda p: p.write_bytes(gzip.compress(b'{"a": "' + b"x" * (64 << 20))),
                              ["once decompressed", "--max-bytes"]),
    "too_big.jsonl": (lambda p: p.write_bytes(GOOD * (CAP // len(GOOD) + 1)), ["over the cap", "--max-bytes"]),
    "folder.jsonl": (lambda p: p.mkdir(), ["is a folder"]),
    "missing.jsonl": (lambda p: None, ["no such file"]),
    "fifo.jsonl": (lambda p: os.mkfifo(p), ["not a regular file"]),
    "dev_zero.jsonl": (lambda p: p.symlink_to("/dev/zero"), ["outside the folders"]),  # a link out of the roots
    "symlink_loop.jsonl": (lambda p: p.symlink_to(p), ["no such file"]),
    "dangling.jsonl": (lambda p: p.symlink_to(p.parent / "nowhere.jsonl"), ["no such file"]),
    "link_to_good.jsonl": (lambda p: ((p.parent / "target.jsonl").write_bytes(GOOD), p.symlink_to("target.jsonl")),
                           "mixed"),
}


@pytest.mark.parametrize("name", list(FILES))
def test_an_odd_file_gets_the_right_answer_or_a_clear_error(tmp_path, name, tally):
    make, expected = FILES[name]
    path = tmp_path / name
    make(path)
    started = time.monotonic()
    try:
        is_error, text, out = call(ServerOptions(max_bytes=CAP, call_seconds=30), "band", {"rows_path": str(path)})
    finally:
        if name == "fifo.jsonl":
            _unblock_fifo(path)
    tally.count("odd files read through the band tool")
    if isinstance(expected, str):
        assert not is_error, text
        assert out["verdict"] == expected
    else:
        assert is_error, out
        assert text.startswith("Error executing tool band: "), text
        missing = [w for w in expected if w.lower() not in text.lower()]
        assert not missing, (missing, text)
        assert "budget" not in text  # each is refused for what it is, not by running out the clock
    assert time.monotonic() - started < 20, f"{name} took {time.monotonic() - started:.1f} s"


def test_a_json_file_nested_5000_deep_gets_a_clear_error_in_our_words(tmp_path):
    # orjson 3.13 refuses the depth ("not valid JSON"); releases that parse it leave row 0 a list ("not an
    # object"). Either way the user reads the file's name and what to do in this project's words; the
    # parser's own wording changes between releases and is not asserted.
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 5000 + b"]" * 5000)
    is_error, text, out = call(ServerOptions(max_bytes=CAP, call_seconds=30), "band", {"rows_path": str(path)})
    assert is_error, out
    assert text.startswith(f"Error executing tool band: {path} is not valid JSON: ") or text.startswith(
        f"Error executing tool band: row 0 of {path} is a JSON list, not an object"), text
    fixes = ["a .json file must hold one array of row objects (or use JSONL, one object a line)",
             "each row must be an object with task_id, reward"]
    assert any(fix in text for fix in fixes), text


def test_every_rows_argument_reads_files_the_same_way(tmp_path):
    bad = tmp_path / "cut.jsonl.gz"
    bad.write_bytes(gzip.compress(GOOD)[:-20])
    options = ServerOptions()
    for tool, arg, extra in [("route", "rows_path", {}), ("pass_at", "rows_path", {}),
                             ("truncated_passes", "rows_path", {}),
                             ("teacher_clears", "teacher_rows_path", {"student_rows": MIXED}),
                             ("teacher_clears", "student_rows_path", {"teacher_rows": MIXED}),
                             ("route", "teacher_rows_path", {"rows": MIXED, "model": MODEL}),
                             ("holdout_size", "before_rows_path", {}),
                             ("holdout_size", "after_rows_path", {"before_rows": MIXED})]:
        is_error, text, _ = call(options, tool, {arg: str(bad), **extra})
        assert is_error and "gzip stream is cut off" in text, (tool, arg, text)


# ---------------------------------------------------------------------------------------------------------
# A million rows
# ---------------------------------------------------------------------------------------------------------

MILLION = 1_000_000

STREAM_PROBE = textwrap.dedent("""
    import json, sys, time
    import anyio
    from mcp import Client
    from pick_a_method.server.app import create_server
    from pick_a_method.server.options import ServerOptions

    def status_mb(key):  # VmHWM, not ru_maxrss: after fork+exec that one starts at the parent's peak
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024

    async def main():
        async with Client(create_server(ServerOptions())) as c:
            await c.call_tool("band", {"rows": [{"task_id": "a", "reward": 1}]})  # warm: imports, schemas
            before = status_mb("VmRSS")
            t = time.perf_counter()
            r = await c.call_tool("route", {"rows_path": sys.argv[1], "model": "Qwen/Qwen3-8B"})
            seconds = time.perf_counter() - t
            peak = status_mb("VmHWM")
        print(json.dumps({"error": r.is_error, "text": r.content[0].text[:300], "seconds": seconds,
                          "route": (r.structured_content or {}).get("route"), "peak_mb": peak, "before_mb": before}))

    anyio.run(main)
""")


def test_a_million_rows_stream_through_the_tool_in_bounded_memory(tmp_path, tally):
    path = tmp_path / "million.jsonl"
    line = '{"task_id": "t%d", "reward": %d.0, "truncated": false, "model": "Qwen/Qwen3-8B"}\n'
    with open(path, "w") as f:
        f.writelines(line % (i // 8, (i * 7) % 3 == 0) for i in range(MILLION))
    size_mb = path.stat().st_size / 2**20
    probe = subprocess.run([sys.executable, "-c", STREAM_PROBE, str(path)], capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr[-3000:]
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    assert not got["error"], got["text"]
    assert got["route"] == "grpo"
    growth = got["peak_mb"] - got["before_mb"]
    tally.figure("1M-row JSONL through route", f"{size_mb:.0f} MB file, {got['seconds']:.1f} s, peak RSS growth "
                 f"{growth:.0f} MB")
    assert growth < 1024, got  # generous: rows stream in 4 MB blocks; all 1M rows as dicts at once is ~350 MB more


# ---------------------------------------------------------------------------------------------------------
# prime_rl_config's `out`
# ---------------------------------------------------------------------------------------------------------

CONFIG = {"taskset": "refunds-v1", "method": "grpo", "model": MODEL}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_out_is_written_once_and_never_clobbered_without_overwrite(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    options = ServerOptions(write_roots=(root,))
    out = root / "rl.toml"
    is_error, text, result = call(options, "prime_rl_config", {**CONFIG, "out": str(out)})
    assert not is_error, text
    assert result["verdict"] == "written" and out.read_text().startswith("# prime-rl")
    first = out.read_bytes()
    for method in ("grpo", "max_rl"):  # the same call again, or another config to the same path
        is_error, text, _ = call(options, "prime_rl_config", {**CONFIG, "method": method, "out": str(out)})
        assert is_error and "already exists" in text and "overwrite" in text, text
        assert out.read_bytes() == first
    is_error, text, result = call(options, "prime_rl_config", {**CONFIG, "method": "max_rl", "out": str(out),
                                                               "overwrite": True})
    assert not is_error, text
    assert out.read_bytes() != first and "max_rl" in out.read_text().lower().replace("-", "_")
    assert sorted(_files(root)) == ["rl.toml"]  # no temporary file left behind


def test_out_outside_the_write_roots_is_refused(tmp_path, monkeypatch):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "escape.toml").symlink_to(outside / "victim.toml")  # dangling: the target does not exist yet
    (outside / "existing.toml").write_text("keep me\n")
    (root / "to_existing.toml").symlink_to(outside / "existing.toml")
    monkeypatch.chdir(root)
    options = ServerOptions(write_roots=(root,))
    for out in [str(outside / "x.toml"), "../outside/x.toml", str(root / ".." / "outside" / "x.toml"),
                str(root / "escape_dir" / "x.toml"), str(root / "escape.toml"), "escape_dir/x.toml",
                str(root / "to_existing.toml"), "/etc/pick-a-method-test.toml"]:
        for overwrite in (False, True):
            is_error, text, _ = call(options, "prime_rl_config", {**CONFIG, "out": out, "overwrite": overwrite})
            assert is_error and "outside the folders this server may write to" in text, (out, text)
    assert _files(outside) == {"existing.toml": b"keep me\n"}
    assert not Path("/etc/pick-a-method-test.toml").exists()
    is_error, text, _ = call(options, "prime_rl_config", {**CONFIG, "out": "inside.toml"})  # relative: under cwd
    assert not is_error, text
    assert (root / "inside.toml").is_file()


def test_write_roots_default_to_the_folder_the_server_started_in(tmp_path, monkeypatch):
    start, other = tmp_path / "start", tmp_path / "other"
    start.mkdir()
    other.mkdir()
    monkeypatch.chdir(start)
    monkeypatch.delenv("PICK_A_METHOD_ROOTS")  # no roots given: the folder it started in
    options = ServerOptions()  # the default: the cwd at start
    assert options.write_roots == (start.resolve(),)
    assert not call(options, "prime_rl_config", {**CONFIG, "out": "rl.toml"})[0]
    is_error, text, _ = call(options, "prime_rl_config", {**CONFIG, "out": str(other / "rl.toml")})
    assert is_error and "outside" in text
    # --allow-write adds folders (and replaces the default)
    allowed = _options(_parser().parse_args(["--allow-write", str(other), "--allow-write", "sub"]))
    assert allowed.write_roots == (other.resolve(), (start / "sub").resolve())
    assert not call(allowed, "prime_rl_config", {**CONFIG, "out": str(other / "rl.toml")})[0]
    is_error, text, _ = call(allowed, "prime_rl_config", {**CONFIG, "out": str(start / "again.toml")})
    assert is_error and "outside" in text


@pytest.mark.parametrize("fail_at", ["fsync", "link", "replace", "write"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_an_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch, fail_at, overwrite):
    """A full disk (OSError) or a Ctrl-C (KeyboardInterrupt) mid-write: the old file or none, never half a one."""
    import pick_a_method.common.write as writer

    root = tmp_path / "root"
    root.mkdir()
    out = root / "rl.toml"
    if overwrite:
        out.write_text("# the old config\n")
    before = _files(root)

    def boom(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device (simulated)")

    if fail_at == "fsync":
        monkeypatch.setattr(writer.os, "fsync", boom)
    elif fail_at == "link":
        monkeypatch.setattr(writer.os, "link", boom)
    elif fail_at == "replace":
        monkeypatch.setattr(writer.os, "replace", boom)
    else:  # the disk fills after half the text is out
        real_fdopen = os.fdopen

        class HalfWritten:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()
                return False

            def write(self, text):
                self.fh.write(text[: len(text) // 2])
                self.fh.flush()
                raise OSError(errno.ENOSPC, "No space left on device (simulated)")

            def __getattr__(self, name):
                return getattr(self.fh, name)

        monkeypatch.setattr(writer.os, "fdopen", lambda fd, *a, **k: HalfWritten(real_fdopen(fd, *a, **k)))
    is_error, text, _ = call(ServerOptions(write_roots=(root,)), "prime_rl_config",
                             {**CONFIG, "out": str(out), "overwrite": overwrite})
    if fail_at == ("replace" if not overwrite else "link"):
        assert not is_error, text  # that path does not use the failing call
        return
    assert is_error and "No space left on device" in text, text
    assert _files(root) == before, f"left behind: {sorted(set(_files(root)) - set(before))}"


def test_a_ctrl_c_mid_write_leaves_no_partial_file(tmp_path, monkeypatch):
    import pick_a_method.common.write as writer
    from pick_a_method.trainers.prime_rl import prime_rl_config

    root = tmp_path / "root"
    root.mkdir()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prime_rl_config("refunds-v1", "grpo", model=MODEL, out=str(root / "rl.toml"), allowed_roots=[root])
    assert _files(root) == {}


@pytest.mark.parametrize("name, make, words", [
    ("fifo.jsonl", lambda p: os.mkfifo(p), ["not a regular file"]),
    ("zero.jsonl", lambda p: p.symlink_to("/dev/zero"), ["outside the folders"]),  # a link out of the roots
    ("folder.jsonl", lambda p: p.mkdir(), ["directory"]),
    ("missing.jsonl", lambda p: None, ["no such file"]),
    ("empty.jsonl", lambda p: p.write_bytes(b""), ["no trajectories"]),
    ("not_utf8.jsonl", lambda p: p.write_bytes(b'{"reward": 1, "logprobs": [-1.0], "x": "\xff"}\n'), ["utf-8"]),
    ("cut.jsonl", lambda p: p.write_bytes(b'{"reward": 1, "logprobs": [-1.0]}\n{"reward": 0, "logp'), ["line 2"]),
])
def test_preview_update_path_gets_the_same_care(tmp_path, name, make, words):
    path = tmp_path / name
    make(path)
    try:
        is_error, text, _ = call(ServerOptions(call_seconds=30), "preview_update",
                                 {"method": "FlashReinforce", "path": str(path)})
    finally:
        if name == "fifo.jsonl":
            _unblock_fifo(path)
    assert is_error and all(w.lower() in text.lower() for w in words), text
    assert "budget" not in text
