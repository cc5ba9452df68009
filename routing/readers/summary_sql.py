"""The query that makes a per-task summary from rows, for DuckDB and for Spark SQL, and DuckDB running it here.

The query reads each field as the readers do (fields.py: the first present of a canonical name's candidates, a
caller's `fields` first; a cut-off from `truncated` or the finish reason in every API's words) and counts, per task,
model, arm, step and token budget, what counts.py names. Passes are counted at one pass_threshold. The engines group
in no order, so each group keeps where its first row was (file, then row); `first_seen` numbers the groups in that
order, which the reader restores (the route's numbers add up in the rows' order, so they agree to the last digit).

Where it reads differently from the rows' readers: a reward, flag or count that is not one (a word the readers
refuse) counts as not graded / not said here instead of stopping the read: a summary of 100M rows does not stop
at one bad row. duckdb is imported only by `run_duckdb`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import defaults as D
from .. import fields as F
from pick_a_method.common.errors import InputError
from ..counts import SCHEMA_VERSION
from .builder import BOOL_WORDS, GRADE_LETTERS

ENGINES = ("duckdb", "spark")
# What a column holds, as far as the query cares: text is parsed as the readers parse a CSV cell.
TEXT, BOOL, NUMBER, STRUCT = "text", "bool", "number", "struct"
# The columns eval tools write when no schema is given (summary-sql with neither --schema nor --columns).
DEFAULT_COLUMNS = {"task_id": TEXT, "reward": NUMBER, "truncated": BOOL, "finish_reason": TEXT, "model": TEXT,
                   "completion_tokens": NUMBER}
FLAG_TRUE = ("true", "True", "TRUE", "1", "yes")  # builder.TRUNCATED_WORDS, as text
FLAG_FALSE = ("false", "False", "FALSE", "0", "no")


@dataclass(frozen=True)
class Dialect:
    name: str
    text: str  # the string type's name in CAST
    quote: Callable[[str], str]
    pair: Callable[[str, str], str]  # a struct of (file, row): the order a group's first row is found in

    def path(self, dotted: str) -> str:
        parts = dotted.split(".")
        if any(p.lstrip("-").isdigit() for p in parts):
            raise InputError(f"{dotted!r} indexes a list; the summary query reads top-level columns and struct fields: "
                             f"flatten that field first", field="fields")
        return ".".join(self.quote(p) for p in parts)


DUCKDB = Dialect("duckdb", "VARCHAR", lambda s: '"' + s.replace('"', '""') + '"',
                 lambda f, r: f"struct_pack(f := {f}, r := {r})")
SPARK = Dialect("spark", "STRING", lambda s: "`" + s.replace("`", "``") + "`",
                lambda f, r: f"named_struct('f', {f}, 'r', {r})")


def dialect(engine: str) -> Dialect:
    if engine not in ENGINES:
        raise InputError(f"engine {engine!r}; use one of {', '.join(ENGINES)}", field="engine")
    return DUCKDB if engine == "duckdb" else SPARK


def literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _words(words: Sequence[str]) -> str:
    return ", ".join(literal(w) for w in sorted(words))


@dataclass(frozen=True)
class Spec:
    """What the query is made for: the columns the rows have (name -> TEXT/BOOL/NUMBER/STRUCT, a struct's fields
    as 'name.field'), the caller's `fields` mapping, the step field (track's key), the pass threshold."""

    columns: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_COLUMNS))
    fields: Mapping[str, str] = field(default_factory=dict)
    step: str | None = None
    pass_threshold: float = D.PASS_THRESHOLD

    def present(self, name: str) -> list[str]:
        """The candidates of canonical `name` the rows have, in the readers' order."""
        return [c for c in F.candidates(name, self.fields) if c in self.columns]

    def kind(self, path: str) -> str:
        return self.columns.get(path, NUMBER)


def _cast(d: Dialect, expr: str, kind: str) -> str:
    return f"CAST({expr} AS {d.text})" if kind != TEXT else expr


