"""The reply a row carries, kept as what question 0 reads (routing/before_training/grader.py): a 64-bit hash of its text and its
length, never the text itself, so a file of long replies costs 12 bytes a row once read.

What the reply is: a string as it stands; a list of chat messages (verifiers' `completion`, the nodes of a
verifiers 0.4 trace, each item a message or `{"message": ...}`) its last assistant message, with no assistant
message an empty reply (an empty list too); a list of strings its last. A trajectory that used tools (a `tool`
message, or an assistant message with tool calls) is not cut down to its last message: its grade may rest on what
the tools did, so its reply is marked TOOL_TRAJECTORY and not read. Anything else (a number, an object, a list of
objects that are not messages) is no reply.

The careful reader applies the rule row by row (`python_replies`), the columnar one column by column
(`arrow_replies`), and both hash the same UTF-8 bytes with Python's own hash of bytes (salted per process: replies
are compared within one read, and the hash is never stored or shown), so they agree row for row
(tests/routing/test_columnar.py). The columnar side slices each block's bytes straight from the arrow buffer,
never building the strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pick_a_method.common.errors import Unsupported

NO_REPLY = -1  # reply_len of a row that carries no reply
TOOL_TRAJECTORY = -2  # reply_len of a tool-using trajectory: its last message is not all that was graded
# What a blank reply may hold: Python's str.isspace() characters, listed so that pyarrow's utf8_trim strips the
# same ones (reply_len counts the characters left; 0 is a blank reply).
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
              "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_TOOL = object()  # python_reply's marker for a tool-using trajectory


def python_reply(value: Any) -> Any:
    """The reply text of one row's value, None for no reply, or _TOOL."""
    if type(value) is str:
        return value
    if type(value) is not list:
        return None
    if all(type(v) is str for v in value):
        return value[-1] if value else ""
    text, messages = "", 0
    for item in value:
        if type(item) is not dict:
            continue
        message = item if "role" in item else item.get("message")
        if type(message) is not dict:
            continue
        messages += 1
        role = message.get("role")
        if role == "tool" or (role == "assistant" and message.get("tool_calls")):
            return _TOOL
        if role == "assistant":
            text = _content(message.get("content"))
    return text if messages else None


