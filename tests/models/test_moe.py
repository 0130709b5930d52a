"""Mixtures of experts (Qwen3-MoE and Mixtral) against transformers, from Hugging Face folders
and from GGUF files of the same weights, on random tiny configs: the logits, and which experts
each token is routed to with which weights (from transformers' own router logits)."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_families import (
    assert_cache_continues,
    assert_matches_transformers,
    assert_saved_folder_reloads,
    load_gguf_privately,
    random_ids,
    save_random,
    write_family_gguf,
)
from lmscope.engine.steps import STEPS
from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.explain.report import report
from lmscope.models.moe import MoE, MoEConfig

CASES = {
    "qwen3_moe": ("qwen3_moe", dict(norm_topk_prob=False)),
    # the first layer dense (Hugging Face's mlp_only_layers), chosen weights renormalized
    "qwen3_moe_dense_first": ("qwen3_moe", dict(norm_topk_prob=True, mlp_only_layers=[0])),
    "mixtral": ("mixtral", {}),
    "mixtral_window": ("mixtral", dict(sliding_window=7)),  # no GGUF: llama.cpp's has none
}


@pytest.fixture(scope="module", params=list(CASES))
def moe(request, tmp_path_factory):
    family, overrides = CASES[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    hf = save_random(folder, family, **overrides)
    loaded = [lmscope.load(folder)]
    if not overrides.keys() & {"mlp_only_layers", "sliding_window"}:  # as llama.cpp writes them
        gguf = write_family_gguf(folder / f"tiny-{family}.gguf", hf, folder)
        loaded.append(load_gguf_privately(gguf))
    return request.param, hf, loaded


def router_choices(hf, ids: torch.Tensor, top_k: int, normalize: bool) -> dict[int, tuple]:
    """Per sparse layer: transformers' router logits (read by a hook on its gate), and the
    experts and weights they choose, computed from them here."""
    logits: dict[int, torch.Tensor] = {}
    handles = []
    for layer, block in enumerate(hf.model.layers):
        gate = getattr(block.mlp, "gate", None)
        if gate is None:  # a dense layer
            continue

        def keep(module, args, output, layer=layer):
            logits[layer] = output[0] if isinstance(output, tuple) else output

        handles.append(gate.register_forward_hook(keep))
    with torch.no_grad():
        hf(ids)
    for handle in handles:
        handle.remove()
    out = {}
    for layer, raw in logits.items():
        probs = torch.softmax(raw.float(), dim=-1)
        weights, chosen = probs.topk(top_k, dim=-1)
        if normalize:
            weights = weights / weights.sum(-1, keepdim=True)
        shape = (*ids.shape, -1)
        out[layer] = (raw.view(shape), chosen.view(shape), weights.view(shape))
    return out


def test_logits_and_routing_equal_transformers(moe):
    name, hf, loaded = moe
    ids = random_ids(hf.config.vocab_size, 20)
    config = loaded[0].net.config
    expected = router_choices(hf, ids, config.n_expert_used, config.norm_topk_prob)
    assert sorted(expected) == [i for i in range(config.n_layer) if config.is_sparse(i)]
    for model in loaded:
        assert type(model.net) is MoE
        assert model.net.config == config  # the GGUF reads the same config
        rec = assert_matches_transformers(hf, model.net, ids)
        for layer, (logits, chosen, weights) in expected.items():
            p = f"blocks.{layer}.mlp."
            assert (rec.tensors[p + "hook_router_logits"] - logits).abs().max() < 1e-4
            assert torch.equal(rec.tensors[p + "hook_expert_indices"], chosen), (name, layer)
            assert (rec.tensors[p + "hook_expert_weights"] - weights).abs().max() < 1e-5
            probs = rec.tensors[p + "hook_router_probs"]
            assert torch.allclose(probs.sum(-1), torch.ones(ids.shape))
        # every expert gets some token (else the comparison would not test it)
        assert len(torch.unique(rec.tensors[f"blocks.{max(expected)}.mlp.hook_expert_indices"])) > 1
    if len(loaded) > 1:
        assert loaded[1].meta["architecture"] == ("llama" if name == "mixtral" else "qwen3moe")


def test_trace_generation_and_saved_folder(moe, tmp_path):
    """The routing probes reach a Trace (one row per position); generation through the KV
    cache and a saved lmscope folder give the same numbers."""
    _, hf, loaded = moe
    model = loaded[0]
    ids = random_ids(hf.config.vocab_size, 12)
    trace = model.trace(ids[0].tolist())
    layer = model.net.config.n_layer - 1
    assert trace[f"blocks.{layer}.mlp.hook_expert_indices"].shape == (12, 2)
    assert trace[f"blocks.{layer}.mlp.hook_router_probs"].shape == (12, 4)
    assert_cache_continues(model.net, ids)
    assert_saved_folder_reloads(model.net, ids, tmp_path / "saved")


def test_bad_moe_configs_are_one_line():
    with pytest.raises(InvalidInputError, match="at most n_expert"):
        MoEConfig(n_embd=8, n_head=2, n_inner=8, n_expert=2, n_expert_used=3)
    with pytest.raises(InvalidInputError, match="list of layer numbers"):
        MoEConfig(n_embd=8, n_head=2, n_inner=8, dense_layers=["0"])
    hf = dict(
        model_type="mixtral",
        vocab_size=10,
        hidden_size=8,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_local_experts=2,
    )
    with pytest.raises(CheckpointError, match="num_experts_per_tok") as err:
        MoEConfig.from_hf(hf)
    assert "\n" not in str(err.value)


def test_the_explainer_shows_the_routing(moe):
    """The 20 steps build on a mixture of experts; its MLP step shows the expert the router
    weighs most for the token (its SwiGLU adding up), and the routing of every token."""
    name, hf, loaded = moe
    model = loaded[-1]
    layer = model.net.config.n_layer - 1
    ids = random_ids(hf.config.vocab_size, 9, batch=1)[0].tolist()
    r = report(model, ids, layer=layer)
    assert [s.number for s in r.steps] == list(range(1, 21))
    mlp = next(s.data for s in r.steps if s.key == "mlp")
    trace = model.trace(ids)
    chosen = trace[f"blocks.{layer}.mlp.hook_expert_indices"]
    assert mlp.routing.chosen == chosen[-1].tolist()
    assert mlp.routing.shown == mlp.routing.chosen[0]
    assert sum(mlp.routing.tokens_per_expert) == chosen.numel()
    assert mlp.down_max_error < 1e-5 and mlp.product_max_error < 1e-5
    assert mlp.d_mlp == model.net.config.d_expert


@pytest.mark.parametrize("moe", ["mixtral"], indirect=True)  # one file is enough
def test_lmscope_explain_runs_on_a_moe_gguf(moe, tmp_path, monkeypatch, capsys):
    name, hf, loaded = moe
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    from lmscope.cli import main

    assert main(["explain", "--model", str(loaded[1].source), "hi there"]) == 0
    assert "Step 13/20" in capsys.readouterr().out


@pytest.mark.parametrize("moe", ["qwen3_moe"], indirect=True)  # one model is enough
def test_the_page_api_runs_on_a_moe(moe):
    """/api/layer and /api/step (every step) answer for a mixture of experts; the layer's MLP
    vectors are the first expert's, as in the MLP step."""
    from fastapi.testclient import TestClient

    from lmscope.web import create_app

    name, hf, loaded = moe
    model = loaded[1]
    ids = list(model.to_ids("hi there"))
    where = {"ids": ids, "position": len(ids) - 1}
    with TestClient(create_app(model)) as client:
        layer = client.post("/api/layer", json={**where, "layer": 1})
        assert layer.status_code == 200, layer.text
        steps = [client.post("/api/step", json={**where, "key": s.key, "layer": 1}) for s in STEPS]
    assert [r.status_code for r in steps] == [200] * len(STEPS)
    mlp = next(r.json()["data"] for r in steps if r.json()["key"] == "mlp")
    assert layer.json()["mlp_post"] == mlp["post"]


def test_quantized_experts_are_each_experts_own_matrix(tmp_path):
    """A Q8_0 file stores each block's experts as one [expert, out, in] tensor: every expert's
    matrix comes back as the dequantized quantization of its own weights."""
    from gguf import GGMLQuantizationType as Q
    from gguf.quants import dequantize, quantize
    from safetensors.numpy import load_file

    hf = save_random(tmp_path, "mixtral", intermediate_size=64, seed=3)
    model = load_gguf_privately(write_family_gguf(tmp_path / "q8.gguf", hf, tmp_path, qtype=Q.Q8_0))
    state = load_file(str(tmp_path / "model.safetensors"))
    assert model.meta["quantization"] == "Q8_0"
    for e in range(4):
        for theirs, ours in (("w1", "gate_proj"), ("w3", "up_proj"), ("w2", "down_proj")):
            w = state[f"model.layers.1.block_sparse_moe.experts.{e}.{theirs}.weight"]
            expected = torch.from_numpy(dequantize(quantize(w, Q.Q8_0), Q.Q8_0))
            got = getattr(model.net.h[1].mlp.experts[e], ours).weight
            assert torch.equal(got, expected.reshape(got.shape)), (e, ours)
