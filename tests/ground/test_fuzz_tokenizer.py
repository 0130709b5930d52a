"""Tokenizers on any input: arbitrary Unicode round-trips, lone surrogates are one readable
error, huge runs stay fast, and tiktoken agrees with the pure-Python reference.

``benchmarks/bench_fuzz.py`` runs these properties with larger budgets."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmscope
from lmscope.errors import LmscopeError, TokenizerError
from lmscope.tokenizers import CharTokenizer, gpt2_tokenizer

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A run of one character must tokenize about as fast as prose of its length: within this many
# times the same tokenizer's time on prose, measured beside it (the slowest run here, emoji
# through the pure-Python reference, takes 3x; a blow-up with the run's length, 100x and more).
# Measured beside it so a busy CI machine slows both; the slack covers a stall of a few ms.
RUN_FACTOR = 25
RUN_SLACK_S = 2.0

# Valid text: every code point but surrogates (which have no UTF-8 form).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)
# Text as it arrives from outside: surrogates too, and pieces that tokenizers treat specially.
ANY_TEXT = st.lists(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
    | st.sampled_from(["<|endoftext|>", "<|endoftext", "\r\n", "   ", "'s", "\ufeff", "\u200d"]),
    max_size=8,
).map("".join)
RUN_CHARS = st.sampled_from(["a", " ", "\n", "-", "é", "中", "🙂", "1", "!", "ab", "the ", "\x00"])


@cache
def prose() -> str:
    corpus = Path(lmscope.__file__).parent / "assets/corpora/tinyshakespeare/input.txt"
    return corpus.read_text("utf-8")


@cache
def shipped_model():
    return lmscope.load("shakespeare")


def shipped():
    return shipped_model().tokenizer


def tokenizers():
    """(name, tokenizer) pairs: the shipped BPE on both backends, GPT-2's on both."""
    gpt2 = gpt2_tokenizer()
    return [
        ("shipped", shipped()),
        ("shipped-python", shipped().reference),
        ("gpt2", gpt2),
        ("gpt2-python", gpt2.reference),
    ]


def _round_trip(tok, text: str) -> None:
    ids = tok.encode(text)
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text
    assert b"".join(tok.token_bytes(i) for i in ids) == text.encode("utf-8")


@pytest.mark.slow
@FUZZ
@given(text=TEXT)
def test_any_text_round_trips_and_backends_agree(text):
    for _, tok in tokenizers():
        _round_trip(tok, text)
    for fast, slow in [(shipped(), shipped().reference), (gpt2_tokenizer(), None)]:
        slow = slow or fast.reference
        assert fast.encode(text) == slow.encode(text)
        assert [e.id for e in slow.explain(text)] == slow.encode(text)


@pytest.mark.slow
@FUZZ
@given(text=ANY_TEXT)
def test_any_input_is_ids_or_one_readable_error(text):
    for _, tok in tokenizers():
        try:
            ids = tok.encode(text)
        except TokenizerError as err:
            assert any(0xD800 <= ord(c) <= 0xDFFF for c in text), err
            assert "surrogate" in str(err) and "\n" not in str(err)
        else:
            assert tok.decode(ids) == text


@FUZZ
@given(text=ANY_TEXT)
def test_the_model_refuses_bad_text_in_one_line(text):
    model = shipped_model()
    try:
        ids = model.encode(text)
    except LmscopeError as err:  # empty, too long for the context, or a lone surrogate
        assert "\n" not in str(err)
    else:
        assert 1 <= len(ids) <= model.config.n_ctx


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(chars=RUN_CHARS, length=st.integers(1_000, 200_000))
def test_huge_runs_stay_fast(chars, length):
    text = (chars * (length // len(chars) + 1))[:length]
    usual_text = prose()[:length]
    for name, tok in tokenizers():
        start = time.perf_counter()
        tok.encode(usual_text)
        usual = time.perf_counter() - start
        start = time.perf_counter()
        ids = tok.encode(text)
        took = time.perf_counter() - start
        assert took < RUN_FACTOR * usual + RUN_SLACK_S, (
            f"{name}: {length:,} x {chars!r} took {took:.2f} s, prose of its length {usual:.2f} s"
        )
        assert tok.decode(ids) == text


@FUZZ
@given(text=TEXT, extra=st.text(max_size=5))
def test_character_vocabulary_names_unknown_characters(text, extra):
    tok = CharTokenizer.from_text(text or "a")
    assert tok.decode(tok.encode(text)) == text
    try:
        tok.encode(text + extra)
    except TokenizerError as err:
        assert "\n" not in str(err)


@pytest.mark.parametrize("bad", [None, 5, b"bytes", ["a"]])
def test_non_text_is_refused(bad):
    for _, tok in tokenizers():
        with pytest.raises(LmscopeError):
            tok.encode(bad)
