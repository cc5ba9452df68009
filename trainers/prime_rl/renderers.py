"""Which chat renderer prime-rl's orchestrator uses for a model, and how this writer picks one.

prime-rl rolls out through a renderer (``[orchestrator.renderer] name``). Its default, ``"auto"``,
is resolved from the model (tokenizer) name through ``renderers.base.MODEL_RENDERER_MAP``, and since
prime-rl #2540 a model missing from that map is **rejected at config time**. So the writer picks:

1. the model is in the map          -> ``auto`` (prime-rl resolves it; nothing written);
2. the name shows a known family    -> that family's renderer, by name, with a warning;
3. anything else (a local folder, a fine-tune of an unknown family, Qwen2.5, Gemma 3, ...)
                                    -> ``default`` (``apply_chat_template``), with a warning.

Facts, not code: the map and the renderer names below are those of the renderers commit prime-rl
559b44772 pins, 2846a3d ("bump renderers for Nemotron 3.5 (Lightning) renderer", prime-rl #3239),
read from its ``renderers/base.py`` (MODEL_RENDERER_MAP, and RENDERER_REGISTRY's names, which
create_renderer accepts). renderers 0.1.10, the first release after that commit, adds renderers the pin
lacks (``NEWER_RENDERERS``): prime-rl 559b44772 refuses a config that names one, and 'auto' for a model
mapped only there, so a model of those families gets ``default`` with a warning that its own renderer
needs a prime-rl whose renderers pin is 0.1.10 or later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RENDERERS_PIN = "2846a3d"
RENDERERS_VERSION = f"{RENDERERS_PIN} (the renderers commit prime-rl 559b44772 pins)"
RENDERERS_RELEASE = "0.1.10"  # the first renderers release after the pin

# renderers 2846a3d, renderers/base.py: RENDERER_REGISTRY's names, plus "auto" (AutoRendererConfig).
RENDERER_NAMES: tuple[str, ...] = (
    "auto", "default", "qwen3", "prime-qwen3", "qwen3-vl", "qwen3.5", "qwen3.6", "glm-5", "glm-5.1", "glm-4.5",
    "minimax-m2", "deepseek-v3", "deepseek-r1", "hy3", "kimi-k2", "kimi-k2.5", "laguna-xs.2", "laguna-m.1",
    "laguna-xs-2.1", "llama-3", "nemotron-3", "nemotron-3-ultra", "nemotron-3.5", "gpt-oss",
)

# Renderers of renderers 0.1.10 the pin lacks (a diff of the 0.1.10 wheel's renderers/configs.py against the
# pin's registry), with the models 0.1.10 maps to them.
NEWER_RENDERERS: dict[str, tuple[str, ...]] = {
    "qwen3.8": ("Qwen/Qwen3.8-27B",),
    "gemma4": ("google/gemma-4-E2B-it", "google/gemma-4-E4B-it", "google/gemma-4-26B-A4B-it", "google/gemma-4-31B-it"),
    "inkling": ("thinkingmachines/Inkling", "thinkingmachines/Inkling-Small"),
    "laguna-s-2.1": ("poolside/Laguna-S-2.1",),
}

# renderers 2846a3d, renderers/base.py: MODEL_RENDERER_MAP (model id -> renderer name), grouped by renderer.
_MAP_BY_RENDERER: dict[str, tuple[str, ...]] = {
    "qwen3": (
        "Qwen/Qwen3-0.6B", "Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B", "Qwen/Qwen3-4B-Instruct-2507",
        "Qwen/Qwen3-4B-Thinking-2507", "Qwen/Qwen3-8B", "Qwen/Qwen3-14B", "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B",
        "Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen/Qwen3-235B-A22B",
    ),
    "prime-qwen3": ("PrimeIntellect/Qwen3-0.6B", "PrimeIntellect/Qwen3-1.7B"),
    "qwen3.5": (
        "Qwen/Qwen3.5-0.8B", "Qwen/Qwen3.5-2B", "Qwen/Qwen3.5-4B", "Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-35B-A3B",
        "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-397B-A17B",
    ),
    "qwen3.6": ("Qwen/Qwen3.6-35B-A3B",),
    "qwen3-vl": ("Qwen/Qwen3-VL-4B-Instruct", "Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct"),
    "glm-5": ("zai-org/GLM-5", "zai-org/GLM-5-FP8", "zai-org/GLM-4.7-Flash"),
    "glm-5.1": ("zai-org/GLM-5.1",),
    "glm-4.5": ("THUDM/GLM-4.5-Air", "zai-org/GLM-4.5-Air"),
    "minimax-m2": ("MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.5"),
    "deepseek-v3": ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base"),
    "deepseek-r1": ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528"),
    "kimi-k2": ("moonshotai/Kimi-K2-Instruct",),
    "kimi-k2.5": ("moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2.6"),
    "nemotron-3": ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16"),
    "nemotron-3-ultra": ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8"),
    "nemotron-3.5": ("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16",),
    "llama-3": ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"),
    "laguna-xs.2": ("poolside/Laguna-XS.2",),
    "laguna-m.1": ("poolside/Laguna-M.1",),
    "laguna-xs-2.1": ("poolside/Laguna-XS-2.1",),
    "gpt-oss": ("openai/gpt-oss-20b", "openai/gpt-oss-120b"),
    "hy3": ("tencent/Hy3", "tencent/Hy3-FP8"),
}
MODEL_RENDERER_MAP: dict[str, str] = {m: r for r, models in _MAP_BY_RENDERER.items() for m in models}


def needs_newer_prime_rl(name: str) -> str:
    """Why a renderer of a later renderers release cannot be written for prime-rl 559b44772, and what can."""
    return (f"renderer {name!r} came with renderers {RENDERERS_RELEASE}; prime-rl 559b44772 pins renderers at "
            f"{RENDERERS_PIN}, which lacks it, and refuses a config that names it. It needs a prime-rl commit whose "
            f"renderers pin is {RENDERERS_RELEASE} or later")


# Families recognised from a model's name (its last path part, so fine-tunes and local folders
# match): (pattern, renderer, family). First match wins; order matters (Qwen3.5 before Qwen3).
# Each renderer is one of the names above or of NEWER_RENDERERS (then 'default' is written, with a warning that
# says which prime-rl has it); a family with no renderer in renderers at all (Qwen2.5, Gemma 3,
# Mistral, Phi, base Llama without a chat template...) falls through to "default".
FAMILIES: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.I), renderer, family)
    for pattern, renderer, family in (
        # PrimeIntellect's own Qwen3 fine-tunes use prime-qwen3 (prime-rl's reverse-text examples
        # set it for PrimeIntellect/Qwen3-0.6B-Reverse-Text-SFT).
        (r"^primeintellect/qwen3(?![.\d])", "prime-qwen3", "PrimeIntellect Qwen3"),
        (r"qwen3[.-]?vl", "qwen3-vl", "Qwen3-VL"),
        (r"qwen3\.5(?!\d)", "qwen3.5", "Qwen3.5"),
        (r"qwen3\.6(?!\d)", "qwen3.6", "Qwen3.6"),
        (r"qwen3\.8(?!\d)", "qwen3.8", "Qwen3.8"),
        (r"qwen3(?![.\d])(?!.*coder)", "qwen3", "Qwen3"),
        (r"deepseek-r1-distill", "deepseek-r1", "DeepSeek-R1 distills"),
        (r"deepseek-r1", "deepseek-r1", "DeepSeek-R1"),
        (r"deepseek-v3", "deepseek-v3", "DeepSeek-V3"),
        (r"llama-?3(\.\d)?.*instruct", "llama-3", "Llama 3 Instruct"),
        (r"gemma-?4", "gemma4", "Gemma 4"),
        (r"gpt-oss", "gpt-oss", "gpt-oss"),
        (r"glm-?5\.1", "glm-5.1", "GLM-5.1"),
        (r"glm-?(5|4\.7)", "glm-5", "GLM-5"),
        (r"glm-?4\.5", "glm-4.5", "GLM-4.5"),
        (r"kimi-?k2\.[56]", "kimi-k2.5", "Kimi K2.5"),
        (r"kimi-?k2", "kimi-k2", "Kimi K2"),
        (r"minimax-?m2", "minimax-m2", "MiniMax-M2"),
        (r"nemotron-?3\.5", "nemotron-3.5", "Nemotron 3.5"),
        (r"nemotron-?3.*ultra", "nemotron-3-ultra", "Nemotron 3 Ultra"),
        (r"nemotron-?3", "nemotron-3", "Nemotron 3"),
        (r"hy3(?!-preview)", "hy3", "Hunyuan Hy3"),
        (r"inkling", "inkling", "Inkling"),
        (r"laguna-s-2\.1", "laguna-s-2.1", "Laguna-S-2.1"),
    )
)


@dataclass(frozen=True)
class RendererChoice:
    name: str  # what [orchestrator.renderer] name should be
    how: str  # "map" | "family" | "default" | "given"
    warning: str | None


def choose_renderer(model: str) -> RendererChoice:
    """The renderer for ``model`` (a hub id, a fine-tune or a local folder), and why."""
    if model in MODEL_RENDERER_MAP:
        return RendererChoice("auto", "map", None)
    fix = (
        "Pass renderer='<name>' to choose another (one of: " + ", ".join(RENDERER_NAMES[1:]) + ")"
    )
    for pattern, renderer, family in FAMILIES:
        # PrimeIntellect's family is named by its owner; the others by the last path part.
        if not pattern.search(model if family.startswith("PrimeIntellect") else _last_part(model)):
            continue
        if renderer in NEWER_RENDERERS:
            return RendererChoice("default", "default", (
                f"{model} is not in the MODEL_RENDERER_MAP of renderers {RENDERERS_VERSION}; it reads as {family}, "
                f"whose {needs_newer_prime_rl(renderer)}. So the config sets [orchestrator.renderer] name = 'default' "
                "(DefaultRenderer calls the tokenizer's apply_chat_template), which prime-rl 559b44772 accepts; pass "
                "renderer='default' to keep it without this warning."
            ))
        return RendererChoice(renderer, "family", (
            f"{model} is not in the MODEL_RENDERER_MAP of renderers {RENDERERS_VERSION}, so prime-rl rejects "
            f"renderer 'auto' for it; its name reads as {family}, so the config sets [orchestrator.renderer] "
            f"name = {renderer!r}. That is right only if its chat template is {family}'s: for a fine-tune "
            f"with its own template pass renderer='default' (DefaultRenderer calls apply_chat_template). {fix}."
        ))
    return RendererChoice("default", "default", (
        f"{model} is not in the MODEL_RENDERER_MAP of renderers {RENDERERS_VERSION} and its name matches no family "
        "prime-rl has a renderer for, so the config sets [orchestrator.renderer] name = 'default' "
        "(DefaultRenderer calls the tokenizer's apply_chat_template; envs that pass tools also need "
        "overrides={'orchestrator.renderer.tool_parser': '<vLLM tool parser>'}). If the model shares a mapped "
        f"family's chat template, name that renderer instead. {fix}."
    ))


def _last_part(model: str) -> str:
    return re.split(r"[\\/]", model.rstrip("/\\"))[-1]
