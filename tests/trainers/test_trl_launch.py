"""Two configs run for real: `trl grpo` as trl_config writes it, on two CPU processes through `accelerate launch`
(TRL's own CLI, its `multi_gpu` accelerate config), a tiny random Qwen3 and a local prompt set. Only what a CPU
test needs is added to the command: --use_cpu true, --use_vllm false, a short completion, one step, no loggers,
and a free rendezvous port (other runs may hold accelerate's default)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiny_trl  # noqa: E402

from pick_a_method.trainers.trl import trl_config  # noqa: E402

GROUP, BATCH, PROCESSES = 4, 8, 2
TIMEOUT_S = 180
TEARDOWN_S = 30  # seconds the ranks get to exit once the model is saved (under 1 s when the teardown works)
CPU_RUN = ["--use_cpu", "true", "--use_vllm", "false", "--max_completion_length", "6", "--max_steps", "1",
           "--report_to", "none"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-trl")
    return folder, tiny_trl.build(folder, GROUP)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop_every_rank(folder: Path) -> None:
    """Kill every process of this run still alive: torch's elastic agent starts each rank in a session of its own, so
    a rank outlives the launcher's process group (a rank left waiting on a dead peer once held the test for good)."""
    import psutil  # accelerate's own dependency, so present wherever TRL is

    for p in psutil.process_iter(["cmdline"]):
        if any(str(folder) in part for part in p.info["cmdline"] or []):
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass


def _launch(folder: Path, command: str) -> subprocess.CompletedProcess:
    """Run the written command; returncode 0 also where the ranks saved the model and then hung in TRL's last call,
    `trainer.end()` (the gloo process group's teardown): on a loaded 2-core machine that call waited for good about
    one run in four, after everything this test checks was done and written."""
    argv = command.split()
    assert argv[0] == "trl" and "--num_processes" in argv
    trl = Path(sys.executable).parent / "trl"  # the console script TRL installs, as a user runs it
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    # The output goes to files, not pipes: a rank that outlives the launcher would hold a pipe open, and reading it
    # would wait for that rank for good.
    logs = folder / "out.log", folder / "err.log"
    saved_at = None
    with open(logs[0], "w") as out, open(logs[1], "w") as err:
        proc = subprocess.Popen([str(trl), *argv[1:], "--main_process_port", str(_free_port()), *CPU_RUN],
                                cwd=folder, env=env, stdout=out, stderr=err, text=True, start_new_session=True)
        started = time.monotonic()
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if saved_at is None and "Model saved to" in logs[0].read_text(errors="replace"):
                    saved_at = now
                if now - started > TIMEOUT_S or (saved_at is not None and now - saved_at > TEARDOWN_S):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    break
                time.sleep(0.5)
        finally:
            _stop_every_rank(folder)
    stdout, stderr = (p.read_text(errors="replace") for p in logs)
    if proc.returncode == -signal.SIGKILL and saved_at is None:
        pytest.fail(f"the two-process run took over {TIMEOUT_S} s (about 20 s here); stdout: {stdout[-1000:]}; "
                    f"stderr: {stderr[-3000:]}")
    code = 0 if proc.returncode == -signal.SIGKILL else proc.returncode  # killed only in the teardown, after saving
    return subprocess.CompletedProcess(proc.args, code, stdout, stderr)


@pytest.mark.parametrize("method", ["grpo", "groupwise_grading"])
def test_two_processes_train_with_whole_groups(method, world):
    folder, paths = world
    reward = "grpo" if method == "grpo" else "groupwise"
    result = trl_config(method, model=paths["model"], dataset=paths["dataset"], knobs={"group_size": GROUP},
                        reward_funcs=[f"tiny_rewards.{reward}_reward"], gpus=PROCESSES, batch=BATCH, steps=1,
                        lora=False, out=folder / f"{reward}.yaml")  # peft is not a test dependency
    done = _launch(folder, result.command)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Training completed" in done.stdout
    seen = tiny_trl.seen(folder, reward)
    assert sorted(seen) == list(range(PROCESSES))  # every process scored its own share
    for calls in seen.values():
        for call in calls:
            assert call["n"] == BATCH // PROCESSES
            groups = [call["prompts"][i:i + GROUP] for i in range(0, call["n"], GROUP)]
            assert all(len(set(g)) == 1 for g in groups), groups  # each slice is whole groups of one prompt
    assert (folder / "outputs" / method / "config.json").is_file()
