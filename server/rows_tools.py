"""The routing tools' arguments: each reads graded rows and asks the core one question (route: all of them, in order).

Declared once (server/declare.py): the MCP input schema, the command's flags and the call into the core all come
from these models. Every default is the router's own (routing/defaults.py).
"""

from __future__ import annotations

from typing import Any

from pick_a_method.common.next_step import Tool
from pick_a_method.routing import defaults as D
from pick_a_method.routing.before_training.options import RouteOptions

from .declare import NOT_ON_THE_COMMAND_LINE as NOT, Arguments, Cli, arg
from .schemas import FieldsArg, Pairs, Paths, RowObjects, RowsText, field_map, pairs_dict

ROWS_HELP = ("graded rows: .jsonl (or .jsonl.gz), .json, .csv or .parquet, or an eval run's folder or log (vf-eval, "
             "lm-eval --log_samples, inspect .eval, verl dumps); several files or a glob read as one set")
FIELDS_GROUP = "your field names (a dotted path reaches into objects, e.g. sampling.model)"


# The arguments several tools share, declared once each.
# The shared arguments carry no description in the listing: the server's instructions say once what each means
# (server/app.py INSTRUCTIONS), which agents read once, not on every tool.
def rows_text_arg() -> Any:
    return arg(None, cli=NOT)


def rows_path_arg(cli: Cli) -> Any:
    return arg(None, cli=cli)


THRESHOLD = Cli(metavar="X", help="a row passes when reward >= this")
EFFECT = Cli(metavar="X", help="the gain to prove, between 0 and 1, e.g. 0.05 = five points")
TOKENIZERS_MATCH = Cli(yes_no=True, help=(
    "true or false: whether teacher and student share a tokenizer, if you know (default: not compared)"))


def threshold_arg() -> Any:
    return arg(D.PASS_THRESHOLD, cli=THRESHOLD)


def effect_arg() -> Any:
    return arg(D.PROVE_EFFECT, gt=0, lt=1, cli=EFFECT)


def fields_arg() -> Any:
    return arg(None, cli=Cli(help=FIELDS_GROUP))


def picture_arg() -> Any:
    return arg(False, cli=NOT)  # the command line draws with --plot


def tokenizers_match_arg() -> Any:
    return arg(None, cli=TOKENIZERS_MATCH)


def tokenizer_arg() -> Any:
    return arg(None, cli=NOT)


ROWS = Cli(positional=True, many=True, metavar="ROWS", help=ROWS_HELP)


