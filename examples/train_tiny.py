"""The training loop to copy: a tiny causal LM samples, a program grades, an update rule moves it.

    python examples/train_tiny.py                      # GRPO, FlashReinforce and OPD, 50 steps each
    python examples/train_tiny.py --method grpo --steps 60

Everything a real loop has, at toy size, on a CPU, with nothing downloaded:

* the policy is a ``transformers`` GPT-2 built from a config (2 layers, a 12-token vocabulary) with random
  weights: swap in ``AutoModelForCausalLM.from_pretrained(...)`` and a tokenizer for a real model;
* it samples its own completions (temperature 1, no top-k/top-p: the methods assume an untruncated sampler);
* a program grades them: the task is "answer digit d with the digit (3d + 1) mod 10, three times", and the
  reward is the share of the three answer tokens that are right (a random policy scores about 0.1);
* the log-probs of the sampled tokens are computed *with their graph* and handed to ``methods.Batch`` as a
  trainer has them; ``update()`` never differentiates through them, and ``update.loss(logprobs)`` is the
  loss to backpropagate (its gradient wrt the log-probs is ``-update.coefficients``).

The three methods differ only in what goes into the Batch:

* GRPO: 8 completions per prompt, ``groups`` says which prompt each answered; the reward is the signal;
* FlashReinforce: one completion per prompt, plus the sampler's log-probs (``behavior_logprobs``) for its
  trust gate and ratio. Here the sampler *is* the policy at the same weights, so the ratio is 1 and the gate
  admits everything; in an async trainer they come from the inference server and lag behind;
* OPD: the teacher's log-prob of each sampled token (``teacher_logprobs``); no reward is read. The teacher
  here is not a model but a fixed distribution that puts 0.9 on the right digit (what a good teacher would
  say); in a real run these are a served teacher model's prompt log-probs of the student's tokens. The
  reward is still graded, to show the student learning the task from the teacher's signal alone.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from pick_a_method import methods  # noqa: E402

DIGITS = 10
BOS = 10  # starts every prompt
SEP = 11  # between the prompt digit and the answer
VOCAB = 12
ANSWER_TOKENS = 3


def target(digit: int) -> int:
    return (3 * digit + 1) % DIGITS


def grade(prompt_digit: int, answer: list[int]) -> float:
    """The program grader: the share of answer tokens equal to the right digit."""
    right = target(prompt_digit)
    return sum(tok == right for tok in answer) / len(answer)


def tiny_policy(seed: int) -> torch.nn.Module:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    # dropout off: the log-probs the loss is taken on must be the policy that sampled (dropout would make the
    # training pass a different, noisier policy than the sampler)
    config = GPT2Config(vocab_size=VOCAB, n_positions=8, n_embd=32, n_layer=2, n_head=2, n_inner=64,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=BOS, eos_token_id=SEP)
    return GPT2LMHeadModel(config)


def prompts_for(digits: torch.Tensor) -> torch.Tensor:
    """[n, 3] prompt ids: BOS, the digit, SEP."""
    n = digits.shape[0]
    return torch.stack([torch.full((n,), BOS), digits, torch.full((n,), SEP)], 1)


@torch.no_grad()
def sample(model: torch.nn.Module, prompts: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(answers [n, ANSWER_TOKENS], the sampler's log-prob of each sampled token), temperature 1."""
    seq = prompts
    logps = []
    for _ in range(ANSWER_TOKENS):
        logits = model(seq).logits[:, -1, :DIGITS]  # answers are digits: the sampler's support
        logp = torch.log_softmax(logits.float(), -1)
        tok = torch.multinomial(logp.exp(), 1, generator=generator)
        logps.append(logp.gather(1, tok))
        seq = torch.cat([seq, tok], 1)
    return seq[:, prompts.shape[1]:], torch.cat(logps, 1)


def answer_logprobs(model: torch.nn.Module, prompts: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """[n, ANSWER_TOKENS] log-probs of the sampled answer tokens under the policy, carrying the graph."""
    seq = torch.cat([prompts, answers], 1)
    logits = model(seq).logits[:, prompts.shape[1] - 1 : -1, :DIGITS]
    return torch.log_softmax(logits.float(), -1).gather(2, answers[..., None]).squeeze(2)


def teacher_logprobs(digits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """A fixed teacher distribution (not a model): 0.9 on the right digit, the rest spread evenly."""
    right = torch.tensor([target(int(d)) for d in digits])[:, None]
    hit = answers == right
    return torch.where(hit, torch.tensor(math.log(0.9)), torch.tensor(math.log(0.1 / (DIGITS - 1))))


def make_method(name: str):
    if name == "grpo":
        return methods.GRPO(group_size=8)
    if name == "flash_reinforce":
        return methods.FlashReinforce()
    if name == "opd":
        return methods.OPD(teacher="fixed-target-distribution")
    raise ValueError(f"method must be grpo, flash_reinforce or opd; got {name!r}")


def train(name: str, steps: int = 50, seed: int = 0, prompts_per_step: int = 128, lr: float = 1e-2) -> list[float]:
    """Train a fresh tiny policy with one method; returns the mean graded reward of each step's samples."""
    model = tiny_policy(seed)
    method = make_method(name)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed + 1)
    history = []
    for _ in range(steps):
        if name == "grpo":  # 16 prompts, 8 completions each: the group baseline needs several per prompt
            digits = torch.randint(0, DIGITS, (prompts_per_step // 8,), generator=gen).repeat_interleave(8)
            groups = torch.arange(prompts_per_step) // 8
        else:  # one completion per prompt
            digits = torch.randint(0, DIGITS, (prompts_per_step,), generator=gen)
            groups = None
        prompts = prompts_for(digits)
        model.eval()
        answers, sampler_logprobs = sample(model, prompts, gen)
        rewards = torch.tensor([grade(int(d), a.tolist()) for d, a in zip(digits, answers)])
        history.append(float(rewards.mean()))

        model.train()
        logprobs = answer_logprobs(model, prompts, answers)  # carries the graph, as in a trainer
        batch = methods.Batch(
            rewards=rewards,
            logprobs=logprobs,
            groups=groups,
            behavior_logprobs=sampler_logprobs if name == "flash_reinforce" else None,
            teacher_logprobs=teacher_logprobs(digits, answers) if name == "opd" else None,
        )
        update = method.update(batch, stats=False)  # the hot path: no stats, no notes
        opt.zero_grad()
        update.loss(logprobs).backward()  # d loss / d logprobs = -update.coefficients
        opt.step()
    return history


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--method", choices=["grpo", "flash_reinforce", "opd", "all"], default="all")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = ["grpo", "flash_reinforce", "opd"] if args.method == "all" else [args.method]
    for name in names:
        start = time.perf_counter()
        h = train(name, steps=args.steps, seed=args.seed)
        first, last = sum(h[:5]) / 5, sum(h[-5:]) / 5
        print(f"{name:16s} reward {first:.2f} -> {last:.2f} over {len(h)} steps ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
