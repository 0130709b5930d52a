"""Gemma 3 (text) against transformers' Gemma3ForCausalLM from a Hugging Face folder, on a random
tiny config with local and global layers and a prompt longer than the sliding window: the
sqrt(d_model) embedding scale, (1 + w) norms, sandwich blocks, QK-norm, GeGLU and two RoPE
bases."""

from __future__ import annotations

import math

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
from lmscope.errors import CheckpointError
from lmscope.explain.report import report
from lmscope.models.gemma3 import Gemma3, Gemma3Config

WINDOW = 5


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gemma3")
    hf = save_random(folder, "gemma3_text")
    # a GGUF has no query_pre_attn_scalar: llama.cpp scales by d_head^-1/2, as every Gemma 3
    # up to 12B does; the file is written from a model that does so too
    other = tmp_path_factory.mktemp("gemma3-gguf")
    hf_gguf = save_random(other, "gemma3_text", seed=1, query_pre_attn_scalar=16)
    gguf = write_family_gguf(other / "tiny-gemma3.gguf", hf_gguf, other)
    return hf, lmscope.load(folder), (hf_gguf, load_gguf_privately(gguf))


@pytest.fixture(scope="module")
def probes(gemma3):
    hf, model, _ = gemma3
    ids = random_ids(hf.config.vocab_size, 16, batch=1)
    rec = Recorder()
    with torch.no_grad():
        out = hf(ids, output_hidden_states=True)
        model.net(ids, hook=rec)
    return ids, out, rec.tensors


def test_folder_and_gguf_equal_transformers(gemma3):
    """From the folder and from a GGUF file written as llama.cpp does (norm gains stored as
    1 + w, the layer pattern and both RoPE bases in the metadata)."""
    hf, folder, (hf_gguf, gguf) = gemma3
    for reference, model in ((hf, folder), (hf_gguf, gguf)):
        assert type(model.net) is Gemma3
        c = model.net.config
        assert [c.is_local(i) for i in range(3)] == [True, False, True]
        assert (c.sliding_window, c.rope_local_theta, c.rope_theta) == (WINDOW, 1e4, 1e6)
        assert_matches_transformers(reference, model.net, random_ids(hf.config.vocab_size, 20))
    assert gguf.meta["architecture"] == "gemma3"


def test_embedding_is_scaled_by_the_root_of_d_model(probes):
    _, out, t = probes
    scaled = t["hook_embed"] * torch.tensor(math.sqrt(32.0))
    assert torch.equal(t["blocks.0.hook_resid_pre"], scaled)
    assert (scaled - out.hidden_states[0]).abs().max() < 1e-5


def test_the_four_norms_of_a_sandwich_block(gemma3, probes):
    """Each of ln1, ln1_post, ln2, ln2_post is transformers' own norm with its (1 + w) gain, and
    the post-norms' outputs are what the branches add to the residual stream."""
    hf, model, _ = gemma3
    _, _, t = probes
    theirs = hf.model.layers[1]
    pairs = {
        "ln1": theirs.input_layernorm,
        "ln1_post": theirs.post_attention_layernorm,
        "ln2": theirs.pre_feedforward_layernorm,
        "ln2_post": theirs.post_feedforward_layernorm,
    }
    for ours, norm in pairs.items():
        normalized = t[f"blocks.1.{ours}.hook_normalized"]
        gain = 1 + norm.weight
        assert (normalized * gain - t[f"blocks.1.{ours}.hook_out"]).abs().max() < 1e-6
        assert gain.min() < 1 < gain.max()  # stored w of both signs: the 1 matters
    resid = t["blocks.1.hook_resid_pre"] + t["blocks.1.ln1_post.hook_out"]
    assert torch.equal(t["blocks.1.hook_resid_mid"], resid)
    assert torch.equal(t["blocks.1.hook_mlp_out"], t["blocks.1.ln2_post.hook_out"])


