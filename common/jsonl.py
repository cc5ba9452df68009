"""JSON objects one a line, or a JSON array of them: the inline rows a tool is sent and the trajectory files
preview_update reads take the same text, parsed here once. (Graded-row files go through routing/readers, which also
builds columns as it reads.)"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import orjson


class JSONLineError(ValueError):
    """A line (or an array element) that is not what it must be; `line` is 1-based, `reason` says why."""

    def __init__(self, line: int, reason: str, text: str = "") -> None:
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason, self.text = line, reason, text


def loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # what orjson refuses but JSON allows (an integer past 64 bits); else raises


def is_array(head: str | bytes) -> bool:
    """Whether text that starts with `head` is a JSON array rather than JSON lines."""
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n" if isinstance(head, bytes) else "\ufeff \t\r\n")
    return head[:1] in (b"[", "[")


def objects(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each line that is not blank; JSONLineError for one that is not UTF-8, not JSON, or
    not an object."""
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            value = loads(raw.decode("utf-8-sig" if n == 1 else "utf-8") if isinstance(raw, bytes) else raw)
        except UnicodeDecodeError as e:
            raise JSONLineError(n, f"not UTF-8 ({e.reason}); save the file as UTF-8") from None
        except (ValueError, RecursionError) as e:
            raise JSONLineError(n, f"not valid JSON ({getattr(e, 'msg', e)})", str(raw)[:80]) from None
        if not isinstance(value, dict):
            raise JSONLineError(n, f"expected a JSON object, got {type(value).__name__}", str(raw)[:80])
        yield n, value


def array_objects(text: str | bytes) -> list[tuple[int, dict[str, Any]]]:
    """(element number, object) for each element of a JSON array; JSONLineError for text that is not one, or an
    element that is not an object."""
    try:
        doc = loads(text.decode("utf-8-sig") if isinstance(text, bytes) else text)
    except UnicodeDecodeError as e:
        raise JSONLineError(1, f"not UTF-8 ({e.reason} at byte {e.start}); save it as UTF-8") from None
    except (ValueError, RecursionError) as e:
        raise JSONLineError(1, f"starts like a JSON array but is not valid JSON ({getattr(e, 'msg', e)})") from None
    if not isinstance(doc, list):
        raise JSONLineError(1, f"expected a JSON array, got {type(doc).__name__}")
    for i, value in enumerate(doc, start=1):
        if not isinstance(value, dict):
            raise JSONLineError(i, f"element {i - 1} of the array is not a JSON object")
    return list(enumerate(doc, start=1))
