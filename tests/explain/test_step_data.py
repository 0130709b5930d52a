"""Every one of the 20 steps turns a trace into typed data holding the model's real numbers:
each builder's output is checked against the probes (or weights) it reads."""

from __future__ import annotations

import json
import math

import pytest
import torch
from explaintools import HEAD, LAYER, POSITION
from pydantic import BaseModel

from lmscope.engine.sampling import candidate_pool
from lmscope.engine.steps import STEPS
from lmscope.explain import step_data as sd
from lmscope.explain.block import LayerNormView


def close(got, want, tol=1e-4):
    want = want.detach().double() if isinstance(want, torch.Tensor) else torch.tensor(want)
    got = torch.tensor(got, dtype=torch.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert torch.allclose(got, want.double(), rtol=tol, atol=tol), (got - want).abs().max()


def numbers(value) -> list[float]:
    """Every number in a JSON-ready structure."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers(v)]
    return [x for v in value for x in numbers(v)]


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.key)
def test_every_step_is_typed_data_with_real_numbers(step, context):
    data = sd.build(step.key, context)
    assert isinstance(data, BaseModel)
    body = data.model_dump(mode="json")
    json.dumps(body, allow_nan=False)  # strict JSON: masked scores travel as null
    found = numbers(body)
    assert found and all(math.isfinite(x) for x in found), step.key
    assert any(x not in (0.0, 1.0) for x in found), step.key  # not placeholders


def test_the_whole_model_steps(context, tiny_model, trace):
    probs = torch.softmax(tiny_model.logits(trace.ids)[POSITION], -1)
    t = sd.build("transformer", context)
    assert t.prediction.id == int(probs.argmax())
    assert t.prediction.prob == pytest.approx(float(probs.max()), rel=1e-4)
    assert t.model.n_layer == tiny_model.config.n_layer and t.model.d_model == 64
    how = sd.build("how-it-works", context)
    assert how.context_tokens == POSITION + 1 and how.next == t.top5
    arch = sd.build("architecture", context)
    want = [trace[f"blocks.{i}.hook_resid_post"][POSITION].norm() for i in range(2)]
    close(arch.resid_norm_by_layer, torch.stack(want))


def test_embedding_steps(context, trace, tiny_model):
    e = sd.build("embedding", context)
    close(e.token.values, trace["hook_embed"][POSITION])
    close(e.position.values, trace["hook_pos_embed"][POSITION])
    close(e.sum.values, trace["blocks.0.hook_resid_pre"][POSITION])
    tokens = sd.build("token-embedding", context)
    assert [r.id for r in tokens.tokens] == trace.ids
    assert tokens.embedding_matrix == list(tiny_model.gpt.wte.weight.shape)
    assert [m.id for m in tokens.merges] == trace.ids and tokens.merges[2].merges
    pos = sd.build("positional-encoding", context)
    close(pos.norms, trace["hook_pos_embed"].norm(dim=-1))
    assert len(pos.cosine_with_previous) == len(trace) - 1
    blocks = sd.build("blocks", context)
    pre, post = (trace[f"blocks.0.hook_resid_{n}"][POSITION] for n in ("pre", "post"))
    assert blocks.layers[0].change_norm == pytest.approx(float((post - pre).norm()), rel=1e-5)


def test_attention_steps(context, trace):
    a = f"blocks.{LAYER}.attn"
    attn = sd.build("self-attention", context)
    close(attn.pattern, trace[f"{a}.hook_pattern"][HEAD])
    top = attn.attends_most_to[0]
    assert top.position == int(trace[f"{a}.hook_pattern"][HEAD, POSITION].argmax())
    qkv = sd.build("qkv", context)
    close(qkv.q.values, trace[f"{a}.hook_q"][POSITION, HEAD])
    close(qkv.v.values, trace[f"{a}.hook_v"][POSITION, HEAD])
    assert qkv.W_qkv == [64, 3 * 64]
    heads = sd.build("multi-head", context)
    assert heads.q_shape == list(trace[f"{a}.hook_q"].shape) and heads.n_head == 4
    masked = sd.build("masked-attention", context)
    assert masked.raw[: POSITION + 1] == pytest.approx(
        trace[f"{a}.hook_attn_scores_raw"][HEAD, POSITION, : POSITION + 1].tolist(), abs=1e-4
    )
    assert masked.masked[POSITION + 1 :] == [None] * (len(trace) - POSITION - 1)  # the future
    assert sum(masked.softmax[: POSITION + 1]) == pytest.approx(1, abs=1e-5)
    assert masked.masked_window[0][-1] is None  # the -inf triangle of the small matrix
    out = sd.build("attention-output", context)
    close(out.z_by_head[HEAD].values, trace[f"{a}.hook_z"][POSITION, HEAD])
    close(out.projected.values, trace[f"blocks.{LAYER}.hook_attn_out"][POSITION])
    assert out.concat_shape == [64]


def test_mlp_logits_and_sampling_steps(context, trace, tiny_model):
    p = f"blocks.{LAYER}"
    mlp = sd.build("mlp", context)
    post = trace[f"{p}.mlp.hook_post"][POSITION]
    assert sum(mlp.post_gelu.histogram.counts) == tiny_model.config.d_mlp
    assert mlp.post_gelu.max == pytest.approx(float(post.max()), abs=1e-4)
    close(mlp.output.values, trace[f"{p}.hook_mlp_out"][POSITION])
    logits = tiny_model.logits(trace.ids)[POSITION]
    step = sd.build("logits", context)
    assert [t.id for t in step.top] == logits.topk(10).indices.tolist()
    assert step.vocab_size == logits.numel()
    probs = sd.build("probabilities", context)
    assert probs.top[0].prob == pytest.approx(float(torch.softmax(logits, -1).max()), rel=1e-4)
    temp = sd.build("temperature", context)
    hot = torch.softmax(logits.double() / 0.7, -1)
    assert temp.at_t[0].prob == pytest.approx(float(hot.max()), rel=1e-4)
    sampling = sd.build("sampling", context)
    pool = candidate_pool(logits, context.params)
    assert sampling.pool_size == len(pool) and sampling.stages == pool.stages
    assert [t.id for t in sampling.pool] == pool.token_ids[:20].tolist()


def test_residual_layernorm_and_dropout_steps(context, trace, tiny_model):
    p = f"blocks.{LAYER}"
    res = sd.build("residual", context)
    assert res.identity_max_error < 1e-4
    close(res.resid_mid.values, trace[f"{p}.hook_resid_mid"][POSITION])
    ln = sd.build("layernorm", context)
    assert isinstance(ln, LayerNormView)
    assert ln.normalized.mean == pytest.approx(0, abs=1e-4)
    assert ln.normalized.std == pytest.approx(1, abs=1e-2)
    close(ln.gamma, tiny_model.gpt.h[LAYER].ln_1.weight)
    drop = sd.build("dropout", context)
    rate = drop.example_rate
    assert drop.model_rate == tiny_model.config.dropout and drop.probe == f"{p}.hook_attn_out"
    for i, (before, after) in enumerate(zip(drop.before, drop.after, strict=True)):
        want = 0.0 if i in set(drop.zeroed) else before / (1 - rate)
        assert after == pytest.approx(want, rel=1e-4, abs=1e-5)


def test_every_step_has_one_builder_and_a_cli_renderer(context):
    from lmscope.commands.explain import RENDER

    for step in STEPS:
        assert type(sd.build(step.key, context)) in RENDER, step.key
