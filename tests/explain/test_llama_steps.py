"""The 20 steps of a Llama-family model, checked on a tiny random Llama and on the real SmolLM2:
RoPE (the rotation is the textbook one, and q·k depends only on the distance), RMSNorm (the
parts multiply back to the output), grouped-query attention (which kv head each query head
reads, and the KV cache's bytes) and SwiGLU (SiLU(gate) × up = post, post · W_down = mlp_out).
Every number is checked against the probes and weights, or recomputed from the definition."""

from __future__ import annotations

import json
import math
import re
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from lmscope import i18n
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS
from lmscope.explain import catalogue as cat
from lmscope.explain import step_data as sd
from lmscope.explain.modern import RMSNormView, RopeStep, SwiGLUStep
from lmscope.explain.report import report

PROMPT = "The capital of France is"
# the layer and head looked at, per model: SmolLM2's layer 2 head 4 attends to several keys
CHOICES = {"tiny_llama": (1, 3), "smollm2": (2, 4)}


@pytest.fixture(
    scope="module",
    params=["tiny_llama", pytest.param("smollm2", marks=pytest.mark.slow)],
)
def llama(request):
    model = request.getfixturevalue(request.param)
    layer, head = CHOICES[request.param]
    trace = model.trace(PROMPT)
    position = len(trace) - 1
    context = sd.StepContext(model, trace, layer, head, position, SamplingParams(temperature=0.7))
    return SimpleNamespace(
        model=model, trace=trace, layer=layer, head=head, position=position, context=context
    )


def close(got, want, tol=1e-4):
    got = torch.tensor(got, dtype=torch.float64)
    want = torch.as_tensor(want).detach().double()
    assert got.shape == want.shape, (got.shape, want.shape)
    assert torch.allclose(got, want, rtol=tol, atol=tol), (got - want).abs().max()


@pytest.mark.slow
def test_every_step_is_typed_strict_json_with_the_models_labels(llama):
    from lmscope.commands.explain import RENDER

    r = report(llama.model, PROMPT, layer=llama.layer, head=llama.head)
    body = r.model_dump(mode="json")
    json.dumps(body, allow_nan=False)
    assert [s["number"] for s in body["steps"]] == list(range(1, 21))
    for step in r.steps:
        assert type(step.data) in RENDER, step.key
        assert "hook_pos_embed" not in step.probes, step.key  # there is no such probe
        assert "LayerNorm" not in step.summary and "GELU" not in step.summary, step.key
    data = {s.key: s.data for s in r.steps}
    assert data["architecture"].flow[3] == "final RMSNorm"
    assert data["embedding"].position is None
    assert isinstance(data["positional-encoding"], RopeStep)
    assert isinstance(data["mlp"], SwiGLUStep) and isinstance(data["layernorm"], RMSNormView)
    assert data["logits"].norm == "RMSNorm"
    assert data["mlp"].d_mlp == llama.model.config.d_mlp
    heads = data["multi-head"]
    assert heads.grouping.n_kv_head == llama.model.config.n_kv_head < heads.n_head
    titles = {s.key: s.title for s in r.steps}
    assert "RoPE" in titles["positional-encoding"] and "SwiGLU" in titles["mlp"]
    assert "RMSNorm" in titles["layernorm"] and "grouped-query" in titles["multi-head"]
    with i18n.using("zh"):  # the Python API's report speaks the language set
        zh = report(llama.model, PROMPT, layer=llama.layer, head=llama.head, steps=["layernorm"])
    assert zh.steps[0].title == "均方根归一化（RMSNorm）"


def test_smollm2_facts_are_its_own(smollm2):
    r = report(smollm2, PROMPT, layer=2, head=4, steps=["mlp", "multi-head", "qkv"])
    qkv, heads, mlp = (s.data for s in r.steps)  # in the steps' order
    assert mlp.d_mlp == 1536 and mlp.W_gate == [576, 1536] and mlp.W_down == [1536, 576]
    assert heads.n_head == 9 and heads.grouping.n_kv_head == 3
    assert heads.grouping.kv_head_of == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert qkv.kv_head == 1 and qkv.n_kv_head == 3
    cache = heads.grouping.kv_cache
    # 2 (k and v) x 30 layers x 3 kv heads x 64 numbers x 4 bytes, and x 9 heads without GQA
    assert (cache.per_token, cache.per_token_full) == (46_080, 138_240)


