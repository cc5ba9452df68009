"""The verdicts: one pydantic model per question, the same models the MCP tools return.

Every verdict carries `verdict` (a short machine-readable word), `summary` (what a person or an agent can
act on), `next_step` (what to do now, as a tool call where it is one) and `warnings`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from pick_a_method.common.next_step import NextStep

Interval = tuple[float, float]


class Verdict(BaseModel):
    verdict: str = Field(description="A short machine-readable answer.")
    summary: str = Field(description="One or two sentences a person or an agent can act on.")
    next_step: NextStep
    warnings: list[str] = Field(default_factory=list, description="What the caller should know before acting.")


class RowRef(BaseModel):
    row: int = Field(description="0-based index of the row in the input.")
    line: int | None = Field(None, description="1-based line number in the file, when read from one.")
    task_id: str


class TruncatedPasses(Verdict):
    """Question 1: can a reply cut off at the token cap pass?"""

    verdict: Literal["fix_reward", "ok", "unknown", "empty"]
    count: int = Field(description="Truncated rows that passed (reward >= pass_threshold).")
    truncated_rows: int = Field(description="Rows cut off at the token cap (truncated, or finish_reason 'length').")
    share: float | None = Field(description="truncated_rows / rows that state whether they were cut off; null if none do.")
    n_rows: int
    n_truncation_stated: int = Field(description="Rows that say whether they were cut off.")
    pass_threshold: float
    examples: list[RowRef] = Field(description="Truncated rows that passed (the first few).")
    examples_omitted: int = 0
    tasks: list[str] = Field(description="Tasks with a truncated pass (the first few).")


# What every count of groups means; the verdicts count tasks and groups apart, and say which in their summaries.
N_GROUPS = ("Groups with at least one graded rollout: a group is one task's rollouts from one sampler in one arm, "
            "so n_groups = n_tasks where the rows have one sampler and arm.")


class RolloutsPerTask(Verdict):
    """Question 2: how many graded rollouts per prompt?"""

    verdict: Literal["grouped", "single", "mostly_single", "empty"]
    k: int = Field(description="The smallest group: graded rollouts of the task with fewest.")
    k_max: int
    k_median: float
    n_tasks: int = Field(description="Distinct tasks with at least one graded rollout.")
    n_groups: int = Field(description=N_GROUPS)
    n_single: int = Field(description="Groups with exactly one graded rollout.")
    sizes: dict[str, int] = Field(description="Group size -> number of groups with that many graded rollouts.")


class PassAt(Verdict):
    """Per-task pass rates, pass@1 with a 95% task-level interval, pass@k and pass^k."""

    verdict: Literal["measured", "no_interval", "empty"]
    pass_at_1: float | None = Field(description="Mean over tasks of the per-task pass rate.")
    ci95: Interval | None = Field(description="95% task-level interval (Wilson / Agresti-Coull on an effective sample size); null under 3 tasks.")
    k: int = Field(description="The k of pass@k and pass^k (default: the smallest group).")
    pass_at_k: float | None = Field(description="Unbiased pass@k (Chen et al. 2021) over groups of at least k.")
    pass_pow_k: float | None = Field(description="Unbiased pass^k (Yao et al. 2024) over groups of at least k.")
    pass_at_k_ci95: Interval | None = None
    pass_pow_k_ci95: Interval | None = None
    n_tasks: int = Field(description="Distinct tasks with at least one graded rollout.")
    n_groups: int = Field(description=N_GROUPS)
    n_tasks_at_k: int = Field(description="Groups with at least k graded rollouts (the ones pass@k reads).")
    n_rows: int
    n_graded: int
    n_ungraded: int = Field(description="Rows with no reward (missing, null or NaN): left out, not counted as fails.")
    n_nonbinary: int = Field(description="Graded rows whose reward is neither 0 nor 1.")
    pass_threshold: float
    per_task: dict[str, float] = Field(description="Task -> pass rate, in first-seen order; capped, see per_task_omitted.")
    per_task_omitted: int = Field(0, description="Tasks left out of per_task; page with per_task_offset.")
    per_task_offset: int = 0
    by_sampler: list[dict[str, Any]] = Field(default_factory=list, description=(
        "When the rows come from several samplers or arms: each one's rows, tasks and pass@1 (never pooled)."))


class SplitAtK(BaseModel):
    k: int = Field(description="Rollouts per prompt.")
    split_share: float = Field(description="Predicted share of groups of k that split (a pass and a fail).")
    ci95: Interval | None = Field(description="95% task bootstrap, the prior refitted on each resample.")
    informative_per_1000_rollouts: float = Field(description="Groups with signal per 1,000 sampled rollouts.")
    informative_per_million_tokens: float | None = Field(
        description="Groups with signal per million completion tokens; null without token counts.")


class RolloutAdvice(BaseModel):
    """How many rollouts per prompt to sample, from a prior over the tasks' pass rates (beta-binomial, with point
    masses at 0 and 1 where the counts call for them)."""

    prior: dict[str, float] = Field(description="The prior fitted to the per-task counts: a share `zero` of tasks "
                                    "that never pass, `one` that always pass, the rest Beta(a, b).")
    prior_model: Literal["beta", "beta+0", "beta+1", "beta+0+1"] = Field(
        "beta", description="Which point masses the prior holds (the least BIC among the four).")
    per_k: list[SplitAtK]
    best_k: int = Field(description="The k with the most informative groups per rollout (per token where known).")
    best_k_by: Literal["rollouts", "tokens"]
    group_size: int = Field(description="The group size the advice sizes the batch for.")
    suggested_group_size: int | None = Field(
        description="A larger group size worth sampling (a gain of 3+ points in split share), or null.")
    gain: float | None = Field(description="Predicted split share at suggested_group_size minus the share now.")
    target_groups: int = Field(description="Informative groups wanted per step.")
    prompts_per_step: int | None = Field(description="Prompts per step that give target_groups on average.")
    batch: int | None = Field(description="Rollouts per step: prompts_per_step x group_size (prime-rl batch_size).")


class RunCostEstimate(BaseModel):
    """What the suggested run samples: rollouts and tokens per step and in total, and what carries no signal."""

    group_size: int
    prompts_per_step: int
    rollouts_per_step: int
    steps: int
    rollouts_total: int
    signal_share: float = Field(description="Expected share of groups with signal (nonzero advantages).")
    no_signal_rollout_share: float
    mean_tokens: float | None = Field(description="Mean completion tokens per rollout, from the rows.")
    tokens_per_step: float | None
    tokens_total: float | None
    no_signal_token_share: float | None
    trained_tokens_per_step: float | None = Field(
        description="Tokens the prime-rl trainer sees per step after filter_zero_advantages (inference samples "
                    "tokens_per_step).")
    inference_gpus: int | None = Field(
        None, description="prime-rl GPUs for vLLM: the whole-GPU split of `gpus` with the quickest step (inference "
                          "and trainer run one step overlapped, so a step takes the busier side's time).")
    trainer_gpus: int | None = None
    seconds_per_step: float | None = Field(None, description="The busier side's seconds per step at that split.")
    missing: list[str] = Field(default_factory=list, description="What the estimate lacks, and where to get it.")


class Band(Verdict):
    """Question 3: the per-task band (floor, saturated or mixed) and how many groups split."""

    verdict: Literal["floor", "saturated", "mixed", "empty"]
    split_share: float | None = Field(description="Share of groups (with 2+ graded rollouts) that have signal "
                                                  "(split_definition says which definition).")
    split_definition: str = Field("pass rate strictly between 0 and 1",
                                  description="What counts as a group with signal here.")
    n_tasks: int = Field(description="Distinct tasks with at least one graded rollout.")
    n_groups: int = Field(description=N_GROUPS)
    n_split: int = Field(description="Groups that split (have signal).")
    n_all_fail: int = Field(description="Groups whose every graded rollout failed.")
    n_all_pass: int = Field(description="Groups whose every graded rollout passed.")
    n_single: int = Field(description="Groups with one graded rollout: they cannot split, so split_share leaves them out.")
    k: int
    pass_at_1: float | None
    predicted_split_share: dict[str, float] = Field(
        description="k -> predicted share of groups that split in a fresh draw of k rollouts per task, each task "
                    "under its posterior from a beta-binomial prior, with point masses where rollouts.prior_model says "
                    "(pass/fail at pass_threshold). At the rows' own k it can differ from split_share, which this "
                    "draw measured.")
    predicted_split_ci95: dict[str, Interval | None] = Field(
        default_factory=dict, description="k -> 95% task-bootstrap interval on predicted_split_share.")
    few_split: bool = Field(description="Fewer split groups than a grouped method needs (see the summary).")
    rollouts: RolloutAdvice | None = Field(None, description="Rollouts per prompt to sample, and the batch.")


class OnPolicy(Verdict):
    """Question 4: did the model you will train write these rows?"""

    verdict: Literal["yes", "no", "unknown"]
    kind: Literal["same_model", "older_checkpoint", "other_model", "mixed", "unnamed", "no_model_given", "empty"]
    model: str | None
    share_named: float | None = Field(description="Share of rows that name their sampling model.")
    models: dict[str, int] = Field(description="Sampling model -> rows (the most common first; capped).")
    samplers: list[dict[str, Any]] = Field(default_factory=list, description=(
        "Per sampler (and arm): model, arm, rows, tasks, graded_rows, pass_at_1 (mean over its graded groups)."))


class PairedDifference(BaseModel):
    n_shared: int = Field(description="Tasks both sides scored.")
    mean_diff: float = Field(description="Mean over shared tasks of teacher minus student pass rate.")
    ci95: Interval | None


class TeacherClears(Verdict):
    """Question 5: does the teacher beat the student by `effect`, with intervals apart?"""

    verdict: Literal["clears", "does_not_clear", "tokenizer_mismatch", "undecided"]
    clears: bool | None = Field(description="true / false, or null when the rows cannot decide.")
    gap: float | None = Field(description="teacher pass@1 - student pass@1.")
    apart: bool | None = Field(description="The teacher's interval lies wholly above the student's (the whileai skill's rule).")
    effect: float
    teacher_pass_at_1: float | None
    teacher_ci95: Interval | None
    student_pass_at_1: float | None
    student_ci95: Interval | None
    paired: PairedDifference | None = Field(description="The per-task difference on shared tasks, with a MOVER interval.")
    tokenizers_match: bool | None = Field(description="Whether teacher and student share a tokenizer, if known.")
    decided_by: Literal["paired", "unpaired"] | None = Field(None, description=(
        "Which test decided: the paired test on shared tasks where there are any, else the unpaired rule."))


class HoldoutSize(Verdict):
    """Step 7: how many held-out tasks prove the effect."""

    verdict: Literal["sized"]
    n_tasks: int
    effect: float
    base: float
    k: int
    power: float
    alpha: float
    task_std: float = Field(description="One task's paired-difference standard deviation.")
    sd_source: Literal["model", "given", "rows"]
    half_width: float = Field(description="Half-width of the 95% interval on the gain at n_tasks.")
    n_tasks_concentrated: int | None = Field(description="Tasks needed if the gain sits on the fewest tasks.")
    n_paired: int | None = None
    saturated: bool = False
    n_tasks_low: int | None = None
    n_tasks_high: int | None = None


class TraceStep(BaseModel):
    question: int = Field(description="The skill's question number (1-6); 0 is the grading check.")
    name: str
    answer: str
    decided: bool = Field(description="This question settled the route.")
    evidence: dict[str, Any]


RouteName = Literal["fix_reward", "grade_first", "single_rollout", "floor", "saturated", "opd", "sft", "dpo", "grpo"]


class Route(Verdict):
    """The questions (0 to 6) in the skill's order; the first that decides, stops."""

    route: RouteName
    methods: list[str] = Field(description="The concrete methods for this route, best first.")
    trace: list[TraceStep]
    alternatives: list[NextStep] = Field(default_factory=list, description="Other calls worth making.")
    before_gpu: list[str] = Field(default_factory=list, description="Checks to run before spending GPU time (step 7).")
    model: str | None
    n_rows: int
    n_tasks: int
    confidence: float | None = Field(
        None, description="How often a fresh eval of the same size would give this route: the share of simulated "
                          "second evals (tasks resampled twice) whose data-driven questions agree. A route no resample "
                          "can leave (every task fails, or every one passes) reads 1.0 though a fresh eval may differ. "
                          "Null where per-task rates did not decide the route.")
    runner_up: str | None = Field(None, description="The most common other route over the resamples.")
    runner_up_share: float | None = None
    rollouts: RolloutAdvice | None = Field(None, description="Rollouts per prompt and batch, for grouped routes.")
    cost: RunCostEstimate | None = Field(None, description="What the suggested grouped run samples.")
