"""The summary past one machine, with the real engines: DuckDB summarizes 10M rows of Parquet (made by its own SQL)
and the route on the summary is the route on the rows; Spark (pyspark in local mode, Java from .ci/java.sh) runs
the query `summary-sql --engine spark` prints on the same file and gives the same summary, row for row.

Both engines are in the [test] extra; nothing here skips (CI fails on a skip).
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from pick_a_method import routing
from pick_a_method.routing.counts import COUNTS, RANGE, SUMS
from pick_a_method.routing.readers.summary_sql import Spec, columns_of, run_duckdb, summary_sql
from pick_a_method.routing.table import table_of

from summarykit import TABLE, strip_q0

N_ROWS = 10_000_000
N_TASKS = 50_000  # 200 rollouts each, over two samplers


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, Path]:
    """10M rows: tasks scrambled (first seen is not name order), a teacher beside the trained model, ungraded and
    NaN rewards, cut-offs by flag and by finish reason (failing), token counts."""
    tmp = tmp_path_factory.mktemp("scale")
    rows = tmp / "rows.parquet"
    duckdb.sql(f"""COPY (SELECT * REPLACE (CASE WHEN truncated OR finish_reason = 'length' THEN 0.0 * reward
          ELSE reward END AS reward) FROM (SELECT
        'task-' || ((i // 200) * 7919 % {N_TASKS}) AS task_id,
        CASE WHEN i % 997 = 0 THEN NULL WHEN i % 1999 = 0 THEN 'NaN'::DOUBLE
             WHEN hash(i) % 100 < 10 + (i // 200) % 80 THEN 1.0 ELSE 0.0 END AS reward,
        CASE WHEN (i // 100) % 2 = 0 THEN 'Qwen/Qwen3-8B' ELSE 'teacher-70b' END AS model,
        hash(i * 3) % 61 = 0 AS truncated,
        CASE WHEN hash(i * 5) % 53 = 0 THEN 'length' ELSE 'stop' END AS finish_reason,
        (hash(i * 7) % 2000)::INTEGER AS completion_tokens
        FROM range({N_ROWS}) t(i))) TO '{rows}' (FORMAT parquet)""")
    summary = tmp / "rows.summary.parquet"
    run_duckdb([rows], summary, memory_limit="2GB", temp_directory=str(tmp / "spill"))
    return rows, summary


def test_duckdb_summary_of_10m_rows_routes_as_the_rows(big):
    rows_path, summary_path = big
    summary = routing.read_rows(summary_path)
    assert summary.n_rollouts == N_ROWS and pq.read_metadata(summary_path).num_rows == 2 * N_TASKS
    on_summary = routing.route(summary, model="Qwen/Qwen3-8B")
    rows = routing.read_rows(rows_path)
    ta, tb = table_of(rows, 1.0), table_of(summary, 1.0)
    for k in TABLE:
        assert np.array_equal(getattr(ta, k), getattr(tb, k)), k
    on_rows = routing.route(rows, model="Qwen/Qwen3-8B")
    del rows, ta
    assert on_rows.route == on_summary.route and on_rows.n_rows == on_summary.n_rows == N_ROWS
    assert strip_q0(on_rows.model_dump()) == strip_q0(on_summary.model_dump())


def test_spark_runs_the_printed_query_and_gives_the_same_summary(big, tmp_path):
    from pyspark.sql import SparkSession

    rows_path, summary_path = big
    query = summary_sql("spark", Spec(columns=columns_of(pq.read_schema(rows_path))), source=str(rows_path))
    assert query == summary_sql("spark", Spec(), source=str(rows_path))  # the query README shows reads this schema
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("pick-a-method-summary-test")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.warehouse.dir", str(tmp_path / "warehouse"))  # never in the repository's root
             .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={tmp_path}")
             .config("spark.driver.memory", "2g").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    try:
        spark.sparkContext.setLogLevel("ERROR")
        out = tmp_path / "spark-summary"
        spark.sql(query).write.parquet(str(out))  # a folder of part files, as a cluster writes it
    finally:
        spark.stop()
    mine, theirs = pq.read_table(summary_path), pq.read_table(out)
    assert mine.num_rows == theirs.num_rows
    order = lambda t: t.take(np.argsort(t.column("first_seen").to_numpy()))  # noqa: E731
    mine, theirs = order(mine), order(theirs)
    for name in ("task_id", "model", "arm", "step", "max_tokens", "first_seen", *COUNTS, *SUMS, *RANGE):
        a = mine.column(name).to_pylist()
        b = theirs.column(name).to_pylist()
        assert a == b or np.array_equal(np.array(a, dtype=float), np.array(b, dtype=float), equal_nan=True), name
    # and the folder Spark wrote reads as the same summary
    spark_rows, duck_rows = routing.read_rows(out), routing.read_rows(summary_path)
    for k in TABLE:
        assert np.array_equal(getattr(table_of(spark_rows, 1.0), k), getattr(table_of(duck_rows, 1.0), k)), k
