"""The command line in its own words, checked the way a person meets it: every verdict and error
the CLI prints for the shipped examples, the config writers and their refusals is swept for MCP syntax
(`fields={...}`, `route({...})`, `pass model='X'`, a tool call's JSON); every flag a hint names exists; a mistyped
flag or command gets a did-you-mean; a missing taskset is named as the taskset; a CSV split by `;` or tabs routes
like one split by commas, and a wrong column is named from the split header."""

import json
import re
import shlex

import pytest

from rowkit import EXAMPLES, MODEL, TEACHER
from pick_a_method.methods.objects.registry import METHODS
from pick_a_method.server import cli
from pick_a_method.server.arguments import DECLARED

MIXED, STUDENT = str(EXAMPLES / "mixed.jsonl"), str(EXAMPLES / "student.jsonl")
ROUTES = [["route", str(f), "--model", MODEL, "--trainer", t] for f in sorted(EXAMPLES.glob("*.jsonl"))
          for t in ("prime-rl", "trl", "verl")]
ROUTES += [["route", MIXED, "--model", MODEL, "--throughput", "fast"],
           ["route", STUDENT, "--model", MODEL, "--teacher-rows", str(EXAMPLES / "teacher_strong.jsonl")],
           ["pass-at", MIXED], ["band", MIXED], ["truncated-passes", str(EXAMPLES / "cut_off.jsonl")],
           # token counts and throughput: the next step carries a GPU split (it was printed as the call's JSON)
           ["route", str(EXAMPLES / "sdk_rows.jsonl"), "--model", MODEL, "--gpus", "8", "--throughput", "2000,4000"]]
WRITERS = [[*w, m, "--model", MODEL] for m in ("grpo", "max_rl", "rae", "opd", "opsd", "async", "FlashReinforce",
                                                "sao", "groupwise_grading", "reinforce_ada", "sft", "dpo")
           for w in (["prime-rl-config", "reverse-text"], ["trl-config"], ["verl-config"])]
P = ["prime-rl-config", "reverse-text"]
REFUSALS = [[*P, "async", "--model", MODEL, "--knob", "correction=tis"],  # a custom loss: nested overrides
            [*P, "async", "--model", MODEL, "--knob", "method=opd"],  # Async's inner method as a knob
            [*P, "grpo", "--model", MODEL, "--knob", "group_size=1"],  # method='rae'
            [*P, "grpo", "--model", MODEL, "--slurm", "partition=gpu"],  # nodes=<machines>
            [*P, "grpo", "--model", MODEL, "--checkpoint", "resume=true"],  # run_name=..., checkpoint={...}
            ["prime-rl-config", "my-set", "grpo", "--model", MODEL, "--eval-split", "test"],  # eval_split={...}
            [*P, "grpo", "--model", MODEL, "--scheduler", "constant", "--warmup-steps", "5"],  # scheduler='linear'
            [*P, "grpo", "--model", "acme/my-finetune-of-qwen3"],  # renderer='default'
            [*P, "grpo", "--model", MODEL, "--out", "{tmp}/rl.toml"],  # written: then again without --overwrite
            ["trl-config", "grpo", "--model", MODEL, "--no-vllm"],  # vllm=False
            ["trl-config", "async", "--model", MODEL, "--knob", "correction=ipo"],  # correction='icepop'
            ["verl-config", "async", "--model", MODEL, "--knob", "correction=ipo"],
            ["route", "{tmp}/ten.jsonl", "--model", MODEL],  # a 0-10 scale: pass_threshold=10
            ["holdout-size", "--effect", "2"], ["preview-update", str(EXAMPLES / "traces.jsonl"), "--method", "nope"],
            ["teacher-clears", str(EXAMPLES / "teacher_weak.jsonl"), STUDENT],
            [*P, "grpo", "--model", MODEL, "--inference-gpus", "5"],  # gpus={'inference': 5, 'trainer': <n>}
            [*P, "grpo", "--model", MODEL, "--gpus", "1"]]  # gpus={'inference': n, 'trainer': m}

# MCP syntax: name=<Python literal> (not a Hydra key's a.b=, nor inside a --knob's quoted JSON, nor Async(...)),
# a tool call, a tool call's JSON, a tool's snake_case name, the argument pass_threshold, the field `text`.
MCP = re.compile(r"""(?<![\w.+\-/'"])(?<!\w\()[a-z][a-z_]*=[{'"<\[]|(?<![\w.+\-/])[a-z_]{3,}=(True|False|None)\b"""
                 r"""|\b(route|band|pass_at|truncated_passes|teacher_clears|holdout_size|preview_update|"""
                 r"""prime_rl_config|trl_config|verl_config)\(|"tool":|(?<!["\w])(prime_rl_config|trl_config|"""
                 r"""verl_config|holdout_size|preview_update|pass_at)(?![\w"])|(?<![\w"'])pass_threshold(?![\w"':])"""
                 r"""|`text`|\b[a-z][a-z-]*\(\{""")  # the last: a call shown as its JSON, prime-rl-config({...})


