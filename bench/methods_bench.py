"""Benchmark: FlashReinforce, SAO and BPCO update rules, torch vs the anchor SDK (whileai), one thread.

    python bench/methods_bench.py                 # B = 256 and 2048, T = 1024
    python bench/methods_bench.py --sizes 256 --repeat 3 --no-anchor

For each method and batch size it times (best of --repeat, time.perf_counter):

* ``batch f32``: ``method.update(batch)`` on a prepared float32 ``methods.Batch`` (validated, with stats);
* ``hot f32``: ``method.update(batch, stats=False, validate=False)``, a trainer's hot path;
* ``list f32`` / ``list f64``: ``method.update(list_of_dicts, dtype=...)`` end to end, conversion included;
* ``anchor``: whileai's pure-Python ``update(list_of_dicts)`` on the same trajectories, when installed.

Data: logprobs = -1 + 0.1 N(0,1) (<= -1e-4),
behavior = logprobs + 0.01 N(0,1) (<= -1e-4), values ~ U[0,1], rewards ~ Bernoulli(0.5), no
observation tokens, every trajectory admitted: the worst-case path. Timings are measured here,
never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from pick_a_method import methods  # noqa: E402
from pick_a_method.methods.batch import Batch  # noqa: E402
from route_bench import best  # noqa: E402  (bench/ is on sys.path when run as a script)

T_DEFAULT = 1024


def make_data(B: int, T: int, seed: int = 0) -> tuple[Batch, list[dict]]:
    g = torch.Generator().manual_seed(seed)
    lp = (-1.0 + 0.1 * torch.randn(B, T, generator=g, dtype=torch.float64)).clamp(max=-1e-4)
    blp = (lp + 0.01 * torch.randn(B, T, generator=g, dtype=torch.float64)).clamp(max=-1e-4)
    values = torch.rand(B, T, generator=g, dtype=torch.float64)
    rewards = (torch.rand(B, generator=g, dtype=torch.float64) < 0.5).to(torch.float64)
    batch = Batch(
        rewards=rewards.float(), logprobs=lp.float(), behavior_logprobs=blp.float(), values=values.float()
    )
    lp_l, blp_l, v_l, r_l = lp.tolist(), blp.tolist(), values.tolist(), rewards.tolist()
    trajs = [
        {"reward": r_l[i], "logprobs": lp_l[i], "behavior_logprobs": blp_l[i], "values": v_l[i]} for i in range(B)
    ]
    return batch, trajs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 2048])
    parser.add_argument("--tokens", type=int, default=T_DEFAULT)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--anchor-repeat", type=int, default=3)
    parser.add_argument("--no-anchor", action="store_true", help="skip whileai even when installed")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    wai = None
    if not args.no_anchor:
        try:
            import whileai as wai  # noqa: F401
        except ImportError:
            wai = None
    # timings on a shared machine move with its load: say it (1, 5, 15 minute load averages; cores)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), T = {args.tokens}; anchor: "
          f"{'whileai ' + getattr(wai, '__version__', '?') if wai else 'not installed'}; "
          f"load {load} on {os.cpu_count()} cores")
    header = f"{'method':16s} {'B':>5s} {'batch f32':>10s} {'hot f32':>10s} {'list f32':>10s} {'list f64':>10s} {'anchor':>10s} {'x batch':>8s} {'x list':>8s}"
    print(header)
    print("-" * len(header))
    for B in args.sizes:
        batch, trajs = make_data(B, args.tokens)
        for name in ("FlashReinforce", "SAO", "BPCO"):
            ours = methods.make_method(name)
            t_batch = best(lambda: ours.update(batch), args.repeat, warm=True)
            t_hot = best(lambda: ours.update(batch, stats=False, validate=False), args.repeat, warm=True)
            t_l32 = best(lambda: ours.update(trajs, dtype=torch.float32), max(1, args.repeat // 2), warm=True)
            t_l64 = best(lambda: ours.update(trajs, dtype=torch.float64), max(1, args.repeat // 2), warm=True)
            t_anchor = None
            if wai is not None:
                theirs = getattr(wai, name)()
                t_anchor = best(lambda: theirs.update(trajs), args.anchor_repeat, warm=True)
            ms = lambda t: f"{t * 1e3:9.1f}ms"  # noqa: E731
            anchor_txt = ms(t_anchor) if t_anchor else f"{'-':>11s}"
            x_batch = f"{t_anchor / t_batch:7.0f}x" if t_anchor else f"{'-':>8s}"
            x_list = f"{t_anchor / t_l32:7.1f}x" if t_anchor else f"{'-':>8s}"
            print(f"{name:16s} {B:5d} {ms(t_batch)} {ms(t_hot)} {ms(t_l32)} {ms(t_l64)} {anchor_txt} {x_batch} {x_list}", flush=True)
    print("x batch = anchor / (float32 Batch); x list = anchor / (list -> float32, conversion included).")
    print(f"load at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
