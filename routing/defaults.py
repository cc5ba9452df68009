"""Every default the router uses, with the source it comes from.

Change a number here, not at its point of use. "whileai" is the anchor SDK, whileai 0.131 on PyPI (Apache-2.0),
its files cited relative to the package (`simulations/defaults.py`); "the whileai skill" is its pick-a-method
skill, v2.0.0 (skills/pick-a-method/SKILL.md in github.com/whilehq/whileai-sdk), which this project was made from.
"""

# A row passes when reward >= PASS_THRESHOLD. The whileai skill's question 1 reads `reward >= 1.0`, and binary
# 0/1 graders are the common case.
PASS_THRESHOLD = 1.0
# Rewards reaching this or more run on another scale (judges score 0-10, rubrics 0-100): reading them at the default
# threshold would pass every partial score (a 0-10 judge's rows read so gave pass@1 0.89). A shaped reward that tops
# out a little over 1 (a format bonus) stays under it and is only flagged as non-binary.
SCALE_PAST = 2.0

# The proof bar: a teacher must beat the student by five points (whileai simulations/defaults.py PROVE_EFFECT, chosen
# above held-constant eval noise of 0.25-1.5 points; Lambert 2025, chapter Evaluation).
PROVE_EFFECT = 0.05

# A percentile bootstrap over tasks needs at least three tasks (whileai simulations/defaults.py MIN_CI_TASKS).
MIN_CI_TASKS = 3

# Bootstrap resamples and level (whileai simulations/defaults.py BOOTSTRAP_DRAWS; Miller 2024, arXiv:2411.00640,
# cluster by task).
BOOTSTRAP_DRAWS = 2000
CI_LEVEL = 0.95
BOOTSTRAP_SEED = 0

# The interval on a mean pass rate over tasks. The anchor's percentile task bootstrap covered 0.84-0.91
# with 10 tasks on skewed or near-saturated rates, and gave a set where every task passes [1, 1]. Instead: a
# score interval on the effective sample size m = p(1-p) / var(mean) (Kish 1965's design effect), m shrunk by
# (z / t_{n-1})^2 for the estimated variance (Korn & Graubard 1998, Survey Methodology 24(2):193-201), held in
# [n tasks, total rollouts]; Wilson (1927) above the floor, Agresti & Coull (1998, Am. Stat. 52:119) at it
# (k = 1, or a set at one rate). Coverage 0.93-0.97 over 10/40/200 tasks x k 1/4/16 x four populations except
# where the binomial lattice allows no symmetric rule in the band (10 tasks, k = 1, p = 0.5: 0.891 or 0.979), and a
# teacher near saturation on 10 tasks (Beta(20,1), mean 0.952, x 1 or 4 rollouts: all-pass, the likeliest outcome,
# cannot exclude 0.952 from above (exact lower bound 0.69 / 0.91), so any central interval covers >= 0.975).
RATE_INTERVAL = "Wilson / Agresti-Coull on a Korn-Graubard effective sample size (bench/coverage_bench.py)"
# The paired teacher - student difference: MOVER (Zou & Donner 2008, Comput. Stat. Data Anal. 52:3209) as Newcombe
# (1998, Stat. Med. 17:2635) method 10 builds it: each arm's Wilson limits on its effective sample size (RATE_INTERVAL
# without the Agresti-Coull floor), squared and added with the tasks' correlation, each arm capped at its rollouts.
# With Agresti-Coull limits the sum ran wide by the ceiling (student 0.87 / teacher 0.95 on 40 one-rollout
# tasks: exact coverage 0.976-0.978; Wilson 0.967). Measured and not taken: Tango's score interval (1998, Stat. Med.
# 17:891) on an effective number of pairs, 0.93-0.96 from 40 tasks but 0.91 on 10 tasks x 16 of skewed differences,
# where MOVER holds 0.94 (bench/coverage_bench.py).
PAIRED_INTERVAL = "MOVER from the two arms' Wilson limits (Newcombe 1998 method 10; Zou & Donner 2008)"

