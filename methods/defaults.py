"""Every default of the training methods, one named constant each, with its source.

Nothing here imports torch. The method objects (`methods.objects`) read their defaults from this
module, so changing a number here changes it everywhere (objects, update rules, prime-rl configs).

Sources are cited by arXiv id where one exists. "anchor" means the whileai 0.131 SDK (PyPI, Apache-2.0; its
files cited relative to the package), which this project measures itself against; where we chose a different
value from the anchor, or where prime-rl's own default differs, the comment says which one we took and why.
"""

from __future__ import annotations

# --------------------------------------------------------------------------------------------
# Shared ranges and sampler conventions
# --------------------------------------------------------------------------------------------

# Sampler temperature must lie in (0, TEMPERATURE_MAX]. Every method samples and scores at the same
# temperature; above 2 the sampler is close to uniform and no method in the papers cited below uses it.
TEMPERATURE_MAX = 2.0

# One rollout per prompt is what the single-rollout methods assume (FlashReinforce, SAO, BPCO).
SINGLE_ROLLOUT_SAMPLES = 1

# Cap on the importance ratio pi_train / pi_sampler inside the coefficients, rho -> min(rho, cap) (truncated
# importance sampling; the knob is `ratio_cap`, inf disables it). 20 is verl's truncation in its DPPO losses
# (verl core_algos.py compute_policy_loss_dppo_tv and _dppo_kl: clamp(ratio, max=clip_ratio_c), clip_ratio_c
# default 20.0; DPPO arXiv:2602.04879), the nearest published rule to ours: a trust test on the token's
# probability (or Bernoulli KL) that leaves the ratio itself unbounded above. Without it a token whose sampler
# probability was tiny weighs up to e^20 (BPCO, Async ipo) or e^30 (FlashReinforce) times the others, and
# FlashReinforce's trust gate bounds only the *mean* drift of a row. (verl's vanilla PPO dual-clip uses 3.0 for
# negative advantages; TIS caps are 2-5, see ASYNC_TIS_CAP.) The gate, clip and band knobs still decide what
# is kept; the cap only bounds what a kept token weighs, and a note says when it binds.
RATIO_CAP = 20.0

# --------------------------------------------------------------------------------------------
# The update rules' memory and chunking (methods.rules.policy)
# --------------------------------------------------------------------------------------------

# On an accelerator a rule's extra memory (its outputs and one row chunk's temporaries) stays within this many
# [B, T] tensors of the input dtype; what the outputs leave, the chunk's temporaries may take. A bound relative
# to the batch keeps the number of chunks, hence of kernel launches, independent of B (launches, not bytes,
# were what made the chunked rules slow on an H100: about 80 per 256-row chunk). 6 is this project's budget:
# the outputs (coefficients, per-token advantages) plus a few float32 temporaries for a bfloat16 batch.
RULE_EXTRA_TENSORS = 6.0

# ...and a chunk's temporaries never take more than this (2 GiB), so a huge batch does not need 6 copies of
# itself free: past it the chunks multiply, each still large enough (> 100 MB) that a launch costs nothing.
RULE_CHUNK_BYTES = 2**31

# On a CPU the chunk is sized for a core's cache instead: 2**18 elements per temporary (1 MiB of float32,
# 256 rows at T = 1024), the size bench/methods_bench.py measured fastest for the single-rollout rules.
CPU_CHUNK_ELEMENTS = 2**18

# --------------------------------------------------------------------------------------------
# Group-relative methods: grpo, max_rl, rae (prime-rl algorithms)
# --------------------------------------------------------------------------------------------

# Rollouts per prompt for the grouped methods. Dr. GRPO (Liu et al. 2025, arXiv:2503.20783) and
# arXiv:2603.21972 train with 8; it is also prime-rl's usual debug-config value.
RL_ROLLOUTS_PER_PROMPT = 8

