"""The command line's flags: the one parser of every subcommand. server/cli.py runs what it parses; server/cli_words.py
reads its flags to print hints as commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from .cli_picture import plot_flags
from .cli_words import Parser
from .options import DEFAULT_CALL_SECONDS, DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS

USAGE = """`pick-a-method`: with no subcommand, serve MCP over stdio; with one, print a verdict for a person.

    pick-a-method                                  # MCP over stdio (what Claude Code and the Inspector spawn)
    pick-a-method --transport http --port 8765     # MCP over streamable HTTP on 127.0.0.1
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B [--teacher-rows t.jsonl] [--json]
    pick-a-method route rows.jsonl --model Qwen/Qwen3-8B --reward-field correct --model-field sampling.model
    pick-a-method --print-skill > .claude/skills/pick-a-method/SKILL.md
"""
PRIME_RL_METHODS = "grpo, max_rl, rae, opd, opsd or async (async wraps one of them: --knob method=grpo)"


class _Help(argparse.RawDescriptionHelpFormatter):
    pass


def parser() -> argparse.ArgumentParser:
    from pick_a_method.routing import defaults as D  # constants only: the package's names load lazily

    p = Parser(prog="pick-a-method", description=USAGE, formatter_class=_Help)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="how to serve MCP: stdio (what clients spawn) or streamable http (default: stdio)")
    p.add_argument("--port", type=int, default=8765, help="port for --transport http, on 127.0.0.1 (default: 8765)")
    p.add_argument("--print-skill", action="store_true", help="print the skill (SKILL.md) and exit")
    p.add_argument("--max-rows", type=int, metavar="N",
                   help=f"cap on rows read per call (default: {DEFAULT_MAX_ROWS:,}; env PICK_A_METHOD_MAX_ROWS)")
    p.add_argument("--max-bytes", type=int, metavar="N",
                   help=f"cap on bytes read per file (default: {DEFAULT_MAX_BYTES:,}; env PICK_A_METHOD_MAX_BYTES)")
    p.add_argument("--call-seconds", type=float, metavar="S",
                   help=f"time budget per tool call (default: {DEFAULT_CALL_SECONDS:g}; env "
                        f"PICK_A_METHOD_CALL_SECONDS)")
    p.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="a folder the server may read and write (repeatable; where the client declares no roots). "
                        "Default: the folder it starts in, unless that is /, your home folder or a system folder")
    p.add_argument("--allow-write", action="append", default=[], metavar="DIR",
                   help="a folder the config writers and --plot may write into; repeatable (default: the current folder "
                        "for the server; anywhere for a command)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           description="with a command, print a verdict for a person (no MCP); without one, serve MCP")
    threshold = f"a row passes when reward >= this (default: {D.PASS_THRESHOLD:g})"
    effect = "the gain to prove, between 0 and 1, e.g. 0.05 = five points (default: {:g})".format(D.PROVE_EFFECT)
    as_json = "print the whole verdict as JSON instead of text"
    rows_help = ("graded rows: .jsonl (or .jsonl.gz), .json, .csv or .parquet, or an eval run's folder or log "
                 "(vf-eval, lm-eval --log_samples, inspect .eval, verl dumps); several files or a glob read as one set")

    def writer_flags(c: argparse.ArgumentParser, what: str, *, knob_example: str) -> None:
        """The flags every config writer takes: the model, method knobs, and a safe --out."""
        c.add_argument("--model", required=True, help="the model to train, e.g. Qwen/Qwen3-8B (required)")
        c.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE",
                       help="a method knob, VALUE read as JSON when it parses" + knob_example)
        c.add_argument("--out", metavar="FILE", help=f"write {what} here (default: print it)")
        c.add_argument("--overwrite", action="store_true", help="replace an existing file at --out")
        c.add_argument("--allow-write", action="append", default=argparse.SUPPRESS, metavar="DIR",
                       help="refuse an --out outside these folders (repeatable; default: write anywhere)")

    def field_flags(c: argparse.ArgumentParser) -> None:
        g = c.add_argument_group("your field names (a dotted path reaches into objects, e.g. sampling.model)")
        for name in FIELD_FLAGS:
            g.add_argument(f"--{name.replace('_id', '').replace('_', '-')}-field", dest=f"{name}_field",
                           metavar="NAME", help=f"the field that holds {FIELD_FLAGS[name]}")
        g.add_argument("--cut-off", dest="cut_off_field", metavar="WORDS",
                       help="finish reasons (comma-separated) that mean the reply hit the token cap, beside length, "
                            "max_tokens, model_length")

    def rows_command(name: str, help: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help, description=help, formatter_class=_Help)
        c.add_argument("rows", nargs="+", metavar="ROWS", help=rows_help)
        c.add_argument("--pass-threshold", type=float, default=D.PASS_THRESHOLD, metavar="X", help=threshold)
        c.add_argument("--json", action="store_true", help=as_json)
        field_flags(c)
        return c

    r = rows_command("route", "route graded rows to a training method (start here)")
    r.add_argument("--model", help="the model you will train, e.g. Qwen/Qwen3-8B (default: none; the on-policy "
                                   "question then stays open)")
    r.add_argument("--teacher-rows", metavar="FILE", help="a candidate teacher's graded rows on the same tasks")
    r.add_argument("--taskset", help="prime-rl taskset id, filled into the next step")
    r.add_argument("--teacher", help="teacher model name (default: the teacher rows' model)")
    r.add_argument("--teacher-base-url", metavar="URL", help="the teacher's vLLM server URL, for OPD "
                                                             "(e.g. http://localhost:8001/v1)")
    r.add_argument("--effect", type=float, default=D.PROVE_EFFECT, metavar="X", help=effect)
    r.add_argument("--preference-pairs", action="store_true", help="the rows hold natural better/worse pairs")
    r.add_argument("--trainer", default="prime-rl", choices=("prime-rl", "trl", "verl"),
                   help="the trainer whose config tool the next step names: prime-rl, trl or verl (default: prime-rl)")
    r.add_argument("--gpus", type=int, help="GPUs for the run; with --throughput, split between inference and trainer")
    r.add_argument("--throughput", metavar="INFER,TRAIN", help="tokens/s per GPU of vLLM and of the trainer")
    rows_command("truncated-passes", "question 1: can a cut-off reply pass?")
    b = rows_command("band", "question 3: floor, saturated or mixed?")
    pa = rows_command("pass-at", "pass@1 with an interval, pass@k, pass^k")
    pa.add_argument("-k", type=int, metavar="K", help="k for pass@k and pass^k (default: the smallest group)")
    t = sub.add_parser("teacher-clears", help="question 5: does a teacher beat the student?",
                       description="question 5: does a teacher beat the student?", formatter_class=_Help)
    t.add_argument("teacher_rows", metavar="TEACHER_ROWS", help=f"the teacher's {rows_help}")
    t.add_argument("student_rows", metavar="STUDENT_ROWS", help="the student's graded rows on the same tasks")
    t.add_argument("--effect", type=float, default=D.PROVE_EFFECT, metavar="X", help=effect)
    t.add_argument("--pass-threshold", type=float, default=D.PASS_THRESHOLD, metavar="X", help=threshold)
    t.add_argument("--json", action="store_true", help=as_json)
    field_flags(t)
    for c in (r, t):  # question 5: OPD distills token by token, so only a teacher with the student's tokenizer
        c.add_argument("--tokenizers-match", choices=("true", "false"),
                       help="true or false: whether teacher and student share a tokenizer, if you know (default: "
                            "not compared)")
    for c in (r, b, pa, t):  # the commands that draw the band (or the teacher's gain): server/cli_picture.py
        plot_flags(c)
    h = sub.add_parser("holdout-size", help="held-out tasks needed to prove an effect",
                       description="held-out tasks needed to prove an effect", formatter_class=_Help)
    h.add_argument("--effect", type=float, default=D.PROVE_EFFECT, metavar="X", help=effect)
    h.add_argument("-k", type=int, metavar="K", help=f"rollouts per task (default: {D.HOLDOUT_K}, or read off --before)")
    h.add_argument("--base", type=float, metavar="P",
                   help=f"base pass rate (default: {D.HOLDOUT_BASE:g}, or read off --before)")
    h.add_argument("--power", type=float, default=D.HOLDOUT_POWER, metavar="P",
                   help=f"chance to detect the effect when it is real (default: {D.HOLDOUT_POWER:g})")
    h.add_argument("--alpha", type=float, default=D.HOLDOUT_ALPHA, metavar="A",
                   help=f"two-sided false-positive rate (default: {D.HOLDOUT_ALPHA:g})")
    h.add_argument("--task-std", type=float, metavar="SD", help="one task's paired-difference sd, if known")
    h.add_argument("--before", metavar="FILE", help="rows before training (base and k are read off them)")
    h.add_argument("--after", metavar="FILE", help="rows after training, on the same tasks")
    h.add_argument("--json", action="store_true", help=as_json)
    field_flags(h)
    pv = sub.add_parser("preview-update", help="what a method's update rule keeps from logged trajectories "
                                               "(needs the [torch] extra)",
                        description="what a method's update rule keeps from logged trajectories (needs the "
                                    "[torch] extra)", formatter_class=_Help)
    pv.add_argument("path", help="JSONL of trajectories: reward, logprobs, and behavior_logprobs / values / mask")
    pv.add_argument("--method", default="FlashReinforce",
                    help="any method with an update rule: FlashReinforce, SAO, BPCO, GRPO, MaxRL, RAE, OPD, "
                         "Async, ... (default: FlashReinforce)")
    pv.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE",
                    help="a method knob, VALUE read as JSON when it parses (repeatable; default: the method's own)")
    pv.add_argument("--json", action="store_true", help=as_json)
    c = sub.add_parser("prime-rl-config", help="write the prime-rl TOML for a method",
                       description=f"write the prime-rl TOML for a method: {PRIME_RL_METHODS}",
                       formatter_class=_Help)
    c.add_argument("taskset", help="prime-rl taskset id (env.taskset.id)")
    c.add_argument("method", help=PRIME_RL_METHODS)
    writer_flags(c, "the TOML", knob_example=", e.g. --knob teacher=Qwen/Qwen3-32B (repeatable; a dotted KEY nests: "
                                        "method.name=opd)")
    c.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a dotted prime-rl key to set, e.g. --override trainer.optim.lr=2e-5 (repeatable)")
    c.add_argument("--gpus", type=int, help="GPUs on the node, at least 2 (default: 2), split evenly; with --nodes, "
                                            "GPUs per node (default: 8)")
    c.add_argument("--inference-gpus", type=int, metavar="N", help="with --trainer-gpus: vLLM's GPUs on the node")
    c.add_argument("--trainer-gpus", type=int, metavar="N", help="with --inference-gpus: the trainer's GPUs")
    c.add_argument("--steps", type=int, default=100, help="max_steps (default: 100)")
    c.add_argument("--batch", type=int, default=64, help="prompts x rollouts per step (default: 64)")
    c.add_argument("--no-lora", action="store_true", help="train the full model instead of a LoRA adapter")
    c.add_argument("--renderer", help="[orchestrator.renderer] name (default: chosen from the model)")
    c.add_argument("--wandb", action="append", default=[], metavar="KEY=VALUE",
                   help="W&B: project, name, entity, offline (repeatable; default: no W&B)")
    c.add_argument("--checkpoint", action="append", default=[], metavar="KEY=VALUE",
                   help="interval, keep_last, resume (true, a step, or a .../step_N folder) (repeatable; default: "
                        "the library's [ckpt])")
    c.add_argument("--no-checkpoint", action="store_true", help="write no [ckpt]")
    c.add_argument("--run-name", help="run.name: the run folder under --output-dir (needed to resume)")
    c.add_argument("--output-dir", metavar="DIR", help="output_dir on the GPU machine (default: prime-rl's)")
    c.add_argument("--nodes", type=int, help="machines for a multi-node SLURM run, half of them inference "
                                             "(default: one node)")
    c.add_argument("--inference-nodes", type=int, metavar="N", help="with --trainer-nodes: the split of a "
                                                                    "multi-node run")
    c.add_argument("--trainer-nodes", type=int, metavar="N", help="with --inference-nodes: the trainer's machines")
    c.add_argument("--slurm", action="append", default=[], metavar="KEY=VALUE",
                   help="[slurm] keys, e.g. partition=gpu (repeatable)")
    c.add_argument("--max-model-len", type=int, metavar="N", help="vLLM max_model_len (default: vLLM's)")
    c.add_argument("--gpu-memory-utilization", type=float, metavar="X", help="vLLM gpu_memory_utilization, (0, 1] "
                                                                             "(default: vLLM's)")
    c.add_argument("--eval-taskset", help="the taskset the eval reads (default: the training one)")
    c.add_argument("--eval-split", help="a split name, or KEY=VALUE for the taskset's own split key")
    c.add_argument("--scheduler", choices=("constant", "linear", "cosine"),
                   help="LR schedule: constant, linear or cosine (default: prime-rl's constant)")
    c.add_argument("--warmup-steps", type=int, metavar="N", help="LR warmup steps (default: none)")
    c.add_argument("--json", action="store_true", help=as_json)
    for name, what, methods in (
            ("trl-config", "write the TRL YAML for a method (trl <command> --config FILE)",
             "grpo, async (around grpo; correction icepop or tis), groupwise_grading, opd, sft or dpo"),
            ("verl-config", "write the verl Hydra config for a method (python -m verl.trainer.main_ppo)",
             "grpo, async (around grpo; correction tis or icepop) or opd")):
        gpus = 1 if name == "trl-config" else 8
        w = sub.add_parser(name, help=what, description=f"{what}: {methods}", formatter_class=_Help)
        w.add_argument("method", help=methods)
        writer_flags(w, "the config", knob_example=" (repeatable)")
        w.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a config key to set last, VALUE read as JSON when it parses (repeatable)")
        w.add_argument("--gpus", type=int, default=gpus, help=f"GPUs per node (default: {gpus})")
        w.add_argument("--nodes", type=int, default=1, help="machines (default: 1)")
        w.add_argument("--steps", type=int, default=100, help="training steps (default: 100)")
        w.add_argument("--batch", type=int, default=64, help="rollouts or examples per step (default: 64)")
        w.add_argument("--no-lora", action="store_true", help="train the full model instead of a LoRA adapter")
        w.add_argument("--json", action="store_true", help=as_json)
        if name == "trl-config":
            w.add_argument("--dataset", help="the dataset (dataset_name; default: a placeholder to fill in)")
            w.add_argument("--reward-func", action="append", dest="reward_funcs", metavar="NAME",
                           help="grpo: a TRL reward name or dotted import path (repeatable)")
            w.add_argument("--no-vllm", action="store_true", help="generate without vLLM")
        else:
            w.add_argument("--train-files", action="append", metavar="FILE", help="verl RL parquet files (repeatable)")
            w.add_argument("--val-files", action="append", metavar="FILE", help="held-out parquet files (repeatable)")
            w.add_argument("--reward-function", metavar="PATH:FN",
                           help="path/to/reward.py:function (default: verl's scorer for each row's data_source)")
            w.add_argument("--teacher-gpus", type=int, default=2, help="opd: GPUs for the teacher pool (default: 2)")
    return p


FIELD_FLAGS = {"task_id": "the task id", "reward": "the grade (a number or true/false)",
               "truncated": "whether the reply was cut off", "model": "the model that sampled the row",
               "arm": "the experiment arm", "tokens": "the completion's token count",
               "completion": "the reply (question 0 checks the grader with it)"}


def write_roots(args: argparse.Namespace) -> list[Path] | None:
    """The folders --allow-write names (~ expanded, links resolved), for the config writers and --plot; None: the
    command line writes where its user can (its --out or --plot names the file)."""
    from pick_a_method.common.paths import expand_user_path

    return [expand_user_path(d, "--allow-write").resolve() for d in args.allow_write] or None
