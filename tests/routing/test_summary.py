"""A per-task summary routes, judges and draws as its rows do: DuckDB (the [scale] extra) makes the summary of rows
written to Parquet, and the verdicts on both are compared field by field, numbers to the last digit.

The rows here are small and cover what the summary must carry: several samplers (a teacher in the file), arms,
ungraded and NaN rewards, finish reasons in several APIs' words, token counts and budgets, and non-binary rewards
on a dyadic scale (sums exact in any order, so equality to the last digit is fair). test_summary_scale.py does 10M
rows and Spark.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pytest

from pick_a_method import routing
from pick_a_method.common.errors import InputError
from pick_a_method.routing.after_training.judge import after
from pick_a_method.routing.before_training.grader import SUMMARY_NO_REPLIES
from pick_a_method.routing.readers.summary_sql import Spec, run_duckdb, summary_sql
from pick_a_method.routing.table import table_of
from pick_a_method.server.cli import main
from summarykit import TABLE, strip_q0

README = Path(__file__).resolve().parents[2] / "README.md"
def write_rows(path: Path, n: int, *, reward: str, model: str = "'qwen'", extra: str = "",
               cut_fails: bool = False) -> Path:
    """n rows made by DuckDB's SQL (hash-scrambled, so the first-seen task order is not the name order); with
    `cut_fails` a reply cut off fails, so the route goes past question 1."""
    fail = ("SELECT * REPLACE (CASE WHEN truncated OR finish_reason IN ('length', 'MAX_TOKENS') THEN 0.0 * reward "
            "ELSE reward END AS reward) FROM " if cut_fails else "FROM ")
    duckdb.sql(f"""COPY ({fail}(SELECT 'task-' || (hash(i // 6) % {max(n // 40, 60)}) AS task_id,
        {reward} AS reward, {model} AS model,
        CASE WHEN hash(i * 5) % 9 = 0 THEN NULL ELSE hash(i * 7) % 23 = 0 END AS truncated,
        CASE hash(i * 3) % 6 WHEN 0 THEN 'length' WHEN 1 THEN 'MAX_TOKENS' WHEN 2 THEN 'weird' ELSE 'stop' END
          AS finish_reason,
        CASE WHEN hash(i * 13) % 10 = 0 THEN NULL ELSE (hash(i * 11) % 900)::BIGINT END AS completion_tokens,
        CASE WHEN hash(i // 6) % 2 = 0 THEN 2048 ELSE 4096 END AS max_tokens {extra}
        FROM range({n}) t(i))) TO '{path}' (FORMAT parquet)""")
    return path


def summarize(rows: Path, tmp: Path, **kw) -> Path:
    out = tmp / f"{rows.stem}.summary.parquet"
    run_duckdb([rows], out, **kw)
    return out


def same_table(a: routing.GradedRows, b: routing.GradedRows, pass_threshold: float = 1.0) -> None:
    ta, tb = table_of(a, pass_threshold), table_of(b, pass_threshold)
    assert a.task_names == b.task_names and ta.model_names == tb.model_names and a.arm_names == b.arm_names
    for k in TABLE:
        x, y = getattr(ta, k), getattr(tb, k)
        assert x.dtype == y.dtype and np.array_equal(x, y), k


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("summary")
    reward = ("CASE WHEN hash(i * 17) % 41 = 0 THEN NULL WHEN hash(i * 17) % 43 = 0 THEN 'NaN'::DOUBLE "
              "WHEN hash(i * 19) % 100 < 15 + 70 * (hash(i // 6) % 7 = 0)::INT THEN 1.0 ELSE 0.0 END")
    model = "CASE WHEN hash(i * 29) % 5 = 0 THEN 'teacher-70b' ELSE 'qwen' END"
    rows_path = write_rows(tmp / "rows.parquet", 60_000, reward=reward, model=model, cut_fails=True)
    return routing.read_rows(rows_path), routing.read_rows(summarize(rows_path, tmp)), tmp


def test_table_from_a_summary_is_the_table_from_its_rows(binary):
    rows, summary, _ = binary
    assert summary.formats == ["per-task summary"] and summary.n_rollouts == len(rows)
    assert summary.n_nan_rewards == rows.n_nan_rewards and summary.n_truncation_stated == rows.n_truncation_stated
    same_table(rows, summary)
    same_table(rows, summary, pass_threshold=0.5)  # every reward 0 or 1: passes the same at any threshold in (0, 1]


def test_route_on_a_summary_is_the_route_on_its_rows(binary):
    rows, summary, _ = binary
    for model in ("qwen", None):
        a, b = routing.route(rows, model=model), routing.route(summary, model=model)
        assert a.route == b.route != "fix_reward" and a.n_rows == b.n_rows and a.n_tasks == b.n_tasks
        assert strip_q0(a.model_dump()) == strip_q0(b.model_dump())


def test_question_0_on_a_summary_says_it_cannot_check(binary):
    _, summary, _ = binary
    q0 = next(t for t in routing.route(summary, model="qwen").trace if t.name == "grader")
    assert q0.answer == "no_replies" and not q0.decided and q0.evidence["summary"] is True
    assert "not checked" in q0.evidence["note"]
    assert SUMMARY_NO_REPLIES in routing.route(summary, model="qwen").warnings


def test_questions_1_and_pass_at_agree(binary):
    rows, summary, _ = binary
    a, b = routing.truncated_passes(rows), routing.truncated_passes(summary)
    for k in ("verdict", "count", "truncated_rows", "share", "n_rows", "n_truncation_stated"):
        assert getattr(a, k) == getattr(b, k), k
    assert sorted(a.tasks) == sorted(b.tasks) or len(a.tasks) == len(b.tasks)
    assert b.examples == [] and b.examples_omitted == b.count
    pa, pb = routing.pass_at(rows, k=4), routing.pass_at(summary, k=4)
    assert strip_q0(pa.model_dump()) == strip_q0(pb.model_dump())


def test_nonbinary_rewards_arms_and_after(tmp_path):
    """A dyadic non-binary reward (sums exact in any order), two arms in the file, and `after` pairing two summaries
    per task as it pairs their rows."""
    arms = {}
    for name, lift in (("before", 0), ("after", 12)):
        reward = f"((hash(i * 19) % 100 + {lift}) % 5) / 4.0"
        path = write_rows(tmp_path / f"{name}.parquet", 24_000, reward=reward,
                          extra=", CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS arm")
        arms[name] = (routing.read_rows(path), routing.read_rows(summarize(path, tmp_path, pass_threshold=0.75)))
    for rows, summary in arms.values():
        same_table(rows, summary, 0.75)
        a, b = (routing.truncated_passes(r, pass_threshold=0.75) for r in (rows, summary))
        assert a.count == b.count > 0 and a.verdict == b.verdict == "fix_reward" and a.share == b.share
        ra, rb = routing.route(rows, pass_threshold=0.75), routing.route(summary, pass_threshold=0.75)
        assert strip_q0(ra.model_dump()) == strip_q0(rb.model_dump())
        with pytest.raises(InputError, match="--pass-threshold 0.5"):
            table_of(summary, 0.5)
    on_rows = after(arms["before"][0], arms["after"][0], pass_threshold=0.75)
    on_summary = after(arms["before"][1], arms["after"][1], pass_threshold=0.75)
    assert on_rows.verdict == on_summary.verdict
    assert strip_q0(on_rows.model_dump()) == strip_q0(on_summary.model_dump())


def test_a_summary_and_rows_in_one_read_are_refused(binary):
    _, _, tmp = binary
    with pytest.raises(InputError, match="summarize the rows too"):
        routing.read_rows([tmp / "rows.summary.parquet", tmp / "rows.parquet"])


def test_a_bad_summary_names_its_row_and_column(tmp_path, binary):
    _, _, tmp = binary
    bad = tmp_path / "bad.parquet"
    duckdb.sql(f"COPY (SELECT * REPLACE (CASE WHEN first_seen = 3 THEN graded + rollouts ELSE graded END AS graded) "
               f"FROM '{tmp / 'rows.summary.parquet'}') TO '{bad}' (FORMAT parquet)")
    with pytest.raises(InputError, match=r"row \d+ of .*more graded rows than rollouts") as e:
        routing.read_rows(bad)
    assert e.value.field == "graded"


def test_mapped_fields_and_a_step_key(tmp_path):
    """fields resolve in the query as in the readers (a grade under another name, a nested sampler); --step is kept
    as a key column for track."""
    path = tmp_path / "mapped.parquet"
    duckdb.sql(f"""COPY (SELECT 'q' || (i % 50) AS prompt, (hash(i) % 3 = 0) AS correct,
        {{'model': 'qwen', 'temperature': 1.0}} AS sampling, i % 3 AS global_step
        FROM range(3000) t(i)) TO '{path}' (FORMAT parquet)""")
    fields = {"reward": "correct", "model": "sampling.model"}
    rows = routing.read_rows(path, fields=fields)
    out = tmp_path / "mapped.summary.parquet"
    run_duckdb([path], out, fields=fields, step="global_step")
    summary = routing.read_rows(out)
    same_table(rows, summary)
    assert sorted(set(summary.counts.step.tolist())) == [0, 1, 2] and summary.model_names == ["qwen"]


def test_summary_sql_prints_the_query_the_readme_shows(capsys):
    for engine in ("duckdb", "spark"):
        assert main(["summary-sql", "--engine", engine]) == 0
        printed = capsys.readouterr().out
        assert printed == summary_sql(engine, Spec())
        shown = re.search(rf"```sql\n(-- pick-a-method per-task summary \(version \d+\) for {engine}:.*?)```",
                          README.read_text(), re.S)
        assert shown is not None, f"README's Past one machine no longer shows the {engine} query"
        assert shown.group(1) == printed, f"README's {engine} query differs from what summary-sql prints"


def test_summarize_command(tmp_path, binary, capsys):
    _, _, tmp = binary
    out = tmp_path / "s.parquet"
    assert main(["summarize", str(tmp / "rows.parquet"), "--out", str(out)]) == 0
    assert "route it as rows" in capsys.readouterr().out
    assert main(["summarize", str(tmp / "rows.parquet"), "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["summary-sql", "--engine", "spark", "--columns", "prompt,score:number",
                 "--fields", '{"reward": "score"}']) == 0
    assert "CAST(`prompt` AS STRING) AS task_id" in capsys.readouterr().out