def _content(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts (OpenAI's content parts)."""
    if type(content) is str:
        return content
    if type(content) is list:
        return "".join(p["text"] for p in content if type(p) is dict and type(p.get("text")) is str)
    return ""


def measure(texts: Iterable[Any], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(hash, length) per text: the hash of the whole text, the length of it stripped of WHITESPACE (0 is blank);
    NO_REPLY / TOOL_TRAJECTORY for None / _TOOL. The one place a hash is taken, for both readers."""
    hashes = np.zeros(n, dtype=np.int64)
    lengths = np.empty(n, dtype=np.int32)
    for i, t in enumerate(texts):
        if type(t) is str:
            hashes[i], lengths[i] = hash(t.encode("utf-8", "surrogatepass")), len(t.strip(WHITESPACE))
        else:
            lengths[i] = TOOL_TRAJECTORY if t is _TOOL else NO_REPLY
    return hashes, lengths


def python_replies(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The careful reader's (hash, length) columns from each row's value."""
    if values.count(None) == len(values):  # no row carries a reply (most rows handed over in memory): no walk
        return np.zeros(len(values), dtype=np.int64), np.full(len(values), NO_REPLY, dtype=np.int32)
    return measure(map(python_reply, values), len(values))


# -- the columnar reader's side (pyarrow, imported by the caller) ------------------------------------------------

def arrow_replies(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """The columnar reader's (hash, length) columns from a column of replies (strings, lists of strings, lists of
    messages); a column of another shape raises Unsupported, and the careful reader takes the file."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    hashes, lengths = [], []
    for chunk in chunks:  # a parsed block at a time: its texts are in Python only while it is hashed
        text, tool = _texts(chunk, pa, pc)
        length = pc.fill_null(pc.utf8_length(pc.utf8_trim(text, WHITESPACE)), NO_REPLY).to_numpy(
            zero_copy_only=False).astype(np.int32)
        length[tool] = TOOL_TRAJECTORY
        h = _hashes(text)
        h[length < 0] = 0  # no reply read: as measure() leaves it
        hashes.append(h)
        lengths.append(length)
        del text
    if not chunks:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    return np.concatenate(hashes), np.concatenate(lengths)


def _hashes(text: Any) -> np.ndarray:
    """Python's hash of each string's UTF-8 bytes, sliced from the array's data buffer (nulls hash as b"")."""
    n = len(text)
    _, offsets_buffer, data_buffer = text.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32, count=n + 1, offset=4 * text.offset)
    low, high = int(offsets[0]), int(offsets[-1])
    data = data_buffer.slice(low, high - low).to_pybytes() if data_buffer is not None and high > low else b""
    starts, ends = (offsets[:-1] - low).tolist(), (offsets[1:] - low).tolist()
    return np.fromiter(map(hash, map(data.__getitem__, map(slice, starts, ends))), dtype=np.int64, count=n)


def _texts(chunk: Any, pa: Any, pc: Any) -> tuple[Any, np.ndarray]:
    """One chunk's reply texts (null: no reply) and its tool-trajectory mask."""
    t = chunk.type
    none = np.zeros(len(chunk), dtype=bool)
    if pa.types.is_null(t):
        return pa.nulls(len(chunk), pa.string()), none
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return chunk.cast(pa.string()), none
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        raise Unsupported(f"a {t} reply")
    valid = chunk.is_valid().to_numpy(zero_copy_only=False)
    flat = chunk.flatten()  # the items of the lists in view (a sliced chunk's own items only)
    parents = pc.list_parent_indices(chunk).to_numpy(zero_copy_only=False).astype(np.int64)
    vt = t.value_type
    if pa.types.is_null(vt):
        if len(flat):
            raise Unsupported("lists of nulls as a reply")
        return _pick(flat.cast(pa.string()), parents, np.zeros(0, dtype=bool), valid, pa, pc), none
    if pa.types.is_string(vt) or pa.types.is_large_string(vt):
        if flat.null_count:
            raise Unsupported("a list of strings with nulls as a reply")
        return _pick(flat.cast(pa.string()), parents, np.ones(len(flat), dtype=bool), valid, pa, pc), none
    if not pa.types.is_struct(vt):
        raise Unsupported(f"a list of {vt} as a reply")
    names = {vt.field(i).name for i in range(vt.num_fields)}
    if "role" not in names:
        if "message" not in names or not pa.types.is_struct(vt.field("message").type):
            raise Unsupported("a list of objects that are not messages as a reply")
        flat = pc.struct_field(flat, "message")
        vt = flat.type
        names = {vt.field(i).name for i in range(vt.num_fields)}
        if "role" not in names:
            raise Unsupported("messages with no role")
    elif "message" in names:
        raise Unsupported("items holding both a role and a message")  # the careful reader reads each item's own
    # a list whose items are all null is no reply; an empty list is an empty one (as python_reply reads them)
    messages = np.bincount(parents[flat.is_valid().to_numpy(zero_copy_only=False)], minlength=len(chunk))
    lists = np.bincount(parents, minlength=len(chunk))
    valid = valid & ((messages > 0) | (lists == 0))
    role = pc.struct_field(flat, "role")
    if not (pa.types.is_string(role.type) or pa.types.is_null(role.type)):
        raise Unsupported("a role that is not text")
    content = pc.struct_field(flat, "content") if "content" in names else pa.nulls(len(flat), pa.string())
    if not (pa.types.is_string(content.type) or pa.types.is_large_string(content.type)
            or pa.types.is_null(content.type)):
        raise Unsupported("message content that is not text")  # content parts: the careful reader joins them
    assistant = pc.fill_null(pc.equal(role.cast(pa.string()), "assistant"), False).to_numpy(zero_copy_only=False)
    tool_item = pc.fill_null(pc.equal(role.cast(pa.string()), "tool"), False).to_numpy(zero_copy_only=False)
    if "tool_calls" in names:
        calls = pc.struct_field(flat, "tool_calls")
        if pa.types.is_list(calls.type) or pa.types.is_large_list(calls.type):
            called = pc.fill_null(pc.greater(pc.list_value_length(calls), 0), False).to_numpy(zero_copy_only=False)
            tool_item |= assistant & called
        elif not pa.types.is_null(calls.type):
            raise Unsupported(f"tool_calls of type {calls.type}")
    tool = np.bincount(parents[tool_item], minlength=len(chunk)) > 0
    text = _pick(pc.fill_null(content.cast(pa.string()), ""), parents, assistant, valid, pa, pc)
    return text, tool


def _pick(items: Any, parents: np.ndarray, wanted: np.ndarray, valid: np.ndarray, pa: Any, pc: Any) -> Any:
    """Per list, its last wanted item; "" for a list with none, null where `valid` is false (a null list)."""
    at = np.flatnonzero(wanted)
    owner = parents[at]
    last = np.append(owner[1:] != owner[:-1], True) if len(at) else np.zeros(0, dtype=bool)
    take = np.full(len(valid), -1, dtype=np.int64)
    take[owner[last]] = at[last]
    picked = (items.take(pa.array(np.maximum(take, 0), mask=take < 0)) if len(items)
              else pa.nulls(len(valid), pa.string()))
    empty = pc.if_else(pa.array(valid), pa.scalar("", pa.string()), pa.scalar(None, pa.string()))
    return pc.if_else(pa.array(valid), pc.coalesce(picked, empty), empty)
