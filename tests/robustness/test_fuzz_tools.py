"""Generated bad and odd input at every tool, through the in-memory MCP client.

Every call must end in a result that validates against the tool's outputSchema, or in a tool error whose
text names the problem: never the SDK's bare "Error executing tool <name>" (an unexpected exception whose
message the SDK withholds), never a hang, never a dead server.

One client per example (pytest-asyncio#1191: a client must open and close in the same task); the server
object is built once. Lone UTF-16 surrogates are left out of generated text: the stdio and HTTP transports
refuse them before a tool runs (tests/robustness/test_stdio_faults.py sends one), so only an in-process
caller could pass one.
"""

from __future__ import annotations

import atexit
import gzip
import itertools
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from mcp import Client

from rowkit import MODEL, TEACHER, rows_from_passes
from pick_a_method.server.app import create_server
from pick_a_method.server.options import ServerOptions

# Examples per tool: the Hypothesis profile's (tests/conftest.py: fixed and derandomized unless
# HYPOTHESIS_PROFILE=long), or ROBUSTNESS_EXAMPLES.
EXAMPLES_PER_TOOL = int(os.environ.get("ROBUSTNESS_EXAMPLES") or settings.default.max_examples)
CALL_LIMIT_S = 60.0  # a call that has not answered by then is a hang
SETTINGS = settings(max_examples=EXAMPLES_PER_TOOL, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

WORK = Path(tempfile.mkdtemp(prefix="pick-a-method-fuzz-"))  # files read, and the only folder writes may land in
atexit.register(shutil.rmtree, WORK, ignore_errors=True)
WRITE_ROOT = WORK / "out"
WRITE_ROOT.mkdir()
OPTIONS = ServerOptions(max_rows=200_000, max_bytes=20 << 20, call_seconds=30, write_roots=(WRITE_ROOT,))
_SERVER = None
_SCHEMAS: dict[str, dict] = {}
MIXED = rows_from_passes([0, 1, 2, 3, 4] * 4)


def server():
    global _SERVER
    if _SERVER is None:
        _SERVER = create_server(OPTIONS)

        async def schemas():
            async with Client(_SERVER) as c:
                _SCHEMAS.update({t.name: t.output_schema for t in (await c.list_tools()).tools})

        anyio.run(schemas)
    return _SERVER


# ---------------------------------------------------------------------------------------------------------
# Odd values
# ---------------------------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
HUGE_TEXT = st.sampled_from([10_000, 200_000, 1_000_000]).flatmap(
    lambda n: st.sampled_from("xé中🙂\x00 ").map(lambda ch: ch * n))
ODD_TEXT = st.one_of(TEXT, st.sampled_from(["", " ", "\x00", "\n", "null", "NaN", "1e999", "../..", "~", "é中文🙂",
                                            "\u202e\u200b", "a" * 300]), HUGE_TEXT)
_HUGE = {"2^31": 2**31, "2^53+1": 2**53 + 1, "2^63": 2**63, "10^30": 10**30, "10^400": 10**400, "10^5000": 10**5000}
HUGE_INTS = st.tuples(st.sampled_from(sorted(_HUGE)), st.sampled_from([1, -1])).map(
    lambda t: t[1] * _HUGE[t[0]])  # drawn by name: hypothesis cannot repr an int of 5,000 digits
INTS = st.one_of(st.integers(-5, 70), st.integers(), HUGE_INTS)
FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 1e308, -1e308, 0.05, 0.999999]))
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, ODD_TEXT)


def _nest(depth_and_leaf: tuple[int, Any]) -> Any:
    depth, leaf = depth_and_leaf
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


DEEP = st.tuples(st.integers(20, 150), SCALARS).map(_nest)  # the client refuses to serialize past ~250 levels
JSONISH = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
# Values known to break naive code, drawn often (a generic strategy finds each only once in thousands).
_NASTY = {"10^400": 10**400, "-10^400": -(10**400), "10^5000": 10**5000, "2^63": 2**63, "nan": float("nan"),
          "inf": float("inf"), "-inf": float("-inf"), "1e308": 1e308, "5e-324": 5e-324, "1e-300": 1e-300,
          "-1": -1, "0": 0, "empty": "", "NaN-text": "NaN", "1e999-text": "1e999", "list": [1], "nested": [[1]],
          "dict": {"a": 1}, "true": True, "none": None, "big-text": "x" * 100_000}
