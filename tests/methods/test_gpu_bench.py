"""bench/gpu_bench.py runs on a CPU (tiny sizes, the device policy), so CI keeps the GPU benchmark working."""

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gpu_bench.py"


def test_gpu_bench_runs_at_a_tiny_size(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("gpu_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "rows.json"
    assert bench.main(["--sizes", "32x256", "--repeat", "1", "--policy", "device", "--no-verl", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {r["rule"] for r in rows} == set(bench.RULES)
    assert {r["dtype"] for r in rows} == {"float32", "bfloat16"}
    for r in rows:
        assert r["hot_syncs"] == 0 and r["default_syncs"] == 1, r
        assert r["peak_tensors"] <= 6.1, r
        assert r["err_vs_f64"] < 1e-5, r
        assert r["hot_ms"] > 0 and r["floor_ms"] > 0 and r["x_floor"] > 0
    assert "x floor" in capsys.readouterr().out
