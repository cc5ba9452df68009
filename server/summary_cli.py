"""`pick-a-method summary-sql` and `pick-a-method summarize`: the per-task summary past one machine.

summary-sql prints the query (routing/readers/summary_sql.py) for DuckDB or Spark SQL, with the field names resolved
as the readers resolve them (from a sample file's schema, a list of columns, or the eval tools' own names);
summarize runs it with DuckDB here, out of core, and writes the summary as Parquet. Every rows argument then reads
the summary as it reads rows (`pick-a-method route summary.parquet --model M`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from . import extras

COMMANDS = ("summary-sql", "summarize")
SCALE_SPECS = ("duckdb>=1.1,<3",)  # of pyproject.toml's [scale] extra, what summarize needs (pyspark is for Spark)
KINDS = ("text", "bool", "number")


def _fields(text: str | None) -> dict[str, str]:
    from pick_a_method.routing import fields as F

    if not text:
        return {}
    try:
        return F.check_fields(json.loads(text))
    except json.JSONDecodeError as e:
        raise ValueError(f"--fields is not JSON ({e.msg}); give an object, e.g. --fields '{{\"reward\": \"correct\"}}'")


def _common(p: argparse.ArgumentParser) -> None:
    from pick_a_method.routing import defaults as D

    p.add_argument("--fields", metavar="JSON", help="your field names, as every rows argument takes them: "
                   "'{\"reward\": \"correct\", \"model\": \"sampling.model\"}'")
    p.add_argument("--step", metavar="FIELD", help="the field that holds the training step, kept as a key column "
                   "(track reads it); default: none")
    p.add_argument("--pass-threshold", type=float, default=D.PASS_THRESHOLD, metavar="X",
                   help=f"a row passes when reward >= X; the summary counts passes at it (default: "
                        f"{D.PASS_THRESHOLD:g})")


def add_commands(sub: Any) -> None:
    """The two subcommands, beside the tools' own (cli_flags.parser)."""
    q = sub.add_parser("summary-sql", help="print the query that makes a per-task summary, for DuckDB or Spark SQL",
                       description="Print the per-task summary query for your engine: run it where the rows are "
                                   "(Parquet on object storage, a cluster) and pass its answer as the rows of route, "
                                   "after or any rows argument.")
    q.add_argument("--engine", choices=("duckdb", "spark"), required=True, help="the SQL dialect: duckdb or spark")
    q.add_argument("--source", default="rows/*.parquet", metavar="PATH",
                   help="the Parquet rows the query reads: a path or glob, s3:// too (default: rows/*.parquet)")
    q.add_argument("--schema", metavar="FILE.parquet", help="a Parquet file of the rows: the query reads the fields "
                   "its columns have, as the readers would")
    q.add_argument("--columns", metavar="NAME[:KIND],...", help="the rows' columns, where no file is at hand; KIND is "
                   "text, bool or number (default: the eval tools' task_id, reward, truncated, finish_reason, model, "
                   "completion_tokens)")
    _common(q)
    s = sub.add_parser("summarize", help="make the per-task summary of Parquet rows with DuckDB, out of core",
                       description="Summarize Parquet rows (files, folders, globs) with DuckDB on this machine, "
                                   "spilling to disk past --memory-limit, into one Parquet file every rows argument "
                                   "reads.")
    s.add_argument("rows", nargs="+", metavar="ROWS", help="Parquet rows: files, folders or globs")
    s.add_argument("--out", required=True, metavar="FILE.parquet", help="where the summary is written")
    s.add_argument("--memory-limit", metavar="SIZE", help="DuckDB's memory_limit, e.g. 4GB (default: DuckDB's, 80%% "
                   "of the machine's memory)")
    s.add_argument("--temp-dir", metavar="DIR", help="where DuckDB spills past the memory limit (default: DuckDB's)")
    s.add_argument("--overwrite", action="store_true", help="replace --out where it is there")
    _common(s)


def _columns(args: argparse.Namespace) -> dict[str, str] | None:
    from pick_a_method.routing.readers import summary_sql as Q

    if args.schema and args.columns:
        raise ValueError("give --schema or --columns, not both")
    if args.schema:
        import pyarrow.parquet as pq

        try:
            return Q.columns_of(pq.read_schema(args.schema))
        except OSError as e:
            raise ValueError(f"--schema {args.schema}: {e}; name a Parquet file of the rows") from None
    if not args.columns:
        return None
    out = {}
    for part in filter(None, (c.strip() for c in args.columns.split(","))):
        name, _, kind = part.partition(":")
        if kind and kind not in KINDS:
            raise ValueError(f"--columns: {part!r} has kind {kind!r}; use one of {', '.join(KINDS)}")
        out[name] = kind or Q.DEFAULT_COLUMNS.get(name, Q.TEXT if name in ("task_id", "model", "arm") else Q.NUMBER)
    return out


def _bar(percent: float, started: float) -> None:
    """One line on stderr, redrawn: the share DuckDB reports done and the time so far."""
    width = 30
    done = int(width * min(percent, 100.0) / 100)
    sys.stderr.write(f"\rsummarize: [{'#' * done}{'.' * (width - done)}] {percent:5.1f}%  "
                     f"{time.monotonic() - started:6.1f} s")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """The subcommand; 2 with the reason on stderr when its input is wrong."""
    from pick_a_method.routing.readers import summary_sql as Q

    try:
        fields = _fields(args.fields)
        if args.command == "summary-sql":
            columns = _columns(args)
            spec = Q.Spec(fields=fields, step=args.step, pass_threshold=args.pass_threshold,
                          **({"columns": columns} if columns is not None else {}))
            sys.stdout.write(Q.summary_sql(args.engine, spec, source=args.source))
            return 0
        import importlib.util
        from pathlib import Path

        if importlib.util.find_spec("duckdb") is None:
            raise extras.MissingExtra(f"summarize needs duckdb, which the light install leaves out; install the "
                                      f"[scale] extra's: {extras.pip_install(*SCALE_SPECS)}")
        if Path(args.out).exists() and not args.overwrite:
            raise ValueError(f"--out {args.out} is there already; pass --overwrite to replace it")
        started = time.monotonic()
        bar = (lambda pct: _bar(pct, started)) if sys.stderr.isatty() else None
        info = Q.run_duckdb(args.rows, args.out, fields=fields, step=args.step, pass_threshold=args.pass_threshold,
                            memory_limit=args.memory_limit, temp_directory=args.temp_dir, progress=bar)
        if bar is not None:
            sys.stderr.write("\n")
        print(f"summarized {info['files']} Parquet file{'s' if info['files'] != 1 else ''} into {info['groups']:,} "
              f"rows (one per task, model, arm, step and token budget) in {time.monotonic() - started:.1f} s: "
              f"{info['out']}\nroute it as rows: pick-a-method route {info['out']} --model MODEL")
        return 0
    except (ValueError, OSError) as e:
        print(f"pick-a-method {args.command}: {e}", file=sys.stderr)
        return 2