# What a tool or a method takes: name=value of anything else in a message is the trainer's own word.
ARGUMENTS = ({n for m in DECLARED for n in m.model_fields}
             | {f for cls in METHODS.values() for f in cls.model_fields})


def run(args, capsys):
    try:
        code = cli.main(args)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out + out.err


def flags():
    parser = cli._parser()
    return {o for a in parser._all_actions() for o in a.option_strings}


def test_no_output_of_the_cli_speaks_mcp(capsys, tmp_path):
    known, seen = flags(), {}
    (tmp_path / "ten.jsonl").write_text("".join(json.dumps({"task_id": f"t{i // 4}", "reward": i * 3 % 11,
                                                            "truncated": False, "model": MODEL}) + "\n"
                                                for i in range(80)))
    cases = ROUTES + WRITERS + REFUSALS + REFUSALS[8:9]
    for args in cases:
        args = [a.replace("{tmp}", str(tmp_path)) for a in args]
        _, text = run(args, capsys)
        for line in text.splitlines():
            if line.startswith(("  command: ", "#")):
                continue  # the trainer's own command (Hydra's key=value) and the config's comments: verbatim below
            line = re.sub(r"^next: run `[^`]*`", "next:", line)  # the trainer's command (trl grpo --config ...)
            for m in MCP.finditer(line):
                name = re.match(r"([a-z][a-z_]*)=", m[0])
                if name and name[1] not in ARGUMENTS:  # the trainer's own key (type="ipo", name='auto'), verbatim
                    continue
                seen.setdefault(line[max(0, m.start() - 60):m.end() + 40], " ".join(args))
            trainers_own = re.sub(r"`(?!pick-a-method )[^`]*`", "``", line)  # a trainer's command keeps its flags
            for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]+", trainers_own):
                assert flag in known, (flag, line, args)  # a hint names only flags the CLI has
    assert not seen, "\n".join(f"{v}:\n    {k}" for k, v in seen.items())
    assert len(cases) > 70


def test_the_configs_and_commands_are_printed_verbatim(capsys):
    """The words are changed in prose only: a Hydra override (a.b=1), a TOML or YAML line stays as written."""
    from pick_a_method.trainers.prime_rl import prime_rl_config
    from pick_a_method.trainers.verl import verl_config

    _, printed = run(["verl-config", "grpo", "--model", MODEL], capsys)
    command = verl_config("grpo", model=MODEL).command
    assert f"  command: {command}" in printed.splitlines() and "--config-name grpo-verl" in command
    _, printed = run(["prime-rl-config", "reverse-text", "grpo", "--model", MODEL], capsys)
    assert prime_rl_config("reverse-text", "grpo", model=MODEL).text in printed


@pytest.mark.parametrize(("args", "said"), [
    (["route", MIXED, "--modle", MODEL], "did you mean --model for --modle?"),
    (["route", MIXED, "--reward-feild", "correct"], "did you mean --reward-field for --reward-feild?"),
    (["rout", MIXED], "(did you mean route?)"),
    (["--trnsport", "http"], "did you mean --transport for --trnsport?"),  # argparse blames 'http' as a command
])
def test_a_mistyped_flag_or_command_gets_a_did_you_mean(args, said, capsys):
    code, text = run(args, capsys)
    assert code == 2 and said in text, text


@pytest.mark.parametrize(("args", "missing"), [
    (["prime-rl-config", "grpo", "--model", MODEL], "required: taskset ('grpo' is the method"),
    (["prime-rl-config", "--model", MODEL, "opd"], "required: taskset ('opd' is the method"),
    (["prime-rl-config", "FlashReinforce"], "required: taskset, --model ('FlashReinforce' is the method"),
    (["prime-rl-config", "refunds-v1", "--model", MODEL], "required: method (in this order"),
    (["teacher-clears", STUDENT], "required: STUDENT_ROWS (in this order"),
])
def test_the_missing_positional_is_the_one_named(args, missing, capsys):
    code, text = run(args, capsys)
    assert code == 2 and missing in text, text
    if "taskset (" in missing:
        assert "required: method" not in text


