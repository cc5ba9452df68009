"""What every trainer config writer shares: the result, the honored/ignored bookkeeping, argument checks,
overrides, a small YAML emitter and the safe write.

``prime_rl_config``, ``trl_config`` and ``verl_config`` return a ``TrainerConfig`` (prime-rl's adds its taskset and GPU split):
the text written, which method knobs the trainer honors (knob -> its key) and which it cannot (knob -> why),
warnings, the launch command and what the user must still fill in (``needs``). The file is written with
``common.write``'s atomic, no-clobber write, inside the allowed folders only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from pick_a_method.common.methods import method_info
from pick_a_method.common.next_step import NextStep, is_placeholder, placeholder
from pick_a_method.common.trainers import TRAINERS
from pick_a_method.common.write import check_out, show, write_config  # show: one way to cut a value short in errors
from pick_a_method.trainers.plans import TrainerMethod


class TrainerConfig(BaseModel):
    """What a trainer config writer wrote (or would write), and how the trainer will read it."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["written", "ready"] = Field(description="written: saved at `path`; ready: returned only.")
    trainer: str = Field(description="The trainer the config is for (prime-rl, trl, verl).")
    trainer_version: str = Field(description="The trainer release whose config classes the text was checked against.")
    summary: str
    next_step: NextStep
    warnings: list[str]
    path: str | None
    text: str = Field(description="The file's text, exactly as written.")
    config: dict[str, Any] = Field(description="The config as data (what `text` reads back as).")
    method: str
    model: str
    honored: dict[str, str] = Field(description="Method knob -> the trainer key that carries it.")
    ignored: dict[str, str] = Field(description="Method knob -> why the trainer cannot honor it.")
    needs: list[str] = Field(description="What to fill in before launching (placeholders in `text` look like <...>).")
    command: str = Field(description="The launch command.")
    notes: list[str] = Field(default_factory=list, description="Version notes and what to check on the GPU machine.")
    overrides: list[str] = Field(default_factory=list,
                                 description="The same config as command-line overrides (verl's Hydra key=value).")

    def __str__(self) -> str:
        lines = [self.summary, f"run: {self.command}"]
        lines += [f"honored: {k} -> {v}" for k, v in self.honored.items()]
        lines += [f"ignored: {k}: {v}" for k, v in self.ignored.items()]
        lines += [f"needs: {n}" for n in self.needs]
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass
class Plan:
    """A method in one trainer's terms: the keys to set, and the bookkeeping of every knob."""

    label: str
    keys: dict[str, Any] = field(default_factory=dict)
    honored: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    whole_groups_per_process: bool = False  # the method's reward shaping needs each process's slice in whole groups

    def prefixed(self, prefix: str) -> None:
        """Rename the knobs of a wrapped method (Async's inner) to ``method.<knob>``."""
        self.honored = {f"{prefix}{k}": v for k, v in self.honored.items()}
        self.ignored = {f"{prefix}{k}": v for k, v in self.ignored.items()}


# ------------------------------------------------------------------------------------------------
# Arguments
# ------------------------------------------------------------------------------------------------


# The largest whole number a config may hold: TOML integers are 64-bit signed (toml.io v1.0.0, "Integer"), and the
# trainers read YAML numbers into 64-bit fields too.
INT_MAX = 2**63 - 1


def as_int(name: str, value: Any, lo: int, fix: str, hi: int = INT_MAX) -> int:
    # int first: float() of an int past 1.8e308 raises OverflowError
    ok = not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    if not ok:
        raise ValueError(f"{name} must be a whole number >= {lo}; got {show(value)}. {fix}")
    value = int(value)
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}; got {show(value)}. {fix}")
    if value > hi:
        most = "2**63 - 1 (TOML integers are 64-bit)" if hi == INT_MAX else str(hi)
        raise ValueError(f"{name} must be at most {most}; got {show(value)}. {fix}")
    return value


def as_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false; got {show(value)}")
    return value


def check_text(name: str, value: Any, example: str, *, required: bool = True) -> str | None:
    """A one-line, non-placeholder string (a model id, a dataset name, a file path)."""
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} is required: {example}")
    value = value.strip()
    if is_placeholder(value):
        raise ValueError(f"{name} {value!r} is a placeholder: replace it with the real value ({example})")
    if any(ord(c) < 32 or c == "\x7f" for c in value):
        raise ValueError(f"{name} must be one line of text; got {value!r}")
    return value


class Run(NamedTuple):
    """The run every writer takes, checked once, in one order: the model, the GPUs a node and the nodes, the steps
    and the batch, LoRA, overwrite, the overrides as (key, value) pairs and the method object."""

    model: str
    gpus: int
    nodes: int
    steps: int
    batch: int
    lora: bool
    overwrite: bool
    pairs: list[tuple[str, Any]]
    obj: Any