# GRPO divides the centred reward by the group's standard deviation only when asked.
# Default False: prime-rl's grpo advantage is reward minus group mean with no std division, and
# Dr. GRPO (arXiv:2503.20783) shows the std division biases towards easy/hard prompts. The
# original GRPO (DeepSeekMath, arXiv:2402.03300) and TRL's default divide.
GRPO_NORMALIZE_STD = False

# Epsilon added to the group std when GRPO_NORMALIZE_STD is on (verl
# compute_grpo_outcome_advantage uses 1e-6; TRL uses 1e-4). Bessel-corrected std as both do.
GRPO_STD_EPS = 1e-6

# RAE (SPIRAL, Liu et al. 2025, arXiv:2506.24119): per-agent EMA baseline b <- d*b + (1-d)*R.
# 0.95 is both SPIRAL's and prime-rl's RAEAlgoConfig.decay default; prime-rl allows 0 <= d < 1.
RAE_DECAY = 0.95

# The EMA baseline starts here for an agent it has not seen (prime-rl: 0.0).
RAE_INITIAL_BASELINE = 0.0

# Key under which a trajectory without an `agent` field keeps its RAE baseline.
RAE_DEFAULT_AGENT = "default"

# Below this group size a group-relative advantage is zero on most groups (a binary reward gives a
# split group with probability 1 - p^k - (1-p)^k); the prime-rl writer warns, prime-rl accepts any
# group_size >= 1.
GROUPED_MIN_USEFUL_GROUP = 4

# --------------------------------------------------------------------------------------------
# OPD: on-policy distillation from a served teacher
# --------------------------------------------------------------------------------------------

# Reverse KL from student to teacher: GKD (Agarwal et al. 2023, arXiv:2306.13649), Thinking
# Machines "On-policy distillation" (2025), Qwen3 (arXiv:2505.09388).
OPD_DIVERGENCE = "reverse_kl"

# The divergences an OPD/OPSD loss can use (GKD names all three; jsd is the beta=0.5 mixture).
DIVERGENCES = ("reverse_kl", "forward_kl", "jsd")

# Teacher top-k support: Li et al. 2026 (arXiv:2604.13016) find k >= 4 works and k = 1 fails;
# Fu et al. 2026 (arXiv:2603.25562) use top-32.
OPD_TOP_K = 32

# Student samples per prompt: tinker-cookbook and Li et al. (arXiv:2604.13016) use 4; Fu et al. 8.
OPD_SAMPLES = 4

# Sample and score at the same, untruncated temperature (Thinking Machines 2025).
OPD_TEMPERATURE = 1.0

# Teacher signal decays past about 7k tokens (Li et al. arXiv:2604.13016); Fu et al. also 8192.
OPD_MAX_TOKENS = 8192

# Learning rates when none is given: tinker-cookbook LoRA 1e-4; Li / Fu et al. full fine-tune 1e-6.
OPD_LEARNING_RATE_LORA = 1e-4
OPD_LEARNING_RATE_FULL = 1e-6

# Log-ratio clamp (teacher minus student log-prob) before any exp in the sampled-token forward-KL
# and JSD forms: the same +-20 verl applies to its KL estimators and rollout corrections.
OPD_LOG_RATIO_CLAMP = 20.0

# The forward-KL coefficient is the importance weight pi_T/pi_S minus 1: capped at RATIO_CAP (verl's DPPO
# truncation, above). No distillation peer caps this term (verl's and TRL's sampled-token forms are reverse
# KL, which forms no ratio); the cap is ours, a knob (`ratio_cap`), and inf gives the uncapped estimator.
OPD_RATIO_CAP = RATIO_CAP

# --------------------------------------------------------------------------------------------
# OPSD: on-policy self-distillation (the student, given privileged text, is its own teacher)
# --------------------------------------------------------------------------------------------

