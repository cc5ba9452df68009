"""What `tools/list` sends, made lean: the input schemas a model reads, and outline output schemas.

Pure functions over JSON schemas (no MCP import). The budget (tests/server/test_agent_fit.py): the whole listing
at most 20,000 characters and what a model reads (descriptions plus input schemas) at most 12,000, the `after`
tool included.

- Input schemas are inlined (openai-agents' strict conversion refuses a bare `$ref` it did not inline itself),
  lose pydantic's noise (`title`, `default: null`, `additionalProperties: true`), and write `anyOf [X, null]`
  as `type: [X, "null"]`. Every object stays closed, so the strict conversion succeeds on each tool.
- Output schemas are an outline: the top-level keys, each with its type where it has one (an object is `object`, a
  list `array`; a key that may be null takes any value) and their enums; no `required` (every verdict has
  EVERY_VERDICT's keys). No type arrays: a client that maps schemas onto one `type` a node (Gemini's) reads every one. The SDK validates each result against the tool's pydantic model, not against
  this schema, and `structuredContent` still carries everything; a client checking a result against the
  outline checks the keys and their types. What the keys mean (`next_step`'s `tool`, `arguments`, `needs`,
  `command`) is the skill's and the server instructions' to say: models read those, not output schemas.
"""

from __future__ import annotations

from typing import Any

_SHAPE_FREE = {"enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not"}
EVERY_VERDICT = ("verdict", "summary", "next_step", "warnings")


def input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's argument schema as it goes on the wire: inlined, slimmed and closed (its model's docstring is the
    tool's description, not repeated here)."""
    schema = {k: v for k, v in schema.items() if k != "description"}
    return {**slim(inline(schema)), "additionalProperties": False}


def output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's output schema as an outline: top-level keys with short types (see the module's docstring). No
    `required`: every verdict has EVERY_VERDICT's keys (tests/server/test_agent_fit.py checks each outline lists
    them), and the list cost 45 characters a tool of the listing's budget once `track` made twelve tools."""
    defs = schema.get("$defs", {})
    return {"type": "object", "properties": {
        name: _outline(sub, defs) for name, sub in schema.get("properties", {}).items()}}


def _resolve(node: Any, defs: dict[str, Any]) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        node = {**defs[node["$ref"].removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _outline(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """One output key as a short type: its JSON type where it has one, its enum (or const), nothing nested."""
    node = _resolve(node, defs)
    if not isinstance(node, dict):
        return {}
    variants = [_resolve(v, defs) for v in node.get("anyOf", node.get("oneOf", []))] or [node]
    types: list[str] = []
    enum: list[Any] | None = []  # None once a variant takes any value of its type
    for v in variants:
        if not isinstance(v, dict):
            return {}
        kinds = v.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        if "const" in v or "enum" in v:
            if enum is not None:
                enum.extend([v["const"]] if "const" in v else v["enum"])
        elif not kinds:
            return {}  # a variant of any type: the key takes anything
        elif kinds != ["null"]:
            enum = None
        if "null" in kinds and enum is not None:
            enum.append(None)
        types.extend(t for t in kinds if t not in types)
    short: dict[str, Any] = {}
    if len(types) == 1:  # a key of several types (a number or null) is left open: one type a key, or none
        short["type"] = types[0]
    if enum:
        short["enum"] = [v for i, v in enumerate(enum) if not any(_same(v, w) for w in enum[:i])]
    return short


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b  # False and 0 are different enum values


def slim(schema: Any) -> Any:
    """The same schema, smaller: no `title`, no `default: null`, no `additionalProperties: true`, and
    `anyOf [X, null]` as `type: [X, "null"]` (equivalent: the other keywords of X apply to X's type only)."""
    if isinstance(schema, list):
        return [slim(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "additionalProperties" and value is True:  # the default: says nothing
            continue
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = {name: slim(sub) for name, sub in value.items()}  # the names are data, not keywords
        else:
            out[key] = slim(value)
    variants = out.get("anyOf")
    if isinstance(variants, list) and _mergeable(variants):
        merged: dict[str, Any] = {"type": [v["type"] for v in variants]}
        for v in variants:
            merged.update({k: val for k, val in v.items() if k != "type"})
        if "enum" in merged and "null" in merged["type"]:
            merged["enum"] = [*merged["enum"], None]
        del out["anyOf"]
        out = {**merged, **out}
    return out


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every local `$ref` replaced by its definition and no `$defs` (the argument models are not
    recursive). A `$ref`'s sibling keywords (its field's description) win over the definition's."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**defs[ref.removeprefix("#/$defs/")], **siblings})
        return {k: walk(v) for k, v in node.items() if k != "$defs"}

    return walk(schema)


def _mergeable(variants: list[Any]) -> bool:
    """anyOf variants that one `type: [...]` says exactly: distinct plain types whose other keywords do not
    overlap (each such keyword applies to its own type only); an enum only beside null."""
    if not all(isinstance(v, dict) and isinstance(v.get("type"), str) for v in variants):
        return False
    types = [v["type"] for v in variants]
    extra = [set(v) - {"type"} for v in variants]
    if len(set(types)) < len(types) or any(e & _SHAPE_FREE - {"enum"} for e in extra):
        return False
    if any("enum" in e for e in extra) and (len(variants) != 2 or "null" not in types):
        return False
    flat = [k for e in extra for k in e]
    return len(flat) == len(set(flat))