NASTY = st.sampled_from(sorted(_NASTY)).map(_NASTY.__getitem__)
ODD = st.one_of(NASTY, SCALARS, JSONISH, DEEP)

# ---------------------------------------------------------------------------------------------------------
# Rows and trajectories
# ---------------------------------------------------------------------------------------------------------

ROW_KEYS = ["task_id", "scenario_id", "prompt", "reward", "truncated", "finish_reason", "model", "max_tokens",
            "sampling", "chosen", "rejected"]
GOOD_FIELD = {
    "task_id": st.one_of(st.sampled_from(["t0", "t1", "t2", "t3"]), st.integers(0, 5), TEXT),
    "scenario_id": st.sampled_from(["s0", "s1"]),
    "prompt": TEXT,
    "reward": st.one_of(st.sampled_from([0, 1, 0.0, 1.0, 0.5, True, False, None, "1", "0.5", "true"]),
                        st.floats(0, 1)),
    "truncated": st.sampled_from([True, False, None, "true", "no", 1, 0]),
    "finish_reason": st.sampled_from(["length", "stop", None]),
    "model": st.sampled_from([MODEL, TEACHER, None]),
    "max_tokens": st.sampled_from([1024, 8192, None, "4096"]),
    "sampling": st.fixed_dictionaries({"max_tokens": st.sampled_from([512, 32768, None])}),
    "chosen": TEXT,
    "rejected": TEXT,
}


@st.composite
def row(draw) -> Any:
    if draw(st.integers(0, 30)) == 0:
        return draw(ODD)  # not an object at all
    keys = draw(st.lists(st.sampled_from(ROW_KEYS), unique=True, max_size=7))
    out = {}
    for k in keys:
        out[k] = draw(GOOD_FIELD[k] if draw(st.integers(0, 3)) else ODD)
    if draw(st.booleans()):
        out.update(draw(st.dictionaries(TEXT, ODD, max_size=2)))
    return out


ROWS = st.one_of(
    st.lists(row(), max_size=12),
    st.tuples(st.just(MIXED), st.lists(row(), max_size=3)).map(lambda t: t[0] + t[1]),  # good rows, a few bad
    st.just(MIXED),
    st.integers(1000, 60_000).map(lambda n: [{"task_id": f"t{i % 997}", "reward": i % 3 == 0} for i in range(n)]),
    ODD,  # not a list
)

TRAJECTORY = st.fixed_dictionaries({}, optional={
    "reward": st.one_of(FLOATS, INTS, ODD),
    "logprobs": st.one_of(st.lists(st.floats(-30, 0), max_size=12), st.lists(FLOATS, max_size=6), ODD),
    "behavior_logprobs": st.one_of(st.lists(st.floats(-30, 0), max_size=12), ODD),
    "values": st.one_of(st.lists(st.floats(-2, 2), max_size=12), ODD),
    "mask": st.one_of(st.lists(st.booleans(), max_size=12), ODD),
    "task_id": TEXT,
})
TRAJECTORIES = st.one_of(st.lists(TRAJECTORY, max_size=6), ODD)

# ---------------------------------------------------------------------------------------------------------
# Files: a pool of hand-made odd files, plus generated ones
# ---------------------------------------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    """json.dumps, also for an int past Python's 4,300-digit str() limit (files carry those too)."""
    try:
        return json.dumps(value)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return json.dumps(value)
        finally:
            sys.set_int_max_str_digits(limit)


def _jsonl(rows: list[Any]) -> bytes:
    return "".join(_dumps(r) + "\n" for r in rows).encode()