# Fewer split tasks than this and a grouped method has little to learn from: GRPO on 6 mixed tasks of 84
# gave grad_norm 0 (whileai simulations/defaults.py TRAIN_MIN_MIXED_TASKS = 32 and the run its comment reports).
MIN_SPLIT_TASKS = 32

# Group sizes at which the predicted split share is reported (k = 4 from tau-bench arXiv:2406.12045,
# 8 = RL_ROLLOUTS_PER_PROMPT, 16 = whileai's DIFFICULTY_BAND_ROLLOUTS; DAPO arXiv:2503.14476).
PREDICT_SPLIT_AT = (4, 8, 16)

# Held-out sizing (whileai simulations/defaults.py: BASE_PASS_RATE, ROLLOUTS_PER_TASK, POWER, ALPHA, CEILING_PASS_RATE,
# MIN_HOLDOUT_TASKS; Miller 2024 section 5 for power and alpha; tau-bench for k = 4).
HOLDOUT_BASE = 0.6
HOLDOUT_K = 4
HOLDOUT_POWER = 0.8
HOLDOUT_ALPHA = 0.05
HOLDOUT_CEILING = 0.9
MIN_HOLDOUT_TASKS = 2

# Group size the router proposes for grouped RL when the rows' own k is smaller (whileai's RL_ROLLOUTS_PER_PROMPT:
# Dr. GRPO, arXiv:2503.20783, trains with 8 responses a question).
RL_ROLLOUTS_PER_PROMPT = 8

# How many items any list in a verdict shows before it says how many it left out, and how many characters a
# name -> value listing may take: Claude Code refuses tool answers over 25,000 tokens (MAX_MCP_OUTPUT_TOKENS),
# about 100,000 characters (Claude Code's MCP docs, "MCP output limits": docs.anthropic.com/en/docs/claude-code/mcp).
LIST_LIMIT = 20
LIST_CHARS = 40_000

# The prior behind the split prediction: Beta(a, b) over the tasks' pass rates by beta-binomial
# maximum likelihood (Skellam 1948, J. R. Stat. Soc. B 10:257; Griffiths 1973), each task then predicted
# under its posterior. a + b is searched over exp(-7)..exp(12): past that the fit is a binomial.
SPLIT_PRIOR = "beta-binomial maximum likelihood (with point masses where BIC keeps them), per-task posterior predictive"
PRIOR_LOG_CONC_RANGE = (-7.0, 12.0)
# Sets with truly impossible or always-solved tasks: a single Beta spreads mass toward those tasks and says they
# will split at larger k (20% impossible, 15% always solved, the rest Beta(2, 2): 0.09 too high at k = 16 and 0.15
# at k = 32 from 600 tasks x 8; bench/prediction_bench.py). The candidates add a point mass at 0, at 1, or both (zero-one-inflated beta-binomial:
# Ospina & Ferrari 2012, Comput. Stat. Data Anal. 56:1609, for the zero-one-inflated beta; the point masses
# never split), each fitted by maximum likelihood from the plain fit: BHHH ascent (Berndt, Hall, Hall & Hausman
# 1974, Ann. Econ. Soc. Meas. 3:653); EM (Dempster, Laird & Rubin 1977) reached the same fits at 2-10x the time.
# model -> (mass at 0, mass at 1).
PRIOR_MODELS = {"beta": (0, 0), "beta+0": (1, 0), "beta+1": (0, 1), "beta+0+1": (1, 1)}
# The rule among them: the least BIC, -2 log L + (free parameters) log(groups) (Schwarz 1978, Ann. Stat.
# 6:461): a point mass must buy log(groups) / 2 of log-likelihood (3.2 at 600 tasks) to be kept.
PRIOR_RULE = "least BIC (Schwarz 1978) among PRIOR_MODELS, masses only from PRIOR_MASS_MIN_ROLLOUTS"
# Point masses are tried only where the median group has 6+ rollouts. At k = 4 a mass and a U-shaped Beta fit
# 600 tasks' counts almost alike (expected likelihood-ratio statistic 1-3 for 20% impossible + 15% always solved;
# BIC asks 12.8): BIC found such masses in 7% of seeds, while its 1% false picks on pure Beta populations raised
# the RMS error at k = 16 (near-saturated: 0.032 against 0.026 with the plain Beta). At k = 6 it found them in
# 66 of 100 seeds (2 false picks in 400 pure-Beta seeds), at k = 8 in 196 of 200 (none in 160).
PRIOR_MASS_MIN_ROLLOUTS = 6
# The fit stops when no fit gains this much log-likelihood in a step, or after this many steps (the full fit;
# a resample starts at the full fit and takes PRIOR_RESAMPLE_ITERATIONS). 600 x 8 counts with masses: 10 steps.
PRIOR_FIT_TOLERANCE = 1e-8
PRIOR_FIT_ITERATIONS = 100
PRIOR_RESAMPLE_ITERATIONS = 20
# Beside a point mass the Beta may narrow to one rate (tasks at 0 and the rest near 0.5): its a + b may then
# pass PRIOR_LOG_CONC_RANGE's top (the grid's bound), up to exp(30), where the likelihood is flat anyway.
PRIOR_MASS_LOG_CONC_MAX = 30.0
PRIOR_MASS_STARTS = (0.5, 0.9)  # each mass's starts, as shares of the all-fail (all-pass) groups

