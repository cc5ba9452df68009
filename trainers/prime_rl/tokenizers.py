"""OPD's tokenizer agreement: teacher and student must share a tokenizer (the teacher scores the student's
own token ids). ``check_tokenizers`` (methods/tokenizer_check.py) measures it; this reads its verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_tokenizers(tokenizers_match: Any, inner: Any, model: str, label: str, warnings: list[str]) -> None:
    """OPD needs one tokenizer for teacher and student (the teacher scores the student's tokens): refuse
    different ones, warn about unchecked or inconclusive ones; other methods ignore the check, with a warning."""
    verdict, tok_summary, tok_check = _tokenizer_verdict(tokenizers_match)
    if inner.info.teacher:
        if verdict == "different":
            raise ValueError(
                f"OPD needs the teacher and the student to share a tokenizer (the teacher scores the student's own "
                f"token ids), and {inner.teacher} and {model} do not. {(tok_summary + ' ') if tok_summary else ''}Fix: pick a teacher of the same "
                "family (same tokenizer), or distil with SFT on the teacher's completions instead."
            )
        if verdict is None:
            warnings.append(
                f"Tokenizers not checked: OPD needs {inner.teacher} and {model} to share a tokenizer. Run "
                "check_tokenizers(teacher, student) and pass its result as tokenizers_match."
            )
        elif verdict == "unknown":
            warnings.append(f"Tokenizer check was inconclusive: {tok_summary}")
        if tok_check is not None and (tok_check.teacher, tok_check.student) != (inner.teacher, model):
            warnings.append(
                f"The tokenizer check compared {tok_check.teacher} with {tok_check.student}, not {inner.teacher} "
                f"with {model}."
            )
        if tok_check is not None:
            warnings.extend(w for w in tok_check.warnings if w not in warnings)
    elif tokenizers_match is not None:
        warnings.append(f"tokenizers_match applies to OPD only; {label} does not use a teacher, so it was not used.")


def _tokenizer_verdict(tokenizers_match: Any) -> tuple[str | None, str, Any]:
    """(verdict, summary, check) from a bool, None, a TokenizerCheck or its dict."""
    if tokenizers_match is None:
        return None, "", None
    if isinstance(tokenizers_match, bool):
        return ("same" if tokenizers_match else "different"), "", None
    from pick_a_method.methods.tokenizer_check import TokenizerCheck

    if isinstance(tokenizers_match, Mapping):
        tokenizers_match = TokenizerCheck.model_validate(dict(tokenizers_match))
    if isinstance(tokenizers_match, TokenizerCheck):
        return tokenizers_match.verdict, tokenizers_match.summary, tokenizers_match
    raise ValueError(
        "tokenizers_match must be true, false, None or the result of check_tokenizers(teacher, student); "
        f"got {tokenizers_match!r}"
    )


