"""Trace tensors are the model's real numbers: they add up the way the architecture says."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from lmscope.engine.steps import STEPS, find_step
from lmscope.errors import InvalidInputError

PROMPT = "Data visualization empowers users to"
ATOL = 1e-5


@pytest.fixture(scope="module")
def trace(tiny_model):
    return tiny_model.trace(PROMPT, keep_logits="all")


def test_tokens_and_shapes(trace, tiny_model):
    c = tiny_model.config
    T = len(trace)
    assert trace.ids == tiny_model.tokenizer.encode(PROMPT)
    assert [p.text for p in trace.pieces][2:4] == [" em", "powers"]
    assert trace["hook_embed"].shape == (T, c.n_embd)
    assert trace["blocks.0.attn.hook_q"].shape == (T, c.n_head, c.d_head)
    assert trace["blocks.1.attn.hook_pattern"].shape == (c.n_head, T, T)
    assert trace["blocks.0.attn.hook_result"].shape == (T, c.n_head, c.n_embd)
    assert trace["blocks.0.mlp.hook_pre"].shape == (T, c.d_mlp)
    assert trace["logits"].shape == (T, c.vocab_size)


def test_logits_equal_plain_forward(trace, tiny_model, tiny_hf_reference):
    ref = tiny_hf_reference(torch.tensor([trace.ids])).logits[0]
    assert (trace["logits"] - ref).abs().max() < 1e-4
    assert torch.allclose(trace.last_logits, trace["logits"][-1])


def test_embedding_sum(trace, tiny_model):
    wte, wpe = tiny_model.gpt.wte.weight, tiny_model.gpt.wpe.weight
    T = len(trace)
    assert torch.equal(trace["hook_embed"], wte[trace.ids])
    assert torch.equal(trace["hook_pos_embed"], wpe[:T])
    assert torch.allclose(trace["blocks.0.hook_resid_pre"], wte[trace.ids] + wpe[:T])


@pytest.mark.parametrize("layer", [0, 1])
def test_residual_identities(trace, layer):
    p = f"blocks.{layer}"
    assert torch.allclose(
        trace[f"{p}.hook_resid_mid"],
        trace[f"{p}.hook_resid_pre"] + trace[f"{p}.hook_attn_out"],
        atol=ATOL,
    )
    assert torch.allclose(
        trace[f"{p}.hook_resid_post"],
        trace[f"{p}.hook_resid_mid"] + trace[f"{p}.hook_mlp_out"],
        atol=ATOL,
    )
    if layer == 0:
        assert torch.equal(trace["blocks.1.hook_resid_pre"], trace["blocks.0.hook_resid_post"])


@pytest.mark.parametrize("layer", [0, 1])
def test_layernorm_identities(trace, tiny_model, layer):
    x = trace[f"blocks.{layer}.hook_resid_pre"]
    ln = tiny_model.gpt.h[layer].ln_1
    scale = trace[f"blocks.{layer}.ln1.hook_scale"]
    normalized = trace[f"blocks.{layer}.ln1.hook_normalized"]
    assert torch.allclose(scale[:, 0], x.std(dim=-1, unbiased=False), atol=1e-4)
    assert torch.allclose(normalized.mean(-1), torch.zeros(len(trace)), atol=1e-5)
    assert torch.allclose(normalized.pow(2).mean(-1), torch.ones(len(trace)), atol=1e-3)
    expected = F.layer_norm(x, (x.shape[-1],), ln.weight, ln.bias, ln.eps)
    assert torch.allclose(trace[f"blocks.{layer}.ln1.hook_out"], expected, atol=ATOL)


@pytest.mark.parametrize("layer", [0, 1])
def test_attention_identities(trace, tiny_model, layer):
    p = f"blocks.{layer}.attn"
    q, k, v = trace[f"{p}.hook_q"], trace[f"{p}.hook_k"], trace[f"{p}.hook_v"]
    d_head = tiny_model.config.d_head
    raw = torch.einsum("qhd,khd->hqk", q, k)
    assert torch.allclose(trace[f"{p}.hook_attn_scores_raw"], raw, atol=ATOL)
    assert torch.allclose(trace[f"{p}.hook_attn_scores_scaled"], raw / math.sqrt(d_head), atol=ATOL)
    scores, pattern = trace[f"{p}.hook_attn_scores"], trace[f"{p}.hook_pattern"]
    future = torch.ones(len(trace), len(trace), dtype=torch.bool).triu(1)
    assert torch.isneginf(scores[:, future]).all()
    assert (pattern[:, future] == 0).all()  # masked entries are exactly zero
    assert torch.allclose(pattern.sum(-1), torch.ones_like(pattern.sum(-1)), atol=1e-6)
    z = torch.einsum("hqk,khd->qhd", pattern, v)
    assert torch.allclose(trace[f"{p}.hook_z"], z, atol=ATOL)
    # concat(z) @ W_O + b == attn_out, and the per-head results sum to the same thing
    proj = tiny_model.gpt.h[layer].attn.c_proj
    concat = z.reshape(len(trace), -1)
    attn_out = trace[f"blocks.{layer}.hook_attn_out"]
    assert torch.allclose(concat @ proj.weight.T + proj.bias, attn_out, atol=ATOL)
    assert torch.allclose(trace.head_result_sum(layer) + proj.bias, attn_out, atol=1e-4)


def test_mlp_identities(trace, tiny_model):
    mlp = tiny_model.gpt.h[0].mlp
    pre, post = trace["blocks.0.mlp.hook_pre"], trace["blocks.0.mlp.hook_post"]
    assert torch.allclose(
        pre, trace["blocks.0.ln2.hook_out"] @ mlp.c_fc.weight.T + mlp.c_fc.bias, atol=ATOL
    )
    assert torch.allclose(post, F.gelu(pre, approximate="tanh"), atol=ATOL)
    assert torch.allclose(trace["blocks.0.hook_mlp_out"], mlp.c_proj(post), atol=ATOL)


def test_final_logits_from_ln_final(trace, tiny_model):
    logits = trace["ln_final.hook_out"] @ tiny_model.gpt.wte.weight.T
    assert torch.allclose(logits, trace["logits"], atol=1e-4)


def test_predictions_per_position(trace):
    pred = trace.predictions
    T = len(trace)
    probs = torch.softmax(trace["logits"], -1)
    top = probs.topk(20, dim=-1)
    assert torch.equal(pred.top_ids, top.indices)
    assert torch.allclose(pred.top_probs, top.values, atol=1e-6)
    for pos in range(T - 1):
        assert math.isclose(
            pred.next_token_prob[pos].item(), probs[pos, trace.ids[pos + 1]].item(), rel_tol=1e-5
        )
    assert math.isnan(pred.next_token_prob[-1].item())


def test_name_and_layer_filters(tiny_model):
    t = tiny_model.trace(PROMPT, names=["blocks.*.attn.hook_pattern", "hook_embed"], layers=[1])
    assert sorted(t.names()) == ["blocks.1.attn.hook_pattern", "hook_embed"]
    assert t.predictions.top_ids.shape[0] == len(t)  # predictions do not need stored logits
    assert "logits" not in t and t.last_logits.shape == (tiny_model.config.vocab_size,)
    with pytest.raises(KeyError, match="hook_pattern"):
        t["blocks.0.attn.hook_pattern"]


def test_full_trace_memory_is_bounded(tiny_model):
    t = tiny_model.trace(list(range(128)))  # the tiny model's whole context
    T, V = 128, tiny_model.config.vocab_size
    assert "logits" not in t
    assert t.nbytes() < 0.5 * T * V * 4  # far less than all-position logits would take


def test_every_step_resolves(trace):
    assert len(STEPS) == 20 and [s.number for s in STEPS] == list(range(1, 21))
    for step in STEPS:
        tensors = trace.step(step.key, layer=1)
        assert set(tensors) == set(step.probe_names(1)), step.key
    assert find_step(11).key == "masked-attention"
    with pytest.raises(KeyError):
        find_step("nope")
    with pytest.raises(InvalidInputError):
        trace.step(1, layer=5)


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("self_attention", "self-attention"),
        ("Self Attention", "self-attention"),
        ("LayerNorm", "layernorm"),
        ("layer-norm", "layernorm"),
        ("multihead", "multi-head"),
        (" Positional_Encoding ", "positional-encoding"),
    ],
)
def test_a_step_key_is_found_however_its_words_are_joined(typed, key):
    """A key is words joined by hyphens: underscores, spaces, case or none between them name it
    too (the keys stay distinct without them)."""
    from lmscope.engine.steps import STEPS_BY_WORDS

    assert len(STEPS_BY_WORDS) == len(STEPS)
    assert find_step(typed).key == key


def test_dropout_example(trace):
    keep, out = trace.dropout_example("blocks.0.hook_attn_out", p=0.25, seed=3)
    x = trace["blocks.0.hook_attn_out"]
    assert 0.15 < 1 - keep.float().mean().item() < 0.35
    assert torch.equal(out[~keep], torch.zeros_like(out[~keep]))
    assert torch.allclose(out[keep], x[keep] / 0.75)


@pytest.mark.parametrize("bad", ["", [], [50257], [-1]])
def test_bad_prompts(tiny_model, bad):
    with pytest.raises(InvalidInputError):
        tiny_model.trace(bad)


def test_overlong_prompt(tiny_model):
    with pytest.raises(InvalidInputError, match="context is 128"):
        tiny_model.trace(list(range(200)))
    t = tiny_model.trace(list(range(200)), truncate=True, names=[])
    assert t.ids == list(range(72, 200))


def test_unknown_layer(tiny_model):
    with pytest.raises(InvalidInputError, match="layers 0..1"):
        tiny_model.trace(PROMPT, layers=[2])


@pytest.mark.parametrize("probe", ["hook_result", "hook_attn_scores_scaled", "hook_attn_scores"])
def test_costly_probes_are_derived_on_demand(tiny_model, probe):
    name = f"blocks.1.attn.{probe}"
    lazy = tiny_model.trace(PROMPT)
    assert name in lazy.derived and name in lazy.names()  # listed, not computed during the pass
    eager = tiny_model.trace(PROMPT, names=[f"blocks.*.attn.{probe}"])
    assert name in eager.tensors
    assert torch.equal(lazy[name], eager[name])  # bitwise what the forward pass computed
    assert name in lazy.tensors  # kept after first access


def test_predictions_without_full_logits_match(tiny_model, trace):
    lazy = tiny_model.trace(PROMPT)  # the pass computes the last position's logits only
    assert lazy._predictions is None
    full = trace.predictions
    assert torch.equal(lazy.predictions.top_ids, full.top_ids)
    assert torch.allclose(lazy.predictions.top_probs, full.top_probs, atol=1e-6)
    assert torch.allclose(lazy.predictions.entropy, full.entropy, atol=1e-5)
    assert torch.allclose(lazy.last_logits, trace["logits"][-1], atol=1e-5)


def test_derived_attention_probes_equal_the_recorded_ones(tiny_model):
    """Scores and pattern are rebuilt from q and k on first read unless asked for by name; both
    routes give the forward pass's numbers."""
    prompt = "Data visualization empowers users to"
    lazy = tiny_model.trace(prompt)
    stages = ["hook_attn_scores_raw", "hook_attn_scores_scaled", "hook_attn_scores", "hook_pattern"]
    eager = tiny_model.trace(prompt, names=[f"blocks.*.attn.{s}" for s in stages])
    for layer in range(tiny_model.config.n_layer):
        for stage in stages:
            name = f"blocks.{layer}.attn.{stage}"
            assert name in eager.tensors and name not in lazy.tensors
            torch.testing.assert_close(lazy[name], eager[name], atol=1e-6, rtol=0)


