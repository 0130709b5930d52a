"""Numbers that stay numbers: float16 and bfloat16 models, huge activations, extreme
temperatures. No view shows NaN, no response holds NaN or Infinity, masked attention weights
are exactly 0 in every dtype, and the probed path agrees with the fast one."""

from __future__ import annotations

import json

import pytest
import torch
from fastapi.testclient import TestClient

import lmscope
from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.engine.transformer import LanguageModel
from lmscope.errors import InvalidInputError
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.tokenizers import CharTokenizer
from lmscope.web import create_app

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
PROMPT = "ROMEO: But soft, what light through yonder window breaks?"


def strict(text: str):
    def refuse(name):
        raise AssertionError(f"response holds {name}")

    return json.loads(text, parse_constant=refuse)


def loud_model(dtype) -> LanguageModel:
    """A small GPT with GPT-2-like outlier dimensions: residual values in the hundreds, whose
    squares overflow float16 (the LayerNorm variance used to become inf there)."""
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=40, n_ctx=32, n_embd=32, n_layer=2, n_head=4))
    with torch.no_grad():
        gpt.wte.weight[:, 3] = 800.0
        gpt.wpe.weight[:, 7] = -500.0
    tokenizer = CharTokenizer.from_text("abcdefghijklmnopqrstuvwxyz .,!?;:'-\n")
    return LanguageModel(gpt.to(dtype), tokenizer, f"loud-{dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_layernorm_probes_stay_finite_and_match_the_fast_path(dtype):
    model = loud_model(dtype)
    trace = model.trace("the quick brown fox")
    for name in trace.names():
        if not name.endswith("hook_attn_scores"):
            assert torch.isfinite(trace[name].float()).all(), name
    # the scale (std) is the float64 one of the input, though some squares pass 65504
    x = trace["blocks.0.hook_resid_pre"]
    ln = model.gpt.h[0].ln_1
    expected = (x.double().var(-1, unbiased=False, keepdim=True) + ln.eps).sqrt()
    assert (x.float().abs().amax(-1) > 256).all()
    assert torch.allclose(trace["blocks.0.ln1.hook_scale"].double(), expected, rtol=1e-5)
    # the probed LayerNorm equals F.layer_norm on the same input, in the model's dtype
    fast = torch.nn.functional.layer_norm(x, (x.shape[-1],), ln.weight, ln.bias, ln.eps)
    out = trace["blocks.0.ln1.hook_out"]
    assert out.dtype == dtype
    assert torch.allclose(out.float(), fast.float(), atol=1e-2 if dtype != torch.float32 else 1e-5)
    # and the probed forward pass agrees with the fast one
    fast_logits = model.logits("the quick brown fox")[-1]
    tol = 1e-4 if dtype == torch.float32 else 0.1
    assert torch.allclose(trace.last_logits, fast_logits, atol=tol, rtol=tol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_attention_is_exactly_zero_in_every_dtype(dtype):
    model = lmscope.load("shakespeare", dtype=dtype)
    trace = model.trace(PROMPT)
    n = len(trace)
    upper = torch.ones(n, n, dtype=torch.bool).triu(1)
    for layer in range(model.config.n_layer):
        pattern = trace[f"blocks.{layer}.attn.hook_pattern"]
        masked = trace[f"blocks.{layer}.attn.hook_attn_scores"]
        assert (pattern[:, upper] == 0).all(), f"layer {layer}: masked weight not exactly 0"
        assert torch.isneginf(masked[:, upper]).all()
        assert torch.isfinite(masked[:, ~upper]).all() and (pattern[:, ~upper] >= 0).all()
        assert torch.allclose(pattern.sum(-1).float(), torch.ones(pattern.shape[:2]), atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_load_in_half_precision(dtype):
    model = lmscope.load("shakespeare", dtype=dtype)
    assert model.gpt.wte.weight.dtype == lmscope.engine.loading.parse_dtype(dtype)
    reference = lmscope.load("shakespeare")
    ours, full = model.trace(PROMPT), reference.trace(PROMPT)
    assert ours.predictions.top_ids[-1, 0] == full.predictions.top_ids[-1, 0]
    assert torch.allclose(ours.last_logits, full.last_logits, atol=0.15)
    tokens = [t.id for t in model.generate("ROMEO:", 8, params=SamplingParams(greedy=True))]
    assert len(tokens) == 8


def test_load_refuses_unknown_dtypes():
    with pytest.raises(InvalidInputError, match="unknown dtype"):
        lmscope.load(dtype="int8")


@pytest.fixture(scope="module", params=["float16", "bfloat16"])
def half_client(request):
    model = lmscope.load("shakespeare", dtype=request.param)
    with TestClient(create_app(model)) as client:
        yield client, model


@pytest.mark.slow
def test_every_view_of_a_half_precision_model_is_strict_json(half_client):
    client, model = half_client
    data = strict(client.post("/api/trace", json={"text": PROMPT}).text)
    ids = [t["id"] for t in data["tokens"]]
    last = len(ids) - 1
    bodies = [("/api/embedding", {"ids": ids, "position": 0})]
    bodies += [("/api/tokenizer", {"ids": ids, "position": last})]
    for layer in range(model.config.n_layer):
        bodies.append(("/api/layer", {"ids": ids, "layer": layer, "position": last}))
        for head in range(model.config.n_head):
            body = {"ids": ids, "layer": layer, "head": head, "position": last}
            bodies.append(("/api/attention", body))
    bodies += [("/api/final", {"ids": ids, "position": p}) for p in (0, last)]
    bodies += [("/api/lens", {"ids": ids}), ("/api/heads", {"ids": ids})]
    bodies += [("/api/ablate", {"ids": ids, "ablate": ["L0H*", "mlp1"], "mode": "mean"})]
    for path, body in bodies:
        r = client.post(path, json=body)
        assert r.status_code == 200, (path, r.text[:300])
        strict(r.text)
    attention = strict(
        client.post(
            "/api/attention", json={"ids": ids, "layer": 0, "head": 0, "position": last}
        ).text
    )
    size = attention["size"]
    for i in range(size):
        for j in range(i + 1, size):
            assert attention["pattern"][i][j] == 0 and attention["masked"][i][j] is None


@pytest.mark.parametrize(
    "sampling",
    [
        {"temperature": 0.0},
        {"temperature": 1e-9},
        {"temperature": 1e-5},
        {"temperature": 100.0},
        {"temperature": 100.0, "top_p": 1e-9},
        {"temperature": 0.05, "top_k": 1, "min_p": 1.0},
        {"temperature": 2.0, "top_k": 100000, "top_p": 1.0, "min_p": 0.0},
        {"greedy": True, "temperature": 100.0},
    ],
)
def test_extreme_sampling_settings_are_strict_json(half_client, sampling):
    client, model = half_client
    ids = model.encode(PROMPT)
    r = client.post("/api/pool", json={"ids": ids, "position": 3, "sampling": sampling})
    assert r.status_code == 200, r.text
    pool = strict(r.text)
    assert (
        pool["size"] >= 1
        and abs(sum(t["prob"] for t in pool["top"]) - 1) < 1e-3
        or (pool["size"] > len(pool["top"]))
    )
    r = client.post("/api/generate", json={"ids": ids, "n": 3, "seed": 1, "sampling": sampling})
    events = [strict(line) for line in r.text.splitlines() if line]
    assert [e["type"] for e in events] == ["token"] * 3 + ["done"]


def test_a_float16_overflow_is_one_readable_error_not_a_crash():
    model = lmscope.load("shakespeare", dtype="float16")
    with torch.no_grad():  # logits past float16's 65504
        model.gpt.wte.weight.mul_(100)
        model.gpt.ln_f.weight.mul_(100)
    with pytest.raises(InvalidInputError, match="overflowed"):
        model.trace(PROMPT)
    ids = model.encode(PROMPT)
    with TestClient(create_app(model)) as client:
        for path, body in [
            ("/api/trace", {"ids": ids}),
            ("/api/final", {"ids": ids, "position": 0}),
            ("/api/lens", {"ids": ids}),
        ]:
            r = client.post(path, json=body)
            assert r.status_code == 400 and "overflowed" in r.json()["error"], (path, r.text)


@pytest.mark.parametrize("scale", [1e3, 1e6, 1e30])
@pytest.mark.parametrize("temperature", [1e-5, 1e-3, 1.0, 1e3, 1e30])
def test_huge_logits_at_any_temperature_give_a_distribution(scale, temperature):
    logits = torch.randn(2048, generator=torch.Generator().manual_seed(0)) * scale
    pool = candidate_pool(logits, SamplingParams(temperature=temperature))
    for probs in (pool.probs, pool.tempered_probs, pool.original_probs):
        assert torch.isfinite(probs).all()
    assert abs(float(pool.probs.double().sum()) - 1) < 1e-5
