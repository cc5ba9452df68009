"""The route's questions, one step each, in the skill's order (router.py lists them; question 0's step reads
grader.py's check of the replies): each reads what was asked so far (`Asked`: the rows read once, their table, the
options), records its answer and evidence in the trace, and returns a `Decision` when it settles the route,
else None.

Where the skill's code is wrong (whileai's pick-a-method skill, cited in router.py), each follows its text and says
so in the evidence: ungraded rows are `grade_first` (not floor), rows that name no model are unknown (not
off-policy), too few tasks is undecided (not a crash), few split tasks adds ReinforceAda, other models' pairs go to
DPO, a floor under ~7B goes to SFT from a stronger model, and a teacher scored with a longer budget is not trusted.
"""

from __future__ import annotations

from typing import Any

from pick_a_method.common import methods as M
from pick_a_method.common.identity import model_params_b
from pick_a_method.common.next_step import Tool, placeholder
from pick_a_method.common.trainers import TRAINERS, by_tool, trainer_info

from .. import defaults as D
from .advice import candidate_evidence, others_line, score_others
from .asked import Asked, Decision
from .grader import check_grader, fix_why
from .compare import teacher_clears
from ..shared import dominant_model
from ..forecasting import split_needs
from ..forecasting import advice_prior, cost_estimate, table_moments
from .questions import band, rollouts_per_task, truncated_passes
from ..shared import grading_warnings, reward_scale, scale_advice, unit
from ..rows import display_name
from ..table import table_of
from ..verdicts import NextStep

SINGLE_ROLLOUT = [m.label for m in M.SINGLE_ROLLOUT]
# Said in a config step that carries no batch: the batch advice counts groups with signal, a grouped method's need.
NO_BATCH = (" The batch is the writer's default: route's batch advice counts groups with a pass and a fail, which "
            "only a group-relative method (GRPO) needs.")


def reward_scale_step(a: Asked) -> Decision | None:
    """Question 0 (the grader), its scale: do the rewards run 0-1? A 0-10 judge read at a threshold of 1 passes
    every partial score."""
    scale = reward_scale(a.all_rows, a.o.pass_threshold)
    if scale is None:
        return None
    a.ask(0, "graded", "other_scale", True, {"reward_range": list(scale), "pass_threshold": a.o.pass_threshold})
    return Decision("grade_first", [], f"Undecided: {scale_advice(scale)}; then ask again.",
                    NextStep(tool=Tool.ROUTE, arguments={**a.args, "pass_threshold": scale[1]}, needs=a.needs,
                             why=f"Read a pass as full marks ({scale[1]:g}); give the grader's own pass mark instead "
                                 f"if it has one."), gpu=False)


def truncation_step(a: Asked) -> Decision | None:
    """1. Can a cut-off reply pass? (every row in the file: one grader scored them all)"""
    tp = truncated_passes(a.all_rows, pass_threshold=a.o.pass_threshold)
    decided = tp.verdict == "fix_reward"
    a.ask(1, "truncated_passes", tp.verdict, decided, {"count": tp.count, "truncated_rows": tp.truncated_rows,
                                                       "share": tp.share,
                                                       "rows_stating_truncation": tp.n_truncation_stated})
    a.warn(*tp.warnings)
    return Decision("fix_reward", [], tp.summary, tp.next_step, gpu=False) if decided else None


def graded_step(a: Asked) -> Decision | None:
    """Question 0 (the grader), what it left: is anything graded to read? (the whileai skill's band() calls ungraded
    rows a floor; they are not)"""
    g, rows = a.g, a.rows
    a.warn(*grading_warnings(rows, a.full, a.o.pass_threshold))
    too_few = 0 < len(g.n) < D.MIN_CI_TASKS
    a.ask(0, "graded", "none" if not len(g.n) else ("too_few" if too_few else "yes"), len(g.n) == 0 or too_few,
          {"graded_rows": g.n_graded, "ungraded_rows": a.full.n_ungraded, "graded_tasks": g.n_tasks,
           "graded_groups": len(g)})
    if not len(g.n):
        why = "no row carries a gradable reward" if len(rows) else "there are no rows"
        hint = " ".join(n for n in rows.notes if "reward" in n)
        retry = bool(rows.suggested_fields) and rows.suggested_fields != rows.fields  # never the call that failed
        return Decision("grade_first", [], f"Nothing to route: {why}. " + (f"{hint[0].upper()}{hint[1:]}. " if hint
                                                                          else "")
                        + "Grade the rollouts (a program grader beats a judge), then ask again; ungraded rows are not "
                          "fails.",
                        NextStep(tool=Tool.ROUTE if retry else None,
                                 arguments={**a.args, **({"fields": rows.suggested_fields} if retry else {})},
                                 needs=a.needs, why="Grade the rollouts (or map the grade field), then call route again."),
                        gpu=False)
    if too_few:
        n = g.n_tasks
        return Decision("grade_first", [], f"Undecided: only {n} graded task{'s' if n != 1 else ''}; a band or an "
                        f"interval needs {D.MIN_CI_TASKS}+ tasks. Grade more tasks, then ask again.",
                        NextStep(tool=Tool.HOLDOUT_SIZE, arguments={"effect": a.o.effect},
                                 why="See how many tasks it takes to prove an effect."), gpu=False)
    return None


