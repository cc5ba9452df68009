"""Benchmark: every update rule on the device it finds (CUDA if there is one), against its copy floor.

    python bench/gpu_bench.py                                  # CUDA: 2048x1024 and 8192x4096, float32 and bf16
    python bench/gpu_bench.py --sizes 256x64 --repeat 3        # CPU (or a quick look): small sizes
    python bench/gpu_bench.py --json out.json                  # the rows as JSON too
    python bench/gpu_bench.py --sizes 64x16 --policy device    # on a CPU, the GPU's code path (CI runs this)

Per rule, dtype and size it reports:

* ``hot``: ``method.update(batch, stats=False, validate=False)``, a trainer's hot path; ``default``:
  ``method.update(batch)`` (validated, with stats and notes); the median of --repeat, timed with CUDA events
  on a GPU (perf_counter on a CPU);
* ``floor``: one read of the rule's [B, T] inputs (the bool mask included) and one write of its float32
  coefficients, at the device-to-device copy bandwidth measured in the same run (bytes read + written per
  second by ``dst.copy_(src)``), and ``x floor`` = hot / floor;
* ``peak``: the extra memory of the hot path at its peak, in [B, T] tensors of the input dtype
  (``torch.cuda.max_memory_allocated`` on a GPU, ``rules.probe.MemoryTracker`` on a CPU);
* ``ops`` / ``syncs``: operators dispatched (kernel launches) and host synchronisations of the hot and the
  default path (``rules.probe.OpCounter``);
* ``err``: max |c - c64| / max |c64| against the same rule in float64 on the CPU.

Where verl is installed, its GRPO advantage estimators (``grpo``, ``grpo_vectorized``) are timed on the same
batch beside this project's GRPO update + loss + backward. Data: logprobs = -1 + 0.1 N(0,1), behavior =
logprobs + 0.01 N(0,1), teacher = logprobs - 0.05, values ~ U[0,1], rewards ~ Bernoulli(0.5), groups of 8.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from pick_a_method import methods  # noqa: E402
from pick_a_method.methods.batch import Batch  # noqa: E402
from pick_a_method.methods.rules.policy import use_policy  # noqa: E402
from pick_a_method.methods.rules.probe import MemoryTracker, OpCounter  # noqa: E402

GROUP = 8
# each rule, and the [B, T] fields it reads (the mask is read by all)
RULES: dict[str, tuple[Callable[[], Any], tuple[str, ...]]] = {
    "GRPO": (lambda: methods.GRPO(group_size=GROUP), ()),
    "OPD": (lambda: methods.OPD(teacher="t"), ("logprobs", "teacher_logprobs")),
    "Async(grpo, icepop)": (lambda: methods.Async(method={"name": "grpo", "group_size": GROUP}, correction="icepop"),
                            ("logprobs", "behavior_logprobs")),
    "FlashReinforce": (lambda: methods.FlashReinforce(trust=0.05), ("logprobs", "behavior_logprobs")),
    "SAO": (lambda: methods.SAO(), ("logprobs", "behavior_logprobs", "values")),
    "BPCO": (lambda: methods.BPCO(), ("logprobs", "behavior_logprobs", "values")),
}


def make_batch(B: int, T: int, dtype: torch.dtype, device: torch.device, seed: int = 0) -> Batch:
    g = torch.Generator().manual_seed(seed)
    lp = (-1.0 + 0.1 * torch.randn(B, T, generator=g)).clamp(max=-1e-4)
    blp = (lp + 0.01 * torch.randn(B, T, generator=g)).clamp(max=-1e-4)
    put = lambda x: x.to(dtype).to(device)  # noqa: E731
    return Batch(rewards=(torch.rand(B, generator=g) < 0.5).float().to(device), logprobs=put(lp),
                 behavior_logprobs=put(blp), teacher_logprobs=put(lp - 0.05), values=put(torch.rand(B, T, generator=g)),
                 groups=(torch.arange(B) // GROUP).to(device))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fn: Callable[[], Any], repeat: int, device: torch.device) -> float:
    fn()  # warm-up: first-call imports, allocator, kernels
    sync(device)
    times = []
    for _ in range(repeat):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def copy_bandwidth(device: torch.device, nbytes: int, repeat: int) -> float:
    """Bytes moved per second (read + write) by a device-to-device copy of nbytes."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src), repeat, device)
    return 2 * src.numel() * 4 / (ms * 1e-3)


def peak_units(fn: Callable[[], Any], device: torch.device, unit: int) -> float:
    if device.type == "cuda":
        sync(device)
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        out = fn()
        sync(device)
        peak = torch.cuda.max_memory_allocated(device) - base
        del out
        return peak / unit
    with MemoryTracker() as tracker:
        out = fn()
    del out
    return tracker.peak / unit


def counts(fn: Callable[[], Any]) -> tuple[int, int]:
    with OpCounter() as c:
        fn()
    return c.ops, c.syncs


def agreement(make: Callable[[], Any], batch: Batch, coef: torch.Tensor) -> float:
    ref = make().update(batch.to(dtype=torch.float64, device="cpu")).coefficients
    scale = float(ref.abs().max()) or 1.0
    return float((coef.detach().cpu().double() - ref).abs().max()) / scale


