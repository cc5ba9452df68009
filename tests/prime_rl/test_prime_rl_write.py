"""prime_rl_config(out=...): atomic, no-clobber writes; clear errors; nothing partial left behind."""

from __future__ import annotations

import errno
import os
import threading
import tomllib

import pytest

import pick_a_method.common.write as pr
from pick_a_method.trainers.prime_rl import prime_rl_config

ARGS = {"taskset": "refunds-v1", "method": "grpo", "model": "Qwen/Qwen3-8B"}


def write(out, **kw):
    return prime_rl_config(**ARGS, out=out, **kw)


def test_writes_the_file_and_reports_it(tmp_path):
    target = tmp_path / "rl.toml"
    res = write(target)
    assert res.verdict == "written"
    assert res.path == str(target.resolve())
    assert target.read_text() == res.text
    assert tomllib.loads(target.read_text()) == res.config
    assert res.command == f"uv run rl @ {target.resolve()}"
    assert res.next_step.command == res.command and res.next_step.tool is None
    assert f"Launch: uv run rl @ {target}" in res.text
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]


def test_path_with_spaces_is_quoted_in_the_command(tmp_path):
    folder = tmp_path / "my runs"
    folder.mkdir()
    res = write(folder / "a b.toml")
    assert res.command == f"uv run rl @ '{folder.resolve() / 'a b.toml'}'"


def test_relative_path_is_resolved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = write("rl.toml")
    assert res.path == str(tmp_path.resolve() / "rl.toml")


def test_existing_file_is_never_replaced_without_overwrite(tmp_path):
    target = tmp_path / "rl.toml"
    target.write_text("keep me\n")
    with pytest.raises(ValueError, match="already exists.*overwrite=True"):
        write(target)
    assert target.read_text() == "keep me\n"
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]
    res = write(target, overwrite=True)
    assert target.read_text() == res.text
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]


def test_existing_symlink_counts_as_existing(tmp_path):
    real = tmp_path / "real.toml"
    real.write_text("x\n")
    (tmp_path / "link.toml").symlink_to(real)
    with pytest.raises(ValueError, match="already exists"):
        write(tmp_path / "link.toml")
    assert real.read_text() == "x\n"


def test_missing_folder_and_folder_paths_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist.*mkdir -p"):
        write(tmp_path / "nope" / "rl.toml")
    d = tmp_path / "dir.toml"
    d.mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        write(d)
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(ValueError, match="(not a folder|does not exist)"):
        write(f / "rl.toml")
    with pytest.raises(ValueError, match=r"\.toml"):
        write(tmp_path / "rl.json")
    with pytest.raises(ValueError, match="out must"):
        write("")
    assert sorted(os.listdir(tmp_path)) == ["dir.toml", "file"]


def test_allowed_roots(tmp_path):
    inside, outside = tmp_path / "runs", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    res = write(inside / "rl.toml", allowed_roots=[str(inside)])
    assert res.verdict == "written"
    with pytest.raises(ValueError) as err:
        write(outside / "rl.toml", allowed_roots=[str(inside)])
    assert str(inside.resolve()) in str(err.value) and "allowed roots" in str(err.value)
    with pytest.raises(ValueError, match="outside"):
        write(inside / ".." / "elsewhere" / "x.toml", allowed_roots=[inside])
    (inside / "escape").symlink_to(outside)  # a link inside the root that points out of it
    with pytest.raises(ValueError, match="outside"):
        write(inside / "escape" / "x.toml", allowed_roots=[inside])
    with pytest.raises(ValueError, match="outside"):
        write(inside / "y.toml", allowed_roots=[])
    assert os.listdir(outside) == []


def test_refusals_write_nothing(tmp_path):
    with pytest.raises(ValueError):
        prime_rl_config("refunds-v1", "sao", model="Qwen/Qwen3-8B", out=tmp_path / "rl.toml")
    with pytest.raises(ValueError):
        prime_rl_config("refunds-v1", "grpo", model="Qwen/Qwen3-8B", out=tmp_path / "rl.toml", batch=60)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("where", ["fsync", "write", "link", "replace"])
def test_a_failure_mid_write_leaves_the_folder_clean(tmp_path, monkeypatch, where):
    target = tmp_path / "rl.toml"
    overwrite = where == "replace"
    if overwrite:
        target.write_text("old\n")

    def boom(*a, **k):
        raise OSError(errno.EIO, f"simulated {where} failure")

    if where == "fsync":
        monkeypatch.setattr(pr.os, "fsync", boom)
    elif where == "link":
        monkeypatch.setattr(pr.os, "link", boom)
    elif where == "replace":
        monkeypatch.setattr(pr.os, "replace", boom)
    else:
        real_fdopen = os.fdopen

        class HalfWriter:
            def __init__(self, fh):
                self.fh = fh

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

            def write(self, text):
                self.fh.write(text[: len(text) // 2])
                self.fh.flush()
                raise OSError(errno.ENOSPC, "simulated disk full")

        monkeypatch.setattr(pr.os, "fdopen", lambda fd, *a, **k: HalfWriter(real_fdopen(fd, *a, **k)))
    with pytest.raises(OSError, match="simulated"):
        write(target, overwrite=overwrite)
    assert sorted(os.listdir(tmp_path)) == (["rl.toml"] if overwrite else [])
    if overwrite:
        assert target.read_text() == "old\n"


def test_no_hard_links_falls_back_to_exclusive_create(tmp_path, monkeypatch):
    def no_links(*a, **k):
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(pr.os, "link", no_links)
    target = tmp_path / "rl.toml"
    res = write(target)
    assert target.read_text() == res.text
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]
    with pytest.raises(ValueError, match="already exists"):
        pr._write_atomic(target, "other", overwrite=False)
    assert target.read_text() == res.text
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]


def test_the_no_clobber_primitive_itself(tmp_path):
    target = tmp_path / "rl.toml"
    target.write_text("first\n")
    with pytest.raises(ValueError, match="already exists"):
        pr._write_atomic(target, "second\n", overwrite=False)
    assert target.read_text() == "first\n"
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]


def test_racing_writers_exactly_one_wins(tmp_path, monkeypatch):
    """Writers that all passed the existence check: the link step still lets only one through."""
    target = tmp_path / "rl.toml"
    n = 8
    barrier = threading.Barrier(n)
    real_link = os.link

    def link_after_everyone_checked(src, dst):
        barrier.wait(timeout=10)
        return real_link(src, dst)

    monkeypatch.setattr(pr.os, "link", link_after_everyone_checked)
    outcomes: list[object] = []
    lock = threading.Lock()

    def run(i):
        try:
            res = prime_rl_config(**ARGS, out=target, steps=10 + i)
            with lock:
                outcomes.append(res)
        except ValueError as exc:
            with lock:
                outcomes.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    wins = [o for o in outcomes if not isinstance(o, Exception)]
    losses = [o for o in outcomes if isinstance(o, ValueError)]
    assert len(wins) == 1 and len(losses) == n - 1
    assert all("already exists" in str(e) for e in losses)
    assert target.read_text() == wins[0].text
    assert sorted(os.listdir(tmp_path)) == ["rl.toml"]