# What the teacher sees that the student does not. Named forms and their papers:
# demonstration = SDFT (arXiv:2601.19897), reference = Zhao et al. (arXiv:2601.18734),
# hint = Penaloza et al. (arXiv:2602.04942), feedback = SDPO / Huebotter et al. (arXiv:2601.20802).
OPSD_PRIVILEGED = "demonstration"
OPSD_PRIVILEGED_NAMED = ("demonstration", "reference", "hint", "feedback")

# Reverse KL: SDFT and SDPO (arXiv:2601.20802).
OPSD_DIVERGENCE = "reverse_kl"

# Teacher weights: an EMA of the student, theta_bar <- (1-a) theta_bar + a theta.
# SDFT uses a = 0.01-0.05, SDPO 0.01. "initial" freezes the starting weights, "live" uses the
# current student (what prime-rl's opsd scores against).
OPSD_ANCHOR = "ema"
OPSD_EMA_RATE = 0.01
OPSD_ANCHORS = ("ema", "initial", "live")

# One sample per prompt: SDFT, Zhao et al. (arXiv:2601.18734).
OPSD_SAMPLES = 1

# SDPO, SRPO (arXiv:2604.02288).
OPSD_TEMPERATURE = 1.0

# Kaur et al. 2026 (arXiv:2607.05184) train OPSD at 4096 completion tokens.
OPSD_MAX_TOKENS = 4096

# SDPO, Zhao et al., SRPO and Kaur et al. all land near 5e-6 (same for adapter and full weights).
OPSD_LEARNING_RATE = 5e-6

# How the privileged text is shown to the teacher; prime-rl's opsd default wording.
OPSD_TEMPLATE = (
    "Here is an example of an expert response:\n<demonstration>\n{demonstration}\n</demonstration>"
)

# --------------------------------------------------------------------------------------------
# Async: bounded staleness plus a per-token off-policy correction
# --------------------------------------------------------------------------------------------

# How many policy versions a rollout may lag the trainer: ScaleRL (arXiv:2510.13786) uses 8,
# AReaL (arXiv:2505.24298) 4 for code and 8 for math; Noukhovitch et al. (arXiv:2410.18252).
ASYNC_OFF_POLICY_STEPS = 8

# The per-token correction: ipo is prime-rl's loss type for off-policy tokens.
ASYNC_CORRECTION = "ipo"
ASYNC_CORRECTIONS = ("ipo", "icepop", "tis")

# ipo keeps a token only when |pi_train(a) - pi_sampler(a)| <= threshold (a probability
# difference). We take prime-rl's own `ipo_threshold` default, 0.1 (trainer/rl loss config at
# commit 559b44772). The anchor uses 0.3 and labels it "prime-rl's default", but no 0.3 appears
# in prime-rl's history, and a config written for prime-rl should match what prime-rl does.
ASYNC_IPO_THRESHOLD = 0.1

# icepop keeps a token only when low <= rho <= high (inclusive, as verl and OpenRLHF do):
# Ring-1T (arXiv:2510.18855), verl's token-icepop default and OpenRLHF's default are (0.5, 5.0).
ASYNC_ICEPOP_RATIO = (0.5, 5.0)

# tis multiplies by min(rho, cap): verl's rollout-IS threshold 2.0 (Yao et al. 2025, "Your
# efficient RL framework secretly brings you off-policy RL training").
ASYNC_TIS_CAP = 2.0

# Log-ratio clamp before exp in the Async corrections (verl rollout correction, +-20).
ASYNC_LOG_RATIO_CLAMP = 20.0

# Cap on rho in the kept coefficients (RATIO_CAP, verl's DPPO truncation). It binds only under ipo: icepop
# keeps rho <= ratio[1] (5) and tis caps at `cap` (2). prime-rl's own ipo does not cap rho (its loss is
# keep * A * rho, with rho unclipped), so a prime-rl config cannot carry this knob.
ASYNC_RATIO_CAP = RATIO_CAP

