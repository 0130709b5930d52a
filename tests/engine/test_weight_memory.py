"""Weights in huge pages (engine.weight_memory): loading moves a CPU Transformer's parameters into
one buffer advised to use transparent huge pages, and nothing a user can see changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import lmscope
from helpers_hf import save_random_llama
from lmscope.engine import weight_memory
from lmscope.engine.loading import save_model
from lmscope.engine.weight_memory import pack_weights

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
huge_pages = pytest.mark.skipif(
    not THP.is_file() or "[never]" in THP.read_text(), reason="no transparent huge pages here"
)


def mapping_of(address: int) -> dict[str, str]:
    """The /proc/self/smaps entry (its fields) of the mapping holding ``address``."""
    entry: dict[str, str] = {}
    inside = False
    for line in Path(f"/proc/{os.getpid()}/smaps").read_text().splitlines():
        first = line.split()[0]
        if "-" in first and ":" not in first:  # a new mapping: start-end perms ...
            start, end = (int(x, 16) for x in first.split("-"))
            if inside:
                break
            inside = start <= address < end
        elif inside:
            key, _, value = line.partition(":")
            entry[key] = value.strip()
    return entry


@pytest.fixture
def random_llama(tmp_path):
    save_random_llama(tmp_path, "llama", tie_word_embeddings=True)
    return tmp_path


@huge_pages
def test_loading_puts_every_weight_in_one_huge_page_buffer():
    model = lmscope.load("shakespeare")
    params = list(model.net.parameters())
    buffers = {p.untyped_storage().data_ptr() for p in params}
    assert len(buffers) == 1  # one buffer under every weight
    entry = mapping_of(params[0].data_ptr())
    assert "hg" in entry["VmFlags"].split()  # advised: huge pages
    assert entry["THPeligible"] == "1"


@huge_pages
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_packing_changes_no_number_and_keeps_ties(random_llama, dtype):
    from lmscope.engine.loading import load_hf_transformer

    net = load_hf_transformer(random_llama).to(dtype).eval()
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    with torch.no_grad():
        before = net(ids)[0]
    params = dict(net.named_parameters())
    old = {name: p.data_ptr() for name, p in params.items()}
    assert pack_weights(net)
    assert dict(net.named_parameters()) == params  # the same Parameter objects
    assert all(p.data_ptr() != old[name] for name, p in params.items())  # in new memory
    assert all(p.dtype == dtype and p.is_contiguous() for p in params.values())
    assert all(p.data_ptr() % weight_memory.ALIGN == 0 for p in params.values())
    assert net.lm_head is None  # tied: the unembedding reads the (moved) embedding
    with torch.no_grad():
        assert torch.equal(net(ids)[0], before)


def test_without_huge_pages_nothing_moves(random_llama, monkeypatch):
    from lmscope.engine.loading import load_hf_transformer

    monkeypatch.setattr(weight_memory, "_huge_pages_possible", lambda: False)
    net = load_hf_transformer(random_llama)
    old = [p.data_ptr() for p in net.parameters()]
    assert not pack_weights(net)
    assert [p.data_ptr() for p in net.parameters()] == old


def test_a_packed_model_saves_and_loads_back(random_llama, tmp_path):
    model = lmscope.load(random_llama)
    folder = save_model(model.net, tmp_path / "saved", tokenizer=model.tokenizer)
    again = lmscope.load(folder)
    ids = [3, 1, 4, 1, 5]
    assert torch.equal(again.logits(ids), model.logits(ids))


@huge_pages
@pytest.mark.parametrize("name", ["shakespeare", "random llama"])
def test_loading_copies_each_weight_once(name, random_llama, monkeypatch):
    """The network was built in ordinary memory, filled there, and then copied into the huge
    pages: two copies of every weight (0.8 s of SmolLM2's load). The buffer is now its home
    from the start, and the loaded weights are copied straight into it."""
    copied = []
    real = torch.Tensor.copy_

    def counting(self, src, *args, **kwargs):
        copied.append(self.numel() * self.element_size())
        return real(self, src, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "copy_", counting)
    model = lmscope.load("shakespeare" if name == "shakespeare" else random_llama)
    params = list(model.net.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in params)
    assert sum(copied) <= weight_bytes * 1.01
    assert len({p.untyped_storage().data_ptr() for p in params}) == 1  # still one buffer


@huge_pages
def test_a_half_precision_load_is_packed_in_its_own_dtype(random_llama):
    model = lmscope.load(random_llama, dtype="bfloat16")
    params = list(model.net.parameters())
    assert all(p.dtype == torch.bfloat16 for p in params)
    assert len({p.untyped_storage().data_ptr() for p in params}) == 1
    entry = mapping_of(params[0].data_ptr())
    assert "hg" in entry["VmFlags"].split()