def rollouts_step(a: Asked) -> Decision | None:
    """2. How many rollouts per prompt? One: no grouped method."""
    rp = rollouts_per_task(a.rows, pass_threshold=a.o.pass_threshold)
    decided = rp.verdict in ("single", "mostly_single")
    a.ask(2, "rollouts_per_task", f"k={rp.k}", decided, {"k": rp.k, "k_max": rp.k_max, "k_median": rp.k_median,
                                                          "n_single": rp.n_single, "n_tasks": rp.n_tasks,
                                                          **_groups(a, rp.n_groups)})
    a.warn(*rp.warnings)
    if not decided:
        return None
    a.how_sure()
    return Decision("single_rollout", SINGLE_ROLLOUT,
                    f"{rp.summary} Use a single-rollout method in your trainer (FlashReinforce: batch baseline; SAO: "
                    f"critic + token band; BPCO: bounded critic) or prime-rl's rae (EMA baseline). If you can re-run "
                    f"the prompts, k >= 4 is usually the cheaper fix.",
                    NextStep(tool=Tool.PREVIEW_UPDATE, arguments={"method": M.FLASH_REINFORCE.label},
                             needs=["trajectories or path (logged rollouts with reward and logprobs)"],
                             why="See what FlashReinforce would admit from your logged rollouts before a GPU run."),
                    alternatives=[with_gpus(a, a.config(M.RAE.name, knobs={"group_size": 1},
                                                        why="prime-rl's single-rollout option: REINFORCE with an EMA "
                                                            "baseline." + NO_BATCH))])


def _groups(a: Asked, n_groups: int) -> dict[str, int]:
    """The evidence's count of groups, where it differs from the count of tasks (a task sampled by several samplers
    or in several arms): split, fail and pass counts are of groups."""
    return {"n_groups": n_groups} if unit(a.g) == "group" else {}


def band_step(a: Asked) -> Decision | None:
    """3. Which band? A floor needs a demonstration, a saturated set a ranking; a mixed one goes on."""
    b = a.found["band"] = band(a.rows, pass_threshold=a.o.pass_threshold)
    decided = b.verdict in ("floor", "saturated")
    a.ask(3, "band", b.verdict, decided, {"split_share": b.split_share, "n_split": b.n_split, "n_all_fail": b.n_all_fail,
                                          "n_all_pass": b.n_all_pass, "n_tasks": b.n_tasks, **_groups(a, b.n_groups),
                                          "pass_at_1": b.pass_at_1,
                                          "predicted_split_share": b.predicted_split_share})
    a.warn(*b.warnings)
    op = a.on_policy
    if decided and op.kind == "other_model":
        a.warn(f"the band was read off rows another model sampled ({', '.join(list(op.models)[:2])}); measure it on "
               f"{a.o.model}, the model you will train")
    if decided:
        a.how_sure()
    if b.verdict == "floor":
        size = a.o.params_b if a.o.params_b is not None else model_params_b(a.o.model)
        if size is not None and size < M.OPSD_MIN_PARAMS_B:
            return Decision("floor", [M.SFT.label], f"{b.summary} At {size:g}B OPSD lacks the in-context learning it needs (it "
                            f"lost 0.55 to GRPO on Qwen3-0.6B): SFT on a stronger model's passing completions.",
                            a.config(M.SFT.name, why="Collect a stronger model's passing completions on these tasks as "
                                                "the dataset and fine-tune on them (sft-from-traces)."))
        if size is None:
            a.warn("model size unknown: OPSD needs about 7B or more; under that, SFT from a stronger model")
        return Decision("floor", [M.OPSD.label, M.SFT.label], b.summary,
                        with_gpus(a, a.config(M.OPSD.name, knobs={"privileged": "reference"},
                                              why="Self-distill with privileged context; set privileged to what the "
                                                  "task has: reference (the answer), demonstration, hint or feedback."
                                                  + NO_BATCH)))
    if b.verdict == "saturated":
        return Decision("saturated", [M.GROUPWISE_GRADING.label, "harder eval"], b.summary,
                        NextStep(tool=None, arguments={"method": M.GROUPWISE_GRADING.label, "knobs": {"mode": "reward"}},
                                 why="Audit the grader, then rank the passes with GroupwiseGrading (mode 'reward' is "
                                     "GRS, 'advantage' is GAR); if no grader tells them apart, harden the eval."))
    if b.few_split:
        more = (f"sample {b.rollouts.suggested_group_size} per task" if b.rollouts and b.rollouts.suggested_group_size
                else "add tasks in the band (more rollouts per task do not reach it)")
        split = f"{unit(a.g)}s"
        a.warn(f"only {b.n_split} split {split}: a grouped method wants {D.MIN_SPLIT_TASKS}+; {more}, or add "
               f"ReinforceAda (flat against GRPO at three seeds: an experiment, not a default)")
    return None


