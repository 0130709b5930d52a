"""What Gemma 3, Qwen3, Phi-3 and the mixtures of experts add to the steps (``family_data``),
on random tiny models, against the same quantities taken from transformers' modules on the
same weights: Gemma's √d_model scale, its four (1 + w) norms, QK-norm's q and k before and after,
GeGLU, the sliding window, Phi-3's fused projections and the router's top-k experts. Then the
texts: each family's own, falling back to Llama's, in English and Chinese in the CLI, and the
same views from the JSON API."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import lmscope
from helpers_families import save_random
from lmscope.engine.families import lineage
from lmscope.explain import family_views as fv
from lmscope.explain.catalogue import probe_names, step_text
from lmscope.explain.report import report
from lmscope.i18n import text

IDS = [3, 9, 14, 27, 5, 40, 11, 8, 2, 33]  # longer than Gemma's window of 5
LAST = len(IDS) - 1


def close(a, b, tol=1e-4):
    a, b = torch.as_tensor(a, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32)
    return torch.allclose(a, b, atol=tol, rtol=tol)


class Families(dict):
    """family -> (transformers model, lmscope model, its folder), the same random weights;
    each made when a test first asks for it."""

    def __init__(self, tmp_path_factory):
        super().__init__()
        self.tmp = tmp_path_factory

    def __missing__(self, family):
        folder = self.tmp.mktemp(family)
        hf = save_random(folder, family)
        self[family] = (hf, lmscope.load(folder), folder)
        return self[family]


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    return Families(tmp_path_factory)


def capture(modules: dict[str, torch.nn.Module], hf, ids):
    """Run ``hf`` on ``ids`` and keep each named module's input and output."""
    seen, handles = {}, []
    for name, module in modules.items():

        def keep(_m, args, out, name=name):
            seen[name] = (args[0].detach(), out)

        handles.append(module.register_forward_hook(keep))
    with torch.no_grad():
        hf(torch.tensor([ids]))
    for h in handles:
        h.remove()
    return seen


def views(model, key, layer=0, head=0):
    r = report(model, IDS, layer=layer, head=head, steps=[key])
    return {type(v): v for v in r.steps[0].family_data}


def test_gemma3_embedding_scale_and_sandwich_norms(families):
    hf, model, _ = families["gemma3_text"]
    layer = hf.model.layers[1]
    names = ("input_layernorm", "post_attention_layernorm")
    names += ("pre_feedforward_layernorm", "post_feedforward_layernorm")
    seen = capture(
        {"embed": hf.model.embed_tokens, **{n: getattr(layer, n) for n in names}}, hf, IDS
    )
    scale = views(model, "embedding")[fv.EmbedScale]
    d = hf.config.hidden_size
    assert scale.scale == pytest.approx(math.sqrt(d), rel=1e-6)
    # transformers' scaled embedding is the row times its embed_scale
    assert close(scale.scaled.values, seen["embed"][1][0, LAST])
    assert close(scale.stored.values, hf.model.embed_tokens.weight[IDS[LAST]].detach())
    assert scale.max_error < 1e-5 and scale.scaled_rms > scale.stored_rms

    sandwich = views(model, "layernorm", layer=1)[fv.SandwichNorms]
    assert [n.which for n in sandwich.norms] == ["ln1", "ln1_post", "ln2", "ln2_post"]
    for n, name in zip(sandwich.norms, names, strict=True):
        x, y = seen[name]
        assert n.input_rms == pytest.approx(float(x[0, LAST].pow(2).mean().sqrt()), rel=1e-4)
        assert n.output_rms == pytest.approx(float(y[0, LAST].pow(2).mean().sqrt()), rel=1e-4)
        w = getattr(layer, name).weight.detach()
        assert n.gain_mean == pytest.approx(float((1 + w).mean()), rel=1e-5)
        assert n.max_error < 1e-5
    # the blocks step shows the same four norms
    assert views(model, "blocks", layer=1)[fv.SandwichNorms] == sandwich