def test_local_layers_slide_a_window_and_rotate_slower(probes):
    """A local layer's query sees its last WINDOW keys, a global one every earlier key; the
    local layers rotate q with base 10,000, the global one with base 1,000,000."""
    ids, _, t = probes
    last = ids.shape[1] - 1
    local = t["blocks.0.attn.hook_pattern"][0, :, last]
    assert (
        local[:, : last - WINDOW + 1].abs().max() == 0 and local[:, last - WINDOW + 1 :].min() > 0
    )
    assert t["blocks.1.attn.hook_pattern"][0, :, last].min() > 0
    for layer, theta in ((0, 1e4), (1, 1e6)):
        q = t[f"blocks.{layer}.attn.q_norm.hook_out"][0, 3]  # position 3, [head, d_head]
        half = q.shape[-1] // 2
        angles = 3 * theta ** (-torch.arange(half) * 2 / (2 * half))
        cos, sin = torch.cos(angles), torch.sin(angles)
        rotated = torch.cat(
            [q[:, :half] * cos - q[:, half:] * sin, q[:, half:] * cos + q[:, :half] * sin], -1
        )
        assert (rotated - t[f"blocks.{layer}.attn.hook_rot_q"][0, 3]).abs().max() < 1e-5


def test_geglu_gates_with_tanh_gelu(probes):
    _, _, t = probes
    gate, up = t["blocks.2.mlp.hook_pre"], t["blocks.2.mlp.hook_pre_linear"]
    expected = torch.nn.functional.gelu(gate, approximate="tanh") * up
    assert torch.equal(t["blocks.2.mlp.hook_post"], expected)


def test_generation_saved_folder_and_steps(gemma3, tmp_path):
    hf, model, _ = gemma3
    ids = random_ids(hf.config.vocab_size, 14)
    assert_cache_continues(model.net, ids)  # past the window: the cache keeps every key
    assert_saved_folder_reloads(model.net, ids, tmp_path / "saved")
    r = report(model, ids[0].tolist(), layer=0)
    assert [s.number for s in r.steps] == list(range(1, 21))


@pytest.mark.parametrize("joined", [True, False])
def test_lean_generation_steps_equal_transformers_past_the_window(gemma3, monkeypatch, joined):
    """Gemma3.decode_step (the one-row path generation runs) gives transformers' logits at
    every position, on both sides of the 5-key window, for two rows at once; decode_rows does
    the same for rows of different lengths, each past the window at its own step. Both with
    q, k, v (and gate, up) as one product over weights stored back to back, as a loaded model
    keeps them, and as one product each, where they are not."""
    from lmscope.models import step_plan
    from lmscope.models.common import DecoderLM

    hf, model, _ = gemma3
    net, calls = model.net, []
    monkeypatch.setattr(DecoderLM, "decode_step", lambda *a: calls.append(a))  # never taken
    attn = net.h[0].attn
    weights = [attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]
    if joined and step_plan.joined(weights) is None:
        pytest.skip("the weights are not packed here (no transparent huge pages)")
    if not joined:
        monkeypatch.setattr(step_plan, "joined", lambda weights: None)
    monkeypatch.delitem(vars(net), "_sandwich_plan", raising=False)  # gathered with this joined
    ids = random_ids(hf.config.vocab_size, 14, batch=2)
    with torch.no_grad():
        ref = hf(ids).logits
        cache = net.new_cache()
        net(ids[:, :2], cache=cache)
        for t in range(2, 14):
            step = net(ids[:, t : t + 1], cache=cache, last_only=True)[0]
            assert (step[:, 0] - ref[:, t]).abs().max() < 1e-4, t
        seqs = [ids[:1, :n] for n in (4, 9, 14)]
        full = [hf(s).logits[0] for s in seqs]
        caches = [net.new_cache() for _ in seqs]
        for s, row_cache in zip(seqs, caches, strict=True):
            net(s[:, :-3], cache=row_cache)
        for back in (3, 2, 1):
            idx = torch.stack([s[0, -back:][:1] for s in seqs])
            logits = net.decode_rows(idx, caches)
            for row, f in enumerate(full):
                assert (logits[row, 0] - f[-back]).abs().max() < 1e-4, (back, row)
    assert calls == [] and [c.length for c in caches] == [4, 9, 14]
    assert (net.sandwich_plan()[0].qkv.__name__ == "product") == joined


