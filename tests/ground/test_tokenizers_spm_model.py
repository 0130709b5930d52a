"""SentencePiece's own tokenizer.model files (repositories with no tokenizer.json, such as
Vicuna and other Llama 2 fine-tunes uploaded with the slow tokenizer), read without the
protobuf package and checked against SentencePiece itself on models it trains here."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_spm import train_sentencepiece as train
from lmscope.errors import TokenizerError
from lmscope.tokenizers import SentencePieceBPE, load_tokenizer
from lmscope.tokenizers.spm_model import read_sentencepiece_model

spm = pytest.importorskip("sentencepiece")

FIXED = [
    "Data visualization empowers users to",
    " Hello",
    "    Hello\n    Hello",
    "a   b\t\tc\n\n",
    "",
    " ",
    "数据可视化让用户能够 🤖 emoji",
    "12345 and 3.14159",
    "ſ e\u0301 \u00a0x",
]
# SentencePiece itself matches no special token in raw text ("<s>" is three characters to
# it), where Hugging Face and llama.cpp match them whole: such texts are left out here.
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="<"), max_size=40)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    path = train(tmp_path_factory.mktemp("spm"))
    return load_tokenizer(path.parent), spm.SentencePieceProcessor(model_file=str(path))


def _same(ours, theirs, text):
    ids = theirs.encode(text)
    assert ours.encode(text) == ids, (text, [theirs.id_to_piece(i) for i in ids])
    assert ours.decode(ids) == theirs.decode(ids)


@pytest.mark.parametrize("text", FIXED)
def test_fixed_texts_match_sentencepiece(pair, text):
    _same(*pair, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_any_text_matches_sentencepiece(pair, text):
    _same(*pair, text)


def test_what_the_model_file_says(pair, tmp_path):
    ours, theirs = pair
    assert isinstance(ours, SentencePieceBPE) and ours.vocab_size == theirs.piece_size()
    assert (ours.unk_id, ours.bos_id, ours.eos_id) == (0, 1, 2)
    assert ours.add_bos  # Llama's tokenizer puts <s> first unless its config says otherwise
    assert ours.encode("<s>hi")[0] == 1  # matched whole, as transformers and llama.cpp do
    folder = tmp_path / "no-bos"
    train(folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": False}))
    assert not load_tokenizer(folder).add_bos


def _one_line(call, match):
    with pytest.raises(TokenizerError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"model_type": "unigram"}, "Unigram"),
        ({"normalization_rule_name": "nmt_nfkc"}, "nmt_nfkc"),
        ({"remove_extra_whitespaces": True}, "extra whitespace"),
    ],
)
def test_models_lmscope_does_not_run_are_one_line(tmp_path, options, match):
    path = train(tmp_path, **options)
    _one_line(lambda: read_sentencepiece_model(path), match)


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_truncated_or_garbled_file_is_one_line(tmp_path, keep):
    data = train(tmp_path / "good").read_bytes()
    (tmp_path / "tokenizer.model").write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(TokenizerError) as info:
        load_tokenizer(tmp_path)
    assert "\n" not in str(info.value)
    (tmp_path / "tokenizer.model").write_bytes(b"\xff" * 64)
    _one_line(lambda: load_tokenizer(tmp_path), "tokenizer.model")
