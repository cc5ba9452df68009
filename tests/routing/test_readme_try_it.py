"""The README's "Try it" block is what the code prints now, and the config command under it is
the route's own next step, writing the batch and k the route advises."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readme_try_it as T  # noqa: E402 - the generator beside this file

REGENERATE = "python tests/routing/readme_try_it.py --write"


def test_the_try_it_block_is_what_the_commands_print():
    readme = T.README.read_text()
    shown, now = T.current_block(readme), T.generate(readme)
    assert shown == now, f"README.md's Try it block is stale; regenerate it with `{REGENERATE}`"


def test_the_shortening_is_fixed():
    line = '   Q9 x: y  {"a": [1, 2], "b": "' + "z" * 200 + '"}'
    assert T.shorten(line) == ['   Q9 x: y  {"a": [...], ...}']
    long = "before the GPU: " + "word " * 40
    (cut,) = T.shorten(long)
    assert len(cut) <= T.WIDTH and cut.endswith(" word ...")
    assert T.shorten("grpo: x\n  model: m\n  n_rows: 3") == ["grpo: x"]


def test_the_config_command_shown_is_the_next_step_and_writes_the_advised_batch(tmp_path):
    readme = T.README.read_text()
    block = T.current_block(readme)
    next_command = re.search(r"^next: (pick-a-method prime-rl-config .*)$", block, re.M)[1]
    batch = int(re.search(r"\(batch (\d+)\)", block)[1])
    group = int(re.search(r"Sample \d+ prompts x (\d+) per step", block)[1])
    after = readme[readme.index(T.START) + len(T.START) + len(block):]
    (shown,) = re.findall(r"^\$ (pick-a-method prime-rl-config .*)$", after, re.M)[:1]
    assert shown == next_command  # the next step as printed, which names the file it writes
    out = shlex.split(shown)[-1]
    (launch,) = re.findall(r"^\$ (uv run rl @ \S+)", after, re.M)[:1]
    assert launch == f"uv run rl @ {out}"  # the launch reads the file the step wrote
    done = subprocess.run([sys.executable, "-m", "pick_a_method.server.cli", *shlex.split(shown)[1:]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"uv run rl @ {tmp_path / out}" in done.stdout  # and the command it prints names that same file
    config = tomllib.loads((tmp_path / out).read_text())
    assert (config["orchestrator"]["batch_size"], config["orchestrator"]["group_size"]) == (batch, group)