@pytest.mark.parametrize("family", ["gemma3_text", "qwen3", "qwen3_moe"])
def test_qk_norm_q_and_k_before_and_after_equal_transformers(families, family):
    hf, model, _ = families[family]
    attn = hf.model.layers[1].self_attn
    seen = capture({"q": attn.q_norm, "k": attn.k_norm}, hf, IDS)
    head = 3
    qk = views(model, "qkv", layer=1, head=head)[fv.QKNorm]
    kv = head // (hf.config.num_attention_heads // hf.config.num_key_value_heads)
    assert qk.kv_head == kv
    # transformers' Gemma 3 norms [batch, head, position, d_head], Qwen3's [batch, position, ...]
    q_in, q_out, k_in, k_out = (
        t[0] if t.shape[2] == len(IDS) else t[0].transpose(0, 1) for t in (*seen["q"], *seen["k"])
    )
    q_heads = q_out[:, LAST]
    q_in, q_out, k_in, k_out = q_in[head, LAST], q_out[head, LAST], k_in[kv, LAST], k_out[kv, LAST]
    assert close(qk.q.before.values, q_in) and close(qk.q.after.values, q_out)
    assert close(qk.k.before.values, k_in) and close(qk.k.after.values, k_out)
    assert qk.dot_after == pytest.approx(float(q_out @ k_out), rel=1e-4, abs=1e-5)
    assert qk.gain == ("1 + w" if family == "gemma3_text" else "w")
    assert max(qk.q.max_error, qk.k.max_error) < 1e-5
    all_heads = q_heads.pow(2).mean(-1).sqrt()
    assert close(qk.q_rms_by_head_after, all_heads)


def test_gemma3_geglu_and_sliding_window(families):
    hf, model, _ = families["gemma3_text"]
    mlp = hf.model.layers[0].mlp
    seen = capture({"gate": mlp.gate_proj, "up": mlp.up_proj, "down": mlp.down_proj}, hf, IDS)
    geglu = views(model, "mlp")[fv.GeGLU]
    gate, up = seen["gate"][1][0, LAST], seen["up"][1][0, LAST]
    post = seen["down"][0][0, LAST]  # what down_proj takes in: GELU(gate) × up
    for f in geglu.strongest:
        assert f.gate == pytest.approx(float(gate[f.index]), rel=1e-4, abs=1e-5)
        assert f.up == pytest.approx(float(up[f.index]), rel=1e-4, abs=1e-5)
        assert f.post == pytest.approx(float(post[f.index]), rel=1e-4, abs=1e-5)
        assert f.silu_gate == pytest.approx(float(F.silu(gate[f.index])), rel=1e-4, abs=1e-6)
    assert abs(geglu.strongest[0].post) == pytest.approx(float(post.abs().max()), rel=1e-5)
    assert geglu.max_error < 1e-5 and geglu.max_gelu_silu_gap > 0

    c, window = hf.config, hf.config.sliding_window
    types = c.layer_types
    for layer in range(c.num_hidden_layers):
        for key in ("masked-attention", "positional-encoding"):
            sw = views(model, key, layer=layer)[fv.SlidingWindow]
            assert sw.local == (types[layer] == "sliding_attention")
            assert sw.local_layers == [i for i, t in enumerate(types) if t == "sliding_attention"]
            assert sw.global_layers == [i for i, t in enumerate(types) if t == "full_attention"]
            assert sw.rope_local_theta == c.rope_parameters["sliding_attention"]["rope_theta"]
            assert sw.rope_global_theta == c.rope_parameters["full_attention"]["rope_theta"]
            assert sw.window == window
            start = sw.window_start
            for i, row in enumerate(sw.allowed):
                q = start + i
                allowed = [start + j <= q and (not sw.local or q - (start + j) < window)
                           for j in range(len(row))]  # fmt: skip
                assert row == allowed
            assert sw.first_key == (LAST - window + 1 if sw.local else 0)
            assert sw.outside_weight == 0.0


def test_phi3_fused_projections_split_as_transformers(families):
    hf, model, _ = families["phi3"]
    attn, mlp = hf.model.layers[0].self_attn, hf.model.layers[0].mlp
    seen = capture({"qkv": attn.qkv_proj, "gate_up": mlp.gate_up_proj}, hf, IDS)
    c = hf.config
    d_head = c.hidden_size // c.num_attention_heads
    d_q, d_kv = c.num_attention_heads * d_head, c.num_key_value_heads * d_head
    qkv = views(model, "qkv")[fv.FusedProjection]
    assert qkv.weight_shape == list(attn.qkv_proj.weight.shape)
    assert [p.rows for p in qkv.parts] == [
        [0, d_q],
        [d_q, d_q + d_kv],
        [d_q + d_kv, d_q + 2 * d_kv],
    ]
    trace = model.trace(IDS)
    out = seen["qkv"][1][0, LAST]
    for p in qkv.parts:  # transformers' slice of the fused output is the probe the model used
        assert close(out[p.rows[0] : p.rows[1]], trace[p.probe][LAST].reshape(-1))
        assert p.max_error < 1e-5
    gate_up = views(model, "mlp")[fv.FusedProjection]
    d = c.intermediate_size
    assert gate_up.matrix == "gate_up_proj" and [p.rows for p in gate_up.parts] == [
        [0, d],
        [d, 2 * d],
    ]
    out = seen["gate_up"][1][0, LAST]
    for p in gate_up.parts:
        assert close(out[p.rows[0] : p.rows[1]], trace[p.probe][LAST])