def _reward(d: Dialect, spec: Spec) -> str:
    """The first reward candidate only (the readers read no other), as a DOUBLE; NULL when missing."""
    names = F.candidates("reward", spec.fields)
    if names[0] not in spec.columns:
        return "CAST(NULL AS DOUBLE)"
    col, kind = d.path(names[0]), spec.kind(names[0])
    if kind != TEXT:
        return f"CAST({col} AS DOUBLE)"
    cases = [f"WHEN lower(trim({col})) = {literal(w)} THEN {v!r}" for w, v in BOOL_WORDS.items()]
    cases += [f"WHEN trim({col}) = {literal(w)} THEN {v!r}" for w, v in GRADE_LETTERS.items()]
    return f"CASE {' '.join(cases)} ELSE try_cast(trim({col}) AS DOUBLE) END"


def _flag(d: Dialect, spec: Spec) -> tuple[str, str | None]:
    """(the truncated flag as a BOOLEAN or NULL, the mapped text flag to read as a finish reason where not a word)."""
    names = spec.present("truncated")
    if not names:
        return "CAST(NULL AS BOOLEAN)", None
    if all(spec.kind(n) == BOOL for n in names):
        return _first([d.path(n) for n in names]), None
    text = _first([_cast(d, d.path(n), spec.kind(n)) for n in names])
    flag = f"CASE WHEN {text} IN ({_words(FLAG_TRUE)}) THEN TRUE WHEN {text} IN ({_words(FLAG_FALSE)}) THEN FALSE END"
    mapped = "truncated" in spec.fields and spec.fields["truncated"] not in F.NATIVE["truncated"]
    return flag, text if mapped else None