# Rollouts per prompt the advice compares (k = 2 to 64) and the smallest gain in split share that makes "sample
# more per task" worth saying (3 points).
ROLLOUT_CANDIDATES = (2, 4, 8, 16, 32, 64)
MIN_SPLIT_GAIN = 0.03

# Informative groups a step should carry: the same 32 as MIN_SPLIT_TASKS (whileai's TRAIN_MIN_MIXED_TASKS).
TARGET_INFORMATIVE_GROUPS = 32
# Task resamples behind the split prediction's interval (each refits the prior; 200 keeps band under ~0.3 s).
PRIOR_DRAWS = 200
# The forecasts (the prior, the split share at another k, a run's signal chance) read at most this many rollouts of a
# group, and predict at most at this k: a group's counts past it are scaled down to it, a pass or a fail kept (so no
# group turns all-pass or all-fail), and a k past it is read at it. The forecasts' arrays grow with the widest group
# (a 100M-row summary at 1,000 rollouts a task took 5 s and 3.4 GB); 128 rollouts already place a task's rate to
# +-9 points (95%), finer than the forecasts' own intervals, and a split chance at k = 128 is its value at any larger
# k to within the chance of 128 draws all alike. The measured band (split_share) always reads every rollout.
FORECAST_MAX_ROLLOUTS = 128

# What "a group with signal" means: binary rewards split (a pass and a fail); otherwise a
# grouped method's advantage is the reward minus the group mean, so any spread within the group is signal
# and identical rewards (0.7 four times) are none. The split prediction is made on pass/fail at the threshold.
SIGNAL_DEFINITIONS = {"binary": "pass rate strictly between 0 and 1",
                      "spread": "rewards differ within the group (non-binary rewards)"}

# Task resamples behind the route's confidence (the pass@1 bootstrap's 2000 draws) and the confidence under
# which the summary says the route is not sure.
CONFIDENCE_DRAWS = 2000
CONFIDENCE_SAY_BELOW = 0.9
# What the confidence estimates: how often a fresh eval of the same size gives the same route. A single task
# resample spreads around the data as the data spread around the truth, so its share agreeing with the data's
# route runs high (0.05-0.08 over the bench's evals near a threshold: |data - threshold| overstates |truth -
# threshold|). A resample of a resample (the predictive spread of a second eval, variance doubled; in the
# spirit of Efron & Tibshirani 1993 ch. 14's double bootstrap, Hall 1992 for its calibration role) measures the
# two-eval agreement: bench/coverage_bench.py --confidence.
CONFIDENCE_FRESH = True

