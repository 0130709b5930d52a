"""RNNLanguageModel: loading char-RNN folders, logits, streaming generation, activations, and
one-line errors for the wrong architecture or unknown characters."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import lmscope
from lmscope.engine.generation import generate
from lmscope.engine.loading import is_rnn_dir, load_rnn_dir, save_model
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import CheckpointError, InvalidInputError, TokenizerError
from lmscope.interpret.compare import compare, token_losses
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n"


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny step-by-step ops


@pytest.fixture(scope="module")
def tokenizer():
    return CharTokenizer.from_text(TEXT)


@pytest.fixture(scope="module")
def lstm_dir(tmp_path_factory, tokenizer):
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(tokenizer.vocab_size, "lstm", 24, 2, embed=8))
    folder = tmp_path_factory.mktemp("models") / "tiny-lstm"
    save_model(net, folder, tokenizer=tokenizer, meta={"name": "tiny-lstm"})
    return folder


@pytest.fixture(scope="module")
def lm(lstm_dir):
    return lmscope.load(lstm_dir)


def test_load_gives_an_rnn_model_with_the_basics(lm, lstm_dir, tokenizer):
    assert isinstance(lm, RNNLanguageModel) and is_rnn_dir(lstm_dir)
    assert lm.name == "tiny-lstm" and lm.tokenizer.vocab_size == tokenizer.vocab_size
    info = lm.info().to_dict()
    assert info["arch"] == "lstm" and info["n_layer"] == 2 and info["hidden"] == 24
    assert info["n_params"] == lm.net.num_params() and info["n_ctx"] is None
    assert "char-LSTM" in repr(lm)


def test_logits_are_the_fused_forward_from_a_zero_state(lm):
    ids = lm.tokenizer.encode("hear me")
    logits = lm.logits("hear me")
    assert logits.shape == (7, lm.config.vocab_size)
    expected = lm.net(torch.tensor([ids]))[0][0]
    torch.testing.assert_close(logits, expected)
    torch.testing.assert_close(lm.next_token_logits(ids), expected[-1])


def test_step_carries_state_like_one_long_pass(lm):
    ids = lm.tokenizer.encode("Before we proceed")
    whole, _ = lm.run(ids)
    first, state = lm.run(ids[:6])
    rest, _ = lm.run(ids[6:], state)
    torch.testing.assert_close(torch.cat([first, rest]), whole, atol=1e-5, rtol=1e-5)


def test_float16_folder_loads_close_to_float32(lm, tmp_path):
    save_model(lm.net, tmp_path / "half", tokenizer=lm.tokenizer, dtype=torch.float16)
    half = lmscope.load(tmp_path / "half")
    torch.testing.assert_close(half.logits("speak."), lm.logits("speak."), atol=2e-2, rtol=0)
    assert half.net.head.weight.dtype == torch.float32  # computed in float32


def test_generation_streams_reproducibly_and_greedy_is_argmax(lm):
    params = SamplingParams(temperature=0.8)
    a = [t.id for t in lm.generate("hear", 25, params, seed=3)]
    b = [t.id for t in generate(lm, "hear", 25, params, seed=3)]  # the shared entry point
    assert a == b and len(a) == 25
    tokens = list(lm.generate("hear", 5, SamplingParams(greedy=True)))
    ids = lm.tokenizer.encode("hear")
    for token in tokens:
        assert token.id == int(lm.logits(ids)[-1].argmax())
        assert token.position == len(ids) and token.pool_size == 1
        ids.append(token.id)
    assert list(lm.generate("hear", 0)) == []


def test_unknown_prime_characters_are_named_or_skipped(lm):
    with pytest.raises(TokenizerError, match="'Z'"):
        list(lm.generate("Zounds", 3))
    kept = lm.to_ids("Zounds!", skip_unknown=True)
    assert lm.decode(kept) == "ounds"
    with pytest.raises(InvalidInputError, match="no character"):
        lm.to_ids("ZZZ", skip_unknown=True)


def test_activations_expose_each_layer_per_character(lm):
    run = lm.activations("hear me")
    assert run.pieces == list("hear me") and run.logits.shape == (7, lm.config.vocab_size)
    assert [r.layer for r in run.layers] == [0, 1]
    assert run.layers[1].c.shape == (7, 24) and run.layers[0].f.shape == (7, 24)
    torch.testing.assert_close(run.logits, lm.logits("hear me"), atol=1e-5, rtol=1e-5)


def test_compare_scores_an_rnn_per_character(lm):
    scored = token_losses(lm, "hear me speak")
    logp = F.log_softmax(lm.logits("hear me speak"), dim=-1)
    ids = lm.tokenizer.encode("hear me speak")
    assert scored.losses[0] is None
    assert scored.losses[5] == pytest.approx(-float(logp[4, ids[5]]), abs=1e-5)
    result = compare(lm, lm, "hear me speak")
    assert result.mean_a == pytest.approx(result.mean_b)


def test_transformer_only_features_say_so_in_one_line(lm):
    with pytest.raises(InvalidInputError, match="char-LSTM; a trace of the 20 steps needs a Tr"):
        lm.trace("hear")
    assert not lm.capabilities.trace and lm.capabilities.activations


def test_start_and_step_continue_like_one_long_pass(lm):
    ids = lm.encode("hear the heart")
    whole, _ = lm.run(ids)
    logits, state = lm.start(ids[:6])
    torch.testing.assert_close(logits, whole[5], atol=1e-5, rtol=0)
    for i, token in enumerate(ids[6:], start=6):
        logits, state = lm.step(state, token)
        torch.testing.assert_close(logits, whole[i], atol=1e-5, rtol=0)


def test_a_gpt_folder_is_not_an_rnn(tmp_path, tokenizer):
    gpt = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, n_ctx=16, n_embd=8, n_layer=1, n_head=2))
    save_model(gpt, tmp_path / "gpt")
    assert not is_rnn_dir(tmp_path / "gpt")
    with pytest.raises(CheckpointError, match="holds a 'gpt' model, not a char-RNN"):
        load_rnn_dir(tmp_path / "gpt")
    assert not isinstance(lmscope.load(tmp_path / "gpt"), RNNLanguageModel)  # GPTs unchanged


def test_damaged_or_mismatched_folders_fail_clearly(lm, tmp_path):
    folder = save_model(lm.net, tmp_path / "mixed", tokenizer=CharTokenizer("abc"))
    with pytest.raises(CheckpointError, match="the tokenizer has 3 tokens"):
        lmscope.load(folder)
    other = CharRNN(CharRNNConfig(lm.config.vocab_size, "gru", 24, 2, embed=8))
    folder = save_model(other, tmp_path / "gru", tokenizer=lm.tokenizer)
    text = (folder / "lmscope.json").read_text().replace('"arch": "gru"', '"arch": "lstm"')
    (folder / "lmscope.json").write_text(text)
    with pytest.raises(CheckpointError, match="lacks a valid lstm"):
        lmscope.load(folder)


def test_export_writes_a_lean_float16_rnn_folder(lm, lstm_dir, tmp_path):
    from lmscope.commands.export import export_model

    out = export_model(lstm_dir, tmp_path / "lean", dtype="float16", name="lean-lstm")
    lean = lmscope.load(out)
    assert isinstance(lean, RNNLanguageModel) and lean.name == "lean-lstm"
    assert sorted(p.name for p in out.iterdir()) == [
        "chars.json",
        "lmscope.json",
        "model.safetensors",
    ]
    torch.testing.assert_close(lean.logits("hear"), lm.logits("hear"), atol=2e-2, rtol=0)


def test_saved_folders_are_readable_by_everyone_the_umask_allows(lm, tmp_path):
    import os

    folder = save_model(lm.net, tmp_path / "perm", tokenizer=lm.tokenizer)
    mask = os.umask(0o022)
    os.umask(mask)
    for path in [folder, *folder.iterdir()]:
        want = (0o777 if path.is_dir() else 0o666) & ~mask
        assert path.stat().st_mode & 0o777 == want, path.name
