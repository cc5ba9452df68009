"""Is a row's sampler the model you will train, an older copy of it, or another model?

Only clear checkpoint markers mean an older copy: `@step-40`, `/checkpoint-400`, `global_step_40`, `-step-40`,
`:ckpt-3`, a revision hash after `@`, or a checkpoint folder under a local folder named like the model. Every
other difference (`-v1`, `-Base`, `-Instruct-2507`, `-FP8`, `-AWQ`, another organisation) is another model,
and the answer says both names, so a caller whose sampler is served under another name can say so.
"""

from __future__ import annotations

import re
from typing import Literal

Relation = Literal["same", "checkpoint", "other"]

# A checkpoint marker: a step-like word and a number, at a separator (prime-rl, TRL and verl checkpoint folders:
# checkpoint-400, global_step_40, step_40; async samplers' tags: @step-40, :ckpt-3).
_MARKER = re.compile(r"(?:^|[/@:#._-])(?:checkpoints?|ckpt|global[_-]?step|step|steps|iter|iteration|epoch)[-_]?\d+",
                     re.IGNORECASE)
_REVISION = re.compile(r"^@(?:[0-9a-f]{7,40}|\d+)$", re.IGNORECASE)  # a commit hash or a number after @


def _is_checkpoint_tail(tail: str) -> bool:
    if not tail or tail[0] not in "@:/#_-.":
        return False  # 'Qwen3-80B' is not a checkpoint of 'Qwen3-8B'
    return bool(_MARKER.search(tail) or _REVISION.match(tail))


def _looks_local(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or name.count("/") >= 2


# How eval tools prefix a model with the provider that served it: inspect-ai (`vllm/`, `hf/`, `openai/`,
# `openai-api/<provider>/`, `together/`, ...), LiteLLM (`hosted_vllm/`), and lm-eval's API models.
PROVIDERS = ("vllm", "hf", "openai", "anthropic", "together", "fireworks", "groq", "mistral", "ollama", "sglang",
             "openrouter", "hosted_vllm", "azureai", "bedrock", "vertex", "grok", "llama-cpp-python", "transformer_lens",
             "local", "google", "deepseek", "perplexity", "cf", "goodfire", "nnterp")


def without_provider(name: str) -> str | None:
    """The model id under a provider prefix ('vllm/Qwen/Qwen3-8B' -> 'Qwen/Qwen3-8B'), or None when it has none."""
    head, _, rest = name.partition("/")
    if not rest:
        return None
    if head == "openai-api":  # openai-api/<provider>/<model>
        _, _, rest = rest.partition("/")
        return rest or None
    return rest if head.casefold() in PROVIDERS else None


def relation(name: str, model: str) -> tuple[Relation, str | None]:
    """How sampler `name` relates to the trained `model`, and a note when the answer rests on a reading."""
    kind, note = _relation(name, model)
    if kind != "other":
        return kind, note
    # a provider prefix on either side (`vllm/Qwen/Qwen3-8B` against `Qwen/Qwen3-8B`): compare what it serves
    for a, b in ((without_provider(name.strip()), model.strip()), (name.strip(), without_provider(model.strip()))):
        if a and b:
            kind, _ = _relation(a, b)
            if kind != "other":
                return kind, f"rows name {name.strip()!r}: read as {model.strip()!r} served through a provider prefix"
    return "other", None


def _relation(name: str, model: str) -> tuple[Relation, str | None]:
    a, b = name.strip(), model.strip()
    if a == b:
        return "same", None
    af, bf = a.casefold(), b.casefold()
    if af == bf:
        return "same", (f"rows name {a!r}, you named {b!r}: read as the same model (hub ids ignore case); if they "
                        f"are different models, say so with the exact name")
    if af.startswith(bf) and _is_checkpoint_tail(a[len(b):]):
        return "checkpoint", None
    if af.startswith(bf) and af[len(bf):] in ("@main", "@latest", "@master"):
        return "same", f"rows name {a!r}: read as {b!r} (the branch head, not an older checkpoint)"
    if _looks_local(a):
        parts = [p for p in a.split("/") if p not in ("", ".")]
        want = [p.casefold() for p in b.split("/") if p]
        low = [p.casefold() for p in parts]
        for i in range(len(low)):
            # the folder named like the model: its full id (org/name) or its last part
            for size in (len(want), 1):
                if size and low[i:i + size] == want[-size:]:
                    rest = "/".join(parts[i + size:])
                    if not rest:
                        return "same", f"rows name the local folder {a!r}: read as {b!r}"
                    if _is_checkpoint_tail("/" + rest):
                        return "checkpoint", None
    return "other", None


def lineage(name: str) -> str:
    """The model a checkpoint name is a copy of: 'Qwen/Qwen3-8B@step-40' -> 'Qwen/Qwen3-8B'; other names as given."""
    m = _MARKER.search(name)
    base = name[:m.start()] if m and m.start() > 0 else name
    r = re.search(r"@(?:[0-9a-f]{7,40}|\d+)$", base, re.IGNORECASE)
    return base[:r.start()] if r and r.start() > 0 else base


_PARAMS = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)([BbMm])(?![A-Za-z0-9])")


def model_params_b(model: str | None) -> float | None:
    """Parameter count in billions read off a model name ('Qwen/Qwen3-0.6B' -> 0.6, 'Mixtral-8x7B' -> 56,
    '135M' -> 0.135); an MoE's active count ('A3B') is not its size. None when the name does not say."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1]
    sizes = []
    for m in _PARAMS.finditer(name):
        if m.start() > 0 and name[m.start() - 1] in "Aa":
            continue
        value = float(m.group(2)) * (int(m.group(1)) if m.group(1) else 1)
        sizes.append(value / 1000.0 if m.group(3) in "Mm" else value)
    return max(sizes) if sizes else None