# -- Question 0: the grader, read from the replies (routing/before_training/grader.py) -----------------------------------------------
# A blank reply that passes stops the route at any count, as a passing cut-off reply does (the whileai skill's
# question 1: a reward that passes a reply with no answer in it decides every rate below, not the model).
# The same reply text graded both ways within a task: above this share of a task's repeated replies (each distinct
# reply given two or more times), fix_reward; at or under it, a warning with the count. A grader that flips a grade
# with chance q makes a repeated pair differ with chance 2q(1 - q), so 5% of pairs is q of about 2.5%: a grading
# error that moves a pass rate by up to 2.5 points, half of PROVE_EFFECT. A program grader is a function of the
# reply and flips none (truncated rows are left out: a reward that fails a cut-off reply grades on more than text).
GRADER_FLIP_SHARE = 0.05
# A grade that rises with the reply's length within tasks (a judge's verbosity bias: Zheng et al. 2023,
# arXiv:2306.05685; Dubois et al. 2024, arXiv:2404.04475): Spearman's rho of length and grade within each group
# (task x sampler x arm; blank, cut-off and ungraded rows left out), pooled as sum((n - 1) r) / sqrt(sum(n - 1)),
# normal under no link (a within-group rank correlation has permutation variance exactly 1 / (n - 1)). Said when
# that z passes the one-sided level below AND the pooled rho reaches a small effect (0.1, Cohen 1988 ch. 3), over
# at least LENGTH_MIN_GROUPS groups where both vary. The level is strict because the warning must stay quiet on
# clean rows: bench/grader_bench.py measures the false alarms (program graders, lengths varying by task, by
# sampler and at random) and the power against a length-biased judge.
LENGTH_ALPHA = 0.001
LENGTH_MIN_RHO = 0.1
LENGTH_MIN_GROUPS = 10
# Past this many rows the length test reads every s-th task (whole groups, s the smallest stride that fits): rho's
# standard error is then about 1 / sqrt(rows), 0.003, and the test's arrays stay small beside the rows read (1M
# rows with replies: the route's peak memory stays the read's).
LENGTH_MAX_ROWS = 100_000
# A judge's audit: how many rows to label by hand for a 95% interval of +/- JUDGE_AUDIT_HALF_WIDTH on Cohen's kappa
# between the judge and your labels, sized as holdout_size sizes (stats.tasks_needed at power 0.5: the half-width
# alone), with kappa's large-sample sd sqrt(p_o (1 - p_o)) / (1 - p_e) (Cohen 1960, Educ. Psychol. Meas. 20:37),
# at the kappa a judge must reach to be trusted, 0.8 (the bottom of "almost perfect", Landis & Koch 1977,
# Biometrics 33:159; McHugh 2012, Biochem. Med. 22:276), and p_e from the judge's own pass rate (held in
# JUDGE_AUDIT_PASS_RANGE: at 0 or 1 kappa has no interval).
JUDGE_AUDIT_KAPPA = 0.8
JUDGE_AUDIT_HALF_WIDTH = 0.1
JUDGE_AUDIT_PASS_RANGE = (0.05, 0.95)
# Several graders of the same rollouts: any row they grade apart is said with raw agreement and Cohen's kappa, and
# the tasks (a clean pair of graders of the same thing agrees on every row). A grade another grader gives is
# compared only where its values lie in [0, 1] (counts and timings that tools keep beside rewards are not grades),
# passing at min(pass_threshold, 1).
# Rows a Q0 warning or summary points at (the first few), beside LIST_LIMIT for the tasks.
GRADER_EXAMPLES = 5