def checked_run(o: Any, meaning: Mapping[str, str]) -> Run:
    """The run's options (a writer's options model, trainers/options.py) checked; `meaning` says what gpus, nodes,
    steps and batch are to this trainer (the fix its error names)."""
    model = check_text("model", o.model, "the Hugging Face id or folder of the model to train, e.g. 'Qwen/Qwen3-8B'")
    numbers = {name: as_int(name, getattr(o, name), 1, meaning[name]) for name in ("gpus", "nodes", "steps", "batch")}
    return Run(model=model, **numbers, lora=as_bool("lora", o.lora), overwrite=as_bool("overwrite", o.overwrite),
               pairs=override_pairs(o.overrides), obj=resolve_method(o.method, o.knobs))


@dataclass(frozen=True)
class Target:
    """Where a writer's config goes, checked before anything is built: one file name throughout (`out` where
    given, else the trainer's default name for the method) in the header, the summary and the launch command;
    written last (common/write.py: atomic, never over a file unless `overwrite`, inside `allowed_roots`)."""

    out: Any
    path: Path | None  # `out`, checked and resolved; None: nothing is written
    file_name: str
    suffixes: tuple[str, ...]
    why: str
    overwrite: bool
    allowed_roots: Any

    @classmethod
    def of(cls, out: Any, trainer: str, label: str, *, suffixes: tuple[str, ...], why: str, overwrite: bool,
           allowed_roots: Any) -> Target:
        path = None if out is None else check_out(out, suffixes, why, overwrite, allowed_roots).resolve()
        return cls(out, path, str(path) if path else TRAINERS[trainer].out_name(label), suffixes, why, overwrite,
                   allowed_roots)

    def write(self, text: str) -> str | None:
        """The path written, or None where no `out` was given."""
        if self.out is None:
            return None
        return str(write_config(self.out, text, suffixes=self.suffixes, why=self.why, overwrite=self.overwrite,
                                allowed_roots=self.allowed_roots).resolve())


def apply_overrides(config: dict[str, Any], pairs: list[tuple[str, Any]], method_keys: tuple[str, ...], plan: Any,
                    honored: dict[str, str]) -> None:
    """The caller's overrides set last (None deletes a key), each honoured as given; one that replaces a key that
    carries the method is warned about: the run would no longer train it as the project defines it."""
    for key, value in pairs:
        if key in method_keys and key in config and config[key] != value:
            plan.warnings.append(f"override {key}={value!r} replaces the value that carries {plan.label} "
                                 f"({config[key]!r}): the run no longer trains {plan.label} as the project defines it.")
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
        honored[key] = f"{key} (override, as given)"


def resolve_method(method: Any, knobs: Mapping[str, Any] | None) -> Any:
    """A method object from an object, any spelling of its name plus knobs, or {"name": ..., **knobs}; a method with
    no update rule here (SFT, DPO: the trainer's own) comes back as a ``TrainerMethod`` with its knobs."""
    from pick_a_method.methods.objects import Method, make_method  # lazy: methods/__init__ imports a lot

    if knobs is not None and not isinstance(knobs, Mapping):
        raise ValueError(f"knobs must be a mapping of the method's knobs, e.g. {{'group_size': 4}}; got {show(knobs)}")
    knobs = dict(knobs or {})
    if isinstance(method, Method):
        if knobs:
            raise ValueError(
                "knobs apply only when method is given by name; build the object with its knobs instead "
                f"(got {type(method).__name__} and knobs {knobs!r})"
            )
        return method
    if isinstance(method, Mapping):  # {"name": <a method>, **knobs}, as JSON clients may send it
        spec = dict(method)
        name = spec.pop("name", None)
        return resolve_method(name, {**spec, **knobs})
    if not isinstance(method, str) or not method.strip():
        raise ValueError(f"method must be a method name (e.g. grpo, opd, async) or a method object; got {show(method)}")
    info, _ = method_info(method.strip())
    if not info.rule:
        return TrainerMethod(info, knobs)
    return make_method(method.strip(), **knobs)


def tokenizer_verdict(tokenizers_match: Any) -> tuple[str | None, str]:
    """('same' | 'different' | 'unknown' | None, summary) from a bool, None, a TokenizerCheck or its dict."""
    if tokenizers_match is None:
        return None, ""
    if isinstance(tokenizers_match, bool):
        return ("same" if tokenizers_match else "different"), ""
    from pick_a_method.methods.tokenizer_check import TokenizerCheck

    if isinstance(tokenizers_match, Mapping):
        tokenizers_match = TokenizerCheck.model_validate(dict(tokenizers_match))
    if isinstance(tokenizers_match, TokenizerCheck):
        return tokenizers_match.verdict, tokenizers_match.summary
    raise ValueError(
        "tokenizers_match must be true, false, None or the result of check_tokenizers(teacher, student); "
        f"got {show(tokenizers_match)}"
    )


