"""Loading a GGUF whose dequantized weights are cached: the second start is mostly the
tokenizer's tables and the weights' checksum, and they are made side by side."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

import lmscope
from helpers_gguf import TINY, random_weights, write_model
from lmscope.engine import loading
from lmscope.formats import weight_cache


@pytest.fixture
def cached_gguf(tmp_path, monkeypatch):
    """A tiny llama GGUF, loaded once so that its weight cache exists."""
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.gguf"
    write_model(path, random_weights(TINY), TINY)
    first = lmscope.load(path)
    return path, first


@pytest.mark.parametrize("verify", [False, True])
def test_the_tokenizer_is_built_while_the_cached_weights_are_checked(
    cached_gguf, monkeypatch, verify
):
    """SmolLM2's tokenizer tables take about 1 s to build and its cached weights' checksum
    0.6 s; one after the other they were a third of every start (every CLI command). The
    tokenizer is now built on another thread while the weights are checked (in full with
    $LMSCOPE_VERIFY_CACHE=1, else from the kept stamp), read and placed."""
    path, first = cached_gguf
    if verify:
        monkeypatch.setenv(weight_cache.VERIFY_ENV, "1")
    tokenizer_started = threading.Event()
    overlapped, summed = [], []
    real_tokenizer, real_sha = loading.tokenizer_from_gguf_fields, weight_cache.sha256_file
    real_read = weight_cache.load_file

    def tokenizer(fields, **kwargs):
        tokenizer_started.set()
        return real_tokenizer(fields, **kwargs)

    def sha(file):
        summed.append(Path(file).name)
        if Path(file).name == weight_cache.TENSORS_FILE:  # the cached weights' checksum
            overlapped.append(tokenizer_started.wait(timeout=60))  # False only if never
        return real_sha(file)

    def read(file):
        overlapped.append(tokenizer_started.wait(timeout=60))
        return real_read(file)

    monkeypatch.setattr(loading, "tokenizer_from_gguf_fields", tokenizer)
    monkeypatch.setattr(weight_cache, "sha256_file", sha)
    monkeypatch.setattr(weight_cache, "load_file", read)
    again = lmscope.load(path)
    assert overlapped == [True] * (1 + verify)
    assert summed == (["tiny.gguf", weight_cache.TENSORS_FILE] if verify else [])
    ids = [3, 1, 4, 1, 5]
    assert again.tokenizer.reference.merges == first.tokenizer.reference.merges
    assert torch.equal(again.logits(ids), first.logits(ids))


def test_a_tokenizer_that_fails_while_the_weights_load_fails_the_load_in_one_line(
    cached_gguf, monkeypatch
):
    from lmscope.errors import TokenizerError

    path, _ = cached_gguf

    def broken(fields, **kwargs):
        raise TokenizerError("the GGUF tokenizer names no pre-tokenizer")

    monkeypatch.setattr(loading, "tokenizer_from_gguf_fields", broken)
    with pytest.raises(TokenizerError, match="names no pre-tokenizer"):
        lmscope.load(path)


def test_a_damaged_cache_entry_builds_the_tokenizer_from_the_file(cached_gguf, monkeypatch):
    """Started from the cache entry's copy of the tokenizer fields, the tokenizer is made
    again from the GGUF's own fields when the entry proves damaged and differs from them."""
    path, first = cached_gguf
    entry = next((Path(weight_cache.cache_root()) / "gguf").iterdir())
    meta_file = entry / weight_cache.META_FILE
    import json

    meta = json.loads(meta_file.read_text())
    meta["tokenizer"]["merges"] = ["t 3"]  # a different tokenizer...
    meta["tensors_sha256"] = "0" * 64  # ...in an entry whose weights fail their checksum
    meta_file.write_text(json.dumps(meta))
    made = []
    real = loading.tokenizer_from_gguf_fields
    monkeypatch.setattr(
        loading,
        "tokenizer_from_gguf_fields",
        lambda fields, **kw: made.append(fields["merges"]) or real(fields, **kw),
    )
    again = lmscope.load(path)
    assert [list(m) for m in made][-1] == ["t 1", "t 2"]
    assert again.tokenizer.reference.merges == first.tokenizer.reference.merges


def test_the_threads_take_short_turns_while_the_tokenizer_is_built(cached_gguf, monkeypatch):
    """Each torch call of the load waits for the interpreter's lock while the tokenizer's
    thread runs Python; at the default 5 ms turns a cached Gemma 3 load spent seconds waiting.
    The turns are short while both run, and the interval is as it was after."""
    import sys

    from lmscope.engine.turns import TURN_S

    path, _ = cached_gguf
    seen = []
    real = loading.tokenizer_from_gguf_fields
    monkeypatch.setattr(
        loading,
        "tokenizer_from_gguf_fields",
        lambda fields, **kw: seen.append(sys.getswitchinterval()) or real(fields, **kw),
    )
    before = sys.getswitchinterval()
    lmscope.load(path)
    assert seen == [pytest.approx(TURN_S)] and sys.getswitchinterval() == before