# ---------------------------------------------------------------------------------------------------------
# After the GPU (`after`): did the trained checkpoint improve on the frozen held-out tasks?
#
# Each comparison is the paired difference over the tasks every arm scored, with PAIRED_INTERVAL (the MOVER
# interval: coverage 0.93-0.97 from 40 tasks, tests/routing/test_after_simulations.py), at CI_LEVEL.
# Arms scored on fewer than this share of the tasks any of them scored are not comparable: a verdict over a
# minority of the tasks is not a verdict over the eval (whileai simulations/score/stats.py
# UNPAIRED_MAJORITY_SHARE = 0.5, "the meaning of 'most'").
AFTER_MIN_SHARED = 0.5
# Several guarded behaviours (a safety suite, a general suite beside the target): Holm's step-down across the
# guards (Holm 1979, Scand. J. Stat. 6:65) keeps the chance of any false regression at 1 - CI_LEVEL; the primary
# pair is declared in advance and tested at CI_LEVEL alone. `proven` asks every comparison to clear at once (an
# intersection-union test, Berger 1982, Technometrics 24:295), so it needs no correction.
GUARD_CORRECTION = "holm"
# The random-reward control (Shao et al. 2025, arXiv:2506.10947: random rewards gave Qwen2.5-Math-7B +21.4 of
# the +29.1 points on MATH-500; Wu et al. 2025, arXiv:2507.10532: the same model completes 54.6% of MATH-500
# problems from 60% of their text): contamination when that arm gains over before, or gains at least as much as
# the real arm. The random-selection control (Xia et al. 2024, arXiv:2410.09335: most data selectors do not beat
# random selection): a selection problem when the real arm gains but does not beat a random selection of the
# same size that gained as much or gained significantly. A control whose gain is only noise (its interval on 0,
# its mean under the real arm's) leaves the verdict undecided, never a false alarm.
CONTROLS = "random_reward (arXiv:2506.10947), random_selection (arXiv:2410.09335)"
# A task flips when its majority outcome changes: pass rate under 1/2 before and over 1/2 after (fail -> pass), or
# the reverse; at one rollout a task these are McNemar's discordant pairs (McNemar 1947, Psychometrika 12:153).
FLIP_AT = 0.5
# More replies cut at the token cap beside a gain reads as possible length hacking (Singhal et al. 2023,
# arXiv:2310.03716: RLHF gains that length alone explains; DAPO arXiv:2503.14476 penalizes over-long samples):
# named when the paired interval on the per-task cut-off share lies above 0.
LENGTH_HACKING = "paired interval on per-task cut-off shares above 0, beside a positive gain"
# What decides an undecided comparison: the held-out tasks (at the rows' k) that detect the registered effect
# with HOLDOUT_POWER at HOLDOUT_ALPHA from the measured paired spread (holdout_size's formula, Miller 2024,
# arXiv:2411.00640 section 5), or the rollouts per task on the tasks in hand, from Miller's split of the spread
# into task and sampling parts (Var d = omega^2 + sigma^2 / k; Wang 2025, arXiv:2512.21326: sampling noise
# usually dominates, so more samples a question buy power).
AFTER_SIZING = "holdout_size from the measured paired sd; k from omega^2 + sigma^2 / k (Miller 2024 section 5)"
# The freeze: a seeded random draw (numpy's default_rng, PCG64) of the held-out tasks, written as JSON.
FREEZE_SEED = 0
FREEZE_FORMAT = "pick-a-method/frozen-holdout"
FREEZE_VERSION = 1
# A freeze holds out at most this share of the suite's graded tasks, so a training pool at least as large as the
# held-out set is left (a freeze that took 196 of 200 tasks left 4 to train on). Where the registered effect asks
# more, the freeze stops at the cap and says what the capped set detects; for the registered effect, freeze from
# a separate eval suite's rows instead (its tasks are never trained on), or register a larger effect. n_tasks
# overrides the cap (said in a warning).
FREEZE_MAX_SHARE = 0.5