def teacher_step(a: Asked) -> Decision | None:
    """5. Is there a stronger teacher? The caller's teacher rows, else another sampler in the same file (never a
    weaker one). The seed asks it before question 4; the trace lists questions in order."""
    o, rows, others = a.o, a.rows, a.others
    scored = score_others(others, rows, o.effect, o.pass_threshold, o.tokenizers_match) if others else {}
    if others:
        a.warn(others_line(scored, o.model))
    tc = teacher_clears(a.teacher_rows, rows, o.effect, pass_threshold=o.pass_threshold,
                        tokenizers_match=o.tokenizers_match) if a.teacher_rows is not None else None
    clearing = {name: c for name, c in scored.items() if c.verdict == "clears"}
    if tc is not None and tc.verdict == "clears":
        chosen, t_name = tc, o.teacher or dominant_model(a.teacher_rows)
    elif clearing:
        best = max(clearing, key=lambda n: clearing[n].paired.mean_diff if clearing[n].paired else clearing[n].gap)
        chosen, t_name = clearing[best], o.teacher or best
    else:
        chosen, t_name = None, None
    shown = tc or (next(iter(scored.values())) if scored else None)
    evidence: dict[str, Any] = {"effect": o.effect, "tokenizers_match": o.tokenizers_match}
    if shown is not None:
        evidence.update(gap=shown.gap, apart=shown.apart, decided_by=shown.decided_by,
                        teacher_pass_at_1=shown.teacher_pass_at_1, teacher_ci95=shown.teacher_ci95,
                        student_pass_at_1=shown.student_pass_at_1, student_ci95=shown.student_ci95,
                        paired=shown.paired.model_dump() if shown.paired else None)
    if scored:
        evidence["in_file_teachers"] = candidate_evidence(scored)
    judged = chosen or tc or shown
    if judged is not None:  # whose answer this is: the caller's teacher rows, or which sampler of the file
        evidence["judged"] = ("teacher_rows" if judged is tc else
                              display_name(next(n for n, c in scored.items() if c is judged)))
    a.ask(5, "teacher_clears", judged.verdict if judged else "no teacher rows", chosen is not None, evidence)
    if tc is not None:
        a.warn(*(w for w in tc.warnings if not w.startswith("student: ")))
    judged = chosen or shown  # re-decided on resamples where its intervals decided (paired: held as decided)
    if judged is not None and judged.decided_by == "unpaired" and judged.verdict in ("clears", "does_not_clear"):
        t_rows = a.teacher_rows if judged is tc else others[next(n for n, c in scored.items() if c is judged)]
        tg = table_of(t_rows, o.pass_threshold).graded()
        a.how_sure((tg.c, tg.n))
    else:
        a.how_sure()
    if chosen is None:
        return None
    knobs: dict[str, Any] = {"teacher": t_name or placeholder("teacher")}
    needs = [] if t_name else ["knobs.teacher"]
    url = o.teacher_base_url
    knobs |= {"base_url": url} if url else {}
    needs += [] if url else ["knobs.base_url (the teacher's vLLM server)"]
    where = "" if chosen is tc else f" ({t_name}, from the same file)"
    return Decision(M.OPD.name, [M.OPD.label], f"{chosen.summary}{where} Distill from it on-policy (OPD); it matched GRPO in the "
                    f"skill's own run, so pick it for the teacher, not for cost.",
                    with_gpus(a, a.config(M.OPD.name, knobs=knobs, needs=needs,
                                          why="OPD pulls the student toward the teacher token by token." + NO_BATCH)))


