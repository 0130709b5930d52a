"""Logit lens and ablations on real forward passes, checked against direct computations."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lmscope.errors import InvalidInputError
from lmscope.interpret import Ablation, ablation_effect, parse_ablations

PROMPT = "Data visualization empowers users to"


@pytest.fixture(scope="module")
def trace(tiny_model):
    return tiny_model.trace(PROMPT, keep_logits="all")


def test_last_layer_lens_is_the_model_output(trace, tiny_model):
    lens = trace.logit_lens(k=5)
    assert lens.stages == ["embed", "block 0", "block 1"]
    probs = torch.softmax(trace["logits"], -1)
    top = probs.topk(5, dim=-1)
    assert torch.equal(lens.top_ids[-1], top.indices)
    assert torch.allclose(lens.top_probs[-1], top.values, atol=1e-5)
    assert torch.equal(lens.final_ids, probs.argmax(-1))
    assert (lens.final_rank[-1] == 0).all()


def test_lens_on_an_early_layer_matches_direct_computation(trace, tiny_model):
    gpt = tiny_model.gpt
    resid = trace["blocks.0.hook_resid_post"]
    ln = gpt.ln_f
    logits = F.layer_norm(resid, (resid.shape[-1],), ln.weight, ln.bias, ln.eps) @ gpt.wte.weight.T
    logp = torch.log_softmax(logits, -1)
    lens = trace.logit_lens(k=3, positions=[1, 4])
    assert torch.equal(lens.top_ids[1], logp[[1, 4]].topk(3).indices)
    final = trace["logits"].argmax(-1)[[1, 4]]
    expected_rank = (logp[[1, 4]] > logp[[1, 4]].gather(-1, final[:, None])).sum(-1)
    assert torch.equal(lens.final_rank[1], expected_rank)
    d = lens.to_dict(pieces=lambda i: tiny_model.tokenizer.piece(i).text)
    assert len(d["cells"]) == 3 and len(d["cells"][0]) == 2 and len(d["cells"][0][0]["top"]) == 3


def test_lens_needs_residuals(tiny_model):
    t = tiny_model.trace(PROMPT, names=["hook_embed"])
    with pytest.raises(InvalidInputError, match="residual stream"):
        t.logit_lens()
    with pytest.raises(InvalidInputError, match="position 99 does not exist"):
        tiny_model.trace(PROMPT).logit_lens(positions=[99])


def test_parse_ablations(tiny_model):
    c = tiny_model.config
    assert parse_ablations("L1H2", c) == [Ablation("head", 1, 2)]
    assert parse_ablations(["0.3", "attn1", "L0.mlp"], c) == [
        Ablation("head", 0, 3),
        Ablation("attn", 1),
        Ablation("mlp", 0),
    ]
    assert len(parse_ablations("L*H*", c)) == c.n_layer * c.n_head
    assert len(parse_ablations(["mlp*", "mlp1"], c)) == c.n_layer  # repeats dropped
    for bad in ["L5H0", "L0H9", "attn7", "head3", ""]:
        with pytest.raises(InvalidInputError):
            parse_ablations(bad, c)


def test_ablating_nothing_changes_nothing(tiny_model, trace):
    same = tiny_model.trace(PROMPT, keep_logits="all", ablate=[])
    assert torch.equal(same["logits"], trace["logits"])
    effect = ablation_effect(tiny_model, PROMPT, [])
    assert effect.kl == 0.0 and effect.before == effect.after


def test_head_ablation_zeroes_that_head_only(tiny_model, trace):
    t = tiny_model.trace(PROMPT, ablate="L1H2")
    z = t["blocks.1.attn.hook_z"]
    assert (z[:, 2] == 0).all()
    assert torch.equal(z[:, 0], trace["blocks.1.attn.hook_z"][:, 0])  # inputs to layer 1 unchanged
    assert torch.equal(t["blocks.0.hook_resid_post"], trace["blocks.0.hook_resid_post"])
    proj = tiny_model.gpt.h[1].attn.c_proj
    expected = z.reshape(len(t), -1) @ proj.weight.T + proj.bias
    assert torch.allclose(t["blocks.1.hook_attn_out"], expected, atol=1e-5)


def test_mean_ablation_replaces_by_the_prompt_mean(tiny_model, trace):
    t = tiny_model.trace(PROMPT, ablate="mlp0", ablate_mode="mean")
    mean = trace["blocks.0.hook_mlp_out"].mean(0)
    assert torch.allclose(
        t["blocks.0.hook_mlp_out"], mean.expand_as(trace["blocks.0.hook_mlp_out"])
    )


def test_ablating_everything_leaves_the_embedding_path(tiny_model, trace):
    gpt = tiny_model.gpt
    t = tiny_model.trace(PROMPT, keep_logits="all", ablate=["attn*", "mlp*"])
    embed = trace["blocks.0.hook_resid_pre"]
    ln = gpt.ln_f
    direct = F.layer_norm(embed, (embed.shape[-1],), ln.weight, ln.bias, ln.eps) @ gpt.wte.weight.T
    assert torch.allclose(t["logits"], direct, atol=1e-4)
    # every head switched off leaves each layer's output-projection bias in the stream
    heads = tiny_model.trace(PROMPT, keep_logits="all", ablate=["L*H*", "mlp*"])
    resid = embed + sum(block.attn.c_proj.bias for block in gpt.h)
    direct = F.layer_norm(resid, (resid.shape[-1],), ln.weight, ln.bias, ln.eps) @ gpt.wte.weight.T
    assert torch.allclose(heads["logits"], direct, atol=1e-4)


def test_ablation_effect_reports_change(tiny_model, trace):
    effect = ablation_effect(tiny_model, PROMPT, ["attn*", "mlp*"], k=5)
    assert effect.kl > 0
    probs = torch.softmax(trace["logits"][-1], -1)
    assert effect.before[0]["id"] == int(probs.argmax())
    assert {d["id"] for d in effect.diff} >= {r["id"] for r in effect.before + effect.after}
    for d in effect.diff:
        assert d["change"] == pytest.approx(d["after"] - d["before"])
    with pytest.raises(InvalidInputError):
        ablation_effect(tiny_model, PROMPT, "L0H0", mode="shuffle")


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_ablation_effect_at_an_earlier_position(tiny_model, mode):
    """The effect at position 2 equals reading position 2 of a full ablated trace."""
    effect = ablation_effect(tiny_model, PROMPT, ["L0H1", "mlp1"], mode=mode, position=2, k=3)
    full = tiny_model.trace(PROMPT, keep_logits="all", ablate=["L0H1", "mlp1"], ablate_mode=mode)
    probs = torch.softmax(full["logits"][2], -1)
    assert effect.position == 2
    assert effect.after[0]["id"] == int(probs.argmax())
    assert effect.after[0]["prob"] == pytest.approx(float(probs.max()), rel=1e-4)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (dict(ablate=None), "ablations are a list"),
        (dict(ablate=3), "ablations are a list"),
        (dict(k=-1), "k must be an integer >= 1"),
        (dict(k=0), "k must be an integer >= 1"),  # was an effect of empty top lists
        (dict(k=2.5), "k must be an integer >= 1"),
    ],
)
def test_ablation_effect_refuses_odd_arguments(tiny_model, options, expected):
    with pytest.raises(InvalidInputError, match=expected):
        ablation_effect(tiny_model, PROMPT, **{"ablate": ["L0H0"], **options})


@pytest.mark.slow
def test_ablation_effect_with_k_beyond_the_vocabulary_lists_every_token(tiny_model):
    effect = ablation_effect(tiny_model, PROMPT, ["L0H0"], k=10**9)
    assert len(effect.before) == tiny_model.vocab_size
