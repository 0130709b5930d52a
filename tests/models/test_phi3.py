"""Phi-3 (Llama with fused qkv_proj and gate_up_proj) against transformers' Phi3ForCausalLM,
from a Hugging Face folder and from a GGUF file of the same weights, on a random tiny config
with a sliding window shorter than the prompt."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_families import (
    Recorder,
    assert_cache_continues,
    assert_matches_transformers,
    assert_saved_folder_reloads,
    load_gguf_privately,
    random_ids,
    save_random,
    write_family_gguf,
)
from lmscope.explain.report import report
from lmscope.models.phi3 import Phi3

WINDOW = 6


@pytest.fixture(scope="module")
def phi3(tmp_path_factory):
    folder = tmp_path_factory.mktemp("phi3")
    hf = save_random(folder, "phi3", sliding_window=WINDOW)
    gguf = write_family_gguf(folder / "tiny-phi3.gguf", hf, folder)
    return hf, lmscope.load(folder), load_gguf_privately(gguf)


def test_folder_and_gguf_equal_transformers(phi3):
    hf, folder, gguf = phi3
    ids = random_ids(hf.config.vocab_size, 20)
    for model in (folder, gguf):
        assert type(model.net) is Phi3
        assert model.net.config.sliding_window == WINDOW
        rec = assert_matches_transformers(hf, model.net, ids)
        pattern = rec.tensors["blocks.0.attn.hook_pattern"]
        assert pattern[..., 10, : 10 - WINDOW + 1].abs().max() == 0  # beyond the window
        assert pattern[..., 10, 10 - WINDOW + 1 : 11].min() > 0
    assert gguf.meta["architecture"] == "phi3"


def test_probes_are_the_parts_of_the_fused_outputs(phi3):
    """hook_q, hook_k, hook_v are qkv_proj's output cut in three; mlp.hook_pre and
    hook_pre_linear its gate_up_proj's two halves (transformers' own modules compute them)."""
    hf, model, _ = phi3
    ids = random_ids(hf.config.vocab_size, 8, batch=1)
    rec = Recorder()
    with torch.no_grad():
        model.net(ids, hook=rec)
        layer = hf.model.layers[1]
        x = rec.tensors["blocks.1.ln1.hook_out"]
        qkv = layer.self_attn.qkv_proj(x)
        ours = [rec.tensors[f"blocks.1.attn.hook_{p}"].flatten(-2) for p in "qkv"]
        assert torch.equal(torch.cat(ours, dim=-1), qkv)
        gate_up = layer.mlp.gate_up_proj(rec.tensors["blocks.1.ln2.hook_out"])
        halves = (rec.tensors["blocks.1.mlp.hook_pre"], rec.tensors["blocks.1.mlp.hook_pre_linear"])
        assert torch.equal(torch.cat(halves, dim=-1), gate_up)


def test_generation_and_saved_folder(phi3, tmp_path):
    hf, model, _ = phi3
    ids = random_ids(hf.config.vocab_size, 12)
    assert_cache_continues(model.net, ids)
    assert_saved_folder_reloads(model.net, ids, tmp_path / "saved")


def test_the_explainer_runs(phi3):
    """The 20 steps build on Phi-3 (from its GGUF, with its tokenizer); the MLP step's SwiGLU
    adds up with the gate and up read from the fused matrix."""
    _, _, model = phi3
    r = report(model, "hi there", layer=1)
    assert [s.number for s in r.steps] == list(range(1, 21))
    mlp = next(s.data for s in r.steps if s.key == "mlp")
    assert (mlp.W_gate, mlp.W_down) == ([32, 48], [48, 32])
    assert mlp.down_max_error < 1e-5 and mlp.product_max_error < 1e-5