def bench_rule(name: str, B: int, T: int, dtype: torch.dtype, device: torch.device, args: Any, bw: float) -> dict:
    make, fields = RULES[name]
    batch = make_batch(B, T, dtype, device)
    hot = lambda: make().update(batch, stats=False, validate=False)  # noqa: E731
    default = lambda: make().update(batch)  # noqa: E731
    t_hot = median_ms(hot, args.repeat, device)
    t_default = median_ms(default, args.repeat, device)
    in_bytes = sum(getattr(batch, f).element_size() for f in fields) * B * T + B * T  # + the bool mask
    floor_ms = (in_bytes + 4 * B * T) / bw * 1e3  # bytes read + written, at a copy's read + write rate
    unit = B * T * batch.logprobs.element_size()
    peak = peak_units(hot, device, unit)
    hot_ops, hot_syncs = counts(hot)
    def_ops, def_syncs = counts(default)
    err = agreement(make, batch, hot().coefficients) if B * T <= args.agree_max else float("nan")
    return {"rule": name, "B": B, "T": T, "dtype": str(dtype).replace("torch.", ""), "hot_ms": t_hot,
            "default_ms": t_default, "floor_ms": floor_ms, "x_floor": t_hot / floor_ms,
            "default_x_hot": t_default / t_hot, "peak_tensors": peak, "hot_ops": hot_ops, "hot_syncs": hot_syncs,
            "default_ops": def_ops, "default_syncs": def_syncs, "err_vs_f64": err}


def bench_verl(B: int, T: int, device: torch.device, repeat: int) -> list[dict]:
    """verl's GRPO estimators on the same batch (float32), beside our GRPO update + loss + backward."""
    try:
        import numpy as np
        from verl.trainer.ppo import core_algos
    except Exception:  # noqa: BLE001 - verl absent or not importable here: nothing to compare
        return []
    batch = make_batch(B, T, torch.float32, device)
    scores = torch.zeros(B, T, device=device)
    scores[:, -1] = batch.rewards
    mask = torch.ones(B, T, device=device)
    index = np.array([str(int(g)) for g in (torch.arange(B) // GROUP)], dtype=object)
    rows = []
    for est in ("grpo", "grpo_vectorized"):
        try:
            fn = core_algos.get_adv_estimator_fn(est)
            ms = median_ms(lambda: fn(token_level_rewards=scores, response_mask=mask, index=index), repeat, device)
        except Exception as exc:  # noqa: BLE001 - an estimator this verl lacks, or whose signature changed
            rows.append({"rule": f"verl {est}", "B": B, "T": T, "error": repr(exc)[:120]})
            continue
        rows.append({"rule": f"verl {est}", "B": B, "T": T, "ms": ms})
    lp = batch.logprobs.clone().requires_grad_(True)

    def ours() -> None:
        methods.GRPO(group_size=GROUP).update(batch, stats=False, validate=False).loss(lp).backward()

    rows.append({"rule": "GRPO update+loss+backward", "B": B, "T": T, "ms": median_ms(ours, repeat, device)})
    return rows


def parse_size(text: str) -> tuple[int, int]:
    b, t = text.lower().split("x")
    return int(b), int(t)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=None, help="BxT, e.g. 2048x1024 (default: by device)")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    parser.add_argument("--agree-max", type=int, default=2**25, help="skip the float64 check above B*T")
    parser.add_argument("--policy", choices=["auto", "cpu", "device"], default="auto",
                        help="auto: the device's own; device on a CPU runs the GPU's code path (as CI does)")
    parser.add_argument("--no-verl", action="store_true")
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    default_sizes = ["2048x1024", "8192x4096"] if device.type == "cuda" else ["256x256", "1024x1024"]
    sizes = [parse_size(s) for s in (args.sizes or default_sizes)]
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    bw = copy_bandwidth(device, min(2**30, max(2**24, 4 * max(b * t for b, t in sizes))), args.repeat)
    print(f"torch {torch.__version__} on {name}, {args.policy} policy; copy bandwidth {bw / 1e9:.0f} GB/s (read + write), "
          f"median of {args.repeat}")
    head = (f"{'rule':20s} {'size':>10s} {'dtype':>8s} {'hot ms':>8s} {'default':>8s} {'floor':>7s} {'x floor':>7s} "
            f"{'def/hot':>7s} {'peak':>5s} {'ops hot/def':>11s} {'syncs':>5s} {'err':>8s}")
    print(head)
    print("-" * len(head))
    rows: list[dict] = []
    for B, T in sizes:
        for dt_name in args.dtypes:
            dtype = getattr(torch, dt_name)
            for rule_name in args.rules:
                with contextlib.ExitStack() as stack:
                    if args.policy != "auto":
                        stack.enter_context(use_policy(args.policy))
                    r = bench_rule(rule_name, B, T, dtype, device, args, bw)
                rows.append(r)
                print(f"{rule_name:20s} {f'{B}x{T}':>10s} {r['dtype']:>8s} {r['hot_ms']:8.3f} {r['default_ms']:8.3f} "
                      f"{r['floor_ms']:7.3f} {r['x_floor']:6.1f}x {r['default_x_hot']:6.2f}x {r['peak_tensors']:5.2f} "
                      f"{r['hot_ops']:5d}/{r['default_ops']:<5d} {r['hot_syncs']}/{r['default_syncs']:<3d} "
                      f"{r['err_vs_f64']:8.1e}", flush=True)
        if not args.no_verl:
            for r in bench_verl(B, T, device, args.repeat):
                rows.append(r)
                print(f"{r['rule']:28s} {f'{B}x{T}':>10s} " + (f"{r['ms']:8.3f} ms" if "ms" in r else r["error"]))
    print("peak: extra memory of the hot path in [B, T] tensors of the input dtype; syncs: hot/default; "
          "err: max |c - c64| / max |c64|.")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": name, "copy_bandwidth": bw, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