class OneRowSetArguments(Arguments):
    """What a tool that asks one question of one set of rows takes: the rows, the pass threshold, the fields."""

    row_sets = {"rows": True}
    rows: RowsText = rows_text_arg()
    rows_path: Paths = rows_path_arg(ROWS)
    pass_threshold: float = threshold_arg()
    fields: FieldsArg = fields_arg()

    def picture_of(self, rows: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return rows["rows"], {"pass_threshold": self.pass_threshold}


class TruncatedPassesArguments(OneRowSetArguments):
    """Question 1: rows cut off at the token cap that still passed (any: fix the reward first)."""

    tool, title = Tool.TRUNCATED_PASSES, "Can a cut-off reply pass? (question 1)"
    answers = "pick_a_method.routing:TruncatedPasses"

    def call(self, rows: Any) -> Any:
        from pick_a_method import routing

        return routing.truncated_passes(rows, pass_threshold=self.pass_threshold)


class PassAtArguments(OneRowSetArguments):
    """pass@1 with a 95% interval over tasks, pass@k, pass^k, per-task rates (paged)."""

    tool, title = Tool.PASS_AT, "pass@1 with an interval, pass@k, pass^k"
    answers = "pick_a_method.routing:PassAt"
    pictured = True
    k: int | None = arg(None, "Default: the smallest group", ge=1, cli=Cli(
        flag="-k", metavar="K", help="k for pass@k and pass^k (default: the smallest group)"))
    per_task_offset: int = arg(0, ge=0, cli=NOT)
    per_task_limit: int = arg(50, ge=0, le=1000, cli=NOT)
    picture: bool = picture_arg()

    def call(self, rows: Any) -> Any:
        from pick_a_method import routing

        return routing.pass_at(rows, k=self.k, pass_threshold=self.pass_threshold,
                               per_task_offset=self.per_task_offset, per_task_limit=self.per_task_limit)


class BandArguments(OneRowSetArguments):
    """Question 3: floor, saturated or mixed; the share of tasks that split, now and at larger k."""

    tool, title = Tool.BAND, "Floor, saturated or mixed? (question 3)"
    answers = "pick_a_method.routing:Band"
    pictured = True
    picture: bool = picture_arg()

    def call(self, rows: Any) -> Any:
        from pick_a_method import routing

        return routing.band(rows, pass_threshold=self.pass_threshold)


class TeacherClearsArguments(Arguments):
    """Question 5: does the teacher beat the student by `effect`, both scored on the same tasks?"""

    tool, title = Tool.TEACHER_CLEARS, "Does the teacher clear the student? (question 5)"
    answers = "pick_a_method.routing:TeacherClears"
    row_sets, pictured = {"teacher_rows": True, "student_rows": True}, True
    compares_tokenizers = True
    teacher_rows: RowsText = rows_text_arg()
    teacher_rows_path: Paths = rows_path_arg(Cli(
        positional=True, metavar="TEACHER_ROWS", help=f"the teacher's {ROWS_HELP}"))
    student_rows: RowsText = rows_text_arg()
    student_rows_path: Paths = rows_path_arg(Cli(
        positional=True, metavar="STUDENT_ROWS", help="the student's graded rows on the same tasks"))
    effect: float = effect_arg()
    pass_threshold: float = threshold_arg()
    tokenizers_match: bool | None = tokenizers_match_arg()
    teacher_tokenizer: str | None = tokenizer_arg()
    student_tokenizer: str | None = tokenizer_arg()
    fields: FieldsArg = fields_arg()
    picture: bool = picture_arg()

    def call(self, teacher_rows: Any, student_rows: Any, *, tokenizers_match: bool | None = None) -> Any:
        from pick_a_method import routing

        known = self.tokenizers_match if self.tokenizers_match is not None else tokenizers_match
        return routing.teacher_clears(teacher_rows, student_rows, self.effect, pass_threshold=self.pass_threshold,
                                      tokenizers_match=known)

    def picture_of(self, rows: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return rows["student_rows"], {"teacher_rows": rows["teacher_rows"], "pass_threshold": self.pass_threshold,
                                      "effect": self.effect}


class HoldoutSizeArguments(Arguments):
    """Held-out tasks that detect `effect` at `power` (binomial, a known sd, or before/after rows)."""

    tool, title = Tool.HOLDOUT_SIZE, "Held-out tasks needed to prove an effect"
    answers = "pick_a_method.routing:HoldoutSize"
    row_sets = {"before_rows": False, "after_rows": False}
    effect: float = effect_arg()
    base: float | None = arg(None, f"Default {D.HOLDOUT_BASE:g}, or before rows'", ge=0, le=1,
                             cli=Cli(metavar="P", help=f"base pass rate (default: {D.HOLDOUT_BASE:g}, or read off "
                                                       f"--before)"))
    k: int | None = arg(None, f"Rollouts a task (default {D.HOLDOUT_K})", ge=1, cli=Cli(
        flag="-k", metavar="K", help=f"rollouts per task (default: {D.HOLDOUT_K}, or read off --before)"))
    power: float = arg(D.HOLDOUT_POWER, gt=0, lt=1, cli=Cli(
        metavar="P", help="chance to detect the effect when it is real"))
    alpha: float = arg(D.HOLDOUT_ALPHA, "Two-sided", gt=0, lt=1, cli=Cli(
        metavar="A", help="two-sided false-positive rate"))
    task_std: float | None = arg(None, "Paired-difference sd", gt=0, cli=Cli(
        metavar="SD", help="one task's paired-difference sd, if known"))
    before_rows: RowsText = rows_text_arg()
    before_rows_path: Paths = rows_path_arg(Cli(
        flag="--before", metavar="FILE", help="rows before training (base and k are read off them)"))
    after_rows: RowsText = rows_text_arg()
    after_rows_path: Paths = rows_path_arg(Cli(
        flag="--after", metavar="FILE", help="rows after training, on the same tasks"))
    fields: FieldsArg = fields_arg()

    def call(self, before_rows: Any = None, after_rows: Any = None) -> Any:
        from pick_a_method import routing

        return routing.holdout_size(self.effect, base=self.base, k=self.k, power=self.power, alpha=self.alpha,
                                    before=before_rows, after=after_rows, task_std=self.task_std)


def throughput_words(text: str) -> dict[str, Any]:
    """--throughput INFER,TRAIN -> route's throughput (a bad value reaches route, which names the fix)."""
    parts = text.split(",")
    try:
        values: list[Any] = [float(p) for p in parts]
    except ValueError:
        values = parts
    keys = ("inference_tokens_per_s_per_gpu", "trainer_tokens_per_s_per_gpu")
    return dict(zip(keys, values)) if len(values) == 2 else {"--throughput": text}


class RouteArguments(Arguments, RouteOptions):
    """Start here: the skill's questions in order; the route, each answer's evidence, and next_step."""

    tool, title = Tool.ROUTE, "Route graded rows to a training method"
    answers = "pick_a_method.routing:Route"
    row_sets, pictured = {"rows": True, "teacher_rows": False}, True
    writes = True  # freeze writes the held-out manifest
    # route's options are routing.RouteOptions' (the library's **options); here, their spelling on the command line
    clis = {
        "model": Cli(help="the model you will train, e.g. Qwen/Qwen3-8B (default: none; the on-policy question then "
                          "stays open)"),
        "taskset": Cli(help="prime-rl taskset id, filled into the next step"),
        "teacher": Cli(help="teacher model name (default: the teacher rows' model)"),
        "teacher_base_url": Cli(metavar="URL", help="the teacher's vLLM server URL, for OPD (e.g. "
                                                    "http://localhost:8001/v1)"),
        "tokenizers_match": TOKENIZERS_MATCH,
        "preference_pairs": Cli(help="the rows hold natural better/worse pairs"),
        "pass_threshold": THRESHOLD,
        "effect": EFFECT,
        "params_b": Cli(metavar="B", help="the model's size in billions of parameters, where its name does not say it"),
        "trainer": Cli(help="the trainer whose config tool the next step names: prime-rl, trl or verl"),
        "gpus": Cli(help="GPUs for the run; with --throughput, split between inference and trainer"),
        "throughput": Cli(parse=throughput_words, metavar="INFER,TRAIN", help="tokens/s per GPU of vLLM and of the "
                                                                              "trainer"),
        "freeze": Cli(metavar="FILE", help="draw the held-out tasks before_gpu sizes and write their manifest to "
                                           "FILE.json, for `after --frozen` (never over an existing file)"),
    }
    rows: RowObjects = rows_text_arg()
    rows_path: Paths = rows_path_arg(ROWS)
    teacher_rows: RowsText = rows_text_arg()
    teacher_rows_path: Paths = rows_path_arg(Cli(
        flag="--teacher-rows", metavar="FILE", help="a candidate teacher's graded rows on the same tasks"))
    fields: FieldsArg = fields_arg()
    picture: bool = picture_arg()

    def call(self, rows: Any, teacher_rows: Any = None, *, allowed_roots: Any = None) -> Any:
        from pick_a_method import routing

        options = {name: getattr(self, name) for name in RouteOptions.model_fields}  # as given: route checks them
        return routing.route(rows, teacher_rows=teacher_rows, allowed_roots=allowed_roots, **options)

    def picture_of(self, rows: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return rows["rows"], {"model": self.model, "teacher_rows": rows.get("teacher_rows"),
                              "pass_threshold": self.pass_threshold, "effect": self.effect}


class AfterArguments(Arguments):
    """After training: a gain on the frozen held-out tasks, beyond noise and the controls?"""

    tool, title = Tool.AFTER, "Did training help? (after the GPU)"
    answers = "pick_a_method.routing:After"
    row_sets = {"before_rows": True, "after_rows": True, "random_selection_rows": False, "random_reward_rows": False}
    pictured = True
    reads_more = True  # the frozen manifest and the guards' files, from the allowed folders too
    before_rows: RowsText = rows_text_arg()
    before_rows_path: Paths = rows_path_arg(Cli(
        positional=True, metavar="BEFORE", help=f"the rows before training: {ROWS_HELP}"))
    after_rows: RowsText = rows_text_arg()
    after_rows_path: Paths = rows_path_arg(Cli(
        positional=True, metavar="AFTER", help="the trained checkpoint's rows on the same held-out tasks"))
    random_selection_rows: RowsText = rows_text_arg()
    random_selection_rows_path: Paths = rows_path_arg(Cli(
        flag="--random-selection", metavar="FILE", help="rows of a checkpoint trained on a random selection of the "
                                                        "same size (the selection control)"))
    random_reward_rows: RowsText = rows_text_arg()
    random_reward_rows_path: Paths = rows_path_arg(Cli(
        flag="--random-reward", metavar="FILE", help="rows of a checkpoint trained on random rewards (the "
                                                     "contamination control)"))
    effect: float | None = arg(None, "Default: the manifest's, else 0.05", gt=0, lt=1, cli=Cli(
        metavar="X", help="the gain registered before training (default: the frozen manifest's, else 0.05)"))
    frozen_path: str | None = arg(None, "The held-out manifest frozen before training", cli=Cli(
        flag="--frozen", metavar="FILE", help="the held-out manifest written before training (its tasks are the ones "
                                              "compared)"))
    guards: Pairs = arg(None, "name=before_path,after_path of a suite that must not regress", cli=Cli(
        flag="--guard", pairs=True, help="a suite that must not regress: NAME=BEFORE,AFTER (two rows files; "
                                         "repeatable)"))
    pass_threshold: float = threshold_arg()
    fields: FieldsArg = fields_arg()
    picture: bool = picture_arg()

    def call(self, before_rows: Any, after_rows: Any, random_selection_rows: Any = None,
             random_reward_rows: Any = None, *, roots: Any = None) -> Any:
        from pick_a_method import routing

        guards = {name: pair.split(",") if isinstance(pair, str) else pair  # "before,after" or ["before", "after"]
                  for name, pair in (pairs_dict(self.guards, nest=False, what="guards") or {}).items()}
        return routing.after(before_rows, after_rows, random_selection=random_selection_rows,
                             random_reward=random_reward_rows, effect=self.effect, frozen=self.frozen_path,
                             guards=guards or None, pass_threshold=self.pass_threshold, roots=roots,
                             fields=field_map(self.fields))

    def picture_of(self, rows: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        return rows["before_rows"], {"after_rows": rows["after_rows"], "pass_threshold": self.pass_threshold}