def test_rope_is_the_textbook_rotation_and_scores_follow_the_distance(llama):
    m, tr, L, H, P = llama.model, llama.trace, llama.layer, llama.head, llama.position
    rope = sd.build("positional-encoding", llama.context)
    c = m.config
    kv = m.net.kv_head_of(H)
    assert (rope.layer, rope.head, rope.kv_head, rope.position) == (L, H, kv, P)
    a = f"blocks.{L}.attn"
    close(rope.q.before.values, tr[f"{a}.hook_q"][P, H])
    close(rope.q.after.values, tr[f"{a}.hook_rot_q"][P, H])
    close(rope.k.before.values, tr[f"{a}.hook_k"][P, kv])
    close(rope.k.after.values, tr[f"{a}.hook_rot_k"][P, kv])
    assert rope.rotation_max_error < 1e-5
    # the frequencies are theta^(-2i/d), and rotating pair (x_i, x_{i+d/2}) by P * freq_i
    # turns q before into q after
    d, half = c.d_head, c.d_head // 2
    freq = [c.rope_theta ** (-2 * i / d) for i in range(half)]
    close(rope.frequencies.inv_freq, freq, tol=1e-5)
    close(rope.frequencies.wavelength, [2 * math.pi / f for f in freq], tol=1e-3)
    before = torch.tensor(rope.q.before.values, dtype=torch.float64)
    angle = P * torch.tensor(freq, dtype=torch.float64)
    x, y = before[:half], before[half:]
    turned = torch.cat([x * angle.cos() - y * angle.sin(), y * angle.cos() + x * angle.sin()])
    close(rope.q.after.values, turned, tol=1e-3)
    close(rope.frequencies.angle, torch.remainder(angle, 2 * math.pi), tol=1e-4)
    check = rope.check
    i, j = check.query_position, check.key_position
    assert i == P and 0 <= j <= i
    raw = tr[f"{a}.hook_attn_scores_raw"][H, i, j]
    assert check.recorded_score == pytest.approx(float(raw), rel=1e-5, abs=1e-5)
    assert check.same_distance[0].score == pytest.approx(float(raw), rel=1e-5, abs=1e-5)
    shifts = [s.shift for s in check.same_distance]
    assert shifts[:4] == [0, 1, 10, 100] and {s.distance for s in check.same_distance} == {i - j}
    base = check.same_distance[0].score
    for s in check.same_distance:  # same distance: the same score to float32 precision
        assert (s.query_at, s.key_at) == (i + s.shift, j + s.shift)
        assert abs(s.score - base) <= 1e-5 * max(1.0, abs(base)), s
    assert check.max_abs_difference <= 1e-5 * max(1.0, abs(base))
    # moving the query alone changes the distance, and the score with it
    moved = [s.score for s in check.other_distance]
    assert all(s.distance == i + s.shift - j for s in check.other_distance)
    assert max(abs(x - base) for x in moved) > 1e3 * max(check.max_abs_difference, 1e-7)


@pytest.mark.parametrize("which", ["ln1", "ln2", "final"])
def test_rmsnorm_parts_recompose(llama, which):
    m, tr, L, P = llama.model, llama.trace, llama.layer, llama.position
    llama.context.norm = which
    try:
        v = sd.build("layernorm", llama.context)
    finally:
        llama.context.norm = "ln1"
    assert isinstance(v, RMSNormView) and v.which == which
    x = torch.tensor(v.input.values, dtype=torch.float64)
    before = {"ln1": f"blocks.{L}.hook_resid_pre", "ln2": f"blocks.{L}.hook_resid_mid"}
    last = m.config.n_layer - 1
    close(v.input.values, tr[before.get(which, f"blocks.{last}.hook_resid_post")][P])
    rms = math.sqrt(float(x.pow(2).mean()) + v.eps)
    assert v.rms == pytest.approx(rms, rel=1e-4)
    assert v.mean_square == pytest.approx(float(x.pow(2).mean()), rel=1e-4)
    assert v.input_mean == pytest.approx(float(x.mean()), rel=1e-3, abs=1e-5)  # not removed
    close(v.normalized.values, x / rms, tol=1e-3)
    assert v.normalized_rms == pytest.approx(1, abs=1e-3)
    norm = m.net.ln_f if which == "final" else getattr(m.net.h[L], f"ln_{which[-1]}")
    close(v.gain, norm.weight)
    product = torch.tensor(v.normalized.values) * torch.tensor(v.gain)
    close(v.output.values, product, tol=1e-3)  # normalized * gain == output
    assert v.recompose_max_error < 1e-4


