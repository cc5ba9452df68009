"""Eval tools' files read as-is, beside what a user would reach for instead.

1. A verifiers-0.3-shaped run folder (results.jsonl + metadata.json; 100k rows of message lists, metrics and
   timing objects, about 180 MB): `routing.route(routing.read_rows(folder))` beside polars' `read_ndjson` of the
   same results.jsonl, which parses the rows and routes nothing (the floor).
2. A 10k-sample inspect-ai `.eval` log (zstandard members, as inspect writes them; each sample is the fixture's
   real sample with its id and grade changed): read and route, beside the floor a user would write (zipfile +
   zstandard + json.loads of every sample, nothing routed).

Each is run in a fresh process, best of --repeat, with its peak RSS. Timings are printed, never asserted.

    python bench/eval_formats_bench.py [--rows 100000] [--samples 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
FIXTURE = ROOT / "tests" / "fixtures" / "eval_tools" / "inspect_ai" / "0.3.285" / "standin_sums.eval"
MODEL = "Qwen/Qwen3-8B"
WORDS = "the a model reward policy gradient token sample answer question prompt value step check".split()


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def verifiers_folder(rows: int, k: int = 4) -> Path:
    folder = OUT / f"vf_run_{rows}"
    results = folder / "results.jsonl"
    if results.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    rates = [rng.random() for _ in range(rows // k)]
    with open(results, "w") as f:
        for i in range(rows):
            task = i // k
            reward = float(rng.random() < rates[task])
            row = {"example_id": task,
                   "prompt": [{"role": "system", "content": text(rng, 40)}, {"role": "user", "content": text(rng, 60)}],
                   "completion": [{"role": "assistant", "content": text(rng, 120)}],
                   "task": "standin-sums", "info": {"source": "bench", "difficulty": rng.randint(1, 5)},
                   "answer": str(rng.randint(0, 999)), "reward": reward,
                   "metrics": {"correct_answer": reward, "format_reward": 1.0, "num_turns": 1.0},
                   "is_truncated": rng.random() < 0.01, "stop_condition": "has_final_answer",
                   "timing": {"generation_ms": rng.random() * 5000, "scoring_ms": rng.random() * 50,
                              "total_ms": rng.random() * 5050}}
            f.write(json.dumps(row) + "\n")
    (folder / "metadata.json").write_text(json.dumps({
        "env": "standin-sums", "model": MODEL, "num_examples": rows // k, "rollouts_per_example": k,
        "sampling_args": {"max_tokens": 512}, "date": "2026-12-01", "time_ms": 1.0, "avg_reward": None,
        "pass_threshold": 1.0}))
    return folder


def inspect_log(samples: int, epochs: int = 4) -> Path:
    out = OUT / f"inspect_{samples}.eval"
    if out.exists():
        return out
    import zstandard

    OUT.mkdir(parents=True, exist_ok=True)
    from pick_a_method.routing.readers.inspect_ai import _member

    with zipfile.ZipFile(FIXTURE) as z:
        header = _member(z, "header.json")
        template = json.loads(_member(z, "samples/sum-5_epoch_1.json"))
    rng = random.Random(0)
    c = zstandard.ZstdCompressor()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        def put(name: str, data: bytes) -> None:  # zstandard bytes, stored; _fix_sizes marks them method 93
            z.writestr(zipfile.ZipInfo(name), c.compress(data))
        writes = []
        for i in range(samples):
            sample = dict(template, id=f"task-{i // epochs}", epoch=i % epochs + 1,
                          scores={"boxed": dict(template["scores"]["boxed"], value=rng.choice("CI"))})
            writes.append((f"samples/task-{i // epochs}_epoch_{i % epochs + 1}.json", json.dumps(sample).encode()))
        writes.append(("header.json", header))
        for name, data in writes:
            put(name, data)
    _fix_sizes(out)
    return out


def _fix_sizes(path: Path) -> None:
    """zipfile wrote each member as stored; rewrite the central and local headers to say zstandard with the true
    uncompressed size (zipfile cannot write method 93 itself before Python 3.14)."""
    import struct
    import zstandard

    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
    d = zstandard.ZstdDecompressor()
    for info in infos:
        off = info.header_offset
        n, e = struct.unpack("<HH", data[off + 26:off + 30])
        body = bytes(data[off + 30 + n + e: off + 30 + n + e + info.compress_size])
        plain = d.decompress(body, max_output_size=1 << 30)
        struct.pack_into("<H", data, off + 8, 93)
        struct.pack_into("<I", data, off + 14, zlib.crc32(plain))
        struct.pack_into("<I", data, off + 22, len(plain))
    end = data.rfind(b"PK\x05\x06")
    cd = struct.unpack("<I", data[end + 16:end + 20])[0]
    pos = cd
    while data[pos:pos + 4] == b"PK\x01\x02":
        n, e, c = struct.unpack("<HHH", data[pos + 28:pos + 34])
        off = struct.unpack("<I", data[pos + 42:pos + 46])[0]
        struct.pack_into("<H", data, pos + 10, 93)
        struct.pack_into("<I", data, pos + 16, struct.unpack("<I", data[off + 14:off + 18])[0])
        struct.pack_into("<I", data, pos + 24, struct.unpack("<I", data[off + 22:off + 26])[0])
        pos += 46 + n + e + c
    path.write_bytes(bytes(data))


PROGRAMS = {
    "pick-a-method route": ("from pick_a_method import routing\n"
                            "import pyarrow.json, pyarrow.compute  # imported outside the timing, as polars is\n"
                            "import pick_a_method.routing.before_training.router, pick_a_method.routing.readers.registry\n"
                            "import pick_a_method.routing.readers.arrow_columns\n"
                            "r = routing.route(routing.read_rows(PATH), 'Qwen/Qwen3-8B'); assert r.route\n"),
    "pick-a-method route, hand-mapped": (  # before the eval tools' readers: the results file, fields named by hand
        "from pick_a_method import routing\n"
        "import pyarrow.json, pyarrow.compute\n"
        "import pick_a_method.routing.before_training.router, pick_a_method.routing.readers.registry\n"
        "import pick_a_method.routing.readers.arrow_columns\n"
        "r = routing.route(routing.read_rows(PATH, fields={'task_id': 'example_id', 'truncated': 'is_truncated'}),\n"
        "                  'Qwen/Qwen3-8B'); assert r.route\n"),
    "polars read_ndjson": "import polars as pl\ndf = pl.read_ndjson(PATH); assert df.height\n",
    "zipfile + zstandard + json": (
        "import json, zipfile, zstandard\n"
        "from pick_a_method.routing.readers.inspect_ai import _member\n"
        "z = zipfile.ZipFile(PATH)\n"
        "samples = [json.loads(_member(z, n)) for n in z.namelist() if n.startswith('samples/')]\n"
        "assert samples\n"),
}


def timed(program: str, path: Path) -> tuple[float, float]:
    """Seconds of the work (imports excluded) and peak RSS in MB, in a fresh process."""
    code = ("import resource, sys, time\n" + "\n".join(l for l in program.splitlines() if l.startswith(("import", "from")))
            + f"\nPATH = {str(path)!r}\nt = time.perf_counter()\n"
            + "\n".join(l for l in program.splitlines() if not l.startswith(("import", "from")))
            + "\nprint(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def race(label: str, path: Path, programs: list[str], repeat: int) -> None:
    size = sum(f.stat().st_size for f in ([path] if path.is_file() else path.iterdir())) / 1e6
    print(f"\n{label}: {path.name}, {size:.0f} MB")
    best = {}
    for _ in range(repeat):  # in turn, so a busy moment on the machine hits both alike
        for name in programs:
            target = path / "results.jsonl" if name.startswith("polars") or name.endswith("hand-mapped") else path
            s, rss = timed(PROGRAMS[name], target)
            if name not in best or s < best[name][0]:
                best[name] = (s, rss)
    for name, (s, rss) in best.items():
        print(f"  {name:34s} {s:7.3f} s   peak RSS {rss:7.0f} MB")
    floor = best[programs[-1]][0]
    for name in programs[:-1]:
        print(f"  {name}: {best[name][0] / floor:.2f}x of the floor")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    started = time.perf_counter()
    vf = verifiers_folder(args.rows)
    ev = inspect_log(args.samples)
    print(f"inputs ready in {time.perf_counter() - started:.1f} s (kept under bench/out/)")
    race("verifiers 0.3 run folder", vf, ["pick-a-method route", "pick-a-method route, hand-mapped",
                                          "polars read_ndjson"], args.repeat)
    race("inspect-ai .eval log", ev, ["pick-a-method route", "zipfile + zstandard + json"], args.repeat)


if __name__ == "__main__":
    main()