def check_teacher_tokenizer(tokenizers_match: Any, teacher: str, model: str, plan: Plan) -> None:
    """Distillation scores the student's own token ids with the teacher: refuse different tokenizers, warn on
    unchecked ones."""
    verdict, summary = tokenizer_verdict(tokenizers_match)
    if verdict == "different":
        raise ValueError(
            f"OPD needs the teacher and the student to share a tokenizer (the teacher scores the student's own token "
            f"ids), and {teacher} and {model} do not. {(summary + ' ') if summary else ''}Fix: pick a teacher of the "
            "same family (same tokenizer), or distil with SFT on the teacher's completions instead."
        )
    if verdict is None:
        plan.warnings.append(
            f"Tokenizers not checked: OPD needs {teacher} and {model} to share a tokenizer. Run "
            "check_tokenizers(teacher, student) and pass its result as tokenizers_match."
        )
    elif verdict == "unknown":
        plan.warnings.append(f"Tokenizer check was inconclusive: {summary}")


# ------------------------------------------------------------------------------------------------
# Overrides: a mapping, or a list of {"key": ..., "value": ...} pairs (what strict tool schemas can carry)
# ------------------------------------------------------------------------------------------------


def override_pairs(overrides: Any) -> list[tuple[str, Any]]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        items = list(overrides.items())
    elif isinstance(overrides, (list, tuple)):
        items = []
        for i, pair in enumerate(overrides):
            if isinstance(pair, Mapping) and set(pair) == {"key", "value"}:
                items.append((pair["key"], pair["value"]))
            elif hasattr(pair, "key") and hasattr(pair, "value"):
                items.append((pair.key, pair.value))
            else:
                raise ValueError(f"overrides[{i}] must be {{'key': ..., 'value': ...}}; got {show(pair)}")
    else:
        raise ValueError(f"overrides must be a mapping of keys to values or a list of {{key, value}}; got {show(overrides)}")
    for key, value in items:
        if not isinstance(key, str) or not key.strip() or any(not p for p in key.split(".")):
            raise ValueError(f"override key must be a dotted config key such as 'learning_rate'; got {show(key)}")
        check_plain(value, key)
    return [(k.strip(), v) for k, v in items]


def check_plain(value: Any, key: str) -> None:
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            check_plain(v, key)
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"override {key!r}: table keys must be strings; got {show(k)}")
            check_plain(v, key)
        return
    raise ValueError(f"override {key!r}: values must be strings, numbers, booleans, null, lists or tables; got {show(value)}")


# ------------------------------------------------------------------------------------------------
# YAML: a small emitter for plain data. Strings are always double-quoted (JSON escapes are YAML escapes), floats
# always carry a '.', so YAML 1.1 readers (PyYAML, which TRL uses) and YAML 1.2 readers read the same values.
# ------------------------------------------------------------------------------------------------


def yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        if e and exponent[0] not in "+-":
            exponent = "+" + exponent
        return mantissa + (f"e{exponent}" if e else "")
    if isinstance(value, str):
        out = []
        for ch in json.dumps(value, ensure_ascii=False)[1:-1]:
            if not ch.isprintable() or ch in "\u2028\u2029\x85\ufeff":
                code = ord(ch)
                out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    raise TypeError(f"cannot write {type(value).__name__} to YAML")


def to_yaml(data: Mapping[str, Any], indent: int = 0) -> str:
    """Block-style YAML for a mapping of plain data (nested mappings, lists of scalars or mappings)."""
    pad = "  " * indent
    lines: list[str] = []
    for key, value in data.items():
        name = key if _bare_key(key) else yaml_scalar(key)
        if isinstance(value, Mapping) and value:
            lines.append(f"{pad}{name}:")
            lines.append(to_yaml(value, indent + 1).rstrip("\n"))
        elif isinstance(value, Mapping):
            lines.append(f"{pad}{name}: {{}}")
        elif isinstance(value, (list, tuple)):
            if not value:
                lines.append(f"{pad}{name}: []")
            elif all(not isinstance(v, (Mapping, list, tuple)) for v in value):
                lines.append(f"{pad}{name}: [{', '.join(yaml_scalar(v) for v in value)}]")
            else:
                raise TypeError(f"{key}: only lists of scalars are written")
        else:
            lines.append(f"{pad}{name}: {yaml_scalar(value)}")
    return "\n".join(lines) + "\n"


def _bare_key(key: str) -> bool:
    return bool(key) and (key[0].isalpha() or key[0] == "_") and all(c.isalnum() or c in "_-." for c in key)


def next_step_why(tool: str, to_fill: list[str], *, file_name: str, written: bool, check_columns: bool,
                  run: str) -> str:
    """What to do before the launch command, in order, telling the arguments still to fill in (placeholders in the
    text: call the writer again) from the install and the checks `needs` lists beside them."""
    if to_fill:
        steps = [f"Call {tool} again with {' and '.join(a + '=...' for a in to_fill)} (the text holds "
                 f"{', '.join(placeholder(a) for a in to_fill)} for them)" + (" and overwrite=True" if written else
                                                                            f", then save its text as {file_name}")]
    elif not written:
        steps = [f"Save `text` as {file_name} (or call {tool} again with out=<path>)"]
    else:
        steps = []
    steps.append("install the packages `needs` names")
    if check_columns:
        steps.append("check that the dataset has the columns it names")
    text = "; ".join(steps) + f"; then {run}."
    return text[0].upper() + text[1:]