@pytest.mark.parametrize("which", ["h.1.ln_2_post", "h.0.attn.k_norm"])
def test_a_generation_step_sees_a_changed_norm_weight(gemma3, which):
    """The lean step keeps each norm's 1 + w (and every head's q and k gains side by side)
    between steps: an edit of the weight (in place, as an ablation or a load does, or a new
    Parameter) is seen by the next step."""
    _, model, _ = gemma3
    net = model.net
    ids = random_ids(net.config.vocab_size, 6)
    norm = net.get_submodule(which)

    def step() -> torch.Tensor:
        cache = net.new_cache()
        net(ids[:, :-1], cache=cache)
        return net(ids[:, -1:], cache=cache)[0][0, 0]

    def whole() -> torch.Tensor:
        return net(ids)[0][0, -1]

    saved = norm.weight.detach().clone()
    try:
        with torch.no_grad():
            before = step()
            norm.weight.mul_(-2.0)
            assert (step() - whole()).abs().max() < 1e-4
            assert (step() - before).abs().max() > 1e-2
            norm.weight = torch.nn.Parameter(torch.zeros_like(saved))
            assert (step() - whole()).abs().max() < 1e-4
    finally:
        norm.weight = torch.nn.Parameter(saved)
    with torch.no_grad():
        assert torch.equal(step(), before)


@pytest.mark.parametrize("edit", ["in place", "moved", "new parameter"])
def test_a_generation_step_sees_changed_projection_weights(gemma3, edit):
    """The step's weights are gathered once (``sandwich_plan``) and kept: a projection edited in
    place, moved to other memory (as a dtype cast or ``pack_weights`` moves it) or replaced is
    what the next step reads, and an unchanged model keeps the same plan."""
    _, model, _ = gemma3
    net = model.net
    ids = random_ids(net.config.vocab_size, 6)
    proj = net.h[1].mlp.up_proj

    def step() -> torch.Tensor:
        cache = net.new_cache()
        net(ids[:, :-1], cache=cache)
        return net(ids[:, -1:], cache=cache)[0][0, 0]

    saved, saved_data = proj.weight, proj.weight.data
    with torch.no_grad():
        before, plan = step(), net.sandwich_plan()
        assert net.sandwich_plan() is plan
        try:
            if edit == "in place":
                proj.weight.mul_(-3.0)
            elif edit == "moved":
                proj.weight.data = proj.weight.detach() * -3.0
            else:
                proj.weight = torch.nn.Parameter(saved.detach() * -3.0)
            assert (step() - net(ids)[0][0, -1]).abs().max() < 1e-4
            assert (step() - before).abs().max() > 1e-3
            assert net.sandwich_plan() is not plan
        finally:
            if edit == "in place":
                proj.weight.div_(-3.0)
            else:
                proj.weight = saved
                proj.weight.data = saved_data
        assert (step() - before).abs().max() < 1e-6


def test_unsupported_gemma3_variants_are_one_line():
    hf = dict(
        model_type="gemma3_text",
        vocab_size=10,
        hidden_size=8,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        head_dim=4,
    )
    for changes in (
        {"final_logit_softcapping": 30.0},
        {"rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0}}},
    ):
        with pytest.raises(CheckpointError) as err:
            Gemma3Config.from_hf({**hf, **changes})
        assert "\n" not in str(err.value)


def test_the_steps_rotate_and_normalize_as_each_layer_does(gemma3):
    """The RoPE step rotates the normalized q and k (QK-norm) with the layer's own base, and
    the norm step recomposes ln1's output with its (1 + w) gain."""
    hf, model, _ = gemma3
    ids = random_ids(hf.config.vocab_size, 12, batch=1)[0].tolist()
    for layer, theta in ((0, 1e4), (1, 1e6)):
        r = report(model, ids, layer=layer, steps=["positional-encoding", "layernorm"])
        rope, norm = (s.data for s in r.steps)
        assert rope.frequencies.theta == theta
        assert rope.rotation_max_error < 1e-5
        assert rope.check.max_abs_difference < 1e-4  # q·k depends on the distance only
        assert norm.recompose_max_error < 1e-5


def test_the_mlp_step_gates_with_the_models_own_activation(gemma3):
    hf, model, _ = gemma3
    ids = random_ids(hf.config.vocab_size, 8, batch=1)[0].tolist()
    mlp = report(model, ids, layer=2, steps=["mlp"]).steps[0].data
    assert mlp.curve.name == "GELU (tanh)"
    assert mlp.product_max_error < 1e-5 and mlp.down_max_error < 1e-5
