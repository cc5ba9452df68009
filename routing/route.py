"""The route: the skill's questions in its order; the first that decides, stops.

Order (seed-pick-a-method.md section 6): truncation, grading, k = 1, floor, saturated, teacher, on-policy,
GRPO. Where the seed's code is wrong the router follows its text and says so in the evidence: ungraded
rows are `grade_first` (not floor), rows that name no model are unknown (not off-policy), too few tasks
is undecided (not a crash), few split tasks adds ReinforceAda, other models' pairs go to DPO, a floor
under ~7B goes to SFT from a stronger model, and a teacher scored with a longer budget is not trusted.
"""

from __future__ import annotations

import re
from typing import Any

from . import defaults as D
from .holdout import holdout_size
from .questions import (Groups, band, dominant_model, groups, grading_warnings, on_policy, rollouts_per_task,
                        teacher_clears, truncated_passes)
from .rows import RowsLike, as_rows
from .verdicts import NextStep, Route, TraceStep

_PARAMS = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")
_QWEN_BASE = re.compile(r"qwen[-_]?(2\.5|3)", re.IGNORECASE)
PLACEHOLDER_TASKSET = "<prime-rl taskset id>"


def model_params_b(model: str | None) -> float | None:
    """Parameter count in billions read off a model name ('Qwen/Qwen3-0.6B' -> 0.6, 'Mixtral-8x7B' -> 56,
    '135M' -> 0.135); an MoE's active count ('A3B') is not its size. None when the name does not say."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1]
    sizes = []
    for m in _PARAMS.finditer(name):
        if m.start() > 0 and name[m.start() - 1] in "Aa":
            continue
        value = float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1)
        sizes.append(value / 1000.0 if m.group(3) in "Mm" else value)
    return max(sizes) if sizes else None


def _prime_rl_step(method: str, *, taskset: str | None, model: str | None, knobs: dict[str, Any] | None = None,
                   why: str, needs: list[str] | None = None) -> NextStep:
    needs = list(needs or [])
    if taskset is None:
        needs.append("taskset")
    if model is None:
        needs.append("model")
    args: dict[str, Any] = {"taskset": taskset or PLACEHOLDER_TASKSET, "method": method,
                            "model": model or "<the model you will train>"}
    if knobs:
        args["knobs"] = knobs
    return NextStep(tool="prime_rl_config", arguments=args, needs=needs, why=why)


def route(rows: RowsLike, model: str | None = None, teacher_rows: RowsLike | None = None, *,
          pass_threshold: float = D.PASS_THRESHOLD, effect: float = D.PROVE_EFFECT, taskset: str | None = None,
          teacher: str | None = None, teacher_base_url: str | None = None, tokenizers_match: bool | None = None,
          preference_pairs: bool | None = None, params_b: float | None = None) -> Route:
    """Route graded rows to a training method; `trace` holds each question's answer and evidence."""
    rows = as_rows(rows)
    trace: list[TraceStep] = []
    warnings: list[str] = []
    g = groups(rows, pass_threshold)
    base_fields = dict(model=model, n_rows=len(rows), n_tasks=len(g.n))

    def done(name: str, methods: list[str], summary: str, step: NextStep, *, alternatives: list[NextStep] = (),
             before_gpu: bool = True) -> Route:
        checks = _before_gpu(g, model, effect) if before_gpu else []
        return Route(verdict=name, route=name, methods=methods, summary=summary, next_step=step, trace=trace,
                     alternatives=list(alternatives), before_gpu=checks, warnings=list(dict.fromkeys(warnings)),
                     **base_fields)

    # 1. Can a cut-off reply pass?
    tp = truncated_passes(rows, pass_threshold=pass_threshold)
    decided = tp.verdict == "fix_reward"
    trace.append(TraceStep(question=1, name="truncated_passes", answer=tp.verdict, decided=decided,
                           evidence={"count": tp.count, "truncated_rows": tp.truncated_rows, "share": tp.share,
                                     "rows_stating_truncation": tp.n_truncation_stated}))
    warnings += tp.warnings
    if decided:
        return done("fix_reward", [], tp.summary, tp.next_step, before_gpu=False)

    # 0. Is there anything graded to read? (the seed's band() calls ungraded rows a floor; they are not)
    warnings += grading_warnings(rows, g, pass_threshold)
    too_few = 0 < len(g.n) < D.MIN_CI_TASKS
    decided = len(g.n) == 0 or too_few
    trace.append(TraceStep(question=0, name="graded", answer="none" if not len(g.n) else ("too_few" if too_few else "yes"),
                           decided=decided, evidence={"graded_rows": g.n_graded, "ungraded_rows": g.n_ungraded,
                                                      "graded_tasks": len(g.n)}))
    if not len(g.n):
        why = ("no row carries a gradable reward" if len(rows) else "there are no rows")
        return done("grade_first", [], f"Nothing to route: {why}. Grade the rollouts (a program grader beats a judge), "
                    "then ask again; ungraded rows are not fails.",
                    NextStep(tool=None, why="Grade the rollouts, then call route again."), before_gpu=False)
    if too_few:
        return done("grade_first", [], f"Undecided: only {len(g.n)} graded task(s); a band or an interval needs "
                    f"{D.MIN_CI_TASKS}+ tasks. Grade more tasks, then ask again.",
                    NextStep(tool="holdout_size", arguments={"effect": effect},
                             why="See how many tasks it takes to prove an effect."), before_gpu=False)

    # 2. How many rollouts per prompt?
    rp = rollouts_per_task(rows, pass_threshold=pass_threshold)
    decided = rp.verdict in ("single", "mostly_single")
    trace.append(TraceStep(question=2, name="rollouts_per_task", answer=f"k={rp.k}", decided=decided,
                           evidence={"k": rp.k, "k_max": rp.k_max, "k_median": rp.k_median, "n_single": rp.n_single,
                                     "n_tasks": rp.n_tasks}))
    warnings += [w for w in rp.warnings if w not in warnings]
    if decided:
        return done("single_rollout", ["FlashReinforce", "SAO", "BPCO", "rae"],
                    f"{rp.summary} Use a single-rollout method in your trainer (FlashReinforce: batch baseline; SAO: "
                    f"critic + token band; BPCO: bounded critic) or prime-rl's rae (EMA baseline). If you can re-run "
                    f"the prompts, k >= 4 is usually the cheaper fix.",
                    NextStep(tool="preview_update", arguments={"method": "FlashReinforce"},
                             needs=["trajectories or path (logged rollouts with reward and logprobs)"],
                             why="See what FlashReinforce would admit from your logged rollouts before a GPU run."),
                    alternatives=[_prime_rl_step("rae", taskset=taskset, model=model, knobs={"group_size": 1},
                                                 why="prime-rl's single-rollout option: REINFORCE with an EMA baseline.")])

    # 3. Which band?
    b = band(rows, pass_threshold=pass_threshold)
    op = on_policy(rows, model)
    decided = b.verdict in ("floor", "saturated")
    trace.append(TraceStep(question=3, name="band", answer=b.verdict, decided=decided,
                           evidence={"split_share": b.split_share, "n_split": b.n_split, "n_all_fail": b.n_all_fail,
                                     "n_all_pass": b.n_all_pass, "n_tasks": b.n_tasks, "pass_at_1": b.pass_at_1,
                                     "predicted_split_share": b.predicted_split_share}))
    warnings += [w for w in b.warnings if w not in warnings]
    if decided and op.verdict == "no" and op.kind == "other_model":
        warnings.append(f"the band was read off rows another model sampled ({', '.join(list(op.models)[:2])}); "
                        f"measure it on {model}, the model you will train")
    if b.verdict == "floor":
        size = params_b if params_b is not None else model_params_b(model)
        if size is not None and size < D.OPSD_MIN_PARAMS_B:
            return done("floor", ["SFT"],
                        f"{b.summary} At {size:g}B OPSD lacks the in-context learning it needs (it lost 0.55 to GRPO "
                        f"on Qwen3-0.6B): SFT on a stronger model's passing completions.",
                        NextStep(tool=None, arguments={"method": "sft"},
                                 why="Collect a stronger model's passing completions on these tasks and fine-tune on "
                                     "them (sft-from-traces)."))
        if size is None:
            warnings.append("model size unknown: OPSD needs about 7B or more; under that, SFT from a stronger model")
        return done("floor", ["OPSD", "SFT"], b.summary,
                    _prime_rl_step("opsd", taskset=taskset, model=model, knobs={"privileged": "reference"},
                                   why="Self-distill with privileged context; set privileged to what the task has: "
                                       "reference (the answer), demonstration, hint or feedback."))
    if b.verdict == "saturated":
        return done("saturated", ["GroupwiseGrading", "harder eval"], b.summary,
                    NextStep(tool=None, arguments={"method": "GroupwiseGrading", "knobs": {"mode": "reward"}},
                             why="Audit the grader, then rank the passes with GroupwiseGrading (mode 'reward' is GRS, "
                                 "'advantage' is GAR); if no grader tells them apart, harden the eval."))
    if b.few_split:
        warnings.append(f"only {b.n_split} split tasks: a grouped method wants {D.MIN_SPLIT_TASKS}+; sample more per "
                        f"task or add ReinforceAda (flat against GRPO at three seeds: an experiment, not a default)")

    # 5. Is there a stronger teacher? (the seed asks it before question 4)
    if teacher_rows is not None:
        tc = teacher_clears(teacher_rows, rows, effect, pass_threshold=pass_threshold, tokenizers_match=tokenizers_match)
        decided = tc.verdict == "clears"
        trace.append(TraceStep(question=5, name="teacher_clears", answer=tc.verdict, decided=decided,
                               evidence={"gap": tc.gap, "apart": tc.apart, "teacher_pass_at_1": tc.teacher_pass_at_1,
                                         "teacher_ci95": tc.teacher_ci95, "student_pass_at_1": tc.student_pass_at_1,
                                         "student_ci95": tc.student_ci95, "effect": effect,
                                         "paired": tc.paired.model_dump() if tc.paired else None,
                                         "tokenizers_match": tokenizers_match}))
        warnings += [w for w in tc.warnings if w not in warnings and not w.startswith("student: ")]
        if decided:
            t_rows = as_rows(teacher_rows, what="teacher_rows")
            name = teacher or dominant_model(t_rows)
            knobs: dict[str, Any] = {"teacher": name or "<teacher model>"}
            step_needs = [] if name else ["knobs.teacher"]
            if teacher_base_url:
                knobs["base_url"] = teacher_base_url
            else:
                step_needs.append("knobs.base_url (the teacher's vLLM server)")
            return done("opd", ["OPD"], f"{tc.summary} Distill from it on-policy (OPD); it matched GRPO in the "
                        f"skill's own run, so pick it for the teacher, not for cost.",
                        _prime_rl_step("opd", taskset=taskset, model=model, knobs=knobs, needs=step_needs,
                                       why="OPD pulls the student toward the teacher token by token."))
    else:
        trace.append(TraceStep(question=5, name="teacher_clears", answer="no teacher rows", decided=False,
                               evidence={}))

    # 4. Did the model you will train write these rows?
    pairs = bool(preference_pairs) or rows.has_pairs
    decided = op.verdict == "no" and op.kind == "other_model"
    trace.append(TraceStep(question=4, name="on_policy", answer=op.verdict if op.verdict != "no" else op.kind,
                           decided=decided, evidence={"kind": op.kind, "share_named": op.share_named,
                                                      "models": op.models, "preference_pairs": pairs}))
    if op.verdict == "unknown":
        warnings.append(f"on-policy unknown ({op.kind}): GRPO assumes these rows are the trained model's own; if "
                        f"another model wrote them, use SFT or that model as an OPD teacher")
    other = next(iter(op.models), None)
    if decided and pairs:
        return done("dpo", ["DPO"], f"{op.summary} The rows carry natural better/worse pairs per prompt: train DPO "
                    f"on them (dpo-pairs).",
                    NextStep(tool=None, arguments={"method": "dpo"}, why="Build chosen/rejected pairs per prompt "
                                                                           "and train DPO (beta 0.1)."))
    if decided:
        passing = int((rows.reward >= pass_threshold).sum())
        return done("sft", ["SFT", f"OPD from {other}"],
                    f"{op.summary} SFT only on the {passing} passing rows (SFT on failing rows teaches the failures).",
                    NextStep(tool=None, arguments={"method": "sft", "rows": "passing rows only"},
                             why="Fine-tune on the passing rows (sft-from-traces)."),
                    alternatives=[NextStep(tool="teacher_clears", arguments={}, needs=["teacher_rows", "student_rows"],
                                           why=f"If {other} clearly beats your model, distill from it with OPD.")])

    # 6. GRPO on split tasks, on-policy (or an async copy: Async with a correction).
    stale = op.kind == "older_checkpoint"
    methods = ["Async(GRPO, ipo)"] if stale else ["GRPO"]
    if b.few_split:
        methods.append("ReinforceAda")
    knobs = {"group_size": 16} if b.few_split else None
    if stale:
        step = _prime_rl_step("async", taskset=taskset, model=model,
                              knobs={"method": {"name": "grpo", **knobs} if knobs else "grpo", "correction": "ipo"},
                              why="Grouped RL on split tasks, with a staleness bound and ipo correction for the "
                                  "async sampler.")
    else:
        step = _prime_rl_step("grpo", taskset=taskset, model=model, knobs=knobs,
                              why="Grouped RL on the split tasks with your program grader.")
    trace.append(TraceStep(question=6, name="route", answer="grpo", decided=True,
                           evidence={"split_share": b.split_share, "n_split": b.n_split, "few_split": b.few_split,
                                     "async": stale}))
    summary = f"{b.summary} GRPO learns from the split tasks" + (" (wrap it in Async: the rows come from an older "
                                                                 "checkpoint)." if stale else ".")
    alternatives = [NextStep(tool=None, arguments={"method": "dpo"}, why="The rows carry natural better/worse pairs: "
                             "DPO is an option too.")] if pairs else []
    return done("grpo", methods, summary, step, alternatives=alternatives)


def _before_gpu(g: Groups, model: str | None, effect: float) -> list[str]:
    """Step 7: the held-out size, the random-selection control, and the random-reward arm on Qwen bases."""
    rates = g.rates
    base = float(rates.mean()) if len(rates) else D.HOLDOUT_BASE
    k = int(g.n.min()) if len(g.n) else D.HOLDOUT_K
    if base >= D.HOLDOUT_CEILING or base <= 0.0:
        base = D.HOLDOUT_BASE
    h = holdout_size(effect, base=base, k=max(k, 1))
    checks = [f"Freeze {h.n_tasks} held-out tasks to show a {effect:g} gain at k={h.k} from base {h.base:.2f} "
              f"(holdout_size); train on none of them.",
              "Train a random selection of the same size beside the real one: if the method does not beat its random "
              "control, the selection or the reward was the problem, not the optimizer."]
    if model and _QWEN_BASE.search(model):
        checks.append("On a Qwen 2.5/3 base add a random-reward arm: gains under random rewards signal contamination "
                      "(Lambert 2025, chapter Evaluation).")
    return checks