def _make_pool() -> list[str]:
    d = WORK / "pool"
    d.mkdir()
    good = _jsonl(MIXED)
    files: dict[str, bytes] = {
        "good.jsonl": good,
        "bom_crlf.jsonl": b"\xef\xbb\xbf" + good.replace(b"\n", b"\r\n"),
        "blank_lines.jsonl": good.replace(b"\n", b"\n\n \n"),
        "cut.jsonl": good[:-17],
        "empty.jsonl": b"",
        "only_bom.jsonl": b"\xef\xbb\xbf",
        "not_utf8.jsonl": good[:200] + b'{"task_id": "\xff\xfe", "reward": 1}\n',
        "latin1.csv": "task_id,reward\ncafé,1\n".encode("latin-1"),
        "utf16.jsonl": good.decode().encode("utf-16"),
        "binary.jsonl": bytes(range(256)) * 8,
        "two_per_line.jsonl": b'{"task_id": "a", "reward": 1} {"task_id": "b", "reward": 0}\n',
        "arrays.jsonl": b"[1, 2]\n[3]\n",
        "good.jsonl.gz": gzip.compress(good),
        "cut.jsonl.gz": gzip.compress(good)[:-20],
        "damaged.jsonl.gz": gzip.compress(good)[:30] + b"\xff" * 40 + gzip.compress(good)[70:],
        "gz_named_plain.jsonl": gzip.compress(good),
        "bomb.json.gz": gzip.compress(b"[" + b" " * (40 << 20)),  # 40 MB of spaces: past the 20 MB cap
        "one_endless_line.csv.gz": gzip.compress(b"task_id,reward\n" + b"a" * (40 << 20)),
        "good.json": json.dumps(MIXED).encode(),
        "wrapped.json": json.dumps({"rows": MIXED}).encode(),
        "scalar.json": b"42",
        "deep.json": b"[" * 5000 + b"]" * 5000,
        "nan.jsonl": b'{"task_id": "a", "reward": NaN}\n',
        "good.csv": b"task_id,reward,truncated,model\n" + b"".join(
            f"{r['task_id']},{r['reward']},{str(r['truncated']).lower()},{r['model']}\n".encode() for r in MIXED),
        "header_typo.csv": b"taskid,reward\na,1\n",
        "ragged.csv": b"task_id,reward\na,1,extra\n",
        "big_cell.csv": b"task_id,reward\n" + b"a" * 200_000 + b",1\n",
        "nul.csv": b"task_id,reward\na\x00,1\n",
        "rows.parquet": b"PAR1" + b"\x00" * 64,
        "rows.bin": b"\x00\x01\x02",
        "rows.txt": good,
        "rows.toml": b"[x]\ny = 1\n",
        "noext": b"   \n\t",
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
    (d / "folder.jsonl").mkdir()
    os.mkfifo(d / "fifo.jsonl")  # a read of it would block forever
    (d / "zero.jsonl").symlink_to("/dev/zero")
    (d / "loop.jsonl").symlink_to(d / "loop.jsonl")
    (d / "dangling.jsonl").symlink_to(d / "nowhere.jsonl")
    paths = [str(d / n) for n in [*files, "folder.jsonl", "fifo.jsonl", "zero.jsonl", "loop.jsonl",
                                  "dangling.jsonl"]]
    return paths + ["no/such/file.jsonl", "", ".", "/", "/dev/null", "/proc/self/status", "/etc/passwd",
                    "~/nothing.jsonl", "~nosuchuser/rows.jsonl", "x" * 5000, "rows.jsonl\x00.txt"]


POOL = _make_pool()
_counter = itertools.count()


def _write_generated(spec: tuple[str, int, bytes]) -> str:
    ext, kind, body = spec
    path = WORK / f"gen{next(_counter)}{ext}"
    path.write_bytes(gzip.compress(body) if kind == 1 else body)
    return str(path)


GENERATED_FILE = st.tuples(
    st.sampled_from([".jsonl", ".json", ".csv", ".jsonl.gz", ".txt", ""]),
    st.integers(0, 1),
    st.one_of(st.binary(max_size=600),
              st.lists(row(), max_size=8).map(_jsonl),
              st.lists(row(), max_size=8).map(lambda rs: _dumps(rs).encode()),
              st.lists(st.lists(TEXT, min_size=1, max_size=4), max_size=5).map(
                  lambda cells: "\n".join(",".join(c) for c in cells).encode())),
).map(_write_generated)
PATHS = st.one_of(st.sampled_from(POOL), st.sampled_from(POOL), GENERATED_FILE, ODD_TEXT, ODD)

# ---------------------------------------------------------------------------------------------------------
# Arguments per tool
# ---------------------------------------------------------------------------------------------------------

METHODS_PRIME = ["grpo", "max_rl", "rae", "opd", "opsd", "async", "GRPO", "FlashReinforce", "SAO", "BPCO", "sft",
                 "dpo", "ReinforceAda", "GroupwiseGrading", "MaxRL", "OPD", "OPSD", "Async", "RAE"]
OVERRIDE_KEYS = ["trainer.optim.lr", "orchestrator.batch_size", "orchestrator.group_size", "trainer.loss.ratio_type",
                 "orchestrator.sampling.temperature", "inference.model.name", "ckpt", "a.b.c", "", "."]
KNOB_KEYS = ["teacher", "base_url", "method", "correction", "kl_coef", "group_size", "temperature", "alpha",
             "max_tokens", "threshold", "lr", "beta"]


def knobs_for(keys: list[str]) -> st.SearchStrategy:
    return st.one_of(st.none(), st.dictionaries(st.one_of(st.sampled_from(keys), TEXT), ODD, max_size=4), ODD)


def out_path(name: str) -> str:
    return str(WRITE_ROOT / name)


OUT = st.one_of(
    st.none(),
    st.integers(0, 10**9).map(lambda i: out_path(f"fresh{i}.toml")),
    st.just(out_path("existing.toml")),
    st.sampled_from([out_path("x.txt"), out_path("missing/dir/x.toml"), out_path(""), str(WRITE_ROOT),
                     str(WORK / "outside.toml"), "/etc/pick-a-method.toml", "../escape.toml", "rl.toml",
                     "~/x.toml", "~nosuchuser/x.toml", out_path("..") + "/up.toml", out_path("a\x00b.toml")]),
    ODD_TEXT, ODD)

# route's freeze: the held-out manifest (.json), never over a file, only inside the write root
FREEZE = st.one_of(
    st.none(),
    st.integers(0, 10**9).map(lambda i: out_path(f"fresh{i}.json")),
    st.just(out_path("existing.json")),
    st.sampled_from([out_path("x.toml"), out_path("missing/dir/x.json"), out_path(""), str(WRITE_ROOT),
                     str(WORK / "outside.json"), "/etc/pick-a-method.json", "../escape.json", "holdout.json",
                     "~/x.json", out_path("a\x00b.json")]),
    ODD_TEXT, ODD)

FIELDS: dict[str, st.SearchStrategy] = {
    "rows": ROWS, "teacher_rows": ROWS, "student_rows": ROWS, "before_rows": ROWS, "after_rows": ROWS,
    "rows_path": PATHS, "teacher_rows_path": PATHS, "student_rows_path": PATHS, "before_rows_path": PATHS,
    "after_rows_path": PATHS, "path": PATHS, "random_selection_rows": ROWS, "random_reward_rows": ROWS,
    "random_selection_rows_path": PATHS, "random_reward_rows_path": PATHS, "frozen_path": PATHS,
    "pass_threshold": st.one_of(st.sampled_from([1.0, 0.5, 0]), FLOATS, ODD),
    "effect": st.one_of(st.sampled_from([0.05, 0.1, 0.5]), FLOATS, ODD),
    "base": st.one_of(st.floats(0, 1), FLOATS, ODD), "power": st.one_of(st.floats(0, 1), FLOATS, ODD),
    "alpha": st.one_of(st.floats(0, 1), FLOATS, ODD), "task_std": st.one_of(st.floats(0, 2), FLOATS, ODD),
    "k": st.one_of(st.integers(1, 16), INTS, ODD), "per_task_offset": st.one_of(st.integers(0, 100), INTS, ODD),
    "per_task_limit": st.one_of(st.integers(0, 1000), INTS, ODD),
    "model": st.one_of(st.sampled_from([MODEL, TEACHER, "Qwen/Qwen2.5-0.5B", "meta-llama/Llama-3.1-70B"]), ODD_TEXT, ODD),
    "teacher": st.one_of(st.sampled_from([TEACHER]), ODD_TEXT, ODD),
    "taskset": st.one_of(st.sampled_from(["refunds-v1", "gsm8k"]), ODD_TEXT, ODD),
    "teacher_base_url": st.one_of(st.sampled_from(["http://localhost:8001/v1"]), ODD_TEXT, ODD),
    "tokenizers_match": st.one_of(st.booleans(), st.none(), ODD),
    "preference_pairs": st.one_of(st.booleans(), st.none(), ODD),
    # Tokenizer names load through transformers from local files only; kept rare to bound the run time.
    "teacher_tokenizer": st.one_of(st.none(), st.none(), st.none(), ODD_TEXT, st.just(str(WORK / "pool"))),
    "student_tokenizer": st.one_of(st.none(), st.none(), st.none(), ODD_TEXT, st.just(str(WORK))),
    "method": st.one_of(st.sampled_from(METHODS_PRIME), ODD_TEXT, ODD),
    "knobs": knobs_for(KNOB_KEYS), "overrides": knobs_for(OVERRIDE_KEYS),
    "out": OUT, "freeze": FREEZE, "overwrite": st.one_of(st.booleans(), ODD),
    "gpus": st.one_of(st.integers(0, 16), INTS, ODD), "steps": st.one_of(st.integers(-1, 1000), INTS, ODD),
    "batch": st.one_of(st.integers(-1, 1024), INTS, ODD), "lora": st.one_of(st.booleans(), ODD),
    "trajectories": TRAJECTORIES,
    "run": PATHS, "window": st.one_of(st.integers(1, 20), INTS, ODD), "group_size": st.one_of(st.integers(1, 16), INTS, ODD),
}
TOOL_FIELDS = {
    "truncated_passes": ["rows", "rows_path", "pass_threshold"],
    "band": ["rows", "rows_path", "pass_threshold"],
    "pass_at": ["rows", "rows_path", "k", "pass_threshold", "per_task_offset", "per_task_limit"],
    "teacher_clears": ["teacher_rows", "teacher_rows_path", "student_rows", "student_rows_path", "effect",
                       "pass_threshold", "tokenizers_match", "teacher_tokenizer", "student_tokenizer"],
    "holdout_size": ["effect", "base", "k", "power", "alpha", "task_std", "before_rows", "before_rows_path",
                     "after_rows", "after_rows_path"],
    "route": ["rows", "rows_path", "model", "teacher_rows", "teacher_rows_path", "taskset", "teacher",
              "teacher_base_url", "tokenizers_match", "preference_pairs", "pass_threshold", "effect", "freeze"],
    "prime_rl_config": ["taskset", "method", "model", "knobs", "out", "overwrite", "gpus", "steps", "batch", "lora",
                        "overrides", "teacher_tokenizer", "student_tokenizer"],
    "preview_update": ["method", "knobs", "trajectories", "path"],
    "after": ["before_rows", "before_rows_path", "after_rows", "after_rows_path", "random_selection_rows",
              "random_selection_rows_path", "random_reward_rows", "random_reward_rows_path", "effect", "frozen_path",
              "pass_threshold"],
    # the trainer writers: fuzzed over the arguments they share with prime_rl_config
    "trl_config": ["method", "model", "knobs", "out", "overwrite", "gpus", "steps", "batch", "lora", "overrides",
                   "teacher_tokenizer", "student_tokenizer"],
    "verl_config": ["method", "model", "knobs", "out", "overwrite", "gpus", "steps", "batch", "lora", "overrides",
                    "teacher_tokenizer", "student_tokenizer"],
    "track": ["run", "window", "group_size", "pass_threshold"],
}
REQUIRED = {"prime_rl_config": ["taskset", "method", "model"], "preview_update": ["method"], "track": ["run"],
            "trl_config": ["method", "model"], "verl_config": ["method", "model"]}


@st.composite
def arguments(draw, tool: str) -> dict[str, Any]:
    names = TOOL_FIELDS[tool]
    chosen = set(draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names))))
    if draw(st.integers(0, 4)):  # mostly keep the required ones, so the call gets past the input schema
        chosen |= set(REQUIRED.get(tool, []))
    args = {n: draw(FIELDS[n]) for n in names if n in chosen}
    if draw(st.integers(0, 6)) == 0:
        args.update(draw(st.dictionaries(TEXT, ODD, min_size=1, max_size=2)))  # unknown arguments
    return args


