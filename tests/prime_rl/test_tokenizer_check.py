"""check_tokenizers: tiny tokenizers built on disk with the `tokenizers` library; never a download."""

from __future__ import annotations

import socket

import pytest

from pick_a_method.trainers.prime_rl import prime_rl_config
from pick_a_method.methods.tokenizer_check import TokenizerCheck, check_tokenizers

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

BASE_VOCAB = {"[UNK]": 0, "<eos>": 1, "<pad>": 2, "hello": 3, "world": 4, "refund": 5}


def save_tokenizer(folder, vocab, *, eos="<eos>", pad="<pad>", chat_template=None):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token=eos, pad_token=pad)
    if chat_template is not None:
        fast.chat_template = chat_template
    folder.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(folder))
    return str(folder)


@pytest.fixture(scope="module")
def toks(tmp_path_factory):
    root = tmp_path_factory.mktemp("toks")
    extra = {**BASE_VOCAB, "order": 6}
    swapped = {**BASE_VOCAB, "hello": 4, "world": 3}
    return {
        "teacher": save_tokenizer(root / "teacher", BASE_VOCAB, chat_template="{{ messages }}"),
        "same": save_tokenizer(root / "same", BASE_VOCAB, chat_template="{{ messages }}"),
        "bigger": save_tokenizer(root / "bigger", extra),
        "swapped": save_tokenizer(root / "swapped", swapped),
        "other_eos": save_tokenizer(root / "other_eos", BASE_VOCAB, eos="world", chat_template="{{ other }}"),
    }


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test."""
    calls = []

    def refuse(self, address, *a, **k):
        calls.append(address)
        raise AssertionError(f"network access attempted: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return calls


def test_same_tokenizer(toks, no_network):
    res = check_tokenizers(toks["teacher"], toks["same"])
    assert isinstance(res, TokenizerCheck)
    assert res.verdict == "same"
    assert res.teacher_vocab_size == res.student_vocab_size == len(BASE_VOCAB)
    assert res.only_in_teacher == res.only_in_student == res.different_ids == []
    assert res.special_tokens_differ == [] and res.chat_template_same is True
    assert res.special_tokens["eos_token"] == {"teacher": "<eos>", "student": "<eos>"}
    assert res.warnings == []
    assert "Same tokenizer" in res.summary
    assert no_network == []


def test_extra_token_is_different(toks, no_network):
    res = check_tokenizers(toks["teacher"], toks["bigger"])
    assert res.verdict == "different"
    assert (res.teacher_vocab_size, res.student_vocab_size) == (6, 7)
    assert res.only_in_student == ["order"] and res.only_in_student_count == 1
    assert res.only_in_teacher == [] and res.different_ids == []
    assert "sizes 6 (teacher) vs 7 (student)" in res.summary and "refused" in res.summary
    assert no_network == []


def test_same_tokens_different_ids_is_different(toks):
    res = check_tokenizers(toks["teacher"], toks["swapped"])
    assert res.verdict == "different"
    assert res.teacher_vocab_size == res.student_vocab_size
    assert sorted(res.different_ids) == ["hello", "world"] and res.different_ids_count == 2


def test_special_tokens_and_templates_are_reported(toks):
    res = check_tokenizers(toks["teacher"], toks["other_eos"])
    assert res.verdict == "same"  # the ids still mean the same text
    assert res.special_tokens_differ == ["eos_token"]
    assert res.special_tokens["eos_token"] == {"teacher": "<eos>", "student": "world"}
    assert res.chat_template_same is False
    assert any("Special tokens differ" in w for w in res.warnings)
    assert any("chat templates differ" in w for w in res.warnings)


def test_uncached_hub_id_is_unknown_without_network(toks, no_network):
    res = check_tokenizers("pick-a-method-test/not-a-real-model", toks["same"])
    assert res.verdict == "unknown"
    assert "teacher 'pick-a-method-test/not-a-real-model'" in res.summary
    assert "huggingface-cli download pick-a-method-test/not-a-real-model" in res.next_step.command
    assert res.teacher_vocab_size is None and res.warnings
    assert no_network == []


def test_missing_folder_and_broken_folder_are_unknown(toks, tmp_path):
    assert check_tokenizers(toks["teacher"], str(tmp_path / "missing")).verdict == "unknown"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{not json")
    (broken / "tokenizer_config.json").write_text("{}")
    res = check_tokenizers(str(broken), toks["teacher"])
    assert res.verdict == "unknown" and "teacher" in res.summary


def test_bad_names_are_value_errors():
    with pytest.raises(ValueError, match="teacher must be"):
        check_tokenizers("", "x")
    with pytest.raises(ValueError, match="student must be"):
        check_tokenizers("x", None)


def test_without_transformers_the_verdict_is_unknown(monkeypatch, toks):
    import builtins

    real_import = builtins.__import__

    def no_transformers(name, *a, **k):
        if name == "transformers" or name.startswith("transformers."):
            raise ImportError("No module named 'transformers'")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_transformers)
    res = check_tokenizers(toks["teacher"], toks["same"])
    assert res.verdict == "unknown" and "pip install transformers" in res.warnings[0]


def test_results_feed_prime_rl_config(toks):
    knobs = {"teacher": "Qwen/Qwen3-32B", "base_url": "http://localhost:8001/v1"}
    same = check_tokenizers(toks["teacher"], toks["same"])
    res = prime_rl_config("refunds-v1", "opd", model="Qwen/Qwen3-8B", knobs=knobs, tokenizers_match=same)
    assert not any("Tokenizers not checked" in w for w in res.warnings)
    assert any("compared" in w for w in res.warnings)  # the check was of folders, not of these two names
    different = check_tokenizers(toks["teacher"], toks["bigger"])
    with pytest.raises(ValueError, match="share a tokenizer.*sizes 6 \\(teacher\\) vs 7"):
        prime_rl_config("refunds-v1", "opd", model="Qwen/Qwen3-8B", knobs=knobs, tokenizers_match=different)
    with pytest.raises(ValueError, match="share a tokenizer"):
        prime_rl_config(
            "refunds-v1", "opd", model="Qwen/Qwen3-8B", knobs=knobs, tokenizers_match=different.model_dump(mode="json")
        )
