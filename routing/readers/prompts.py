"""Each task's prompt as a stable key, so `after` can pair two runs whose tools name the same task their own way
(vf-eval `0`, lm-eval `standin_sums/0`, inspect `sum-0`) and tell two runs apart whose shared ids carry different
prompts (vf-eval's `example_id` is a row index: any environment has a task `0`).

What the prompt is: a string as it stands (a JSON list of chat messages in a string, as lm-eval logs a chat prompt,
read as that list); a list of chat messages the text of its user messages (a system prompt is the tool's setting,
not the task); a list of strings joined. Whitespace runs fold to one space, so a tool that ends a prompt with a
newline pairs with one that does not. The key is a 64-bit BLAKE2b of that text in hex: stable across processes
(the freeze manifest records it), never the text itself.

Only a task's first row is read (its rollouts share one prompt), so a file of long prompts costs one hash a task.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# lm-eval's reader puts the logged prompt (arguments.gen_args_0.arg_0.0) under this key; rows of other formats
# carry `prompt` (verifiers, plain rows) or `input` (inspect-ai samples): routing/fields.py PROMPT.
LM_EVAL_KEY = "_prompt"


def prompt_text(value: Any) -> str | None:
    """The prompt's text (None: no prompt in `value`)."""
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("[{"):  # a chat prompt logged as JSON (lm-eval --apply_chat_template)
            try:
                parsed = json.loads(s)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                return prompt_text(parsed)
        return " ".join(s.split()) or None
    if isinstance(value, dict):
        return prompt_text(value.get("content")) if "content" in value else None
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, str) for v in value):
        return " ".join(" ".join(value).split()) or None
    messages = [m for m in value if isinstance(m, dict)]
    users = [m for m in messages if m.get("role") == "user"] or messages
    texts = [_content(m.get("content")) for m in users]
    return " ".join(" ".join(texts).split()) or None


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def prompt_key(value: Any) -> str | None:
    """The stable key of the prompt in `value` (None: none there)."""
    text = prompt_text(value)
    if text is None:
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