# ---------------------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------------------


# Bugs found here and reported to their owners; a failure that matches one is counted, not failed on.
KNOWN_BUGS: dict = {}  # none open: the preview reward overflow is refused now (methods/rules/_common.py)


async def outcome(c: Client, tool: str, args: dict[str, Any]) -> str | None:
    """None when the call ended well (a schema-valid result or a tool error with a reason), else what went wrong."""
    try:
        with anyio.fail_after(CALL_LIMIT_S):
            result = await c.call_tool(tool, args)
    except TimeoutError:
        return f"hung for {CALL_LIMIT_S:g} s"
    except RuntimeError as e:  # the client checks structuredContent against the outputSchema itself
        return f"result off its output schema: {str(e)[:300]}"
    text = result.content[0].text if result.content else ""
    if result.is_error:
        bare = f"Error executing tool {tool}"
        if text.strip() == bare:
            return "an unexpected exception (the SDK withheld its message)"
        if len(text) <= len(bare) + 3 or result.structured_content is not None:
            return f"a tool error that says nothing: {text!r}"
        return None
    try:
        jsonschema.validate(result.structured_content, _SCHEMAS[tool])
    except jsonschema.ValidationError as e:
        return f"result off its output schema: {e.message[:300]}"
    try:
        if json.loads(text) != result.structured_content:
            return "the text content and structuredContent differ"
    except ValueError as e:  # e.g. an integer past the 4,300 digits a Python client will parse
        return f"the text content is not JSON a client can read: {e}"
    return None


