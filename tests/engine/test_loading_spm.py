"""Llama 2-style models, whose tokenizer is SentencePiece's BPE (Llama 2, Mistral v0.1,
TinyLlama): a Hugging Face folder and a GGUF file load with their tokenizer, text reaches the
model as transformers' tokenizer gives it (<s> first), the logits equal transformers', the
tokenization step explains the merges, and an exported copy tokenizes the same.

Before lmscope read these tokenizers, such a folder did not load at all ("a SentencePiece-style
BPE over characters, not a byte-level BPE") and such a GGUF was refused."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_gguf import TINY, random_weights, write_model
from helpers_hf import save_random_llama
from helpers_spm import as_sentencepiece_spaces, gguf_fields, spm_folder, spm_tokenizer
from lmscope.explain.tokens import explain_ids, tokenizer_view
from lmscope.tokenizers.spm_bpe import SentencePieceBPE

pytest.importorskip("tokenizers")

VOCAB = 1456  # helpers_spm's trained vocabulary
TEXT = "Data visualization empowers users to"


@pytest.fixture(scope="module")
def llama2_folder(tmp_path_factory):
    """A random Llama with a Llama 2-shaped tokenizer.json, as such a repository holds it."""
    folder = tmp_path_factory.mktemp("llama2")
    hf = save_random_llama(folder, "llama", vocab_size=VOCAB)
    spm_folder(folder, "normalizer")
    return folder, hf


@pytest.mark.slow
def test_a_llama2_folder_loads_with_its_tokenizer(llama2_folder):
    from transformers import AutoTokenizer

    folder, hf = llama2_folder
    model = lmscope.load(folder)
    assert isinstance(model.tokenizer, SentencePieceBPE)
    ids = model.to_ids(TEXT)
    assert ids == AutoTokenizer.from_pretrained(folder).encode(TEXT)
    assert ids[0] == 1  # <s>
    with torch.no_grad():
        ours = model.net(torch.tensor([ids]))[0][0]
        theirs = hf(torch.tensor([ids])).logits[0]
    assert (ours - theirs).abs().max() < 1e-4


def test_the_tokenization_step_explains_sentencepiece_merges(llama2_folder):
    folder, _ = llama2_folder
    model = lmscope.load(folder)
    trace = model.trace(TEXT)
    explained = explain_ids(model, trace.ids)
    assert explained is not None and [e.id for e in explained] == trace.ids
    view = tokenizer_view(model, trace, 1, explained)  # " Data", after <s>
    assert view.pretoken == " Data"
    assert view.merges and view.merges[-1].result == view.token.text
    assert view.token.text.startswith(" ")


def test_a_token_is_explained_on_its_own_when_the_text_splits_otherwise(llama2_folder):
    """A generated token need not be how the text re-tokenizes; then it is explained alone,
    and Llama 2's tokenizer puts a "▁" before even " D", so its text goes without the space."""
    folder, _ = llama2_folder
    model = lmscope.load(folder)
    trace = model.trace(TEXT)
    view = tokenizer_view(model, trace, 1, None)  # no explanation of the whole text
    assert view.token.text == view.pretoken == " D"  # (this vocabulary's first piece)
    assert view.merges[-1].result == " D" and view.note.startswith("explained on its own")


def test_generated_text_reads_without_the_prefix_space(llama2_folder):
    folder, _ = llama2_folder
    model = lmscope.load(folder)
    ids = model.to_ids(TEXT)
    assert model.tokenizer.decode(ids[1:]) == TEXT


@pytest.fixture
def gguf_path(tmp_path, monkeypatch):
    """A tiny llama GGUF whose vocabulary is model "llama" (tokens and scores)."""
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    dims = dict(TINY, vocab=VOCAB)
    path = tmp_path / "llama2.gguf"
    write_model(path, random_weights(dims), dims, sentencepiece=gguf_fields(spm_tokenizer()))
    return path


@pytest.mark.slow
def test_a_sentencepiece_gguf_loads_with_its_tokenizer(gguf_path, tmp_path):
    from transformers import AutoTokenizer

    from lmscope.commands.export import export_model

    model = lmscope.load(gguf_path)
    assert isinstance(model.tokenizer, SentencePieceBPE)
    theirs = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
    as_sentencepiece_spaces(theirs)  # SentencePiece's "▁" rule, as llama.cpp (see the tests)
    for text in [TEXT, "  two spaces", "数据 🤖", "[INST] hi [/INST]"]:
        assert model.to_ids(text) == theirs.encode(text)
    # a text that writes its own <s> (a chat template does) keeps just that one
    assert model.to_ids("<s>[INST] hi") == theirs.encode("<s>[INST] hi")[1:]
    assert model.trace(TEXT).ids == model.to_ids(TEXT)
    copy = lmscope.load(export_model(gguf_path, tmp_path / "copy"))
    assert isinstance(copy.tokenizer, SentencePieceBPE)
    for text in [TEXT, "  two spaces", "数据 🤖"]:
        assert copy.to_ids(text) == model.to_ids(text)


@pytest.mark.slow
def test_compare_scores_the_first_token_after_the_bos(llama2_folder):
    """Per-token losses read the document as the model was trained to: after <s> (it used to
    put </s>, the tokenizer's end-of-text token, first), and its pieces join to the text."""
    from lmscope.interpret.compare import compare, token_losses

    folder, _ = llama2_folder
    model = lmscope.load(folder)
    losses = token_losses(model, TEXT)
    ids = model.tokenizer.encode(TEXT)
    with torch.no_grad():
        logp = torch.log_softmax(model.logits([1, *ids]).float(), dim=-1)
    assert losses.losses[0] == pytest.approx(-float(logp[0, ids[0]]), rel=1e-5)
    assert "".join(losses.pieces) == TEXT
    assert compare(model, model, TEXT).unit == "token"