def on_policy_step(a: Asked) -> Decision | None:
    """4. Did the model you will train write these rows? Another model's rows: SFT on its passes (DPO on pairs)."""
    op = a.on_policy
    decided = op.kind == "other_model"
    a.ask(4, "on_policy", op.verdict if op.verdict != "no" else op.kind, decided,
          {"kind": op.kind, "share_named": op.share_named, "models": op.models, "samplers": op.samplers,
           "preference_pairs": a.pairs})
    a.warn(*(w for w in op.warnings if "name no model" not in w))
    if op.verdict == "unknown":
        a.warn(f"on-policy unknown ({op.kind}): GRPO assumes these rows are the trained model's own; if another "
               f"model wrote them, use SFT or that model as an OPD teacher")
    if not decided:
        return None
    if a.pairs:
        return Decision(M.DPO.name, [M.DPO.label], f"{op.summary} The rows carry natural better/worse pairs per prompt: train DPO "
                        f"on them (dpo-pairs).",
                        a.config(M.DPO.name, why="Build chosen/rejected pairs per prompt as the dataset and train DPO "
                                            "(beta 0.1)."))
    return sft(a, next(iter(op.models), None))


def with_gpus(a: Asked, step: NextStep, cost: Any = None) -> NextStep:
    """The GPUs route was told, carried into the config call: prime-rl's inference / trainer split where the
    throughputs gave one, else the count (the writer splits it evenly), each said in the step's why."""
    if a.o.gpus is None or by_tool(step.tool) is None:
        return step
    prime_rl = step.tool == TRAINERS[M.PRIME_RL].tool  # the only writer with a GPU split
    if cost is not None and cost.inference_gpus and prime_rl:
        step.arguments["gpus"] = {"inference": cost.inference_gpus, "trainer": cost.trainer_gpus}
        return step
    step.arguments["gpus"] = a.o.gpus
    if prime_rl:
        step.why += (f" gpus={a.o.gpus}: the writer splits them evenly between vLLM and the trainer; "
                     f"{split_needs(cost, a.o.throughput is not None)}")
    return step


def sft(a: Asked, other: str | None) -> Decision:
    """Rows another model (or several) sampled: SFT on the passing rows, each sampler's numbers said."""
    t = table_of(a.rows, a.o.pass_threshold)
    per = t.samplers()
    if len(per) > 1:
        listing = "; ".join(f"{e['model']}: pass@1 {e['pass_at_1']:.3f} over {e['tasks']} tasks, {e['passes']} passing "
                            f"rows" for e in per if e["pass_at_1"] is not None)
        best = max((e for e in per if e["pass_at_1"] is not None), key=lambda e: e["pass_at_1"])
        text = (f"{a.on_policy.summary} SFT only on passing rows (SFT on failing rows teaches the failures), best from "
                f"the strongest sampler, {best['model']}. Each: {listing}.")
        other = best["model"]
    else:
        text = (f"{a.on_policy.summary} SFT only on the {int(t.c.sum())} passing rows (SFT on failing rows teaches the "
                f"failures).")
    teacher_args = {("teacher_" + k if k in ("rows", "rows_path") else k): v for k, v in a.args.items() if k != "model"}
    return Decision(M.SFT.name, [M.SFT.label, f"{M.OPD.label} from {other}"], text,
                    a.config(M.SFT.name, why="Fine-tune on the passing rows only, as the dataset (sft-from-traces)."),
                    alternatives=[NextStep(tool=Tool.TEACHER_CLEARS, arguments=teacher_args,
                                           needs=["student_rows (your model's rows on the same tasks)"],
                                           why=f"If {other} clearly beats your model, distill from it with OPD.")])


