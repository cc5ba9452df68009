"""The rooms hold: routing/ keeps at its top only what every job shares, each job reaches another only through its
public names, the trainers' writers live apart from the methods, and the README's "where a new thing goes" lists
name real files. Read from the source (ast), so a wall broken by a new import fails here, not in review."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROUTING = REPO / "routing"
JOBS = sorted(p.name for p in ROUTING.iterdir() if p.is_dir() and (p / "__init__.py").is_file() and p.name != "readers")
TOP_LIMIT = 12  # modules at routing/'s top (the issue on rooms: what every job shares, no more)


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, the module imported as a path under pick_a_method, the names) for every import in a file."""
    package = ["pick_a_method", *path.relative_to(REPO).with_suffix("").parts[:-1]]
    package = [part for part in package if part]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            out.append((node.lineno, module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
    return out


def _routing_target(module: str, names: list[str]) -> list[str]:
    """The routing modules an import reaches: `pick_a_method.routing.x.y`, or `from pick_a_method.routing.x import y`
    (y a module or a name)."""
    if not module.startswith("pick_a_method.routing"):
        return []
    parts = module.split(".")[2:]
    return [".".join(parts)] if parts else names


def test_routing_keeps_at_its_top_only_what_every_job_shares():
    top = sorted(p.stem for p in ROUTING.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= TOP_LIMIT, top
    assert {"before_training", "forecasting", "after_training", "pictures"} <= set(JOBS), JOBS
    for path in ROUTING.glob("*.py"):  # the shared base never imports a job
        reached = [(line, t) for line, module, names in _imports(path) for t in _routing_target(module, names)
                   if t.split(".")[0] in JOBS]
        assert not reached or path.name == "__init__.py", (path.name, reached)


def test_a_job_reaches_another_only_through_its_public_names():
    broken = []
    for job in JOBS:
        for path in (ROUTING / job).rglob("*.py"):
            for line, module, names in _imports(path):
                for target in _routing_target(module, names):
                    other = target.split(".")[0]
                    if other in JOBS and other != job and "." in target:  # a module inside another job
                        broken.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert broken == [], broken


def test_after_imports_nothing_of_the_route_and_the_route_reaches_after_only_through_its_freeze():
    from pick_a_method.routing import after_training

    freeze_names = {name for name, module in after_training._EXPORTS.items() if module in ("frozen", "pool")}
    found = []
    for path in (ROUTING / "after_training").rglob("*.py"):
        found += [f"{path.name}:{line}" for line, module, names in _imports(path)
                  for t in _routing_target(module, names) if t.split(".")[0] == "before_training"]
    for path in (ROUTING / "before_training").rglob("*.py"):
        found += [f"{path.name}:{line} {sorted(set(names) - freeze_names)}" for line, module, names in _imports(path)
                  if module == "pick_a_method.routing.after_training" and set(names) - freeze_names]
    assert found == [], found


def test_each_job_exports_names_its_modules_define():
    import importlib

    for job in JOBS:
        package = importlib.import_module(f"pick_a_method.routing.{job}")
        for name in package.__all__:
            assert getattr(package, name) is not None, (job, name)


def test_trainers_live_apart_from_methods_and_routing():
    walls = {"methods": ("pick_a_method.trainers", "pick_a_method.routing"),
             "routing": ("pick_a_method.trainers", "pick_a_method.methods"),
             "trainers": ("pick_a_method.routing",)}
    found = [f"{path.relative_to(REPO)}:{line} imports {module}"
             for room, banned in walls.items() for path in (REPO / room).rglob("*.py")
             for line, module, _ in _imports(path) if module.startswith(banned)]
    assert found == [], found
    assert not any((REPO / "methods" / name).exists() for name in ("prime_rl", "trl", "verl", "plans.py"))


def _where_section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("### How the code is laid out: where a new thing goes")
    return text[start: text.index("\n### ", start + 1)]


def test_where_a_new_thing_goes_lists_real_files_for_every_kind_of_thing():
    section = _where_section()
    kinds = re.findall(r"^- \*\*(An? [\w ]+)\*\*", section, re.M)
    assert kinds == ["A method", "A trainer", "A tool", "An input format", "A routing job"], kinds
    named = set(re.findall(r"`((?:common|routing|methods|trainers|server|tests)/[\w/.<>]*)`", section))
    missing = [p for p in sorted(named) if "<" not in p and not (REPO / p).exists()]
    assert named and not missing, missing


def test_a_method_touches_its_entry_its_rule_and_its_plans_only():
    """The method objects register on their table entry (no hand list), and a trainer that does not run a method
    refuses it from the entry: no trainer writes code for a method it does not run."""
    from pick_a_method.common.methods import METHODS as TABLE
    from pick_a_method.methods import METHODS, _OBJECTS

    with_rule = {m.name for m in TABLE.values() if m.rule}
    assert set(METHODS) == with_rule
    assert {cls.__name__ for cls in METHODS.values()} <= set(_OBJECTS)
    registry = ast.parse((REPO / "methods" / "objects" / "registry.py").read_text())
    classes = {cls.__name__ for cls in METHODS.values()}
    lists = [node.lineno for node in ast.walk(registry) if isinstance(node, (ast.Tuple, ast.List, ast.Set))
             and sum(isinstance(e, ast.Name) and e.id in classes for e in node.elts) > 1]
    assert lists == [], lists  # no hand list of the method objects
    for plan in (REPO / "trainers").glob("*/plan.py"):  # no trainer keeps sentences of its own per method
        text = plan.read_text()
        assert not re.search(r"^\s*M\.\w+: [f(]?\"", text, re.M), plan
        assert "REINFORCE_ADA" not in text, plan  # what no trainer runs is refused from its table entry alone


def test_the_core_names_tools_by_their_declaration_and_the_server_keys_nothing_by_a_tool_name():
    """routing/ writes no tool's name as a string (common.next_step.Tool names them), and the server keeps no
    table keyed by tool name and no branch on one: each tool's class carries its result, picture and hooks."""
    literal = re.compile(r"""(tool=|NextStep\()["'][a-z_]+["']""")
    found = [f"{p.relative_to(REPO)}:{i}" for p in ROUTING.rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if literal.search(line)]
    assert found == [], found
    from pick_a_method.common.next_step import Tool

    names = "|".join(t.value for t in Tool)
    branch = re.compile(rf"""(\.tool|command) [!=]= ["']({names.replace("_", "[_-]")})["']|^[A-Z_]+\s*[:=].*\{{\s*["']({names})["']\s*:""")
    found = [f"{p.relative_to(REPO)}:{i}" for p in (REPO / "server").glob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if branch.search(line)]
    assert found == [], found
