"""The route: the skill's questions in its order; the first that decides, stops.

Order (seed-pick-a-method.md section 6): truncation, grading, k = 1, floor, saturated, teacher, on-policy,
GRPO. Where the seed's code is wrong the router follows its text and says so in the evidence: ungraded
rows are `grade_first` (not floor), rows that name no model are unknown (not off-policy), too few tasks
is undecided (not a crash), rows of several samplers are never pooled (the trained model's own rows are
routed, the others scored as teachers), few split tasks adds ReinforceAda, other models' pairs go to DPO, a floor
under ~7B goes to SFT from a stronger model, and a teacher scored with a longer budget is not trusted.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import defaults as D
from .advice import before_gpu, candidate_evidence, config_step, config_tool, others_line, score_others
from .cost import check_gpus
from .forecast import advice_prior, confidence_fields, cost_estimate, signal, table_moments
from .compare import dominant_model, on_policy, sampler_kinds, teacher_clears
from .identity import model_params_b
from .questions import (band, grading_warnings, reward_scale, rollouts_per_task, rows_arguments, scale_advice,
                        truncated_passes)
from .readers import as_rows
from .rows import GradedRows, RowsLike
from .table import table_of
from .verdicts import NextStep, Route, TraceStep


def route(rows: RowsLike, model: str | None = None, teacher_rows: RowsLike | None = None, *,
          pass_threshold: float = D.PASS_THRESHOLD, effect: float = D.PROVE_EFFECT, taskset: str | None = None,
          teacher: str | None = None, teacher_base_url: str | None = None, tokenizers_match: bool | None = None,
          preference_pairs: bool | None = None, params_b: float | None = None,
          fields: Mapping[str, str] | None = None, trainer: str = "prime-rl", gpus: int | None = None,
          throughput: Mapping[str, float] | None = None) -> Route:
    """Route graded rows to a training method; `trace` holds each question's answer and evidence, in question order.

    `fields` maps your field names (see routing.fields); `trainer` ("prime-rl", "trl" or "verl") picks the config
    tool next_step names. When the rows hold the trained model's rollouts beside other models', the route reads the
    trained model's own rows and scores each other model as an OPD teacher on the shared tasks. `gpus` and
    `throughput` ({"inference_tokens_per_s_per_gpu": x, "trainer_tokens_per_s_per_gpu": y}) give a grouped route's
    cost prime-rl's inference / trainer GPU split, which prime_rl_config's next step then carries as `gpus`."""
    tool = config_tool(trainer)
    check_gpus(gpus, throughput)
    _prime_rl_step = functools.partial(config_step, tool)
    all_rows = as_rows(rows, fields=fields)
    t_given = as_rows(teacher_rows, what="teacher_rows", fields=fields) if teacher_rows is not None else None
    trace: list[TraceStep] = []
    warnings: list[str] = []
    rows, others = _split_samplers(all_rows, model, pass_threshold)
    if others and len(rows) + sum(map(len, others.values())) < len(all_rows):
        warnings.append(f"{len(all_rows) - len(rows) - sum(map(len, others.values()))} rows name no model; with "
                        f"several samplers in the file they are left out of {model}'s rows")
    full = table_of(rows, pass_threshold)
    g = full.graded()
    base_fields = dict(model=model, n_rows=len(all_rows), n_tasks=g.n_tasks)
    args, needs = rows_arguments(all_rows)
    if model:
        args["model"] = model

    sure: dict[str, Any] = {}  # the route's confidence, advice and cost, once the rates decide (issue 15)

    def done(name: str, methods: list[str], summary: str, step: NextStep, *, alternatives: list[NextStep] = (),
             gpu: bool = True) -> Route:
        checks = before_gpu(g, model, effect) if gpu else []
        extra = dict(sure)
        if "confidence" in extra and extra["confidence"] < D.CONFIDENCE_SAY_BELOW:
            summary += (f" Not sure: {extra['confidence']:.0%} of task resamples give this route, "
                        f"{extra['runner_up_share']:.0%} give {extra['runner_up']}; score more tasks to settle it.")
        return Route(verdict=name, route=name, methods=methods, summary=summary, next_step=step,
                     trace=sorted(trace, key=lambda t: t.question), alternatives=list(alternatives),
                     before_gpu=checks, warnings=list(dict.fromkeys(warnings)), **base_fields, **extra)

    def how_sure(tail: str, teacher: tuple | None = None) -> None:
        """Re-decide the data-driven questions on resamples of the trained model's groups; `tail` is where the
        questions the rates do not decide (on-policy) lead."""
        total, spread, _ = table_moments(g)
        mask, _ = signal(g.c, g.n, total, spread, nonbinary=g.n_nonbinary > 0)
        fields_, _ = confidence_fields(g.c, g.n, tail=tail, teacher=teacher, effect=effect, signal_mask=mask)
        sure.update(fields_)

    warnings += all_rows.notes  # what the reader saw (scorers, sidecars, fields not read): said whatever decides
    # 0. Do the rewards run 0-1? A 0-10 judge read at a threshold of 1 passes every partial score: no rate is sound.
    scale = reward_scale(all_rows, pass_threshold)
    if scale is not None:
        trace.append(TraceStep(question=0, name="graded", answer="other_scale", decided=True,
                               evidence={"reward_range": list(scale), "pass_threshold": pass_threshold}))
        return done("grade_first", [], f"Undecided: {scale_advice(scale)}; then ask again.",
                    NextStep(tool="route", arguments={**args, "pass_threshold": scale[1]}, needs=needs,
                             why=f"Read a pass as full marks ({scale[1]:g}); give the grader's own pass mark instead "
                                 f"if it has one."), gpu=False)

    # 1. Can a cut-off reply pass? (every row in the file: one grader scored them all)
    tp = truncated_passes(all_rows, pass_threshold=pass_threshold)
    decided = tp.verdict == "fix_reward"
    trace.append(TraceStep(question=1, name="truncated_passes", answer=tp.verdict, decided=decided,
                           evidence={"count": tp.count, "truncated_rows": tp.truncated_rows, "share": tp.share,
                                     "rows_stating_truncation": tp.n_truncation_stated}))
    warnings += tp.warnings
    if decided:
        return done("fix_reward", [], tp.summary, tp.next_step, gpu=False)

    # 0. Is there anything graded to read? (the seed's band() calls ungraded rows a floor; they are not)
    warnings += grading_warnings(rows, full, pass_threshold)
    too_few = 0 < len(g.n) < D.MIN_CI_TASKS
    decided = len(g.n) == 0 or too_few
    trace.append(TraceStep(question=0, name="graded", answer="none" if not len(g.n) else ("too_few" if too_few else "yes"),
                           decided=decided, evidence={"graded_rows": g.n_graded, "ungraded_rows": full.n_ungraded,
                                                      "graded_tasks": g.n_tasks, "graded_groups": len(g)}))
    if not len(g.n):
        why = ("no row carries a gradable reward" if len(rows) else "there are no rows")
        hint = " ".join(n for n in rows.notes if "reward" in n)
        retry = bool(rows.suggested_fields) and rows.suggested_fields != rows.fields  # never the call that failed
        return done("grade_first", [], f"Nothing to route: {why}. " + (f"{hint[0].upper()}{hint[1:]}. " if hint else "")
                    + "Grade the rollouts (a program grader beats a judge), then ask again; ungraded rows are not fails.",
                    NextStep(tool="route" if retry else None, arguments={**args, **({"fields": rows.suggested_fields}
                                                                                    if retry else {})},
                             needs=needs,
                             why="Grade the rollouts (or map the grade field), then call route again."), gpu=False)
    if too_few:
        n_t = g.n_tasks
        return done("grade_first", [], f"Undecided: only {n_t} graded task{'s' if n_t != 1 else ''}; a band or an "
                    f"interval needs {D.MIN_CI_TASKS}+ tasks. Grade more tasks, then ask again.",
                    NextStep(tool="holdout_size", arguments={"effect": effect},
                             why="See how many tasks it takes to prove an effect."), gpu=False)

    # Question 4's answer is not a rate, so a resample holds it: it names where the route ends (the tail).
    op = on_policy(all_rows, model, pass_threshold=pass_threshold)
    pairs = bool(preference_pairs) or rows.has_pairs
    tail = ("dpo" if pairs else "sft") if op.kind == "other_model" else "grpo"

    # 2. How many rollouts per prompt?
    rp = rollouts_per_task(rows, pass_threshold=pass_threshold)
    decided = rp.verdict in ("single", "mostly_single")
    trace.append(TraceStep(question=2, name="rollouts_per_task", answer=f"k={rp.k}", decided=decided,
                           evidence={"k": rp.k, "k_max": rp.k_max, "k_median": rp.k_median, "n_single": rp.n_single,
                                     "n_tasks": rp.n_tasks}))
    warnings += [w for w in rp.warnings if w not in warnings]
    if decided:
        how_sure(tail)
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
    decided = b.verdict in ("floor", "saturated")
    trace.append(TraceStep(question=3, name="band", answer=b.verdict, decided=decided,
                           evidence={"split_share": b.split_share, "n_split": b.n_split, "n_all_fail": b.n_all_fail,
                                     "n_all_pass": b.n_all_pass, "n_tasks": b.n_tasks, "pass_at_1": b.pass_at_1,
                                     "predicted_split_share": b.predicted_split_share}))
    warnings += [w for w in b.warnings if w not in warnings]
    if decided and op.kind == "other_model":
        warnings.append(f"the band was read off rows another model sampled ({', '.join(list(op.models)[:2])}); "
                        f"measure it on {model}, the model you will train")
    if decided:
        how_sure(tail)
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
        more = (f"sample {b.rollouts.suggested_group_size} per task" if b.rollouts and b.rollouts.suggested_group_size
                else "add tasks in the band (more rollouts per task do not reach it)")
        warnings.append(f"only {b.n_split} split tasks: a grouped method wants {D.MIN_SPLIT_TASKS}+; {more}, or add "
                        f"ReinforceAda (flat against GRPO at three seeds: an experiment, not a default)")

    # 5. Is there a stronger teacher? (the seed asks it before question 4; the trace lists questions in order)
    scored = score_others(others, rows, effect, pass_threshold, tokenizers_match) if others else {}
    if others:
        warnings.append(others_line(scored, model))
    tc = teacher_clears(t_given, rows, effect, pass_threshold=pass_threshold,
                        tokenizers_match=tokenizers_match) if t_given is not None else None
    clearing = {name: c for name, c in scored.items() if c.verdict == "clears"}
    if tc is not None and tc.verdict == "clears":
        chosen, t_name = tc, teacher or dominant_model(t_given)
    elif clearing:  # the strongest clearing sampler in the file: never a weaker one
        t_name = max(clearing, key=lambda n: clearing[n].paired.mean_diff if clearing[n].paired else clearing[n].gap)
        chosen = clearing[t_name]
        t_name = teacher or t_name
    else:
        chosen, t_name = None, None
    shown = tc or (next(iter(scored.values())) if scored else None)
    evidence: dict[str, Any] = {"effect": effect, "tokenizers_match": tokenizers_match}
    if shown is not None:
        evidence.update(gap=shown.gap, apart=shown.apart, decided_by=shown.decided_by,
                        teacher_pass_at_1=shown.teacher_pass_at_1, teacher_ci95=shown.teacher_ci95,
                        student_pass_at_1=shown.student_pass_at_1, student_ci95=shown.student_ci95,
                        paired=shown.paired.model_dump() if shown.paired else None)
    if scored:
        evidence["in_file_teachers"] = candidate_evidence(scored)
    answer = (chosen or tc or shown).verdict if (chosen or tc or shown) else "no teacher rows"
    trace.append(TraceStep(question=5, name="teacher_clears", answer=answer, decided=chosen is not None,
                           evidence=evidence))
    if tc is not None:
        warnings += [w for w in tc.warnings if w not in warnings and not w.startswith("student: ")]
    judged = chosen or shown  # the teacher the rates judged; re-decided on resamples where its intervals decided
    if judged is not None and judged.decided_by == "unpaired" and judged.verdict in ("clears", "does_not_clear"):
        t_rows = t_given if judged is tc else others[next(n for n, c in scored.items() if c is judged)]
        tg = table_of(t_rows, pass_threshold).graded()
        how_sure(tail, (tg.c, tg.n))
    else:  # no teacher, or one decided on the paired tasks (held as decided: the resample is per arm)
        how_sure(tail)
    if chosen is not None:
        knobs: dict[str, Any] = {"teacher": t_name or "<teacher model>"}
        step_needs = [] if t_name else ["knobs.teacher"]
        if teacher_base_url:
            knobs["base_url"] = teacher_base_url
        else:
            step_needs.append("knobs.base_url (the teacher's vLLM server)")
        where = "" if chosen is tc else f" ({t_name}, from the same file)"
        return done("opd", ["OPD"], f"{chosen.summary}{where} Distill from it on-policy (OPD); it matched GRPO in the "
                    f"skill's own run, so pick it for the teacher, not for cost.",
                    _prime_rl_step("opd", taskset=taskset, model=model, knobs=knobs, needs=step_needs,
                                   why="OPD pulls the student toward the teacher token by token."))

    # 4. Did the model you will train write these rows?
    decided = op.kind == "other_model"
    trace.append(TraceStep(question=4, name="on_policy", answer=op.verdict if op.verdict != "no" else op.kind,
                           decided=decided, evidence={"kind": op.kind, "share_named": op.share_named,
                                                      "models": op.models, "samplers": op.samplers,
                                                      "preference_pairs": pairs}))
    warnings += [w for w in op.warnings if w not in warnings and "name no model" not in w]
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
        return _sft(done, rows, op, other, pass_threshold, args)

    # 6. GRPO on split tasks, on-policy (or an async copy: Async with a correction).
    stale = op.kind == "older_checkpoint" or (op.kind == "mixed" and op.verdict == "no")
    methods = ["Async(GRPO, ipo)"] if stale else ["GRPO"]
    if b.few_split:
        methods.append("ReinforceAda")
    advice = b.rollouts
    # the batch only where the tasks can fill it: more prompts per step than tasks would repeat them (band warns)
    fits = advice is not None and advice.batch and advice.prompts_per_step <= g.n_tasks
    knobs = {"group_size": advice.group_size} if fits else None
    batch = advice.batch if fits else None
    if advice is not None:
        sure["rollouts"] = advice
        _, _, tokens = table_moments(g)
        multi = g.n >= 2
        sure["cost"] = cost_estimate(g.c[multi], g.n[multi], advice, advice_prior(advice),
                                     tokens=tokens[multi] if tokens is not None else None, gpus=gpus,
                                     throughput=throughput)
    if stale:
        step = _prime_rl_step("async", taskset=taskset, model=model,
                              knobs={"method": {"name": "grpo", **knobs} if knobs else "grpo", "correction": "ipo"},
                              batch=batch, why="Grouped RL on split tasks, with a staleness bound and ipo correction "
                                               "for the async sampler.")
    else:
        step = _prime_rl_step("grpo", taskset=taskset, model=model, knobs=knobs, batch=batch,
                              why="Grouped RL on the split tasks with your program grader.")
    cost = sure.get("cost")
    if cost is not None and cost.inference_gpus and step.tool == "prime_rl_config":  # the split, as the writer takes it
        step.arguments["gpus"] = {"inference": cost.inference_gpus, "trainer": cost.trainer_gpus}
    trace.append(TraceStep(question=6, name="route", answer="grpo", decided=True,
                           evidence={"split_share": b.split_share, "n_split": b.n_split, "few_split": b.few_split,
                                     "async": stale}))
    summary = f"{b.summary} GRPO learns from the split tasks" + (" (wrap it in Async: the rows come from an older "
                                                                 "checkpoint)." if stale else ".")
    if batch:
        summary += (f" Sample {advice.prompts_per_step} prompts x {advice.group_size} per step (batch {batch}) for "
                    f"about {advice.target_groups} groups with signal each.")
    if cost is not None and cost.inference_gpus:
        summary += (f" On {gpus} GPUs: {cost.inference_gpus} for inference, {cost.trainer_gpus} for the trainer "
                    f"(about {cost.seconds_per_step:.3g} s a step).")
    alternatives = [NextStep(tool=None, arguments={"method": "dpo"}, why="The rows carry natural better/worse pairs: "
                             "DPO is an option too.")] if pairs else []
    return done("grpo", methods, summary, step, alternatives=alternatives)


def _split_samplers(rows: GradedRows, model: str | None,
                    pass_threshold: float) -> tuple[GradedRows, dict[str, GradedRows]]:
    """The trained model's own rows (and older copies of it), and each other sampler's rows, when the file holds
    both; else all rows and no others. Groups of different samplers are never pooled either way."""
    if not model or len(rows.model_names) < 2:
        return rows, {}
    kinds, _ = sampler_kinds(rows, model)
    mine = [c for c, k in kinds.items() if k != "other"]
    others = [c for c, k in kinds.items() if k == "other"]
    if not mine or not others:
        return rows, {}
    own = np.isin(rows.model, mine)
    return rows.subset(own), {rows.model_names[c]: rows.subset(rows.model == c) for c in others}


def _sft(done: Any, rows: GradedRows, op: Any, other: str | None, pass_threshold: float,
         args: dict[str, Any]) -> Route:
    """Rows another model (or several) sampled: SFT on the passing rows, each sampler's numbers said."""
    t = table_of(rows, pass_threshold)
    per = t.samplers()
    passing = int(t.c.sum())
    if len(per) > 1:
        listing = "; ".join(f"{e['model']}: pass@1 {e['pass_at_1']:.3f} over {e['tasks']} tasks, {e['passes']} passing "
                            f"rows" for e in per if e["pass_at_1"] is not None)
        best = max((e for e in per if e["pass_at_1"] is not None), key=lambda e: e["pass_at_1"])
        text = (f"{op.summary} SFT only on passing rows (SFT on failing rows teaches the failures), best from the "
                f"strongest sampler, {best['model']}. Each: {listing}.")
        other = best["model"]
    else:
        text = f"{op.summary} SFT only on the {passing} passing rows (SFT on failing rows teaches the failures)."
    teacher_args = {("teacher_" + k if k in ("rows", "rows_path") else k): v for k, v in args.items() if k != "model"}
    return done("sft", ["SFT", f"OPD from {other}"], text,
                NextStep(tool=None, arguments={"method": "sft", "rows": "passing rows only"},
                         why="Fine-tune on the passing rows (sft-from-traces)."),
                alternatives=[NextStep(tool="teacher_clears", arguments=teacher_args,
                                       needs=["student_rows (your model's rows on the same tasks)"],
                                       why=f"If {other} clearly beats your model, distill from it with OPD.")])