def _grader(a: Asked) -> str:
    """What grades the run, as question 0 read it: a model's grade is never called a program grader."""
    q0 = next((t for t in a.trace if t.name == "grader"), None)
    found = q0.answer if q0 is not None else ""
    if "judge" in found or "length_bias" in found:
        return "your judge's grade (a model grades it: audit it first, question 0's warning)"
    if found == "ok":
        return "your grader (question 0 found nothing wrong in its grades)"
    return "your grader"


def grpo_step(a: Asked) -> Decision:
    """6. GRPO on the split tasks, on-policy (or an async copy: Async with a correction). Always decides."""
    b, g, op, o = a.found["band"], a.g, a.on_policy, a.o
    stale = op.kind == "older_checkpoint" or (op.kind == "mixed" and op.verdict == "no")
    correction = trainer_info(o.trainer).corrections[0]  # the async sampler's correction: the trainer's own
    methods = [f"{M.ASYNC.label}({M.GRPO.label}, {correction})"] if stale else [M.GRPO.label]
    if b.few_split:
        methods.append(M.REINFORCE_ADA.label)
    advice = b.rollouts
    # k and the batch as advised, capped at every task once a step: more prompts than tasks would repeat them
    knobs = {"group_size": advice.group_size} if advice is not None and advice.batch else None
    prompts = min(advice.prompts_per_step, g.n_tasks) if knobs else None
    batch = prompts * advice.group_size if knobs else None
    if advice is not None:
        a.sure["rollouts"] = advice
        _, _, tokens = table_moments(g)
        multi = g.n >= 2
        run = advice.model_copy(update={"prompts_per_step": prompts, "batch": batch}) if knobs else advice
        a.sure["cost"] = cost_estimate(g.c[multi], g.n[multi], run, advice_prior(advice),  # the run the step writes
                                       tokens=tokens[multi] if tokens is not None else None, gpus=o.gpus,
                                       throughput=o.throughput)
    if stale:
        step = a.config(M.ASYNC.name, knobs={"method": {"name": M.GRPO.name, **knobs} if knobs else M.GRPO.name,
                                              "correction": correction},
                        batch=batch, why=f"Grouped RL on split tasks, with a staleness bound and {correction} "
                                         f"correction for the async sampler.")
    else:
        step = a.config(M.GRPO.name, knobs=knobs, batch=batch, why=f"Grouped RL on the split tasks with {_grader(a)}.")
    cost = a.sure.get("cost")
    with_gpus(a, step, cost)
    a.ask(6, "route", M.GRPO.name, True, {"split_share": b.split_share, "n_split": b.n_split, "few_split": b.few_split,
                                     "async": stale})
    summary = f"{b.summary} GRPO learns from the split tasks" + (" (wrap it in Async: the rows come from an older "
                                                                 "checkpoint)." if stale else ".")
    if batch and prompts == advice.prompts_per_step:
        summary += (f" Sample {advice.prompts_per_step} prompts x {advice.group_size} per step (batch {batch}) for "
                    f"about {advice.target_groups} groups with signal each.")
    elif batch:
        summary += (f" Sample all {prompts} tasks x {advice.group_size} per step (batch {batch}): the {advice.batch} "
                    f"that would give about {advice.target_groups} groups with signal a step would repeat tasks "
                    f"within it.")
    if cost is not None and cost.inference_gpus:
        summary += (f" On {o.gpus} GPUs: {cost.inference_gpus} for inference, {cost.trainer_gpus} for the trainer "
                    f"(about {cost.seconds_per_step:.3g} s a step).")
    alternatives = [NextStep(tool=None, arguments={"method": M.DPO.name}, why="The rows carry natural better/worse pairs: "
                             "DPO is an option too.")] if a.pairs else []
    return Decision(M.GRPO.name, methods, summary, step, alternatives=alternatives)


def grader_step(a: Asked) -> Decision | None:
    """Question 0 (the grader), read off its replies: every row in the file (one grader scored them all); a blank
    pass, or replies graded both ways above the share, stops the route at fix_reward."""
    check = check_grader(a.all_rows, a.o.pass_threshold)
    a.ask(0, "grader", check.answer, check.decided, check.evidence)
    a.warn(*check.warnings)
    if not check.decided:
        return None
    return Decision("fix_reward", [], check.summary,
                    NextStep(tool=None, arguments=check.rows_to_fix, why=fix_why(check.rows_to_fix)), gpu=False)