# What our ipo leaves out of prime-rl's ipo loss (a fact, not a knob): prime-rl adds kl_tau * (log rho)^2 on
# every loss token (kl_tau = 1e-3, trainer/rl/loss.py ipo_loss_fn, commit 559b44772), a penalty whose gradient
# is 2 kl_tau log(rho) grad log pi. It is a separate loss term, not a factor on the policy-gradient
# coefficients, so Async omits it; a trainer that wants prime-rl's exact objective adds it to its loss.

# --------------------------------------------------------------------------------------------
# FlashReinforce: Hu et al. 2026 (NVIDIA, FlashREINFORCE; reference loss
# github.com/yifanzhang-pro/FlashREINFORCE, trainer NVIDIA-NeMo/labs-molt)
# --------------------------------------------------------------------------------------------

# Sequence trust region on the mean per-token Bernoulli KL (admitted iff D_i <= trust).
# Reference-loss default, Qwen2.5-Math run (Hu et al. Tab. 13); the paper also uses 1e-3..1e-2.
FLASH_REINFORCE_TRUST = 0.003

# Measured lag: about 4 (R1-distill 1.5B) and 8 (Qwen3-30B-A3B), Hu et al. Tab. 9, 12.
FLASH_REINFORCE_OFF_POLICY_STEPS = 8

# Untruncated sampler (top-p 1), Hu et al.
FLASH_REINFORCE_TEMPERATURE = 1.0

# Hu et al. Tab. 9, 12, 17.
FLASH_REINFORCE_MAX_TOKENS = 8192

# Batch size of the paper (Tab. 9-13; 64 on ALFWorld). Documentary: the update uses the batch it gets.
FLASH_REINFORCE_BATCH = 128

# AdamW, wd 0.1, clip 1.0, cosine, 3% warmup at 1e-6 (Hu et al.); the adapter rate is a convention.
FLASH_REINFORCE_LEARNING_RATE = 1e-6
FLASH_REINFORCE_LEARNING_RATE_LORA = 1e-4

# Log-ratio clamp before exp in the importance ratio (Hu et al. App. A; labs-molt uses +-30).
# The reference loss raises on overflow instead; we clamp (a numeric guard, under the cap below).
FLASH_REINFORCE_LOG_RATIO_CLAMP = 30.0

# Cap on the ratio itself (RATIO_CAP above). The paper's reference loss has none (it raises on overflow);
# its trust gate bounds a row's mean Bernoulli KL, and one token of a 1000-token row can pass it with a ratio
# of 1e5. ratio_cap=inf gives the paper's rule.
FLASH_REINFORCE_RATIO_CAP = RATIO_CAP

# Probabilities are clamped to [floor, 1 - floor] in the Bernoulli KL (reference loss).
FLASH_REINFORCE_PROBABILITY_FLOOR = 1e-6

# --------------------------------------------------------------------------------------------
# SAO: Hou, Li, Tang, Dong 2026, arXiv:2607.07508 (section 3.1, 3.2, 4.1)
# --------------------------------------------------------------------------------------------

# Strict double-sided ratio band (1 - eps_low, 1 + eps_high): eps_low 0.3, eps_high 5.0 in the
# reasoning run (section 4.1); the coding run uses eps_low 0.8, eps_high 3.0.
SAO_RATIO = (0.7, 6.0)
SAO_RATIO_CODING = (0.2, 4.0)

# Length-adaptive GAE: lambda(L) = max(0, 1 - 1/(alpha * L)); alpha = 1.5 (section 4.1). VAPO
# (arXiv:2504.05118) uses 0.4 for the same formula.
SAO_GAE_ALPHA = 1.5

# Discount. Fixed at 1 (terminal reward, no discount); not a knob.
SAO_GAMMA = 1.0

# Critic updates per policy update, K = 2 (section 3.2, Table 4). Documentary for the trainer.
SAO_CRITIC_STEPS = 2

# "10-step warmup" of the critic before the policy moves (section 4.1). Documentary.
SAO_CRITIC_WARMUP = 10