def _first(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"COALESCE({', '.join(parts)})"


def _coalesce(d: Dialect, spec: Spec, name: str, to: str) -> str:
    """The first present candidate of canonical `name` that is not null, as type `to`."""
    names = spec.present(name)
    if not names:
        return f"CAST(NULL AS {to})"
    return _first([f"CAST({d.path(n)} AS {to})" for n in names])


def _order(d: Dialect, source: str, files: Sequence[str] | None) -> tuple[str, str]:
    """(the FROM clause, the (file, row) pair each row is found at) for Parquet rows at `source`."""
    if d is SPARK:
        return f"parquet.{d.quote(source)}", d.pair("_metadata.file_path", "_metadata.row_index")
    where = literal(source) if files is None else "[" + ", ".join(literal(f) for f in files) + "]"
    # a list of files is read in its order (the readers' order); a glob in DuckDB's, by name
    at = "filename" if files is None else f"list_position([{', '.join(literal(f) for f in files)}], filename)"
    return (f"read_parquet({where}, filename = true, file_row_number = true)", d.pair(at, "file_row_number"))


def summary_sql(engine: str, spec: Spec | None = None, source: str = "rows/*.parquet",
                files: Sequence[str] | None = None) -> str:
    """The query, for `engine` ("duckdb" or "spark"), over the Parquet rows at `source` (a path or glob; `files`:
    an exact list, DuckDB only). One row per task, model, arm, step and max_tokens; the columns counts.py reads."""
    d, spec = dialect(engine), spec or Spec()
    if not spec.present("task_id"):
        names = F.candidates("task_id", spec.fields)
        raise InputError(f"the rows have no {' or '.join(names)} column{F.hint(names, spec.columns)}; map yours with "
                         f"fields={{\"task_id\": \"<your column>\"}}", field="fields")
    cut = F.cut_off_words(spec.fields)
    known = cut | F.ENDED_WORDS | F.UNSTATED_WORDS
    flag, flag_words = _flag(d, spec)
    reasons = [d.path(n) for n in F.FINISH_REASONS if spec.kind(n) == TEXT and n in spec.columns]
    reason = f"lower(trim({_first(reasons)}))" if reasons else f"CAST(NULL AS {d.text})"
    if flag_words is not None:  # a mapped flag that holds finish reasons is read as one where it is not a word
        reason = f"COALESCE(CASE WHEN {flag} IS NULL THEN lower(trim({flag_words})) END, {reason})"
    arm = F.candidates("arm", spec.fields)[0]
    budget = [p for p in ("max_tokens", "sampling.max_tokens") if p in spec.columns]
    source_sql, seen = _order(d, source, files)
    threshold = f"CAST({float(spec.pass_threshold)!r} AS DOUBLE)"
    step = f"CAST({d.path(spec.step)} AS BIGINT)" if spec.step else "CAST(NULL AS BIGINT)"
    count = lambda cond: f"CAST(SUM(CASE WHEN {cond} THEN 1 ELSE 0 END) AS BIGINT)"  # noqa: E731
    total = lambda expr, cond: f"SUM(CASE WHEN {cond} THEN {expr} ELSE 0.0 END)"  # noqa: E731
    return f"""-- pick-a-method per-task summary (version {SCHEMA_VERSION}) for {d.name}: one row per task, model, arm,
-- step and token budget, with the counts every verdict reads; passes at reward >= {spec.pass_threshold:g}.
WITH r AS (
  SELECT
    {_coalesce(d, spec, "task_id", d.text)} AS task_id,
    {_coalesce(d, spec, "model", d.text)} AS model,
    {f"CAST({d.path(arm)} AS {d.text})" if arm in spec.columns else f"CAST(NULL AS {d.text})"} AS arm,
    {step} AS step,
    {f"CAST({_first([d.path(p) for p in budget])} AS DOUBLE)" if budget else "CAST(NULL AS DOUBLE)"} AS max_tokens,
    {_reward(d, spec)} AS reward,
    {flag} AS flag,
    {reason} AS reason,
    {_coalesce(d, spec, "tokens", "DOUBLE")} AS tokens,
    {seen} AS seen
  FROM {source_sql}
), f AS (
  SELECT *,
    reward IS NOT NULL AND NOT isnan(reward) AS is_graded,
    COALESCE(flag, FALSE) OR COALESCE(reason IN ({_words(cut)}), FALSE) AS is_cut,
    flag IS NOT NULL OR COALESCE(reason IN ({_words(cut | F.ENDED_WORDS)}), FALSE) AS is_stated
  FROM r
), p AS (
  SELECT *, is_graded AND reward >= {threshold} AS is_pass FROM f
), g AS (
  SELECT task_id, model, arm, step, max_tokens,
    COUNT(*) AS rollouts,
    {count("is_graded")} AS graded,
    {count("is_pass")} AS passes,
    {count("is_cut")} AS truncated,
    {count("is_cut AND is_graded")} AS truncated_graded,
    {count("is_cut AND is_pass")} AS truncated_passes,
    {count("is_stated")} AS truncation_stated,
    {count("is_stated AND is_graded")} AS stated_graded,
    {count("is_stated AND is_pass")} AS stated_passes,
    {count("reward IS NOT NULL AND isnan(reward)")} AS nan_rewards,
    {count("is_graded AND reward <> 0.0 AND reward <> 1.0")} AS nonbinary,
    {count("tokens IS NOT NULL AND NOT isnan(tokens)")} AS tokens_n,
    {count(f"reason IS NOT NULL AND reason NOT IN ({_words(known)})")} AS reasons_unknown,
    {total("reward", "is_graded")} AS reward_sum,
    {total("reward * reward", "is_graded")} AS reward_sq,
    {total("tokens", "tokens IS NOT NULL AND NOT isnan(tokens)")} AS tokens_sum,
    MIN(CASE WHEN is_graded THEN reward END) AS reward_min,
    MAX(CASE WHEN is_graded THEN reward END) AS reward_max,
    MIN(seen) AS seen
  FROM p
  GROUP BY task_id, model, arm, step, max_tokens
)
SELECT task_id, model, arm, step, max_tokens, rollouts, graded, passes, truncated, truncated_graded, truncated_passes,
  truncation_stated, stated_graded, stated_passes, nan_rewards, nonbinary, tokens_n, reasons_unknown, reward_sum,
  reward_sq, tokens_sum, reward_min, reward_max,
  ROW_NUMBER() OVER (ORDER BY seen.f, seen.r) - 1 AS first_seen,
  {threshold} AS pass_threshold, {SCHEMA_VERSION} AS summary_version
FROM g
ORDER BY first_seen
"""


# -- the columns a Parquet data set has, as the query reads them ------------------------------------------------


def columns_of(schema: Any) -> dict[str, str]:
    """A pyarrow schema -> {name: kind}, a struct's fields as 'name.field' (one level: sampling.model)."""
    import pyarrow as pa

    def kind(t: Any) -> str:
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
            return TEXT
        if pa.types.is_boolean(t):
            return BOOL
        return STRUCT if pa.types.is_struct(t) else NUMBER

    out = {}
    for f in schema:
        out[f.name] = kind(f.type)
        if pa.types.is_struct(f.type):
            out.update({f"{f.name}.{c.name}": kind(c.type) for c in f.type})
    return out


def parquet_files(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """The Parquet files the paths name (files, folders, globs), in the order the readers read them."""
    from .base import ReadArgs
    from .registry import _gather

    args = ReadArgs(argument="rows")
    files = [str(p) for value in paths for p, _ in _gather(value, args)]
    bad = [f for f in files if not open(f, "rb").read(4) == b"PAR1"]
    if bad:
        raise InputError(f"{bad[0]} is not a Parquet file; summarize reads Parquet rows (convert JSONL with "
                         f"duckdb: COPY (FROM read_json('rows.jsonl')) TO 'rows.parquet')", field="rows")
    return files


def run_duckdb(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
               fields: Mapping[str, str] | None = None, step: str | None = None,
               pass_threshold: float = D.PASS_THRESHOLD, memory_limit: str | None = None,
               temp_directory: str | None = None,
               progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    """The summary of the Parquet rows at `paths`, written to `out` (Parquet) by DuckDB, out of core: it spills to
    `temp_directory` past `memory_limit`. `progress(percent)` is called about twice a second while it runs."""
    import duckdb
    import pyarrow.parquet as pq

    files = parquet_files(paths)
    if not files:
        raise InputError("no Parquet rows to summarize; name the files, folders or globs of the rows", field="rows")
    spec = Spec(columns=columns_of(pq.read_schema(files[0])), fields=F.check_fields(fields), step=step,
                pass_threshold=pass_threshold)
    query = summary_sql("duckdb", spec, files=files)
    con = duckdb.connect()
    if memory_limit:
        con.execute(f"SET memory_limit = {literal(memory_limit)}")
    if temp_directory:
        con.execute(f"SET temp_directory = {literal(temp_directory)}")
    con.execute("SET preserve_insertion_order = false")  # the query orders its answer itself
    done = threading.Event()
    error: list[BaseException] = []

    def work() -> None:
        try:
            con.execute(f"COPY ({query}) TO {literal(os.fspath(out))} (FORMAT parquet)")
        except BaseException as e:  # noqa: BLE001  (raised again on the caller's thread)
            error.append(e)
        finally:
            done.set()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    while not done.wait(0.5):
        if progress is not None:
            progress(max(0.0, float(con.query_progress())))
    thread.join()
    if error:
        e = error[0]
        if type(e).__module__.startswith("duckdb") or "duckdb" in type(e).__module__:
            raise InputError(f"DuckDB could not summarize the rows: {e}", field="rows") from None
        raise e
    if progress is not None:
        progress(100.0)
    groups = pq.read_metadata(out).num_rows
    return {"files": len(files), "groups": groups, "out": os.fspath(out)}