def _csv(path, delimiter, header=("task_id", "reward", "truncated", "model")):
    rows = [json.loads(line) for line in (EXAMPLES / "mixed.jsonl").read_text().splitlines()]
    lines = [delimiter.join(header)]
    lines += [delimiter.join([r["task_id"], str(r["reward"]), str(r["truncated"]).lower(), r["model"]]) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_csv_split_by_semicolons_or_tabs_routes_like_the_jsonl(capsys, tmp_path):
    _, expected = run(["route", MIXED, "--model", MODEL], capsys)
    for name, delimiter in (("comma", ","), ("semicolon", ";"), ("tab", "\t")):
        code, text = run(["route", _csv(tmp_path / f"{name}.csv", delimiter), "--model", MODEL], capsys)
        assert code == 0 and text.splitlines()[0] == expected.splitlines()[0], (name, text)


def test_a_semicolon_csv_with_another_task_column_names_its_columns(capsys, tmp_path):
    path = _csv(tmp_path / "rows.csv", ";", header=("id", "score", "cut", "model"))
    code, text = run(["route", path, "--model", MODEL], capsys)
    assert code == 2 and "['id', 'score', 'cut', 'model']" in text, text  # split at ';', not one long column
    assert "id;score" not in text and "--task-field" in text  # and the flag that reads it as it is


def test_every_command_a_hint_prints_parses(capsys, tmp_path):
    """A `pick-a-method ...` printed in a hint (not only the next step) is a command line the parser takes."""
    cases = [["route", str(EXAMPLES / "correct_two_arms.jsonl"), "--model", MODEL],
             ["verl-config", "opsd", "--model", MODEL], ["verl-config", "sft", "--model", MODEL],
             ["trl-config", "opsd", "--model", MODEL], ["route", str(EXAMPLES / "off_policy.jsonl"), "--model", MODEL]]
    parsed = 0
    for args in cases:
        _, text = run(args, capsys)
        for line in re.findall(r"`(pick-a-method [^`]+)`|^(?:next|or): (pick-a-method .+)$", text, re.M):
            line = "".join(line)
            words = [w if not w.startswith("<") else "x" for w in shlex.split(line)[1:]]
            words += ["--model", TEACHER] if words[0].endswith("-config") and "--model" not in words else []
            assert cli._parser().parse_args(words).command == words[0], line
            parsed += 1
    assert parsed >= 5


def test_a_next_step_with_a_gpu_split_runs_as_printed_and_writes_that_split(capsys, tmp_path):
    import tomllib

    code, text = run(["route", str(EXAMPLES / "sdk_rows.jsonl"), "--model", MODEL, "--gpus", "8", "--throughput",
                      "2000,4000", "--taskset", "reverse-text"], capsys)
    step = next(line for line in text.splitlines() if line.startswith("next: "))[len("next: "):]
    words = shlex.split(step)
    assert code == 0 and words[:2] == ["pick-a-method", "prime-rl-config"] and "--inference-gpus" in words
    split = {side: int(words[words.index(f"--{side}-gpus") + 1]) for side in ("inference", "trainer")}
    assert sum(split.values()) == 8
    code, text = run([*words[1:], "--out", str(tmp_path / "rl.toml")], capsys)
    deployment = tomllib.loads((tmp_path / "rl.toml").read_text())["deployment"]
    assert code == 0 and (deployment["num_infer_gpus"], deployment["num_train_gpus"]) == (split["inference"],
                                                                                          split["trainer"])


def test_the_tokenizer_question_is_answered_with_a_flag(capsys):
    """The warning names --tokenizers-match, and the flag answers it: a teacher with another tokenizer is refused."""
    teacher = str(EXAMPLES / "teacher_strong.jsonl")
    code, text = run(["teacher-clears", teacher, STUDENT], capsys)
    assert code == 0 and "--tokenizers-match true or --tokenizers-match false" in text
    code, text = run(["teacher-clears", teacher, STUDENT, "--tokenizers-match", "false"], capsys)
    assert code == 0 and text.startswith("tokenizer_mismatch:")
    code, text = run(["route", STUDENT, "--model", MODEL, "--teacher-rows", teacher, "--tokenizers-match", "true"],
                     capsys)
    assert code == 0 and text.startswith("opd:") and "tokenizers not compared" not in text


def test_paths_that_hold_a_tools_or_an_arguments_name_are_printed_as_they_are(capsys, tmp_path):
    """The words are translated, never a path: rows under pass_at/ or pass_threshold/ stay where they are."""
    import shutil

    for folder in ("pass_at", "pass_threshold", "knobs.d"):
        rows = tmp_path / folder / "student.jsonl"
        rows.parent.mkdir()
        shutil.copy(STUDENT, rows)
        code, text = run(["route", str(rows), "--model", "other/model"], capsys)
        assert code == 0 and str(rows) in text.replace("'", ""), text
        code, text = run(["band", str(rows.with_name("missing.jsonl"))], capsys)
        assert str(rows.with_name("missing.jsonl")) in text, text


def test_allow_write_expands_the_home_folder_for_plot_and_the_writers(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "out").mkdir()
    code, text = run(["prime-rl-config", "reverse-text", "grpo", "--model", MODEL, "--allow-write", "~/out",
                      "--out", str(tmp_path / "out" / "rl.toml")], capsys)
    assert code == 0 and (tmp_path / "out" / "rl.toml").exists(), text
    code, text = run(["--allow-write", "~/out", "band", MIXED, "--plot", str(tmp_path / "out" / "band.svg")], capsys)
    assert code == 0 and (tmp_path / "out" / "band.svg").exists(), text