def known_bug(tool: str, args: dict[str, Any]) -> str | None:
    return next((name for name, match in KNOWN_BUGS.items() if match(tool, args)), None)


def check_call(tool: str, args: dict[str, Any], tally) -> None:
    srv = server()
    (WRITE_ROOT / "existing.toml").write_text("# someone's config\n")
    (WRITE_ROOT / "existing.json").write_text("{}\n")  # a manifest frozen before: never replaced

    async def go() -> None:
        async with Client(srv) as c:
            failure = await outcome(c, tool, args)
            if failure and known_bug(tool, args):
                tally.count(f"known bug met: {known_bug(tool, args)}")
            elif failure:
                pytest.fail(f"{tool}: {failure} on {_short(args)}")
            with anyio.fail_after(CALL_LIMIT_S):  # and the server still answers
                alive = await c.call_tool("band", {"rows": MIXED})
            assert not alive.is_error and alive.structured_content["verdict"] == "mixed"

    anyio.run(go)
    assert (WRITE_ROOT / "existing.toml").read_text() == "# someone's config\n" or args.get("overwrite") is True
    assert (WRITE_ROOT / "existing.json").read_text() == "{}\n"


def _short(args: dict[str, Any]) -> str:
    text = repr(args)
    return text if len(text) < 600 else text[:600] + "..."


