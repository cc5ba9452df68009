"""The light install, as `pip install pick-a-method` gives it: the built wheel in a fresh virtualenv without torch.

The wheel claims one top-level package (pick_a_method); the router, the server and the CLI work; preview_update
and the tokenizer check answer with the [torch] extra's install line, runnable as printed. pip resolves the light
dependencies from the index (its cache makes a rerun quick), so the test needs PyPI: deselect it offline with
-m "not network".
"""

import importlib.util
import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from rowkit import EXAMPLES, MODEL

pytestmark = pytest.mark.network
REPO = Path(__file__).resolve().parents[2]
# The [torch] hint as the light install prints it: its own python has no pip (made without), so uv's, with the
# extra's ranges and PyTorch's CPU index; {python} is the light venv's interpreter.
EXTRA = ("uv pip install --python {python} 'torch>=2.2,<3' 'transformers>=4.40,<6' "
         "--extra-index-url https://download.pytorch.org/whl/cpu")

MCP_CHECK = f"""
import anyio, json, sys
from mcp import Client
from pick_a_method.server.app import create_server

async def main():
    async with Client(create_server()) as c:
        routed = await c.call_tool("route", {{"rows_path": {str(EXAMPLES / "mixed.jsonl")!r}, "model": {MODEL!r}}})
        preview = await c.call_tool("preview_update", {{"method": "FlashReinforce",
                                                        "path": {str(EXAMPLES / "traces.jsonl")!r}}})
        tok = await c.call_tool("teacher_clears", {{"teacher_rows_path": {str(EXAMPLES / "teacher_strong.jsonl")!r},
                                                    "student_rows_path": {str(EXAMPLES / "student.jsonl")!r},
                                                    "teacher_tokenizer": "a", "student_tokenizer": "b"}})
    print(json.dumps({{"route": routed.structured_content["route"], "preview": [preview.is_error,
                       preview.content[0].text], "tokenizer": [tok.is_error, tok.content[0].text],
                       "torch": "torch" in sys.modules}}))

anyio.run(main)
"""


@pytest.fixture(scope="module")
def light(tmp_path_factory):
    """A fresh venv holding the built wheel and its light dependencies only."""
    root = tmp_path_factory.mktemp("light-install")
    offline = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []  # else pip fetches it
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *offline, "-q", "-w", str(root / "dist"),
                    str(REPO)], check=True, timeout=300)
    wheel = next((root / "dist").glob("pick_a_method-*.whl"))
    venv.EnvBuilder(with_pip=False).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)], check=True,
                   timeout=600)
    return python


def test_the_wheel_claims_one_top_level_package(light):
    site = Path(subprocess.run([str(light), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    record = next(site.glob("pick_a_method-*.dist-info")) / "RECORD"
    tops = {line.split(",", 1)[0].split("/", 1)[0] for line in record.read_text().splitlines()}
    tops = {t for t in tops if not t.endswith(".dist-info") and t != ".."}  # ../../bin/pick-a-method
    assert tops == {"pick_a_method"}
    assert (site / "pick_a_method" / "skill" / "SKILL.md").is_file()
    missing = subprocess.run([str(light), "-c", "import importlib.util as u; print([m for m in ('torch', "
                              "'transformers') if u.find_spec(m)])"], capture_output=True, text=True, check=True)
    assert missing.stdout.strip() == "[]"  # the light install brought neither


def test_the_router_and_the_cli_work_and_torch_features_name_the_extra(light, tmp_path):
    exe = light.parent / "pick-a-method"
    routed = subprocess.run([str(exe), "route", str(EXAMPLES / "mixed.jsonl"), "--model", MODEL],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert routed.returncode == 0 and routed.stdout.startswith("grpo:"), routed.stderr
    config = subprocess.run([str(exe), "prime-rl-config", "refunds-v1", "grpo", "--model", MODEL],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert config.returncode == 0 and "[orchestrator" in config.stdout, config.stderr
    preview = subprocess.run([str(exe), "preview-update", str(EXAMPLES / "traces.jsonl")], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path)
    assert preview.returncode == 2 and EXTRA.format(python=light) in preview.stderr, preview.stderr


def test_the_server_works_and_torch_tools_name_the_extra(light, tmp_path):
    out = subprocess.run([str(light), "-c", MCP_CHECK], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["route"] == "grpo" and seen["torch"] is False
    assert seen["preview"][0] and EXTRA.format(python=light) in seen["preview"][1]
    assert seen["tokenizer"][0] and EXTRA.format(python=light) in seen["tokenizer"][1]


def test_the_library_imports_in_the_clones_own_folder(light):
    """The README runs the opening commands in the clone's folder; there `./pick_a_method/` comes first on sys.path
    and shadows the installed package, whose subpackages live in the clone's top-level folders. Importing the library
    there, and the script the README names, work as they do anywhere else."""
    probe = "from pick_a_method import common, methods, routing, server; print(routing.route.__module__)"
    done = subprocess.run([str(light), "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == "pick_a_method.routing.before_training.router", done.stderr
    script = subprocess.run([str(light), "tests/routing/readme_try_it.py"], capture_output=True, text=True,
                            timeout=300, cwd=REPO)  # it runs `python -m pick_a_method.server.cli` in the clone's folder
    assert script.returncode == 0 and script.stdout.startswith("$ pick-a-method route"), script.stderr[-2000:]
