"""Do a teacher and a student share a tokenizer? (OPD scores the student's own token ids.)

``check_tokenizers(teacher, student)`` loads both tokenizers from local files only (a folder, or a
Hugging Face id already in the local cache) and compares their size, their token-to-id maps and
their special tokens. It never uses the network and never raises for a tokenizer it cannot load:
that gives the verdict ``"unknown"`` with what to do.

transformers is imported inside the function, so importing this module stays cheap.
"""

from __future__ import annotations

import os
import shlex
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pick_a_method.common.methods import OPD
from pick_a_method.common.next_step import NextStep

__all__ = ["TokenizerCheck", "check_tokenizers"]

# How many differing tokens each list shows (the counts are always complete).
TOKEN_LIST_LIMIT = 10

# The special-token roles compared one by one.
SPECIAL_ROLES = ("bos_token", "eos_token", "pad_token", "unk_token")


class TokenizerCheck(BaseModel):
    """The result of comparing a teacher's tokenizer with a student's."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["same", "different", "unknown"]
    summary: str
    next_step: NextStep
    warnings: list[str]
    teacher: str
    student: str
    teacher_vocab_size: int | None = None
    student_vocab_size: int | None = None
    only_in_teacher: list[str] = []
    only_in_teacher_count: int = 0
    only_in_student: list[str] = []
    only_in_student_count: int = 0
    different_ids: list[str] = []
    different_ids_count: int = 0
    special_tokens: dict[str, dict[str, str | None]] = {}
    special_tokens_differ: list[str] = []
    chat_template_same: bool | None = None


def _name(value: Any, what: str) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"{what} must be a model id or a local folder holding its tokenizer; got {value!r}")


def _load(name: str) -> tuple[Any, str | None]:
    """(tokenizer, None) or (None, why it could not be loaded)."""
    try:
        from transformers import AutoTokenizer
    except Exception as exc:  # ImportError, or a broken install
        return None, f"transformers is not importable here ({type(exc).__name__}: {_short(exc)}); pip install transformers"
    try:
        return AutoTokenizer.from_pretrained(name, local_files_only=True), None
    except Exception as exc:  # OSError (not cached), ValueError (bad files), ImportError (sentencepiece) ...
        return None, f"{type(exc).__name__}: {_short(exc)}"


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _specials(tok: Any) -> dict[str, str | None]:
    out = {}
    for role in SPECIAL_ROLES:
        value = getattr(tok, role, None)
        out[role] = None if value is None else str(value)
    return out


def _unknown(teacher: str, student: str, failures: dict[str, str]) -> TokenizerCheck:
    which = " and ".join(f"{role} {name!r}" for role, name in (("teacher", teacher), ("student", student)) if role in failures)
    reasons = "; ".join(f"{role}: {why}" for role, why in failures.items())
    fetch = " && ".join(
        f"huggingface-cli download {shlex.quote(name)} --include 'tokenizer*' '*.json' '*.txt' '*.model'"
        for role, name in (("teacher", teacher), ("student", student))
        if role in failures
    )
    return TokenizerCheck(
        verdict="unknown",
        summary=(
            f"Could not load the {which} tokenizer from local files, so whether OPD can pair them is unknown. "
            "Download the tokenizer once, or pass a local folder that holds its tokenizer files."
        ),
        next_step=NextStep(why="Put both tokenizers on disk (the check never uses the network), then check again.",
                           command=fetch),
        warnings=[reasons],
        teacher=teacher,
        student=student,
    )


def check_tokenizers(teacher: Any, student: Any) -> TokenizerCheck:
    """Compare the teacher's and the student's tokenizers (local files only; never the network).

    ``"same"``: the two map every token string to the same id (so the teacher can score the
    student's token ids). ``"different"``: the sizes or the maps differ. ``"unknown"``: one of them
    could not be loaded locally (the result says how to fetch it). Special tokens and chat templates
    are compared too; a difference there is reported but does not by itself change the verdict,
    since the token ids still mean the same text.
    """
    teacher = _name(teacher, "teacher")
    student = _name(student, "student")
    failures: dict[str, str] = {}
    loaded: dict[str, Any] = {}
    for role, name in (("teacher", teacher), ("student", student)):
        tok, why = _load(name)
        if tok is None:
            failures[role] = why or "could not be loaded"
        else:
            loaded[role] = tok
    if failures:
        return _unknown(teacher, student, failures)

    t_tok, s_tok = loaded["teacher"], loaded["student"]
    t_vocab: dict[str, int] = dict(t_tok.get_vocab())
    s_vocab: dict[str, int] = dict(s_tok.get_vocab())
    t_size, s_size = len(t_tok), len(s_tok)
    only_t = sorted(set(t_vocab) - set(s_vocab), key=lambda k: t_vocab[k])
    only_s = sorted(set(s_vocab) - set(t_vocab), key=lambda k: s_vocab[k])
    moved = sorted((k for k in set(t_vocab) & set(s_vocab) if t_vocab[k] != s_vocab[k]), key=lambda k: s_vocab[k])

    t_spec, s_spec = _specials(t_tok), _specials(s_tok)
    spec_diff = [role for role in SPECIAL_ROLES if t_spec[role] != s_spec[role]]
    extra_t = set(map(str, getattr(t_tok, "all_special_tokens", []) or []))
    extra_s = set(map(str, getattr(s_tok, "all_special_tokens", []) or []))
    t_tmpl = getattr(t_tok, "chat_template", None)
    s_tmpl = getattr(s_tok, "chat_template", None)
    template_same = None if (t_tmpl is None and s_tmpl is None) else (t_tmpl == s_tmpl)

    same = t_size == s_size and not only_t and not only_s and not moved
    warnings: list[str] = []
    if spec_diff:
        detail = ", ".join(f"{role} {t_spec[role]!r} vs {s_spec[role]!r}" for role in spec_diff)
        warnings.append(
            f"Special tokens differ (teacher vs student: {detail}); the ids still mean the same text, but check "
            "that the teacher's server stops and pads the way the student's does."
        )
    if extra_t != extra_s:
        warnings.append(
            "The sets of special tokens differ: only the teacher has "
            f"{sorted(extra_t - extra_s)[:TOKEN_LIST_LIMIT]}, only the student has "
            f"{sorted(extra_s - extra_t)[:TOKEN_LIST_LIMIT]}."
        )
    if template_same is False:
        warnings.append(
            "The chat templates differ: the teacher scores the student's rendering of each prompt, so make sure "
            "the teacher understands that format."
        )

    if same:
        summary = (
            f"Same tokenizer: both map all {t_size} tokens to the same ids, so {teacher} can score {student}'s "
            "tokens for OPD."
        )
        next_step = NextStep(tool="prime_rl_config", arguments={"method": OPD.name, "tokenizers_match": True},
                             needs=["taskset", "model", "knobs.teacher"],
                             why="Pass this result (or tokenizers_match=True) to prime_rl_config when you write the "
                                 "OPD config.")
    else:
        parts = []
        if t_size != s_size:
            parts.append(f"sizes {t_size} (teacher) vs {s_size} (student)")
        if only_t:
            parts.append(f"{len(only_t)} tokens only in the teacher")
        if only_s:
            parts.append(f"{len(only_s)} only in the student")
        if moved:
            parts.append(f"{len(moved)} shared tokens with different ids")
        summary = (
            f"Different tokenizers ({'; '.join(parts)}): {teacher} cannot score {student}'s token ids, so OPD "
            "between them is refused."
        )
        next_step = NextStep(why="Pick a teacher from the student's model family (same tokenizer), or distil "
                                 "with SFT on the teacher's completions instead of OPD.")
    return TokenizerCheck(
        verdict="same" if same else "different",
        summary=summary,
        next_step=next_step,
        warnings=warnings,
        teacher=teacher,
        student=student,
        teacher_vocab_size=t_size,
        student_vocab_size=s_size,
        only_in_teacher=only_t[:TOKEN_LIST_LIMIT],
        only_in_teacher_count=len(only_t),
        only_in_student=only_s[:TOKEN_LIST_LIMIT],
        only_in_student_count=len(only_s),
        different_ids=moved[:TOKEN_LIST_LIMIT],
        different_ids_count=len(moved),
        special_tokens={role: {"teacher": t_spec[role], "student": s_spec[role]} for role in SPECIAL_ROLES},
        special_tokens_differ=spec_diff,
        chat_template_same=template_same,
    )
