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
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiny_trl  # noqa: E402

from pick_a_method.methods.trl import trl_config  # noqa: E402

GROUP, BATCH, PROCESSES = 4, 8, 2
TIMEOUT_S = 180
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


def _launch(folder: Path, command: str) -> subprocess.CompletedProcess:
    argv = command.split()
    assert argv[0] == "trl" and "--num_processes" in argv
    trl = Path(sys.executable).parent / "trl"  # the console script TRL installs, as a user runs it
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    # Its own session: on a timeout the launcher and both ranks go together (killing the launcher alone left a rank).
    proc = subprocess.Popen([str(trl), *argv[1:], "--main_process_port", str(_free_port()), *CPU_RUN], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the two-process run took over {TIMEOUT_S} s (about 20 s here); stderr: {err[-3000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


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
