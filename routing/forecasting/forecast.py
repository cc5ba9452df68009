"""The glue between the questions and the models of what more rollouts would buy (prior.py, split.py, cost.py,
confidence.py): the per-(task, sampler, arm) table's groups in, the verdicts' rollout advice, cost and confidence
out. Below this module everything takes plain per-group arrays (passes, rollouts, reward spread, tokens).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

import numpy as np

from pick_a_method.common.trainers import STEPS  # the writers' default: the run the step writes

from .. import defaults as D
from .confidence import route_confidence
from .cost import run_cost, throughputs
from .prior import RatePrior, fit_prior, narrowed
from .split import batch_for, best_k, group_signal, posterior_split_chance, predict_split, suggest_group_size
from ..verdicts import RolloutAdvice, RunCostEstimate, SplitAtK


def table_moments(t) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Per group of a table of sufficient statistics (routing.table.Table: n, reward_sum, reward_sq, tokens_sum,
    tokens_n): reward sum, spread (sum of squared deviations from the group's mean, clipped at 0 against
    rounding) and mean completion tokens (None when no row states them; NaN for a group without them)."""
    n = np.maximum(t.n.astype(np.float64), 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = np.maximum(t.reward_sq - t.reward_sum * t.reward_sum / n, 0.0)
    tokens = None
    if int(t.tokens_n.sum()):
        with np.errstate(invalid="ignore", divide="ignore"):
            tokens = np.where(t.tokens_n > 0, t.tokens_sum / np.maximum(t.tokens_n, 1), np.nan)
    return t.reward_sum, spread, tokens


def signal(c: np.ndarray, n: np.ndarray, total: np.ndarray, spread: np.ndarray,
           nonbinary: bool) -> tuple[np.ndarray, str]:
    """Which tasks' groups carry signal, and the definition used (reward spread where rewards are not 0/1)."""
    return group_signal(c, n, reward_spread=spread, binary=not nonbinary)


def rollout_advice(c: np.ndarray, n: np.ndarray, *, k_now: int, few_split: bool,
                   tokens: np.ndarray | None = None) -> tuple[RolloutAdvice, dict]:
    """Predicted split share at D.ROLLOUT_CANDIDATES and the advice drawn from it; also the fitted prior and
    the predictions by k, for band's own fields. The gain of a larger k is measured against the prediction at
    the rows' own k (the same model on both sides, which reproduces the observed share there). A larger group
    is suggested only where too few tasks split (few_split); otherwise the batch is sized at prime-rl's
    default group (D.RL_ROLLOUTS_PER_PROMPT)."""
    c, n = narrowed(c, n)
    prior = fit_prior(c, n)
    ks = sorted({*D.ROLLOUT_CANDIDATES, *D.PREDICT_SPLIT_AT, max(k_now, 2)})
    preds = predict_split(c, n, ks, prior=prior, tokens=tokens)
    by_k = {p.k: p for p in preds}
    now = by_k[max(k_now, 2)].share
    suggestion = (suggest_group_size([p for p in preds if p.k in D.ROLLOUT_CANDIDATES], k_now, len(c), now)
                  if few_split else None)
    group = suggestion.k if suggestion else max(k_now, D.RL_ROLLOUTS_PER_PROMPT)
    if group not in by_k:
        by_k[group] = predict_split(c, n, (group,), prior=prior, tokens=tokens)[0]
    # Under one expected split task in the whole set (a floor or a saturated set) no batch gets signal: none is
    # sized (1 / share would ask billions of prompts a step).
    prompts = batch_for(D.TARGET_INFORMATIVE_GROUPS, by_k[group].share) if by_k[group].share * len(c) >= 1 else None
    candidates = [p for p in preds if p.k in D.ROLLOUT_CANDIDATES]
    advice = RolloutAdvice(
        prior={"a": round(prior.a, 4), "b": round(prior.b, 4), "zero": round(prior.zero, 4),
               "one": round(prior.one, 4)},
        prior_model=prior.model,
        per_k=[SplitAtK(k=p.k, split_share=round(p.share, 4),
                        ci95=(round(p.ci95[0], 4), round(p.ci95[1], 4)) if p.ci95 else None,
                        informative_per_1000_rollouts=round(p.informative_per_1000_rollouts, 2),
                        informative_per_million_tokens=(round(p.informative_per_million_tokens, 2)
                                                        if p.informative_per_million_tokens is not None else None))
               for p in candidates],
        best_k=best_k(candidates), best_k_by="tokens" if tokens is not None and np.isfinite(tokens).any() else "rollouts",
        group_size=group, suggested_group_size=suggestion.k if suggestion else None,
        gain=round(suggestion.share - now, 4) if suggestion else None, target_groups=D.TARGET_INFORMATIVE_GROUPS,
        prompts_per_step=prompts, batch=prompts * group if prompts else None)
    return advice, {"prior": prior, "by_k": by_k}


def advice_prior(advice: RolloutAdvice) -> RatePrior:
    """The prior the advice was drawn from, as its verdict states it (rounded to 4 places)."""
    p = advice.prior
    return RatePrior(p["a"], p["b"], 0.0, zero=p.get("zero", 0.0), one=p.get("one", 0.0), model=advice.prior_model)


def cost_estimate(c: np.ndarray, n: np.ndarray, advice: RolloutAdvice, prior, *,
                  tokens: np.ndarray | None = None, steps: int = STEPS, gpus: int | None = None,
                  throughput: Mapping[str, float] | None = None) -> RunCostEstimate | None:
    """The suggested run's cost at advice.group_size and advice.prompts_per_step, or None when nothing splits;
    with `gpus` and `throughput` (cost.THROUGHPUT_KEYS), prime-rl's inference / trainer GPU split."""
    if not advice.prompts_per_step:
        return None
    infer, train = throughputs(throughput)
    chance = posterior_split_chance(*narrowed(c, n), advice.group_size, prior)
    cost = run_cost(group_size=advice.group_size, prompts_per_step=advice.prompts_per_step, steps=steps,
                    signal_chance=chance, tokens=tokens, gpus=gpus, inference_tokens_per_gpu_s=infer,
                    trainer_tokens_per_gpu_s=train)
    return RunCostEstimate(**asdict(cost))


def confidence_fields(c: np.ndarray, n: np.ndarray, *, tail: str, teacher: tuple | None, effect: float,
                      signal_mask: np.ndarray | None) -> dict:
    conf = route_confidence(c, n, tail=tail, teacher=teacher, effect=effect, signal=signal_mask)
    return {"confidence": round(conf.confidence, 4), "runner_up": conf.runner_up,
            "runner_up_share": round(conf.runner_up_share, 4) if conf.runner_up else None}, conf
