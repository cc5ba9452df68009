"""The README's "Try it" console block, generated from the current code: each `$ ` command of
the block is run through the CLI and its output shortened by fixed rules, so the block cannot go stale.

    python tests/routing/readme_try_it.py           # print the block
    python tests/routing/readme_try_it.py --write   # put it into README.md

Shortening (deterministic): a question's evidence keeps its JSON with lists shown as [...] and trailing keys
dropped (", ...") until the line fits WIDTH; a "before the GPU" line is cut at the last word that fits, then
" ..."; the verdict's numbers after the checks (model, n_rows, rollouts, cost: `--json` has them) are left out.
tests/routing/test_readme_try_it.py fails when README.md differs from this.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
WIDTH = 120
START = "## Try it\n\n```console\n"
_QUESTION = re.compile(r"^(\s*\*?\s*Q\d+ .*?  )(\{.*\})$")


def _evidence(prefix: str, text: str) -> str:
    data = json.loads(text)
    items = [(k, "[...]" if isinstance(v, list) else json.dumps(v)) for k, v in data.items()]
    shown, cut = items, False
    while shown:
        body = ", ".join(f"{json.dumps(k)}: {v}" for k, v in shown) + (", ..." if cut else "")
        if len(prefix) + len(body) + 2 <= WIDTH:
            return f"{prefix}{{{body}}}"
        shown, cut = shown[:-1], True
    return f"{prefix}{{...}}"


def _cut(line: str) -> str:
    if len(line) <= WIDTH:
        return line
    return line[: WIDTH - 4].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def shorten(output: str) -> list[str]:
    lines = []
    for line in output.splitlines():
        if re.match(r"^  \w+: ", line):  # the verdict's own fields follow the checks: --json shows them
            break
        question = _QUESTION.match(line)
        if question:
            lines.append(_evidence(question[1], question[2]))
        elif line.startswith("before the GPU:"):
            lines.append(_cut(line))
        else:
            lines.append(line)
    return lines


def run(command: str) -> str:
    words = shlex.split(command)
    assert words[0] == "pick-a-method", command
    done = subprocess.run([sys.executable, "-m", "pick_a_method.server.cli", *words[1:]], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"`{command}` failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def current_block(readme: str) -> str:
    start = readme.index(START) + len(START)
    return readme[start: readme.index("```\n", start)]


def generate(readme: str) -> str:
    """The block for the commands the README's block shows, as the code prints them now."""
    commands = [line[2:] for line in current_block(readme).splitlines() if line.startswith("$ ")]
    out = []
    for command in commands:
        out += [f"$ {command}", *shorten(run(command))]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    readme = README.read_text()
    block = generate(readme)
    if "--write" in argv:
        README.write_text(readme.replace(current_block(readme), block, 1))
    else:
        sys.stdout.write(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
