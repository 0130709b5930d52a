"""The preallocated KV cache gives bitwise the logits of the cache it replaced (a torch.cat of
every layer's keys and values on each step), in float32 and bfloat16, for GPT-2 and the Llama
family (grouped-query attention, a sliding window), across buffer growth and its cap."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_hf import save_random_hf_gpt2, save_random_llama
from lmscope.models.common import KVCache


class CatCache:
    """The cache before preallocation, kept here as the reference: torch.cat on every step."""

    def __init__(self, n_layer: int):
        self.keys: list = [None] * n_layer
        self.values: list = [None] * n_layer

    @property
    def length(self) -> int:
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def extend(self, layer, k, v):
        if self.keys[layer] is not None:
            k = torch.cat([self.keys[layer], k], dim=2)
            v = torch.cat([self.values[layer], v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    root = tmp_path_factory.mktemp("kv")
    save_random_hf_gpt2(root / "gpt2", n_positions=64)
    save_random_llama(root / "llama", "llama")
    save_random_llama(root / "mistral", "mistral", sliding_window=5)
    return {name: lmscope.load(root / name).net for name in ("gpt2", "llama", "mistral")}


def run_chunks(net, cache, ids, chunks):
    """A prompt chunk, single tokens, then a multi-token chunk after the cache."""
    out, start = [], 0
    with torch.no_grad():
        for size in chunks:
            out.append(net(ids[:, start : start + size], cache=cache)[0])
            start += size
    return torch.cat(out, dim=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "llama", "mistral"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_preallocated_cache_is_bitwise_the_concatenating_one(nets, name, dtype, monkeypatch):
    monkeypatch.setattr(KVCache, "MIN_POSITIONS", 4)  # grow several times in 40 positions
    net = nets[name].to(dtype)
    try:
        c = net.config
        ids = torch.randint(0, c.vocab_size, (2, 40), generator=torch.Generator().manual_seed(5))
        chunks = [9] + [1] * 12 + [19]
        new = run_chunks(net, net.new_cache(), ids, chunks)
        old = run_chunks(net, CatCache(c.n_layer), ids, chunks)
        assert torch.equal(new, old)
    finally:
        net.float()


def test_cache_shows_the_filled_part_and_grows_by_doubling_up_to_capacity(monkeypatch):
    monkeypatch.setattr(KVCache, "MIN_POSITIONS", 4)
    cache = KVCache(n_layer=1, capacity=10)
    k = torch.arange(2 * 3 * 5 * 2, dtype=torch.float32).view(2, 3, 5, 2)
    seen = []
    for start in range(5):
        keys, values = cache.extend(0, k[:, :, start : start + 1], -k[:, :, start : start + 1])
        seen.append(cache._keys[0].shape[2])
        assert torch.equal(keys, k[:, :, : start + 1]) and torch.equal(values, -keys)
    assert seen == [4, 4, 4, 4, 8]  # one reallocation, at the fifth position
    cache.extend(0, torch.zeros(2, 3, 5, 2), torch.zeros(2, 3, 5, 2))
    assert cache._keys[0].shape[2] == 10  # doubling stops at the model's context
    assert cache.length == 10 and cache.keys[0].shape == (2, 3, 10, 2)
    assert torch.equal(cache.keys[0][:, :, :5], k)


def test_generation_reuses_one_buffer_per_layer(nets):
    """A step writes its token in place: no layer's buffer is reallocated while it has room."""
    net = nets["gpt2"]
    cache = net.new_cache()
    with torch.no_grad():
        net(torch.zeros(1, 8, dtype=torch.long), cache=cache)
        buffers = [b.data_ptr() for b in cache._keys + cache._values]
        for _ in range(20):
            net(torch.zeros(1, 1, dtype=torch.long), cache=cache, last_only=True)
    assert [b.data_ptr() for b in cache._keys + cache._values] == buffers
    assert cache.length == 28


@pytest.mark.parametrize("name", ["gpt2", "llama", "mistral"])
def test_rows_of_different_lengths_step_together(nets, name):
    """decode_rows: sequences of 3, 7 and 12 tokens (past Mistral's 5-token window), each in
    its own cache, take four steps together; every row's logits are its own full forward
    pass's at that position."""
    net = nets[name]
    g = torch.Generator().manual_seed(9)
    seqs = [torch.randint(0, net.config.vocab_size, (1, n + 4), generator=g) for n in (3, 7, 12)]
    with torch.no_grad():
        full = [net(s)[0][0] for s in seqs]
        caches = [net.new_cache() for _ in seqs]
        for s, cache in zip(seqs, caches, strict=True):
            net(s[:, :-4], cache=cache)
        for step in range(4):
            at = [s.shape[1] - 4 + step for s in seqs]
            idx = torch.cat([s[:, t : t + 1] for s, t in zip(seqs, at, strict=True)])
            logits = net.decode_rows(idx, caches)
            assert logits.shape == (3, 1, net.config.vocab_size)
            for row, (f, t) in enumerate(zip(full, at, strict=True)):
                assert (logits[row, 0] - f[t]).abs().max() < 1e-4, (name, step, row)
    assert [c.length for c in caches] == [s.shape[1] for s in seqs]