# Failures the generated cases found, replayed first on every run whatever the profile draws.
NOBODY_HOME = "~nosuchuser"  # Path.expanduser raised RuntimeError: a bare "Error executing tool band"
FOUND: dict[str, list[dict[str, Any]]] = {
    "truncated_passes": [{"rows_path": f"{NOBODY_HOME}/rows.jsonl"}],
    "band": [{"rows_path": f"{NOBODY_HOME}/rows.jsonl"}],
    "pass_at": [{"rows_path": f"{NOBODY_HOME}/rows.jsonl"}],
    "teacher_clears": [{"teacher_rows_path": f"{NOBODY_HOME}/t.jsonl", "student_rows": MIXED},
                       {"teacher_rows": MIXED, "student_rows_path": f"{NOBODY_HOME}/s.jsonl"}],
    "holdout_size": [{"before_rows_path": f"{NOBODY_HOME}/b.jsonl"},
                     {"before_rows": MIXED, "after_rows_path": f"{NOBODY_HOME}/a.jsonl"}],
    "route": [{"rows_path": f"{NOBODY_HOME}/rows.jsonl", "model": MODEL},
              {"rows": MIXED, "model": MODEL, "teacher_rows_path": f"{NOBODY_HOME}/t.jsonl"}],
    "prime_rl_config": [{"taskset": "refunds-v1", "method": "grpo", "model": MODEL, "out": f"{NOBODY_HOME}/rl.toml"}],
    "trl_config": [{"method": "grpo", "model": MODEL, "out": f"{NOBODY_HOME}/trl.yaml"}],
    "verl_config": [{"method": "grpo", "model": MODEL, "out": f"{NOBODY_HOME}/verl.yaml"}],
    "track": [{"run": f"{NOBODY_HOME}/run"}],
    "preview_update": [{"method": "FlashReinforce", "path": f"{NOBODY_HOME}/traces.jsonl"},
                       # the baseline of rewards this large overflowed to NaN (methods/rules/_common.py)
                       {"method": "FlashReinforce", "trajectories": [{"reward": 1e300, "logprobs": [-0.5, -1.2]},
                                                                     {"reward": 0.0, "logprobs": [-0.7]}]}],
}