# Policy and critic learning rates (section 4.1).
SAO_LEARNING_RATE = 1e-6
SAO_CRITIC_LEARNING_RATE = 5e-6

# Batch of the paper (section 4.1). Documentary.
SAO_BATCH = 128

# Convention (untruncated sampler) / the paper's "128k" multi-turn context.
SAO_TEMPERATURE = 1.0
SAO_MAX_TOKENS = 131072

# Log-ratio clamp before exp in the band test. Any |log rho| above log(6) is outside every band
# a user can set below exp(40), so clamping at 40 changes no decision and keeps exp finite in f32.
SAO_LOG_RATIO_CLAMP = 40.0

# --------------------------------------------------------------------------------------------
# BPCO: Qi, Zhou, Lee 2026, arXiv:2608.23566 (DPPO arXiv:2602.04879; LA-GAE from VAPO/SAO;
# Monte Carlo critic target VC-PPO arXiv:2503.01491; release github.com/QPHutu/golden_critic)
# --------------------------------------------------------------------------------------------

# DPPO binary-TV threshold on the probability difference; the release trains at verl's clip 0.2.
BPCO_CLIP = 0.2

# Length-adaptive GAE alpha (eq. 14, section 3.6).
BPCO_GAE_ALPHA = 0.4

# The critic's value is bounded to the reward range through an arctan squash (eq. 9, binary rewards).
BPCO_REWARD_RANGE = (0.0, 1.0)

# Critic warmup steps (section 4; release trainer.critic_warmup=15). Documentary.
BPCO_CRITIC_WARMUP = 15

# Release default / section 4.2 (Qwen3-30B-A3B).
BPCO_TEMPERATURE = 1.0
BPCO_MAX_TOKENS = 12000

# verl defaults (the release lowers the critic rate to 5e-6 in bigger runs).
BPCO_LEARNING_RATE = 1e-6
BPCO_CRITIC_LEARNING_RATE = 1e-5

# Log-ratio clamp before exp (release compute_policy_loss_dppo_tv).
BPCO_LOG_RATIO_CAP = 20.0

# Cap on the ratio in the coefficients (RATIO_CAP: upstream verl's dppo_tv truncates at 20; the golden_critic
# release predates that and does not). The binary-TV test bounds a positive-advantage token's ratio by
# 1 + clip/mu, but not a negative-advantage token whose probability rose.
BPCO_RATIO_CAP = RATIO_CAP

# --------------------------------------------------------------------------------------------
# GroupwiseGrading: MiMo-V2.6 technical report (Xiaomi 2026) section 4.3
# --------------------------------------------------------------------------------------------

# "advantage" = GAR (section 4.3.2, re-weights the pass mass by a groupwise ranking);
# "reward" = GRS (section 4.3.1, multiplies passing rewards by rubric scores).
GROUPWISE_MODE = "advantage"
GROUPWISE_MODES = ("reward", "advantage")

# Minimum multiplier of a rubric score in reward mode (the report multiplies raw scores: 0).
GROUPWISE_FLOOR = 0.0

# Cap on the pass-mass rescale lambda (the report caps it, value unpublished; convention).
GROUPWISE_CAP = 3.0

# Factor of the worst-ranked pass; the best gets 1 (convention).
GROUPWISE_MIN_FACTOR = 0.5

# Zero a pass the grader confirms as a reward hack before recomputing (report).
GROUPWISE_HACK_ZERO = True

# A rollout passes when reward >= this (midpoint of a binary outcome).
PASS_THRESHOLD = 0.5

# Groups graded in parallel.
GROUPWISE_CONCURRENCY = 16

# Spread check on grader scores: the 2026-09-21 text-to-SQL null result the anchor reports (whileai
# groupwise.py, simulations/defaults.py: rubric ~0.93 on 1,472 passes, erased by GRPO normalization)
# motivates refusing a grader whose scores cluster.
SPREAD_MIN_STD = 0.05
SPREAD_BAND = 0.05
SPREAD_CLUSTER_SHARE = 0.9

