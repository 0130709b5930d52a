"""Qwen3 (Llama + QK-norm) against transformers' Qwen3ForCausalLM, from a Hugging Face folder and
from a GGUF file of the same weights, on a random tiny config."""

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
from lmscope.engine.families import lineage
from lmscope.errors import CheckpointError
from lmscope.explain.report import report
from lmscope.models.qwen3 import Qwen3, Qwen3Config


@pytest.fixture(scope="module")
def qwen3(tmp_path_factory):
    folder = tmp_path_factory.mktemp("qwen3")
    hf = save_random(folder, "qwen3")
    gguf = write_family_gguf(folder / "tiny-qwen3.gguf", hf, folder)
    return hf, lmscope.load(folder), load_gguf_privately(gguf)


def test_folder_and_gguf_equal_transformers(qwen3):
    hf, folder, gguf = qwen3
    ids = random_ids(hf.config.vocab_size, 24)
    for model in (folder, gguf):
        assert type(model.net) is Qwen3
        # the explainer tells its own steps (QK-norm), and the rest as Llama does
        assert lineage(model.capabilities.family) == ("qwen3", "llama")
        assert_matches_transformers(hf, model.net, ids)
    assert gguf.meta["architecture"] == "qwen3"


def test_qk_norm_sits_between_projection_and_rope(qwen3):
    """hook_q is the projection, q_norm.hook_out the normalized head (transformers' q_norm of
    it), hook_rot_q its rotation; the same for k."""
    hf, model, _ = qwen3
    ids = random_ids(hf.config.vocab_size, 10, batch=1)
    rec = Recorder()
    with torch.no_grad():
        model.net(ids, hook=rec)
        theirs = hf.model.layers[1].self_attn
        for x in "qk":
            raw = rec.tensors[f"blocks.1.attn.hook_{x}"]
            normed = rec.tensors[f"blocks.1.attn.{x}_norm.hook_out"]
            assert (getattr(theirs, f"{x}_norm")(raw) - normed).abs().max() < 1e-5
            rms = rec.tensors[f"blocks.1.attn.{x}_norm.hook_normalized"].pow(2).mean(-1)
            assert torch.allclose(rms, torch.ones_like(rms), atol=1e-3)  # before the gain
            rotated = model.net.rotate(normed[0], range(10))
            assert (rotated - rec.tensors[f"blocks.1.attn.hook_rot_{x}"][0]).abs().max() < 1e-5


def test_generation_and_saved_folder(qwen3, tmp_path):
    hf, model, _ = qwen3
    ids = random_ids(hf.config.vocab_size, 12)
    assert_cache_continues(model.net, ids)
    assert_saved_folder_reloads(model.net, ids, tmp_path / "saved")


def test_unsupported_qwen3_variants_are_one_line():
    hf = dict(
        model_type="qwen3",
        vocab_size=10,
        hidden_size=8,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        use_sliding_window=True,
    )
    with pytest.raises(CheckpointError, match="sliding window") as err:
        Qwen3Config.from_hf(hf)
    assert "\n" not in str(err.value)
    with pytest.raises(CheckpointError, match="describes a 'llama' model"):
        Qwen3Config.from_hf({**hf, "model_type": "llama"})


def test_the_explainer_runs(qwen3):
    _, _, model = qwen3
    """The 20 steps build on Qwen3 (from its GGUF, with its tokenizer), every probe they name
    one the model records (logits aside: a trace keeps only the last row)."""
    r = report(model, "hi there", layer=1, head=3)
    assert [s.number for s in r.steps] == list(range(1, 21))
    trace = model.trace("hi there")
    assert all(p in trace for s in r.steps for p in s.probes if p != "logits")


def test_the_rope_step_rotates_the_normalized_q_and_k(qwen3):
    _, _, model = qwen3
    r = report(model, "hi there", layer=1, steps=["positional-encoding"])
    assert r.steps[0].data.rotation_max_error < 1e-5