def test_grouped_query_attention_mapping_and_cache_bytes(llama):
    m, c = llama.model, llama.model.config
    heads = sd.build("multi-head", llama.context)
    g = heads.grouping
    assert g.kv_head_of == [m.net.kv_head_of(h) for h in range(c.n_head)]
    assert g.group_size == c.n_head // c.n_kv_head
    assert sorted(h for grp in g.groups for h in grp.query_heads) == list(range(c.n_head))
    for grp in g.groups:
        assert all(g.kv_head_of[h] == grp.kv_head for h in grp.query_heads)
    k = llama.trace[f"blocks.{llama.layer}.attn.hook_k"][llama.position]
    close(g.k_norm_by_kv_head, k.norm(dim=-1))
    cache, n = g.kv_cache, len(llama.trace)
    per_kv_head = 2 * c.n_layer * c.d_head * 4  # float32
    assert cache.bytes_per_value == 4 and cache.dtype == "float32"
    assert cache.per_token == per_kv_head * c.n_kv_head
    assert cache.per_token_full == per_kv_head * c.n_head
    assert (cache.tokens, cache.at_prompt) == (n, cache.per_token * n)
    assert cache.at_prompt_full == cache.per_token_full * n
    assert cache.at_context == cache.per_token * c.n_ctx
    assert cache.saved_fraction == pytest.approx(1 - c.n_kv_head / c.n_head)
    qkv = sd.build("qkv", llama.context)
    assert qkv.kv_head == m.net.kv_head_of(llama.head)
    close(qkv.k.values, k[qkv.kv_head])


def test_swiglu_parts_recompose(llama):
    m, tr, L, P = llama.model, llama.trace, llama.layer, llama.position
    s = sd.build("mlp", llama.context)
    p = f"blocks.{L}"
    close(s.gate.values, tr[f"{p}.mlp.hook_pre"][P])
    close(s.up.values, tr[f"{p}.mlp.hook_pre_linear"][P])
    close(s.post.values, tr[f"{p}.mlp.hook_post"][P])
    close(s.output.values, tr[f"{p}.hook_mlp_out"][P])
    gate, up = (torch.tensor(v.values, dtype=torch.float64) for v in (s.gate, s.up))
    silu = gate * torch.sigmoid(gate)  # SiLU from its definition
    close(s.silu_gate.values, silu, tol=1e-4)
    close(s.post.values, silu * up, tol=1e-3)  # silu(gate) * up == post
    down = m.net.h[L].mlp.down_proj.weight.double()
    post = torch.tensor(s.post.values, dtype=torch.float64)
    close(s.output.values, post @ down.T, tol=1e-3)  # post @ W_down == mlp_out
    assert s.product_max_error < 1e-4 and s.down_max_error < 1e-3
    assert (s.d_model, s.d_mlp) == (m.config.n_embd, m.config.d_mlp)
    assert s.W_gate == s.W_up == [m.config.n_embd, m.config.d_mlp]
    x = torch.tensor(s.curve.x)
    assert s.curve.name == "SiLU" and x[0] <= min(s.gate.values) and x[-1] >= max(s.gate.values)
    close(s.curve.y, F.silu(x))
    top = s.strongest[0]
    assert abs(top.post) == pytest.approx(max(abs(v) for v in s.post.values), rel=1e-5)
    assert top.post == pytest.approx(top.silu_gate * top.up, rel=1e-3, abs=1e-5)


PAGE_FACTS = {
    "model", "n_layer", "n_head", "n_kv_head", "kv_group", "d_model", "d_head", "d_mlp",
    "vocab", "n_ctx", "scale",
}  # fmt: skip


def test_every_llama_variant_says_what_gpt2_does_in_both_languages():
    variants = cat.VARIANTS["llama"]
    assert list(variants) == [s.key for s in STEPS]  # all 20 steps
    for key, v in variants.items():
        text = cat.step_text(key, "llama")
        assert "text" in v.fields and text.text.id == f"step.{key}.text.llama", key
        assert len(text.text["en"]) > 200 and len(text.text["zh"]) > 100, key
        assert "GPT-2" in text.text["en"] and "GPT-2" in text.text["zh"], key
        assert text.title["en"] and text.title["zh"] and text.summary["en"], key
        for lang in ("en", "zh"):
            assert set(re.findall(r"\{(\w+)\}", text.text[lang])) <= PAGE_FACTS, (key, lang)
        assert all("pos_embed" not in p for p in cat.step_probes(key, "llama")), key
    docs = {d.key: d for d in cat.catalogue("llama").steps}
    assert "blocks.{L}.attn.hook_rot_q" in docs["positional-encoding"].probes
    assert "blocks.{L}.mlp.hook_pre_linear" in docs["mlp"].probes
    title = docs["layernorm"].texts["title"].id
    assert i18n.text(title, "en") == "RMS normalization (RMSNorm)"
    assert i18n.text(title, "zh") == "均方根归一化（RMSNorm）"
