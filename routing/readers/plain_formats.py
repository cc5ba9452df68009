"""The plain formats: rows already in the router's words (task_id, reward, truncated, model; the anchor SDK's rows
too), as JSONL (optionally .gz), a JSON array, CSV or Parquet. Told by the extension, else by the first bytes.
"""

from __future__ import annotations

from pathlib import Path

from .. import fields as F
from pick_a_method.common.errors import InputError
from ..rows import GradedRows
from .base import Format, Probe, ReadArgs, read_plain

EXTENSIONS = ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".csv", "csv"), (".parquet", "parquet"),
              (".pq", "parquet"))
NAMES = ("jsonl", "json", "csv", "parquet")


def kind(probe: Probe) -> str | None:
    """jsonl / json / csv / parquet, by the name, else by the first bytes."""
    name = probe.path.name.lower().removesuffix(".gz")
    for ext, fmt in EXTENSIONS:
        if name.endswith(ext):
            return fmt
    if probe.head[:4] == b"PAR1":
        return "parquet"
    head = probe.head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] == b"[":
        return "json"
    if head[:1] == b"{":
        return "jsonl"
    return None


def _format(name: str) -> Format:
    def read(p: Path, probe: Probe, args: ReadArgs) -> GradedRows:
        rows = read_plain(p, name, args)
        sdk = {"model_version", "sampling", "scenario_id"} & set(probe.first or {})
        rows.formats.append("anchor SDK rows" if sdk else f"rows ({name})")
        return rows

    return Format(name=f"rows ({name})", tool="your own rows, or the anchor SDK's (whileai 0.131)",
                  sniff=lambda probe: probe.zip_names is None and kind(probe) == name, read=read)


FORMATS = tuple(_format(n) for n in NAMES)


def named(fmt: str) -> Format:
    """The plain format a caller named."""
    if fmt not in NAMES:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(NAMES)}", field="format")
    return FORMATS[NAMES.index(fmt)]


def rows_like(fmt: Format, probe: Probe) -> bool:
    """In a folder, whether a file is rows: every eval tool's rows file is; a plain file only where its first row
    names a task (a JSON file only where it holds an array), so sidecars and configs are passed over."""
    if fmt not in FORMATS:
        return True
    k = kind(probe)
    if k == "json":
        return probe.head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"["
    if k == "jsonl":
        return probe.first is not None and any(t in probe.first for t in F.NATIVE["task_id"])
    return True