@pytest.mark.parametrize("tool", list(TOOL_FIELDS))
def test_every_call_ends_in_a_verdict_or_a_tool_error(tool, tally):
    server()
    assert set(_SCHEMAS) == set(TOOL_FIELDS)

    def run(args):
        tally.count(f"fuzz {tool}")
        check_call(tool, args, tally)

    run = given(args=arguments(tool))(run)
    for found in FOUND.get(tool, []):
        run = example(args=found)(run)
    SETTINGS(run)()


def test_nothing_was_written_outside_the_write_root():
    outside = [p for p in WORK.iterdir() if p.suffix == ".toml" or p.name == "outside.json"]  # gen*.json: inputs
    assert not outside, outside
    leftovers = [p.name for p in WRITE_ROOT.iterdir() if p.name.startswith(".")]
    assert not leftovers, f"temporary files left behind: {leftovers}"


# ---------------------------------------------------------------------------------------------------------
# A sweep: every nasty value at every argument, every row field and every trajectory field (deterministic;
# the generated cases above combine them, this makes sure each single one is tried on every run)
# ---------------------------------------------------------------------------------------------------------


def _trajectories(n: int = 8) -> list[dict[str, Any]]:
    return [{"reward": float(i % 2), "logprobs": [-0.5, -1.0, -0.25], "behavior_logprobs": [-0.5, -1.1, -0.2],
             "values": [0.5, 0.5, 0.5], "mask": [True, True, True], "task_id": f"t{i // 2}"} for i in range(n)]


BASELINE = {
    "truncated_passes": {"rows": MIXED}, "band": {"rows": MIXED}, "pass_at": {"rows": MIXED},
    "teacher_clears": {"teacher_rows": MIXED, "student_rows": MIXED}, "holdout_size": {},
    "route": {"rows": MIXED, "model": MODEL}, "after": {"before_rows": MIXED, "after_rows": MIXED},
    "prime_rl_config": {"taskset": "refunds-v1", "method": "grpo", "model": MODEL},
    "preview_update": {"method": "FlashReinforce", "trajectories": _trajectories()},
    "trl_config": {"method": "grpo", "model": MODEL},
    "verl_config": {"method": "grpo", "model": MODEL},
    "track": {"run": str(WORK)},  # a folder with no steps in it: a tool error that says so
}


def sweep_cases(tool: str) -> list[tuple[str, dict[str, Any]]]:
    base = BASELINE[tool]
    cases = []
    for name in TOOL_FIELDS[tool]:
        for label in sorted(_NASTY):
            cases.append((f"{name}={label}", {**base, name: _NASTY[label]}))
    row_fields = [f for f in ("rows", "teacher_rows") if f in base]
    for field in row_fields[:1]:
        for key in ROW_KEYS:
            for label in sorted(_NASTY):
                bad = {"task_id": "x", "reward": 1.0, key: _NASTY[label]}
                cases.append((f"{field}[-1].{key}={label}", {**base, field: MIXED + [bad]}))
    if tool == "preview_update":
        for key in ("reward", "logprobs", "behavior_logprobs", "values", "mask", "task_id"):
            for label in sorted(_NASTY):
                bad = {**_trajectories(1)[0], key: _NASTY[label]}
                cases.append((f"trajectories[-1].{key}={label}", {**base, "trajectories": _trajectories() + [bad]}))
    return cases


@pytest.mark.parametrize("tool", list(TOOL_FIELDS))
def test_every_nasty_value_at_every_argument(tool, tally):
    srv = server()
    cases = sweep_cases(tool)
    failures: list[str] = []

    async def go() -> None:
        async with Client(srv) as c:
            for label, args in cases:
                failure = await outcome(c, tool, args)
                if failure and known_bug(tool, args):
                    tally.count(f"known bug met: {known_bug(tool, args)}")
                elif failure:
                    failures.append(f"{label}: {failure}")
            alive = await c.call_tool("band", {"rows": MIXED})
            assert not alive.is_error

    anyio.run(go)
    tally.count(f"fuzz {tool}", len(cases))
    assert not failures, "\n".join(failures)
