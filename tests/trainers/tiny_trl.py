"""A tiny world for running `trl grpo` for real on CPU: a random 2-layer Qwen3 with a tokenizer built here (no
download), a few-row prompt dataset in a local folder, and a reward module that records what each process's
reward function was given (to check the layout a groupwise reward relies on)."""

from __future__ import annotations

import json
from pathlib import Path

WORDS = [f"w{i}" for i in range(40)]
PROMPTS = [f"q{i} " + " ".join(WORDS[i * 3:i * 3 + 3]) for i in range(8)]

REWARDS = '''
import json, os

from pick_a_method.methods import make_method
from pick_a_method.methods.rules.groupwise import trl_reward

GROUP = {group}


def _seen(name, prompts, completions):
    with open(f"seen-{{name}}-rank{{os.environ.get('RANK', '0')}}.jsonl", "a") as fh:
        fh.write(json.dumps({{"prompts": list(prompts), "n": len(completions)}}) + "\\n")


def _base(prompts, completions, **kwargs):
    return [float(len(c.split()) % 2) for c in completions]  # about half pass: mixed groups


def grpo_reward(prompts, completions, **kwargs):
    _seen("grpo", prompts, completions)
    return _base(prompts, completions)


_GROUPWISE = trl_reward(make_method("groupwise_grading", mode="reward", group_size=GROUP,
                                    grader=lambda item, rubric: {{"solution": 0.5, "behavior": 1.0}}), _base, GROUP)


def groupwise_reward(prompts, completions, **kwargs):
    _seen("groupwise", prompts, completions)
    return _GROUPWISE(prompts=prompts, completions=completions, **kwargs)
'''


def build(folder: Path, group: int) -> dict[str, str]:
    """Write the model, tokenizer, dataset and reward module under ``folder``; return their paths."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + WORDS + [f"q{i}" for i in range(8)])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    model_dir = folder / "tiny-qwen3"
    tokenizer.save_pretrained(model_dir)
    config = Qwen3Config(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=8, max_position_embeddings=64,
                         tie_word_embeddings=True, pad_token_id=0, eos_token_id=1, bos_token_id=1)
    Qwen3ForCausalLM(config).save_pretrained(model_dir)
    data_dir = folder / "prompts"
    data_dir.mkdir()
    (data_dir / "train.jsonl").write_text("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS))
    (folder / "tiny_rewards.py").write_text(REWARDS.format(group=group))
    return {"model": str(model_dir), "dataset": str(data_dir)}


def seen(folder: Path, name: str) -> dict[int, list[dict]]:
    """{rank: [one record per reward call]} as the reward functions wrote them."""
    return {int(p.stem.rsplit("rank", 1)[1]): [json.loads(line) for line in p.read_text().splitlines()]
            for p in sorted(folder.glob(f"seen-{name}-rank*.jsonl"))}
