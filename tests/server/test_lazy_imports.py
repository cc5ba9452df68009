"""The lazy packages and what the server's start loads: each check runs in a fresh interpreter (sys.modules is
the evidence, and this test session has long since imported everything)."""

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "transformers", "pyarrow", "matplotlib")


def run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("package", ["pick_a_method.routing", "pick_a_method.methods"])
def test_every_name_in_all_resolves_and_the_package_alone_loads_nothing(package):
    code = (f"import sys, importlib\n"
            f"pkg = importlib.import_module({package!r})\n"
            f"loaded = [m for m in ('numpy', 'pydantic', 'pyarrow', 'torch') if m in sys.modules]\n"
            f"assert not loaded, loaded\n"
            f"for name in pkg.__all__:\n"
            f"    value = getattr(pkg, name)\n"
            f"    assert value is not None and name in dir(pkg), name\n"
            f"ns = {{}}\n"
            f"exec('from {package} import *', ns)\n"
            f"assert set(pkg.__all__) <= set(ns), set(pkg.__all__) - set(ns)\n"
            f"try:\n    pkg.no_such_name\nexcept AttributeError:\n    pass\nelse:\n    raise AssertionError('no error')\n"
            f"assert 'torch' not in sys.modules\n")
    out = run(code)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_method_objects_are_listed_as_objects_lists_them():
    from pick_a_method import methods
    from pick_a_method.methods import objects

    assert set(objects.__all__) <= set(methods.__all__)
    assert all(getattr(methods, n) is getattr(objects, n) for n in objects.__all__)


def test_routing_route_is_the_function_after_its_submodule_is_imported():
    out = run("from pick_a_method import routing\n"
              "import pick_a_method.routing.before_training.router  # the module that defines route\n"
              "import pick_a_method.trainers.prime_rl  # which imports routing submodules too\n"
              "assert callable(routing.route) and routing.route.__name__ == 'route', routing.route\n"
              "assert routing.defaults.PASS_THRESHOLD == 1.0 and routing.readers.CHUNK_ROWS > 0  # submodules load\n")
    assert out.returncode == 0, out.stderr[-2000:]


LIST_TOOLS = ("import sys, anyio\n"
              "from mcp import Client\n"
              "from pick_a_method.server.app import create_server\n"
              "async def main():\n"
              "    async with Client(create_server()) as c:\n"
              "        assert len((await c.list_tools()).tools) >= 10\n"
              "anyio.run(main)\n")


def test_the_server_lists_its_tools_without_torch_transformers_or_pyarrow():
    out = run(LIST_TOOLS + f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\nassert not loaded, loaded\n")
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_server_lists_its_tools_without_numpy():
    out = run(LIST_TOOLS + "assert 'numpy' not in sys.modules, 'numpy'\n")
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_sdk_keeps_the_logging_the_command_line_set_up():
    # MCPServer's constructor calls logging.basicConfig with a rich handler; the command line sets up logging before
    # it builds the server, so that call changes nothing (it still imports rich: 34 ms of CPU, bench/startup_bench.py,
    # not worth hiding rich from the SDK). A changed handler would mean the SDK now configures logging itself.
    out = run("import logging, sys\n"
              "logging.basicConfig(level=logging.INFO)\n"
              "before = list(logging.getLogger().handlers)\n"
              "from pick_a_method.server.app import create_server\n"
              "create_server()\n"
              "assert logging.getLogger().handlers == before and logging.getLogger().level == logging.INFO\n")
    assert out.returncode == 0, out.stderr[-2000:]
    source = (Path(__file__).resolve().parents[2] / "server" / "cli.py").read_text()
    assert source.index("logging.basicConfig(") < source.index("create_server(options)")  # the order relied on
    alone = run("import logging, sys\nfrom pick_a_method.server.app import create_server\ncreate_server()\n"
                "assert logging.getLogger().handlers, 'the SDK sets up logging itself'\n")
    assert alone.returncode == 0, alone.stderr[-2000:]