# -- During training: `track` (routing/during_training/) -----------------------------------------------------------
# A window is this many dumped steps (files, or logged rows where only metrics were kept): fixed, so the windows of a
# run being written never move as it grows (--follow prints each as it lands). Ten of verl's per-step dumps at 64
# prompts x 8 hold 640 groups: a split share read to +-4 points (Wilson, n = 640).
TRACK_WINDOW = 10
# Under this many whole windows there is no trend to read: the verdict is too_early.
TRACK_MIN_WINDOWS = 3
# A change is read against the windows before it (pooled), never against a fixed first window: a run that learned
# for a while and then changed is judged against what came just before. At least this many windows before it.
TRACK_REFERENCE_WINDOWS = 2
# The false-alarm budget per alarm over a whole run: each window's one-sided test runs at this level divided by the
# run's windows (Bonferroni), so a run with no change sounds no alarm of a kind with chance <= 1% (five kinds:
# <= 5% for any). tests/during_training/test_calibration.py measures it by simulation.
TRACK_ALARM_ALPHA = 0.01
# The band emptied: the window's split share (groups with signal) under this, and read so (its 95% upper limit under
# it too). A fifth of the groups: DAPO's dynamic sampling (arXiv:2503.14476) then samples five batches for one; a
# band-pass filter at 0.2-0.8 was asked of verl (verl #2791). The route's MIN_SPLIT_TASKS (32 split groups) is
# said beside it, as a count per step.
TRACK_MIN_SPLIT_SHARE = 0.2
# Collapse: the mean share of distinct replies per group fell by this much of the windows before (0.9 -> 0.6), and
# the fall is beyond chance. Text sampled at temperature 1 repeats itself within a group rarely (each reply is a
# long string), so a third of a group's replies turning into copies is the policy's entropy gone, not noise.
TRACK_COLLAPSE_DROP = 0.3
# The cut-off share rose: by at least this factor of the windows before and by TRACK_CUT_OFF_MIN_RISE (points),
# beyond chance. A doubling (5% -> 10%, the simulations' design) passes both; a 5% -> 6% wobble passes neither.
TRACK_CUT_OFF_RISE = 1.5
TRACK_CUT_OFF_MIN_RISE = 0.02
# A cut-off reply that passes is question 1's fix_reward (routing/questions.py truncated_passes): any count, per
# window, where the trainer records why a reply ended (prime-rl's stop_condition / finish_reason).
# Blank replies that pass: question 0's rule (any count), per window.
# The same reply graded both ways within a group: question 0's GRADER_FLIP_SHARE of repeated replies, over at least
# this many repeated replies in the window (fewer: said, not judged).
TRACK_MIN_REPEATED = 20
# The grade follows length within groups: question 0's pooled within-group Spearman (LENGTH_MIN_RHO, over
# LENGTH_MIN_GROUPS groups) at the run's per-window level (TRACK_ALARM_ALPHA over the windows), and it must have
# come on (the windows before read under LENGTH_MIN_RHO): a link present from the first step is question 0's
# warning, said, not an alarm with a step.
# length_hacking also wants length and reward rising together: the slope of each over the windows since the link
# came on, above 0 at the 95% level.
# Plateau: the last TRACK_PLATEAU_WINDOWS windows against the ones before them; plateau when the 95% upper limit of
# the gain is under TRACK_PLATEAU_GAIN: whatever rise the noise may hide is smaller than the effect a held-out eval
# is sized to prove (PROVE_EFFECT), so more of the same steps will not show one.
TRACK_PLATEAU_WINDOWS = 3
TRACK_PLATEAU_GAIN = PROVE_EFFECT
# The last step file is held back while it may still be written: it ends without a newline, or it changed within
# this many seconds (verl writes on a background thread since PR #6324; prime-rl appends line by line).
TRACK_SETTLE_SECONDS = 2.0
# Reply lengths are counted in a histogram per step (log-spaced bins, each 5% wider than the one before), so a
# window's p90 is read to 5% from the steps' summaries alone.
TRACK_LENGTH_BIN_RATIO = 1.05
TRACK_LENGTH_BINS = 400
# Examples (rows) shown per alarm.
TRACK_EXAMPLES = 5