def test_derived_probes_are_safe_to_read_from_many_threads(tiny_model):
    """A served trace is read by concurrent requests: each derived probe is computed once and
    every reader gets it (no KeyError from a reader that lost a race)."""
    from concurrent.futures import ThreadPoolExecutor

    trace = tiny_model.trace("Data visualization empowers users to")
    names = [n for n in trace.derived] * 8
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(trace.__getitem__, names))
    for name, tensor in zip(names, results, strict=True):
        assert tensor is trace[name]


def test_a_missing_probe_says_why(tiny_model):
    """trace["unembed.hook_logits"] on a trace of every probe said "it was not recorded (see the
    names/layers you passed to trace)", though none were passed: the model has no such probe."""
    full = tiny_model.trace("Hello there")
    with pytest.raises(KeyError, match="the model has no such probe"):
        full["unembed.hook_logits"]
    with pytest.raises(KeyError, match="did you mean blocks.0.attn.hook_pattern"):
        full["blocks.0.attn.hook_patern"]
    some = tiny_model.trace("Hello there", names=["hook_embed"])
    with pytest.raises(KeyError, match="it was not recorded"):
        some["ln_final.hook_scale"]


def test_trace_repr_is_short(tiny_model):
    trace = tiny_model.trace("Data visualization empowers users to " * 8)
    text = repr(trace)
    assert len(text) < 400 and "\n" not in text, text
    assert f"{len(trace)} tokens" in text and tiny_model.name in text
    assert f"{len(trace.names())} probes" in text and "logits" in text
    assert "'Data'" in text and "…" in text  # the tokens, cut
    assert "tensor(" not in text