# --------------------------------------------------------------------------------------------
# ReinforceAda: Xiong et al. 2025, arXiv:2510.04996 (Reinforce-Ada-Seq; authors' verl code,
# github.com/RLHFlow/Reinforce-Ada)
# --------------------------------------------------------------------------------------------

# Samples kept per prompt for the gradient.
REINFORCE_ADA_KEEP = 4

# Samples drawn per active prompt per round.
REINFORCE_ADA_ROUND_SIZE = 8

# Rounds before giving up on a prompt (so at most 32 draws per prompt).
REINFORCE_ADA_MAX_ROUNDS = 4

# Exit rule: "balanced" retires a prompt once it has keep//2 right and keep - keep//2 wrong;
# "positive" retires it at the first right answer.
REINFORCE_ADA_EXIT = "balanced"
REINFORCE_ADA_EXITS = ("balanced", "positive")

# A sample is right when its reward is strictly above this.
REINFORCE_ADA_THRESHOLD = 0.7

# --------------------------------------------------------------------------------------------
# preview_update's verdicts (conventions)
# --------------------------------------------------------------------------------------------

# "too_stale" when a method with an off-policy guard (FlashReinforce, SAO, BPCO, Async) would lose at
# least this share of the batch to it (rejected trajectories, or band-masked / clipped tokens).
PREVIEW_STALE_SHARE = 0.5

# "off_policy" when a method without an importance correction (grpo, max_rl, rae, OPD, OPSD) gets a
# batch in which at least this share of trajectories drifts past FlashReinforce's trust.
PREVIEW_OFF_POLICY_SHARE = 0.25

# --------------------------------------------------------------------------------------------
# prime-rl launcher defaults (read by trainers.prime_rl; prime-rl's own facts are in
# trainers/prime_rl/constants.py)
# --------------------------------------------------------------------------------------------

# The steps, batch and LoRA default every writer shares, and each trainer's GPUs: common/trainers.py.

# `seq_len` is the packed sample length and longer samples are cut (prime-rl 559b44772's
# [orchestrator] seq_len), so it must hold a prompt plus the completion cap: the writer sets
# max(PRIME_RL_SEQ_LEN, completion cap + PRIME_RL_PROMPT_TOKENS rounded up to PRIME_RL_SEQ_LEN_MULTIPLE).
# PRIME_RL_SEQ_LEN is 8192 response tokens plus the 4k prompt budget.
PRIME_RL_SEQ_LEN = 12288
PRIME_RL_PROMPT_TOKENS = 4096
PRIME_RL_SEQ_LEN_MULTIPLE = 1024

# Learning rates for grpo / max_rl / rae: 1e-5 with LoRA (the anchor's Qwen3.8-27B runs, whileai
# simulations/defaults.py), 1e-6 for full weights (DAPO arXiv:2503.14476, Dr. GRPO arXiv:2503.20783).
PRIME_RL_LEARNING_RATE_LORA = 1e-5
PRIME_RL_LEARNING_RATE_FULL = 1e-6

# Sampling for grpo / max_rl / rae (the anchor borrows OPSD_MAX_TOKENS and OPD_TEMPERATURE; we name
# them for what they are).
RL_MAX_TOKENS = 4096
RL_TEMPERATURE = 1.0

# Eval block (convention): PRIME_RL_EVAL_ROUNDS evaluations per run
# (`[orchestrator.eval] interval = max(1, steps // PRIME_RL_EVAL_ROUNDS)`).
PRIME_RL_EVAL_EXAMPLES = 60
PRIME_RL_EVAL_GROUP = 2
PRIME_RL_EVAL_ROUNDS = 4

# LoRA rank 16 (LoRA, arXiv:2106.09685) and alpha = 2r (PEFT convention).
TRAINING_LORA_RANK = 16
TRAINING_LORA_ALPHA = 32
