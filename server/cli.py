"""`pick-a-method`: with no subcommand, serve MCP over stdio; with one, print a verdict for a person.

    pick-a-method                                  # MCP over stdio (what Claude Code and the Inspector spawn)
    pick-a-method --transport http --port 8765     # MCP over streamable HTTP on 127.0.0.1
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B [--teacher-rows t.jsonl] [--json]
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B --reward-field correct --model-field sampling.model
    pick-a-method --print-skill > .claude/skills/pick-a-method/SKILL.md
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from .options import DEFAULT_CALL_SECONDS, ServerOptions


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pick-a-method", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="how to serve MCP (default stdio)")
    p.add_argument("--port", type=int, default=8765, help="port for --transport http (always on 127.0.0.1)")
    p.add_argument("--print-skill", action="store_true", help="print skill/SKILL.md and exit")
    p.add_argument("--max-rows", type=int, help="cap on rows read per call (env PICK_A_METHOD_MAX_ROWS)")
    p.add_argument("--max-bytes", type=int, help="cap on bytes read per file (env PICK_A_METHOD_MAX_BYTES)")
    p.add_argument("--call-seconds", type=float, help=f"time budget per tool call (default {DEFAULT_CALL_SECONDS:g})")
    p.add_argument("--allow-write", action="append", default=[], metavar="DIR",
                   help="folder prime_rl_config may write into (repeatable; default: the current folder)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def field_flags(c: argparse.ArgumentParser) -> None:
        g = c.add_argument_group("your field names (a dotted path reaches into objects, e.g. sampling.model)")
        for name in FIELD_FLAGS:
            g.add_argument(f"--{name.replace('_id', '').replace('_', '-')}-field", dest=f"{name}_field",
                           metavar="NAME", help=f"the field that holds {FIELD_FLAGS[name]}")

    def rows_command(name: str, help: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help)
        c.add_argument("rows", help="graded rows: .jsonl(.gz), .json, .csv or .parquet")
        c.add_argument("--pass-threshold", type=float, default=1.0)
        c.add_argument("--json", action="store_true", help="print the verdict as JSON")
        field_flags(c)
        return c

    r = rows_command("route", "route graded rows to a training method")
    r.add_argument("--model", help="the model you will train")
    r.add_argument("--teacher-rows", help="a candidate teacher's graded rows on the same tasks")
    r.add_argument("--taskset", help="prime-rl taskset id for the next step")
    r.add_argument("--teacher", help="teacher model name")
    r.add_argument("--teacher-base-url")
    r.add_argument("--preference-pairs", action="store_true", help="the rows hold natural better/worse pairs")
    r.add_argument("--trainer", default="prime-rl", choices=("prime-rl", "trl", "verl"),
                   help="the trainer whose config tool the next step names (default prime-rl)")
    rows_command("truncated-passes", "question 1: can a cut-off reply pass?")
    rows_command("band", "question 3: floor, saturated or mixed?")
    pa = rows_command("pass-at", "pass@1 with an interval, pass@k, pass^k")
    pa.add_argument("-k", type=int)
    t = sub.add_parser("teacher-clears", help="question 5: does a teacher beat the student?")
    t.add_argument("teacher_rows")
    t.add_argument("student_rows")
    t.add_argument("--effect", type=float, default=0.05)
    t.add_argument("--json", action="store_true")
    field_flags(t)
    h = sub.add_parser("holdout-size", help="held-out tasks needed to prove an effect")
    h.add_argument("--effect", type=float, default=0.05)
    h.add_argument("-k", type=int)
    h.add_argument("--base", type=float)
    h.add_argument("--before", help="rows before training (read base and k off them)")
    h.add_argument("--after", help="rows after training, on the same tasks")
    h.add_argument("--json", action="store_true")
    field_flags(h)
    pv = sub.add_parser("preview-update", help="what a method's update rule keeps from logged trajectories")
    pv.add_argument("path", help="JSONL of trajectories: reward, logprobs, and behavior_logprobs / values / mask")
    pv.add_argument("--method", default="FlashReinforce")
    pv.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE", help="a method knob (JSON value)")
    pv.add_argument("--json", action="store_true")
    c = sub.add_parser("prime-rl-config", help="write the prime-rl TOML for a method")
    c.add_argument("taskset")
    c.add_argument("method")
    c.add_argument("--model", required=True)
    c.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE", help="a method knob (JSON value)")
    c.add_argument("--out")
    c.add_argument("--overwrite", action="store_true")
    c.add_argument("--gpus", type=int, help="GPUs on the node (default 2); with --nodes, GPUs per node (default 8)")
    c.add_argument("--steps", type=int, default=100)
    c.add_argument("--batch", type=int, default=64)
    c.add_argument("--no-lora", action="store_true")
    c.add_argument("--renderer", help="[orchestrator.renderer] name; default: chosen from the model")
    c.add_argument("--wandb", action="append", default=[], metavar="KEY=VALUE", help="project, name, entity, offline")
    c.add_argument("--checkpoint", action="append", default=[], metavar="KEY=VALUE",
                   help="interval, keep_last, resume (true, a step, or a .../step_N folder)")
    c.add_argument("--no-checkpoint", action="store_true", help="write no [ckpt]")
    c.add_argument("--run-name")
    c.add_argument("--output-dir")
    c.add_argument("--nodes", type=int, help="machines for a multi-node SLURM run (half inference)")
    c.add_argument("--inference-nodes", type=int, help="with --trainer-nodes: the split of a multi-node run")
    c.add_argument("--trainer-nodes", type=int)
    c.add_argument("--slurm", action="append", default=[], metavar="KEY=VALUE", help="[slurm] keys, e.g. partition=gpu")
    c.add_argument("--max-model-len", type=int)
    c.add_argument("--gpu-memory-utilization", type=float)
    c.add_argument("--eval-taskset")
    c.add_argument("--eval-split", help="a split name, or KEY=VALUE for the taskset's own split key")
    c.add_argument("--scheduler", choices=("constant", "linear", "cosine"))
    c.add_argument("--warmup-steps", type=int)
    c.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a dotted prime-rl key (JSON value), e.g. trainer.optim.weight_decay=0.0")
    c.add_argument("--json", action="store_true")
    for name, what in (("trl-config", "write the TRL YAML for a method (trl <command> --config FILE)"),
                       ("verl-config", "write the verl Hydra config for a method (python -m verl.trainer.main_ppo)")):
        w = sub.add_parser(name, help=what)
        w.add_argument("method")
        w.add_argument("--model", required=True)
        w.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE", help="a method knob (JSON value)")
        w.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config key to set last (JSON value)")
        w.add_argument("--out")
        w.add_argument("--overwrite", action="store_true")
        w.add_argument("--gpus", type=int, default=1 if name == "trl-config" else 8, help="GPUs per node")
        w.add_argument("--nodes", type=int, default=1)
        w.add_argument("--steps", type=int, default=100)
        w.add_argument("--batch", type=int, default=64)
        w.add_argument("--no-lora", action="store_true")
        w.add_argument("--json", action="store_true")
        if name == "trl-config":
            w.add_argument("--dataset")
            w.add_argument("--reward-func", action="append", dest="reward_funcs", help="repeatable")
            w.add_argument("--no-vllm", action="store_true")
        else:
            w.add_argument("--train-files", action="append")
            w.add_argument("--val-files", action="append")
            w.add_argument("--reward-function", help="path/to/reward.py:function")
            w.add_argument("--teacher-gpus", type=int, default=2)
    return p


FIELD_FLAGS = {"task_id": "the task id", "reward": "the grade (a number or true/false)",
               "truncated": "whether the reply was cut off", "model": "the model that sampled the row",
               "arm": "the experiment arm", "tokens": "the completion's token count"}


def _fields(args: argparse.Namespace) -> dict[str, str] | None:
    given = {name: getattr(args, f"{name}_field", None) for name in FIELD_FLAGS}
    return {k: v for k, v in given.items() if v} or None


def _options(args: argparse.Namespace) -> ServerOptions:
    kw: dict[str, Any] = {}
    if args.max_rows is not None:
        kw["max_rows"] = args.max_rows
    if args.max_bytes is not None:
        kw["max_bytes"] = args.max_bytes
    if args.call_seconds is not None:
        kw["call_seconds"] = args.call_seconds
    if args.allow_write:
        kw["write_roots"] = tuple(Path(d).resolve() for d in args.allow_write)
    return ServerOptions(**kw)


def _knob(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _prime_rl_run_knobs(args: argparse.Namespace) -> dict[str, Any]:
    """prime-rl-config's run flags as prime_rl_config's arguments (absent flags stay at the library's defaults)."""
    nodes: Any = args.nodes
    if args.inference_nodes is not None or args.trainer_nodes is not None:
        nodes = {"inference": args.inference_nodes, "trainer": args.trainer_nodes}
    split = args.eval_split
    if split is not None and "=" in split:
        split = dict([_knob(split)])
    return {
        "renderer": args.renderer, "wandb": dict(map(_knob, args.wandb)) or None,
        "checkpoint": False if args.no_checkpoint else dict(map(_knob, args.checkpoint)) or None,
        "run_name": args.run_name, "output_dir": args.output_dir, "nodes": nodes,
        "slurm": dict(map(_knob, args.slurm)) or None, "max_model_len": args.max_model_len,
        "gpu_memory_utilization": args.gpu_memory_utilization, "eval_taskset": args.eval_taskset,
        "eval_split": split, "scheduler": args.scheduler, "warmup_steps": args.warmup_steps,
        "overrides": dict(map(_knob, args.override)) or None,
    }


def _run_command(args: argparse.Namespace) -> Any:
    from pick_a_method import routing

    fields = _fields(args)
    read = lambda path: routing.read_rows(path, fields=fields)  # noqa: E731
    if args.command == "route":
        teacher = read(args.teacher_rows) if args.teacher_rows else None
        return routing.route(read(args.rows), args.model, teacher, pass_threshold=args.pass_threshold,
                             taskset=args.taskset, teacher=args.teacher, teacher_base_url=args.teacher_base_url,
                             preference_pairs=args.preference_pairs or None, trainer=args.trainer)
    if args.command == "truncated-passes":
        return routing.truncated_passes(read(args.rows), pass_threshold=args.pass_threshold)
    if args.command == "band":
        return routing.band(read(args.rows), pass_threshold=args.pass_threshold)
    if args.command == "pass-at":
        return routing.pass_at(read(args.rows), k=args.k, pass_threshold=args.pass_threshold)
    if args.command == "teacher-clears":
        return routing.teacher_clears(read(args.teacher_rows), read(args.student_rows), args.effect)
    if args.command == "holdout-size":
        return routing.holdout_size(args.effect, k=args.k, base=args.base,
                                    before=read(args.before) if args.before else None,
                                    after=read(args.after) if args.after else None)
    if args.command == "preview-update":
        from pick_a_method.methods.preview import preview_update

        return preview_update(args.method, dict(map(_knob, args.knob)), path=args.path)
    if args.command == "prime-rl-config":
        from pick_a_method.methods.prime_rl import prime_rl_config

        return prime_rl_config(args.taskset, args.method, model=args.model, knobs=dict(map(_knob, args.knob)),
                               out=args.out, overwrite=args.overwrite, gpus=args.gpus, steps=args.steps,
                               batch=args.batch, lora=not args.no_lora, **_prime_rl_run_knobs(args))
    if args.command in ("trl-config", "verl-config"):
        common = dict(model=args.model, knobs=dict(map(_knob, args.knob)), overrides=dict(map(_knob, args.set)),
                      out=args.out, overwrite=args.overwrite, gpus=args.gpus, nodes=args.nodes, steps=args.steps,
                      batch=args.batch, lora=not args.no_lora)
        if args.command == "trl-config":
            from pick_a_method.methods.trl import trl_config

            return trl_config(args.method, dataset=args.dataset, reward_funcs=args.reward_funcs, vllm=not args.no_vllm,
                              **common)
        from pick_a_method.methods.verl import verl_config

        return verl_config(args.method, train_files=args.train_files, val_files=args.val_files,
                           reward_function=args.reward_function, teacher_gpus=args.teacher_gpus, **common)
    raise AssertionError(args.command)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def render(verdict: Any) -> str:
    """A verdict as a person reads it: the answer, the summary, warnings, the next step, then the evidence."""
    data = verdict.model_dump(mode="json")
    head = data.get("route") or data.get("verdict")
    lines = [f"{head}: {data.get('summary', '')}"]
    if data.get("methods"):
        lines.append(f"methods: {', '.join(data['methods'])}")
    for w in data.get("warnings") or []:
        lines.append(f"warning: {w}")
    step = data.get("next_step") or {}
    if step:
        call = f"{step['tool']}({json.dumps(step.get('arguments') or {})})" if step.get("tool") else "-"
        lines.append(f"next: {call}  {step.get('why', '')}")
        if step.get("needs"):
            lines.append(f"      fill in: {', '.join(step['needs'])}")
    for t in data.get("trace") or []:
        mark = "*" if t["decided"] else " "
        lines.append(f" {mark} Q{t['question']} {t['name']}: {t['answer']}  {json.dumps(_rounded(t['evidence']))}")
    for check in data.get("before_gpu") or []:
        lines.append(f"before the GPU: {check}")
    skip = {"verdict", "summary", "warnings", "next_step", "trace", "before_gpu", "methods", "route", "text",
            "config"}
    for key, value in data.items():
        if key not in skip and value not in (None, [], {}):
            shown = value if isinstance(value, str) else json.dumps(_rounded(value))
            lines.append(f"  {key}: {shown if key == 'command' else str(shown)[:400]}")  # a command is run whole
    if data.get("text"):
        lines.append(data["text"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.print_skill:
        from .app import skill_text

        sys.stdout.write(skill_text())
        return 0
    if args.command:
        try:
            verdict = _run_command(args)
        except (ValueError, TypeError, OSError) as e:
            print(f"pick-a-method: {e}", file=sys.stderr)
            return 2
        try:
            print(verdict.model_dump_json(indent=2) if args.json else render(verdict))
        except BrokenPipeError:  # `| head` closed the pipe: not an error
            sys.stderr.close()
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from .app import create_server

    try:
        options = _options(args)
    except ValueError as e:  # a PICK_A_METHOD_* variable that is not a number
        _parser().error(str(e))
    server = create_server(options)
    try:
        if args.transport == "http":
            server.run("streamable-http", host="127.0.0.1", port=args.port)
        else:
            # stdin is read on a worker thread that a KeyboardInterrupt cannot stop: with Python's own handler,
            # Ctrl-C left a server that no longer answered yet did not exit until stdin closed. End at once
            # instead, as SIGTERM does (no traceback, nothing on stdout).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
