"""lmscope's tokenizers against llama.cpp on real vocabularies: Llama 2's SentencePiece one and
Phi-3's, Llama 3's, Qwen2's and GPT-2's byte-level ones, from llama.cpp's own tokenizer test
files (a vocabulary-only GGUF, test texts, and the ids llama.cpp gives them).

The files come from the llama-cpp-python source distribution on the package registry:
``python scripts/llama_cpp_vocabs.py fetch DIR``, then ``LMSCOPE_LLAMA_CPP_VOCABS=DIR``.
``.ci/run`` does both; without the variable these tests are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lmscope.testing.llama_cpp import VOCABS, cases, tokenizer_fields
from lmscope.tokenizers import SentencePieceBPE, tokenizer_from_gguf_fields
from tiers import slow_work

FOLDER = os.environ.get("LMSCOPE_LLAMA_CPP_VOCABS")
pytestmark = pytest.mark.skipif(
    not FOLDER, reason="LMSCOPE_LLAMA_CPP_VOCABS is not set (scripts/llama_cpp_vocabs.py fetch)"
)


@pytest.fixture(scope="module", params=VOCABS)
@slow_work  # real vocabularies of up to 152,000 tokens: seconds each to read
def vocabulary(request):
    path = Path(FOLDER) / f"ggml-vocab-{request.param}.gguf"
    return request.param, tokenizer_from_gguf_fields(tokenizer_fields(path))


@pytest.mark.slow
def test_every_text_gets_llama_cpps_ids(vocabulary):
    name, tok = vocabulary
    pairs = cases(Path(FOLDER), name)
    assert len(pairs) >= 40
    wrong = [(text, ids, tok.encode(text)) for text, ids in pairs if tok.encode(text) != ids]
    assert not wrong, wrong[:3]
    if not isinstance(tok, SentencePieceBPE):  # the pure-Python BPE behind the tiktoken one
        assert all(tok.reference.encode(text) == ids for text, ids in pairs)


def test_ids_decode_back_to_the_text(vocabulary):
    name, tok = vocabulary
    for text, ids in cases(Path(FOLDER), name):
        assert tok.decode(ids) == text


def test_the_sentencepiece_vocabularies_are_read_as_such(vocabulary):
    name, tok = vocabulary
    assert isinstance(tok, SentencePieceBPE) == (name in ("llama-spm", "phi-3"))
    if name == "llama-spm":
        assert (tok.vocab_size, tok.bos_id, tok.eos_id, tok.add_bos) == (32000, 1, 2, True)
        assert tok.encode(" Hello") == [29871, 15043]  # "▁" + "▁Hello": SentencePiece's prefix
