"""Every default the router uses, with the source it comes from.

Change a number here, not at its point of use.
"""

# A row passes when reward >= PASS_THRESHOLD. The seed's question 1 reads `reward >= 1.0`, and binary
# 0/1 graders are the common case (seed-pick-a-method.md, section 1).
PASS_THRESHOLD = 1.0

# The proof bar: a teacher must beat the student by five points (whileai defaults.py PROVE_EFFECT, chosen
# above held-constant eval noise of 0.25-1.5 points; Lambert 2025, chapter Evaluation).
PROVE_EFFECT = 0.05

# A percentile bootstrap over tasks needs at least three tasks (whileai stats.py MIN_CI_TASKS).
MIN_CI_TASKS = 3

# Bootstrap resamples and level (whileai BOOTSTRAP_DRAWS; Miller 2024, arXiv:2411.00640, cluster by task).
BOOTSTRAP_DRAWS = 2000
CI_LEVEL = 0.95
BOOTSTRAP_SEED = 0

# Fewer split tasks than this and a grouped method has little to learn from: GRPO on 6 mixed tasks of 84
# gave grad_norm 0 (whileai TRAIN_MIN_MIXED_TASKS = 32, issues #396/#397).
MIN_SPLIT_TASKS = 32

# Group sizes at which the predicted split share is reported (k = 4 from tau-bench arXiv:2406.12045,
# 8 = RL_ROLLOUTS_PER_PROMPT, 16 = DIFFICULTY_BAND_ROLLOUTS; DAPO arXiv:2503.14476).
PREDICT_SPLIT_AT = (4, 8, 16)

# OPSD needs in-context learning of about 7B parameters or more; under it, SFT on a stronger model's
# completions (seed section 3; Qwen3-0.6B OPSD vs GRPO -0.554 [-0.614, -0.495] in the whileai recipe).
OPSD_MIN_PARAMS_B = 7.0

# Held-out sizing (whileai defaults.py: BASE_PASS_RATE, ROLLOUTS_PER_TASK, POWER, ALPHA, CEILING_PASS_RATE,
# MIN_HOLDOUT_TASKS; Miller 2024 section 5 for power and alpha; tau-bench for k = 4).
HOLDOUT_BASE = 0.6
HOLDOUT_K = 4
HOLDOUT_POWER = 0.8
HOLDOUT_ALPHA = 0.05
HOLDOUT_CEILING = 0.9
MIN_HOLDOUT_TASKS = 2

# Group size the router proposes for grouped RL when the rows' own k is smaller (RL_ROLLOUTS_PER_PROMPT).
RL_ROLLOUTS_PER_PROMPT = 8

# How many items any list in a verdict shows before it says how many it left out, and how many characters a
# name -> value listing may take: Claude Code refuses tool answers over 25,000 tokens (MAX_MCP_OUTPUT_TOKENS),
# about 100,000 characters (reference/mcp.md section 0, item 8).
LIST_LIMIT = 20
LIST_CHARS = 40_000
