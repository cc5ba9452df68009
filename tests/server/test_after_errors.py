"""`after`'s errors at the edges a person meets: a nameless --guard, an unquoted glob, and a call whose arms lie in
several folders outside the allowed roots (every one named at once)."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from pick_a_method.common.errors import InputError
from server.call_roots import check_call_roots
from server.cli import main

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "eval_tools"
BASE, TRAINED = TOOLS / "verifiers" / "0.3.1", TOOLS / "verifiers" / "trained" / "0.3.1"


def test_a_guard_without_a_name_shows_a_guards_example(capsys):
    with pytest.raises(SystemExit):
        main(["after", str(BASE), str(TRAINED), "--guard", "a.jsonl,b.jsonl"])
    err = capsys.readouterr().err
    assert "--guard safety=" in err and "group_size=16" not in err


def test_an_unquoted_glob_says_to_quote_it(capsys):
    runs = sorted(str(p) for p in (TOOLS / "lm_eval" / "0.4.13" / "seeds").glob("run-seed*/*/samples_*.jsonl"))
    with pytest.raises(SystemExit):
        main(["after", *runs, str(TRAINED)])
    assert "did the shell expand a glob? Quote it" in capsys.readouterr().err


def test_every_folder_outside_the_roots_is_named_at_once(tmp_path):
    a = SimpleNamespace(row_sets={"before_rows": True, "after_rows": True}, before_rows_path=str(BASE),
                        after_rows_path=str(TRAINED), frozen_path=str(tmp_path / "frozen.json"), guards=None)
    with pytest.raises(InputError) as e:
        check_call_roots(a, [tmp_path])
    text = str(e.value)
    assert "reads 2 folders outside" in text and f"--root {BASE}" in text and f"--root {TRAINED}" in text
    check_call_roots(a, [TOOLS])  # the arms inside: nothing to say (the manifest's own folder is tmp_path: one)
