"""`pick-a-method`: with no subcommand, serve MCP over stdio; with one, print a verdict for a person. The flags and the
usage `--help` prints are in cli_flags.py."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from typing import Any

from . import extras
from .cli_flags import FIELD_FLAGS, parser as _parser, write_roots
from .cli_picture import picture_lines, remember
from .cli_words import cli_words, command_line
from .options import ServerOptions

SERVING = ("pick-a-method: serving MCP over stdio; a client (Claude Code, Codex, Cursor, ...) spawns this itself. "
           "Ctrl-C stops it. `pick-a-method --help` lists the commands for a person, such as `pick-a-method route "
           "rows.jsonl`.")


def _fields(args: argparse.Namespace) -> dict[str, str] | None:
    given = {name: getattr(args, f"{name}_field", None) for name in (*FIELD_FLAGS, "cut_off")}
    return {k: v for k, v in given.items() if v} or None


def _options(args: argparse.Namespace) -> ServerOptions:
    kw: dict[str, Any] = {}
    if args.max_rows is not None:
        kw["max_rows"] = args.max_rows
    if args.max_bytes is not None:
        kw["max_bytes"] = args.max_bytes
    if args.call_seconds is not None:
        kw["call_seconds"] = args.call_seconds
    from pick_a_method.common.paths import expand_user_path

    if args.root:
        kw["roots"] = kw["write_roots"] = tuple(expand_user_path(d, "--root").resolve() for d in args.root)
    if args.allow_write:
        kw["write_roots"] = tuple(expand_user_path(d, "--allow-write").resolve() for d in args.allow_write)
    return ServerOptions(**kw)


def _knob(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"{text!r} is not KEY=VALUE; write e.g. --knob group_size=16")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _knobs(texts: list[str]) -> dict[str, Any]:
    """--knob KEY=VALUE pairs -> knobs; a dotted key nests, as in the MCP tool's pairs."""
    from .schemas import nest_dotted

    return nest_dotted(map(_knob, texts))


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


def _message(e: BaseException) -> str:
    from pydantic import ValidationError  # loaded by then: the commands build pydantic verdicts

    if isinstance(e, ValidationError):
        from .explain import explain

        return explain(e)
    return str(e)


def _yes_no(text: str | None) -> bool | None:
    return None if text is None else text == "true"


def _throughput(text: str | None) -> dict[str, float] | None:
    """--throughput INFER,TRAIN -> route's throughput mapping (a bad value reaches route, which names the fix)."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = parts
    keys = ("inference_tokens_per_s_per_gpu", "trainer_tokens_per_s_per_gpu")
    return dict(zip(keys, values)) if len(values) == 2 else {"--throughput": text}


def _run_command(args: argparse.Namespace) -> Any:
    from pick_a_method import routing

    fields = _fields(args)
    def read(path: str | list[str], argument: str) -> Any:
        return remember(args, argument, routing.read_rows(path[0] if isinstance(path, list) and len(path) == 1
                                                          else path, fields=fields, argument=argument))

    if args.command == "route":
        teacher = read(args.teacher_rows, "--teacher-rows") if args.teacher_rows else None
        return routing.route(read(args.rows, "rows"), args.model, teacher, pass_threshold=args.pass_threshold,
                             effect=args.effect, taskset=args.taskset, teacher=args.teacher,
                             teacher_base_url=args.teacher_base_url, preference_pairs=args.preference_pairs or None,
                             trainer=args.trainer, gpus=args.gpus, throughput=_throughput(args.throughput),
                             tokenizers_match=_yes_no(args.tokenizers_match))
    if args.command == "truncated-passes":
        return routing.truncated_passes(read(args.rows, "rows"), pass_threshold=args.pass_threshold)
    if args.command == "band":
        return routing.band(read(args.rows, "rows"), pass_threshold=args.pass_threshold)
    if args.command == "pass-at":
        return routing.pass_at(read(args.rows, "rows"), k=args.k, pass_threshold=args.pass_threshold)
    if args.command == "teacher-clears":
        return routing.teacher_clears(read(args.teacher_rows, "teacher_rows"), read(args.student_rows, "student_rows"),
                                      args.effect, pass_threshold=args.pass_threshold,
                                      tokenizers_match=_yes_no(args.tokenizers_match))
    if args.command == "holdout-size":
        return routing.holdout_size(args.effect, k=args.k, base=args.base, power=args.power, alpha=args.alpha,
                                    task_std=args.task_std,
                                    before=read(args.before, "--before") if args.before else None,
                                    after=read(args.after, "--after") if args.after else None)
    if args.command == "preview-update":
        extras.require("torch", "preview-update")
        from pick_a_method.methods.preview import preview_update

        return preview_update(args.method, _knobs(args.knob), path=args.path)
    if args.command == "prime-rl-config":
        from pick_a_method.methods.prime_rl import prime_rl_config

        roots = write_roots(args)
        gpus: Any = args.gpus
        if args.inference_gpus is not None or args.trainer_gpus is not None:
            if gpus is not None:
                raise ValueError("--gpus is the total, split evenly; --inference-gpus / --trainer-gpus give the split: "
                                 "pass one or the other")
            gpus = {"inference": args.inference_gpus, "trainer": args.trainer_gpus}
        return prime_rl_config(args.taskset, args.method, model=args.model, knobs=_knobs(args.knob), out=args.out,
                               overwrite=args.overwrite, gpus=gpus, steps=args.steps, batch=args.batch,
                               lora=not args.no_lora, allowed_roots=roots, **_prime_rl_run_knobs(args))
    if args.command in ("trl-config", "verl-config"):
        common = dict(model=args.model, knobs=_knobs(args.knob), overrides=dict(map(_knob, args.set)),
                      out=args.out, overwrite=args.overwrite, gpus=args.gpus, nodes=args.nodes, steps=args.steps,
                      batch=args.batch, lora=not args.no_lora,
                      allowed_roots=write_roots(args))
        if args.command == "trl-config":
            from pick_a_method.methods.trl import trl_config

            return trl_config(args.method, dataset=args.dataset, reward_funcs=args.reward_funcs, vllm=not args.no_vllm,
                              **common)
        from pick_a_method.methods.verl import verl_config

        return verl_config(args.method, train_files=args.train_files, val_files=args.val_files,
                           reward_function=args.reward_function, teacher_gpus=args.teacher_gpus, **common)
    raise AssertionError(args.command)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.print_skill:
        from .skill import skill_text

        sys.stdout.write(skill_text())
        return 0
    if args.command:
        try:
            verdict = _run_command(args)
            below, wrote = picture_lines(args, verdict)  # --plot written before anything is printed
        except (ValueError, TypeError, OSError) as e:
            print(f"pick-a-method: {cli_words(_message(e), args.command)}", file=sys.stderr)
            return 2
        from .render import render

        try:  # a subcommand's answer, for a person: this path never serves MCP, so stdout is free
            print(verdict.model_dump_json(indent=2) if args.json
                  else cli_words(render(verdict, command_line), args.command))
            for line, stream in ((below, sys.stdout), (wrote, sys.stderr if args.json else sys.stdout)):
                if line:
                    print(line, file=stream)
        except BrokenPipeError:  # `| head` closed the pipe: not an error
            sys.stderr.close()
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from .versions import problem

    if (wrong := problem()) is not None:  # before the SDK is imported: its own error would not say which version
        print(wrong, file=sys.stderr)
        return 3
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
            if sys.stdin.isatty():  # a person ran it by hand: say what it is doing (stderr; stdout is the wire)
                print(SERVING, file=sys.stderr, flush=True)
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
