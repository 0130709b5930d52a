"""Trace requests with any arguments: token ids in and out of range, probe patterns, layers,
logit options, steps and ablations, on float32, float16 and bfloat16 models.

Each call gives a Trace whose numbers are finite (masked scores are -inf by definition, and
only above the diagonal) or lmscope's one-line error; nothing else escapes. The explainer's
report is strict JSON. ``benchmarks/bench_fuzz.py`` runs these with larger budgets."""

from __future__ import annotations

import json
from functools import cache

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmscope
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS
from lmscope.engine.transformer import LanguageModel
from lmscope.errors import LmscopeError
from lmscope.explain.report import explain
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.tokenizers import CharTokenizer

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
CONFIG = GPTConfig(vocab_size=40, n_ctx=24, n_embd=24, n_layer=2, n_head=3)
DTYPES = ["float32", "float16", "bfloat16"]
PROBES = ["hook_embed", "blocks.*.attn.hook_pattern", "blocks.0.*", "*", "ln_final.*", "logits"]
PROBES += ["blocks.1.attn.hook_result", "blocks.*.attn.hook_attn_scores", "nothing", "", "**"]


@cache
def tiny(dtype: str) -> LanguageModel:
    torch.manual_seed(0)
    gpt = GPT(CONFIG)
    with torch.no_grad():  # a few large weights, so half precision meets big activations
        gpt.wte.weight[:, 0] = 300.0
        gpt.h[0].mlp.c_fc.weight[:5] *= 50
    tokenizer = CharTokenizer.from_text("".join(chr(97 + i) for i in range(26)) + " .,!?\n")
    return LanguageModel(
        gpt.to(lmscope.engine.loading.parse_dtype(dtype)), tokenizer, f"tiny-{dtype}"
    )


INTS = st.one_of(st.integers(0, CONFIG.vocab_size - 1), st.integers(-(2**64), 2**64))
IDS = st.one_of(
    st.lists(st.integers(0, CONFIG.vocab_size - 1), min_size=1, max_size=CONFIG.n_ctx),
    st.lists(INTS, max_size=CONFIG.n_ctx + 4),
    st.text(max_size=30),
)


def check_trace(trace, model) -> None:
    for name in trace.names():
        t = trace[name].float()
        if name.endswith("hook_attn_scores"):
            upper = torch.ones(t.shape[-2:], dtype=torch.bool).triu(1)
            assert torch.isneginf(t[..., upper]).all() and torch.isfinite(t[..., ~upper]).all()
        else:
            assert torch.isfinite(t).all(), name
        if name.endswith("hook_pattern"):
            upper = torch.ones(t.shape[-2:], dtype=torch.bool).triu(1)
            assert (t[..., upper] == 0).all(), f"{name}: masked weight not exactly 0"
            assert torch.allclose(t.sum(-1), torch.ones(()), atol=1e-3)
    assert torch.isfinite(trace.last_logits).all()
    p = trace.predictions
    assert torch.isfinite(p.top_probs).all() and torch.isfinite(p.entropy).all()
    assert ((p.top_ids >= 0) & (p.top_ids < model.config.vocab_size)).all()
    assert torch.isfinite(p.next_token_prob[:-1]).all()


@pytest.mark.slow
@FUZZ
@given(
    dtype=st.sampled_from(DTYPES),
    ids=IDS,
    names=st.none() | st.lists(st.sampled_from(PROBES) | st.text(max_size=12), max_size=4),
    layers=st.none() | st.lists(st.integers(-2, CONFIG.n_layer + 1), max_size=3),
    keep=st.sampled_from(["last", "all", "none", "every"]),
    top_k=st.integers(-3, 100),
    truncate=st.booleans(),
)
def test_any_trace_request_is_finite_or_one_clear_error(
    dtype, ids, names, layers, keep, top_k, truncate
):
    model = tiny(dtype)
    try:
        trace = model.trace(
            ids, names=names, layers=layers, keep_logits=keep, top_k=top_k, truncate=truncate
        )
        check_trace(trace, model)
    except LmscopeError as err:
        assert "\n" not in str(err)


@pytest.mark.slow
@FUZZ
@given(
    dtype=st.sampled_from(DTYPES),
    step=st.integers(-2, 23) | st.sampled_from([s.key for s in STEPS] + ["", "softmax", "x"]),
    layer=st.integers(-2, CONFIG.n_layer + 1),
)
def test_any_step_is_tensors_or_one_clear_error(dtype, step, layer):
    trace = tiny(dtype).trace("to be or not to be")
    try:
        tensors = trace.step(step, layer=layer)
    except (LmscopeError, KeyError) as err:  # an unknown step is a failed lookup, by name
        assert "\n" not in str(err) and ("step" in str(err) or "layer" in str(err))
        return
    assert all(isinstance(t, torch.Tensor) for t in tensors.values())


@pytest.mark.slow
@FUZZ
@given(
    dtype=st.sampled_from(DTYPES),
    text=st.text("abcdefghij .!\n", min_size=0, max_size=30),
    layer=st.integers(-1, CONFIG.n_layer),
    head=st.integers(-1, CONFIG.n_head),
    position=st.none() | st.integers(-30, 30),
    temperature=st.sampled_from([0.0, 1e-6, 0.05, 1.0, 2.0, 100.0, 1e6]),
    ablate=st.none() | st.lists(st.sampled_from(["L0H1", "mlp*", "attn1", "L9H0", "??"])),
)
def test_explain_is_strict_json_or_one_clear_error(
    dtype, text, layer, head, position, temperature, ablate
):
    model = tiny(dtype)
    try:
        params = SamplingParams(temperature=temperature, top_p=0.9)
        report = explain(
            model, text, layer=layer, head=head, position=position, params=params, ablate=ablate
        )
    except LmscopeError as err:
        assert "\n" not in str(err)
        return
    json.dumps(report, allow_nan=False)