@pytest.mark.parametrize("family", ["mixtral", "qwen3_moe"])
def test_the_router_chooses_transformers_top_k(families, family):
    hf, model, _ = families[family]
    layer = 1
    router = hf.model.layers[layer].mlp.gate
    seen = capture({"router": router}, hf, IDS)
    logits = seen["router"][1][0]  # [position, n_expert]
    probs = torch.softmax(logits.float(), dim=-1)
    top = probs.topk(hf.config.num_experts_per_tok, dim=-1)
    view = views(model, "mlp", layer=layer)[fv.Router]
    assert view.n_expert == logits.shape[-1] and view.top_k == top.indices.shape[-1]
    assert [t.chosen for t in view.tokens] == top.indices.tolist()
    for t in view.tokens:
        assert close(t.probs, probs[t.position])
        w = top.values[t.position]
        w = w / w.sum() if view.renormalized else w
        assert close(t.weights, w)
    counts = torch.bincount(top.indices.flatten(), minlength=view.n_expert)
    assert view.tokens_per_expert == counts.tolist()
    assert sum(view.share_per_expert) == pytest.approx(1.0, abs=1e-5)
    assert close(view.mean_prob_per_expert, probs.mean(0))


def test_gpt2_and_llama_steps_add_nothing(tmp_path):
    from helpers_hf import save_random_llama

    hf_dir = tmp_path / "llama"
    save_random_llama(hf_dir, "llama")
    model = lmscope.load(hf_dir)
    r = report(model, IDS[:4])
    assert all(s.family_data == [] for s in r.steps)


def test_the_cli_says_each_family_s_views_in_chinese(families, tmp_path, monkeypatch, capsys):
    """`lmscope explain` on GGUF files of the same weights (a vocabulary to read text with)."""
    from helpers_families import write_family_gguf
    from lmscope.cli import main

    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "160")
    outputs = {}
    for family, steps in (("gemma3_text", ["embedding", "mlp"]), ("mixtral", ["mlp"])):
        hf, _, folder = families[family]
        gguf = write_family_gguf(tmp_path / f"{family}.gguf", hf, folder)
        chosen = [a for s in steps for a in ("--step", s)]
        assert main(["explain", "--model", str(gguf), "hi there", *chosen, "--layer", "1"]) == 0
        outputs[family] = " ".join(capsys.readouterr().out.split())
    gemma, moe = outputs["gemma3_text"], outputs["mixtral"]
    assert "√" in gemma and text("report.family.stored-row", "zh") in gemma
    assert text("report.family.geglu", "zh", gap="X").split("X")[0][:20] in gemma
    assert text("step.embedding.summary.gemma3", "zh")[:12] in gemma
    assert text("report.family.experts", "zh") in moe and text("report.family.probs", "zh") in moe
    assert text("step.mlp.summary.moe", "zh")[:12] in moe


def test_the_json_api_sends_the_views_and_the_lineage(families):
    from fastapi.testclient import TestClient

    from lmscope.web import create_app

    _, model, _ = families["qwen3_moe"]
    where = {"ids": IDS, "position": LAST}
    with TestClient(create_app(model)) as client:
        info = client.get("/api/model").json()
        qkv = client.post("/api/step", json={**where, "key": "qkv", "layer": 1}).json()
        mlp = client.post("/api/step", json={**where, "key": "mlp", "layer": 1}).json()
        res = client.post("/api/step", json={**where, "key": "residual", "layer": 1}).json()
    assert info["family"] == "qwen3_moe" and info["lineage"] == [
        "qwen3_moe",
        "moe",
        "qwen3",
        "llama",
    ]
    assert qkv["family"] == "qwen3_moe" and [v["kind"] for v in qkv["family_data"]] == ["qk-norm"]
    assert [v["kind"] for v in mlp["family_data"]] == ["router"] and res["family_data"] == []
    direct = views(model, "mlp", layer=1)[fv.Router]
    assert mlp["family_data"][0]["tokens"] == [t.model_dump() for t in direct.tokens]


def test_each_family_has_its_name_and_falls_back_to_llama(families):
    """(Last: the other tests have made the models.)"""
    expected = {
        "gemma3_text": ("gemma3", "llama"),
        "qwen3": ("qwen3", "llama"),
        "phi3": ("phi3", "llama"),
        "mixtral": ("mixtral", "moe", "llama"),
        "qwen3_moe": ("qwen3_moe", "moe", "qwen3", "llama"),
    }
    for family, names in expected.items():
        assert lineage(families[family][1].capabilities.family) == names
    # a step the family retells is its own; the others are Llama's
    assert step_text("qkv", "gemma3").text.id == "step.qkv.text.gemma3"
    assert step_text("qkv", "qwen3_moe").text.id == "step.qkv.text.qwen3"
    assert step_text("mlp", "qwen3_moe").text.id == "step.mlp.text.moe"
    assert step_text("mlp", "phi3").title.id == "step.mlp.title.llama"
    assert step_text("residual", "phi3").summary.id == "step.residual.summary.llama"
    assert step_text("residual", "gpt2").summary.id == "step.residual.summary"
    # the probes too: QK-norm's own where the family has it, Llama's elsewhere
    assert "blocks.1.attn.q_norm.hook_out" in probe_names("qkv", "qwen3_moe", 1)
    assert probe_names("qkv", "mixtral", 1) == probe_names("qkv", "llama", 1)
    assert probe_names("mlp", "gemma3", 0) == probe_names("mlp", "llama", 0)


@pytest.mark.parametrize(
    ("family", "names", "not_said"),
    [
        ("gemma3", ["Gemma 3", "GeGLU", "QK-norm", "√d_model", "sliding window"], "SwiGLU"),
        ("qwen3", ["Qwen3", "QK-norm", "SwiGLU"], "Mistral)"),
        ("phi3", ["Phi-3", "qkv_proj", "gate_up_proj", "LongRoPE"], "Mistral)"),
        ("mixtral", ["mixture of experts", "router"], "Mistral)"),
        ("qwen3_moe", ["Qwen3", "QK-norm", "router"], "Mistral)"),
    ],
)
def test_step_one_says_what_the_family_is(family, names, not_said):
    """Step 1 told every family it was "of the Llama family (Llama, SmolLM2, Qwen2, Mistral)"
    with "the MLP is gated (SwiGLU)": wrong for Gemma 3 (GeGLU), and silent on what each adds."""
    texts = step_text("transformer", family)
    said = [text(t.id, "en", model="m") for t in (texts.title, texts.summary, texts.text)]
    assert all(name in said[2] for name in names), said[2]
    assert not_said not in " ".join(said) and "(Llama family)" not in said[0]
    assert "Llama" in said[2]  # it still says what it is built on
    in_chinese = [text(t.id, "zh", model="m") for t in (texts.title, texts.summary, texts.text)]
    assert "Llama 家族）" not in in_chinese[0]
    named = [n for n in names if n.isascii() and " " not in n and not n.islower()]  # not words
    assert all(name in in_chinese[2] for name in named), in_chinese[2]


GEMMA3_BLOCK = ["GeGLU", "QK-norm", "√d_model"]
SANDWICH = ["x + RMSNorm(Attention(RMSNorm(x)))", "x + RMSNorm(MLP(RMSNorm(x)))"]


@pytest.mark.parametrize(
    ("step", "family", "said", "not_said"),
    [
        ("architecture", "gemma3", {"en": GEMMA3_BLOCK, "zh": GEMMA3_BLOCK}, "SwiGLU"),
        ("architecture", "mixtral", {"en": ["router", "experts"], "zh": ["路由器", "专家"]}, "\0"),
        ("residual", "gemma3", {"en": SANDWICH, "zh": SANDWICH}, "x + Attention(RMSNorm(x))"),
    ],
)
def test_the_steps_draw_the_familys_own_block(step, family, said, not_said):
    """Step 3 drew Gemma 3's blocks as "RMSNorm → SwiGLU MLP → add" (Llama's) and a mixture
    of experts' with one MLP; step 18 wrote Gemma 3's sums as x + Attention(RMSNorm(x)),
    without the norm its sandwich puts on each sublayer's output."""
    texts = step_text(step, family)
    for lang, words in said.items():
        for field in (texts.summary, texts.text) if step == "residual" else (texts.text,):
            told = text(field.id, lang, d_model=640, n_layer=18)
            assert all(word in told for word in words) and not_said not in told, told
