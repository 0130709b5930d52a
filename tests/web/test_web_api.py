"""The web API against the library: every number it serves equals the trace's, errors are 4xx
JSON, and nothing non-JSON (NaN, Infinity) ever leaves the server."""

from __future__ import annotations

import base64
import json
import math
import threading

import pytest
import torch

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from webtools import assert_readable_error, strict_json  # noqa: E402

from lmscope import i18n  # noqa: E402
from lmscope.engine.generation import position_seed  # noqa: E402
from lmscope.engine.sampling import SamplingParams, candidate_pool, make_generator  # noqa: E402
from lmscope.explain.logits import TEMPERATURES, TOP_N  # noqa: E402
from lmscope.web import create_app  # noqa: E402
from lmscope.web.app import MAX_BODY  # noqa: E402
from lmscope.web.schemas import MAX_IDS, MAX_TEXT_CHARS, MAX_TOKEN_ID  # noqa: E402
from lmscope.web.store import TraceStore, full_trace_bytes  # noqa: E402

PROMPT = "Data visualization empowers users to"


@pytest.fixture(scope="module")
def traced(client, tiny_model):
    data = client.post("/api/trace", json={"text": PROMPT}).json()
    ids = [t["id"] for t in data["tokens"]]
    return data, ids, tiny_model.trace(ids)


def close(a, b, tol=1e-4):
    a = a.double() if isinstance(a, torch.Tensor) else torch.tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b).to(torch.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert torch.allclose(a, b, rtol=tol, atol=tol), (a - b).abs().max()


# --- happy paths ------------------------------------------------------------------------


def test_model_facts(client, tiny_model):
    info = client.get("/api/model").json()
    c = tiny_model.config
    assert (info["n_layer"], info["n_head"], info["d_model"]) == (c.n_layer, c.n_head, c.n_embd)
    assert (info["vocab_size"], info["n_ctx"], info["d_mlp"]) == (c.vocab_size, c.n_ctx, c.d_mlp)
    assert info["n_params"] == tiny_model.gpt.num_params()
    assert [s["number"] for s in info["steps"]] == list(range(1, 21))
    assert info["temperatures"] == TEMPERATURES and info["top_n"] == TOP_N
    # each step's title by catalog id; said in the language asked for, never English-only
    first = info["steps"][0]
    assert first["said"] is None and first["texts"]["title"]["id"].startswith("step.")
    zh = client.get("/api/model?lang=zh").json()["steps"][0]["said"]
    assert (
        zh["title"]
        == i18n.text(first["texts"]["title"]["id"], "zh")
        != i18n.text(first["texts"]["title"]["id"], "en")
    )


def test_trace_equals_library(client, traced, tiny_model):
    data, ids, trace = traced
    assert ids == tiny_model.encode(PROMPT)
    assert [t["text"] for t in data["tokens"]] == [p.text for p in trace.pieces]
    preds = data["predictions"]
    assert [p["top_ids"] for p in preds] == trace.predictions.top_ids[:, :5].tolist()
    close([p["top_probs"] for p in preds], trace.predictions.top_probs[:, :5])
    assert preds[-1]["next_prob"] is None  # nothing follows the last token
    close([p["next_prob"] for p in preds[:-1]], trace.predictions.next_token_prob[:-1])
    # resid norms: embedding sum, then every block's output
    expected = [trace["blocks.0.hook_resid_pre"].norm(dim=-1)] + [
        trace[f"blocks.{i}.hook_resid_post"].norm(dim=-1) for i in range(2)
    ]
    close(data["resid_norms"], torch.stack(expected))
    for token_id in preds[0]["top_ids"]:
        assert str(token_id) in data["vocab"]


def test_logits_view_gives_exact_probabilities(traced):
    data, _, trace = traced
    view = data["next"]
    logits = trace.last_logits.double()
    top = torch.sort(logits, descending=True, stable=True)
    assert view["ids"] == top.indices[:TOP_N].tolist()
    close(view["logits"], top.values[:TOP_N], tol=1e-6)
    assert view["tail_count"] == logits.numel() - TOP_N
    tail = top.values[TOP_N:]
    for i in (0, 9, 19, 39):
        T = view["temperatures"][i]
        assert view["tail_lse"][i] == pytest.approx(float(torch.logsumexp(tail / T, 0)), rel=1e-9)
    # what the page computes: exp(z/T - logsumexp(top/T ++ tail_lse)) == softmax over all
    T, i = 0.5, view["temperatures"].index(0.5)
    scaled = torch.tensor(view["logits"], dtype=torch.float64) / T
    total = torch.logsumexp(torch.cat([scaled, torch.tensor([view["tail_lse"][i]])]), 0)
    close(torch.exp(scaled - total), torch.softmax(logits / T, 0)[top.indices[:TOP_N]], tol=1e-7)


def test_trace_by_ids_is_cached(client, traced):
    _, ids, _ = traced
    again = client.post("/api/trace", json={"ids": ids}).json()
    assert again["cached"] is True
    assert [t["id"] for t in again["tokens"]] == ids


def test_layer_equals_trace(client, traced, tiny_model):
    _, ids, trace = traced
    layer, pos = 1, 3
    d = client.post("/api/layer", json={"ids": ids, "layer": layer, "position": pos}).json()
    p = f"blocks.{layer}"
    close(d["q"], trace[f"{p}.attn.hook_q"][pos])
    close(d["k"], trace[f"{p}.attn.hook_k"][pos])
    close(d["v"], trace[f"{p}.attn.hook_v"][pos])
    close(d["z"], trace[f"{p}.attn.hook_z"][pos])
    close([r["values"] for r in d["head_results"]], trace[f"{p}.attn.hook_result"][pos])
    close(d["attn_out"]["values"], trace[f"{p}.hook_attn_out"][pos])
    close(d["ln1"]["std"], trace[f"{p}.ln1.hook_scale"][pos].squeeze())
    close(d["ln1"]["normalized"]["values"], trace[f"{p}.ln1.hook_normalized"][pos])
    close(d["ln2"]["output"]["values"], trace[f"{p}.ln2.hook_out"][pos])
    close(d["mlp_pre"]["values"], trace[f"{p}.mlp.hook_pre"][pos])
    close(d["mlp_post"]["values"], trace[f"{p}.mlp.hook_post"][pos])
    close(d["resid_post"]["values"], trace[f"{p}.hook_resid_post"][pos])
    close(d["ln1"]["gamma"], tiny_model.gpt.h[layer].ln_1.weight.detach())
    assert sum(d["mlp_post_stats"]["histogram"]["counts"]) == tiny_model.config.d_mlp
    # the dropout example zeroes a share p and scales the rest by 1/(1-p): p is the model's
    # training rate, or 0.1 for a model trained without dropout
    drop, rate = d["dropout"], tiny_model.config.dropout
    assert drop["model_rate"] == rate and drop["example_rate"] == (rate or 0.1)
    keep = 1 - drop["example_rate"]
    zeroed = set(drop["zeroed"])
    for i, (before, after) in enumerate(zip(d["attn_out"]["values"], drop["after"], strict=True)):
        assert after == (0.0 if i in zeroed else pytest.approx(before / keep, rel=1e-4, abs=1e-5))


def test_attention_equals_trace(client, traced):
    _, ids, trace = traced
    layer, head, pos = 0, 2, 4
    body = {"ids": ids, "layer": layer, "head": head, "position": pos}
    r = client.post("/api/attention", json=body)
    d = strict_json(r.text)
    a = f"blocks.{layer}.attn"
    n = len(ids)
    assert (d["start"], d["size"]) == (0, n)
    assert d["scale"] == pytest.approx(1 / math.sqrt(trace.config.d_head))
    close(d["raw"], trace[f"{a}.hook_attn_scores_raw"][head])
    close(d["scaled"], trace[f"{a}.hook_attn_scores_scaled"][head])
    close(d["pattern"], trace[f"{a}.hook_pattern"][head])
    for i in range(n):
        for j in range(n):
            masked = d["masked"][i][j]
            if j > i:
                assert masked is None  # -inf travels as null
            else:
                assert masked == pytest.approx(d["scaled"][i][j], abs=1e-4)
    close(d["row"]["pattern"], trace[f"{a}.hook_pattern"][head, pos, : pos + 1], tol=1e-6)
    close(d["k"], trace[f"{a}.hook_k"][:, head])
    thumbs = [base64.b64decode(h) for h in d["heads"]]
    assert len(thumbs) == trace.config.n_head
    expected = (trace[f"{a}.hook_pattern"][1] * 255).round().to(torch.uint8).flatten().tolist()
    assert list(thumbs[1]) == expected


def test_attention_window_on_a_long_prompt(client, tiny_model):
    ids = list(range(1000, 1100))  # 100 tokens: the window is 64 positions around the query
    d = client.post("/api/attention", json={"ids": ids, "layer": 0, "head": 0, "position": 90})
    d = d.json()
    assert d["size"] == 64 and d["start"] <= 90 < d["start"] + 64
    assert len(d["row"]["raw"]) == 91 and len(d["pattern"]) == 64
    pinned = client.post(
        "/api/attention", json={"ids": ids, "layer": 0, "head": 0, "position": 5, "start": 99}
    ).json()
    assert pinned["start"] == 100 - 64  # clamped so the window stays inside the sequence


def test_final_logits_at_an_earlier_position(client, traced, tiny_model):
    _, ids, trace = traced
    d = client.post("/api/final", json={"ids": ids, "position": 2}).json()
    full = tiny_model.logits(ids)[2].double()
    top = torch.sort(full, descending=True, stable=True)
    assert d["logits"]["ids"][:20] == top.indices[:20].tolist()
    close(d["logits"]["logits"][:50], top.values[:50], tol=1e-4)
    close(d["ln_final"]["output"]["values"], trace["ln_final.hook_out"][2])
    assert d["logits"]["lse"] == pytest.approx(float(torch.logsumexp(full, 0)), rel=1e-5)


def test_embedding_and_tokenizer(client, traced, tiny_model):
    _, ids, trace = traced
    e = client.post("/api/embedding", json={"ids": ids, "position": 2}).json()
    close(e["token_embedding"]["values"], trace["hook_embed"][2])
    close(e["sum"]["values"], trace["blocks.0.hook_resid_pre"][2])
    assert e["embedding_matrix"] == [tiny_model.config.vocab_size, tiny_model.config.n_embd]
    tok = client.post("/api/tokenizer", json={"ids": ids, "position": 2}).json()
    expected = tiny_model.tokenizer.explain(PROMPT)[2]
    assert tok["token"]["id"] == expected.id and tok["pretoken"] == expected.pretoken
    assert [m["rank"] for m in tok["merges"]] == [m.rank for m in expected.merges]
    assert tok["merges"][-1]["result"] == tok["token"]["text"]


def test_pool_matches_candidate_pool(client, traced):
    _, ids, trace = traced
    sampling = {"temperature": 0.7, "top_k": 40, "top_p": 0.5, "min_p": 0.2}
    d = client.post("/api/pool", json={"ids": ids, "position": len(ids) - 1, "sampling": sampling})
    d = d.json()
    pool = candidate_pool(trace.last_logits, SamplingParams(**sampling))
    assert d["size"] == len(pool) and d["stages"] == pool.stages
    assert [t["id"] for t in d["top"]] == pool.token_ids[:20].tolist()
    close([t["prob"] for t in d["top"]], pool.probs[:20], tol=1e-6)


def events(client, body):
    r = client.post("/api/generate", json=body)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    return [strict_json(line) for line in r.text.splitlines() if line.strip()]


def test_generate_streams_reproducible_tokens(client, traced, tiny_model):
    _, ids, _ = traced
    body = {"ids": ids, "n": 3, "seed": 7, "sampling": {"temperature": 0.9, "top_k": 50}}
    first = events(client, body)
    assert [e["type"] for e in first] == ["token"] * 3 + ["done"]
    assert first == events(client, body)  # same seed, same tokens
    assert [e["position"] for e in first[:3]] == [len(ids), len(ids) + 1, len(ids) + 2]
    # one at a time gives the same tokens as three at once: each draw depends on its position
    seq = list(ids)
    for _ in range(3):
        one = events(client, {**body, "ids": seq, "n": 1})
        seq.append(one[0]["id"])
    assert seq[len(ids) :] == [e["id"] for e in first[:3]]
    # and it is the library's candidate pool, sampled with the position's seed
    params = SamplingParams(temperature=0.9, top_k=50)
    pool = candidate_pool(tiny_model.next_token_logits(ids), params)
    assert pool.sample(make_generator(position_seed(7, len(ids)))) == first[0]["id"]


@pytest.mark.slow
@pytest.mark.parametrize("cache_bytes", [1 << 30, 1 << 22], ids=["full trace", "base trace"])
def test_generation_after_a_trace_starts_from_the_trace_it_kept(tiny_model, cache_bytes):
    ids = list(range(500, 560))
    body = {"ids": ids, "n": 4, "seed": 5, "sampling": {"temperature": 0.9}}
    with TestClient(create_app(tiny_model)) as c:
        untraced = events(c, body)  # nothing kept: the run reads the prompt itself
    starts = []
    real_start = tiny_model.start
    with TestClient(create_app(tiny_model, cache_bytes=cache_bytes)) as c:
        store = c.app.state.store
        assert c.post("/api/trace", json={"ids": ids}).status_code == 200
        assert store.is_full(tuple(ids)) == (cache_bytes == 1 << 30)
        tiny_model.start = lambda *a: starts.append(a) or real_start(*a)
        try:
            after = events(c, body)
        finally:
            del tiny_model.start
    assert starts == []  # the kept trace's keys, values and logits started the run
    # the same tokens; probabilities to float32's last bits (GPT-2's traced pass groups its
    # sums a little differently from the plain one)
    assert [e.get("id") for e in after] == [e.get("id") for e in untraced]
    for ours, theirs in zip(after[:-1], untraced[:-1], strict=True):
        close([ours["prob"], ours["model_prob"]], [theirs["prob"], theirs["model_prob"]], 1e-6)


def test_generate_greedy_takes_the_argmax(client, traced):
    data, ids, trace = traced
    out = events(client, {"ids": ids, "n": 1, "sampling": {"greedy": True}})
    assert out[0]["id"] == data["next"]["ids"][0] == int(trace.last_logits.argmax())
    assert out[0]["pool_size"] == 1 and out[0]["prob"] == 1.0
    assert isinstance(out[-1]["seed"], int)  # a fresh seed is reported so a run can be repeated


def test_generate_stops_at_the_context(client, tiny_model):
    n_ctx = tiny_model.config.n_ctx
    out = events(client, {"ids": [11] * (n_ctx - 2), "n": 5, "seed": 1})
    assert [e["type"] for e in out] == ["token", "token", "done"]
    assert out[-1]["reason"] == "context full"


def test_position_seeds_differ():
    assert len({position_seed(1, p) for p in range(1000)}) == 1000
    assert position_seed(1, 5) != position_seed(2, 5)


# --- bad input ----------------------------------------------------------------------------

BAD = [
    ("/api/trace", {"text": ""}, 422, "at least 1 character"),  # the schema says so
    ("/api/trace", {"text": "word " * 400}, 400, "context"),
    ("/api/trace", {"text": 12}, 422, "text"),
    ("/api/trace", {}, 422, "exactly one"),
    ("/api/trace", {"text": "a", "ids": [1]}, 422, "exactly one"),
    ("/api/trace", {"text": "a", "path": "/etc/passwd"}, 422, "path"),
    ("/api/trace", {"ids": [50257]}, 400, "vocabulary"),
    ("/api/trace", {"ids": []}, 422, "at least 1 item"),
    ("/api/layer", {"ids": [1, 2], "layer": 2, "position": 0}, 400, "layer 2"),
    ("/api/layer", {"ids": [1, 2], "layer": 0, "position": 2}, 400, "position 2"),
    ("/api/layer", {"ids": [1, 2], "layer": 0, "position": -1}, 422, "position"),
    ("/api/attention", {"ids": [1, 2], "layer": 0, "head": 4, "position": 0}, 400, "head 4"),
    ("/api/pool", {"ids": [1], "position": 0, "sampling": {"top_p": 0}}, 422, "top_p"),
    ("/api/pool", {"ids": [1], "position": 0, "sampling": {"temperature": -1}}, 422, "temper"),
    ("/api/pool", {"ids": [1], "position": 0, "sampling": {"top_k": -2}}, 422, "top_k"),
    ("/api/pool", {"ids": [1], "position": 0, "sampling": {"min_p": 1.5}}, 422, "min_p"),
    ("/api/generate", {"ids": [1], "n": 0}, 422, "n"),
    ("/api/generate", {"ids": [1], "n": 500}, 422, "n"),
    ("/api/generate", {"ids": [1] * 128}, 400, "context"),
    ("/api/generate", {"ids": [1], "seed": -3}, 422, "seed"),
]


@pytest.mark.parametrize(("path", "body", "status", "words"), BAD)
def test_bad_input_is_a_readable_4xx(client, path, body, status, words):
    assert_readable_error(client, path, body, status, words)


def test_not_json_and_oversized_bodies(client):
    as_json = {"content-type": "application/json"}
    r = client.post("/api/trace", content=b"{not json", headers=as_json)
    assert r.status_code == 422 and "not valid JSON" in r.json()["error"]
    r = client.post("/api/trace", content="text=hi", headers={"content-type": "text/plain"})
    assert r.status_code == 422 and r.json()["error"]
    big = json.dumps({"text": "x" * (MAX_BODY + 1)})
    r = client.post("/api/trace", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["error"]

    def chunks():  # no Content-Length: the limit applies while reading
        for _ in range(MAX_BODY // 10_000 + 2):
            yield b" " * 10_000

    r = client.post("/api/trace", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_the_largest_request_the_schema_allows_is_not_refused_for_its_size(client):
    """A body that fits the schema's bounds was once 413 (256 KiB limit, 100,000 characters
    allowed): the longest text in its longest JSON form (each character a surrogate pair
    escape, 12 bytes) and the most ids at the largest id now reach the model's own checks."""
    as_json = {"content-type": "application/json"}
    text = json.dumps({"text": "\U0001f600" * MAX_TEXT_CHARS}, ensure_ascii=True)
    ids = json.dumps({"ids": [MAX_TOKEN_ID] * MAX_IDS}, separators=(",", ":"))
    for body in (text, ids):
        assert len(body) <= MAX_BODY
        r = client.post("/api/trace", content=body, headers=as_json)
        assert r.status_code == 400, r.text[:200]  # past the context or the vocabulary
    r = client.post("/api/trace", json={"ids": [MAX_TOKEN_ID + 1]})
    assert r.status_code == 422  # past the schema's bound: the schema says so


def test_unknown_routes_and_methods(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json()["error"] == "not found: /api/nothing"
    assert r.json()["code"] == "error.web.not-found"
    assert r.json()["params"] == {"path": "/api/nothing"}
    r = client.get("/api/trace")
    assert r.status_code == 405 and "not allowed" in r.json()["error"]
    r = client.get("/static/../app.py")
    assert r.status_code == 404


def test_responses_are_strict_json(client, traced):
    _, ids, _ = traced
    for path, body in [
        ("/api/trace", {"ids": ids}),
        ("/api/attention", {"ids": ids, "layer": 1, "head": 0, "position": 1}),
        ("/api/layer", {"ids": ids, "layer": 0, "position": 0}),
        ("/api/final", {"ids": ids, "position": 0}),
    ]:
        r = client.post(path, json=body)
        assert r.status_code == 200
        assert "NaN" not in r.text and "Infinity" not in r.text
        strict_json(r.text)


# --- page, docs, size, cache --------------------------------------------------------------


@pytest.mark.slow
def test_page_and_offline_docs(client):
    page = client.get("/")
    assert page.status_code == 200 and 'data-testid="prompt-input"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "/static/js/apidocs.js" in docs.text
    spec = client.get("/openapi.json").json()
    for path in ("/api/trace", "/api/layer", "/api/attention", "/api/generate", "/api/pool"):
        assert path in spec["paths"]
    assert {"TraceResponse", "AttentionResponse", "GeneratedEvent"} <= set(
        spec["components"]["schemas"]
    )
    assert client.head("/").status_code == 200


def test_static_files_need_no_network():
    from lmscope.web.pages import STATIC

    for path in STATIC.rglob("*"):
        if path.is_file():
            text = path.read_text("utf-8")
            for marker in ("http://", "https://", "//cdn", "@import", "fonts.g"):
                assert marker not in text.replace("http://www.w3.org/2000/svg", ""), (
                    path,
                    marker,
                )


@pytest.mark.slow
def test_first_response_of_a_64_token_prompt_is_small(make_hf_gpt2):
    """A GPT-2-small-sized vocabulary and depth (12 layers, 12 heads); width does not change
    the first response, so a narrow model keeps the test fast."""
    import lmscope

    model = lmscope.load(make_hf_gpt2(n_layer=12, n_head=12, n_embd=96, n_positions=1024))
    ids = model.encode("The quick brown fox jumps over the lazy dog. " * 8)[:64]
    assert len(ids) == 64
    with TestClient(create_app(model)) as c:
        r = c.post("/api/trace", json={"ids": ids})
    assert r.status_code == 200
    assert len(r.content) < 300_000, len(r.content)


def test_store_is_a_bounded_lru(tiny_model):
    store = TraceStore(tiny_model, max_bytes=10_000, max_entries=3)
    for i in range(5):
        store.remember(("k", i), lambda i=i: (i, 1000))
    assert store.stats().entries == 3
    assert store.remember(("k", 0), lambda: ("again", 1000)) == ("again", False)  # evicted
    assert store.remember(("k", 4), lambda: ("again", 1000)) == (4, True)
    store.remember(("big",), lambda: ("x", 20_000))  # larger than the budget: not kept
    assert store.remember(("big",), lambda: ("y", 1))[0] == "y"
    store.remember(("k", 5), lambda: (5, 9_000))  # evicts the oldest until it fits
    assert store.stats().bytes <= 10_000
    # a value of None is a value: cached, not computed again
    assert store.remember(("none",), lambda: (None, 1)) == (None, False)
    assert store.remember(("none",), lambda: ("other", 1)) == (None, True)


def test_concurrent_requests_share_one_forward_pass(tiny_model):
    store = TraceStore(tiny_model)
    ids = tuple(range(300, 340))
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(store.base(ids)[0])) for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.cache.misses == 1 and store.cache.hits == 5
    assert all(r is results[0] for r in results)


def test_long_prompts_trace_layers_on_demand(tiny_model):
    store = TraceStore(tiny_model, max_bytes=1 << 20)  # too small for one full trace
    ids = tuple(range(500, 600))
    assert full_trace_bytes(tiny_model.config, len(ids)) > store.full_limit
    base, _ = store.base(ids)
    assert "blocks.1.hook_resid_post" in base and "blocks.0.attn.hook_pattern" not in base
    layer = store.layer(ids, 1)
    assert "blocks.1.attn.hook_pattern" in layer and "blocks.0.attn.hook_pattern" not in layer
    full = tiny_model.trace(list(ids))
    close(layer["blocks.1.attn.hook_pattern"], full["blocks.1.attn.hook_pattern"], tol=1e-6)


def test_a_long_prompts_layer_runs_that_block_alone_on_the_kept_base(tiny_model, monkeypatch):
    store = TraceStore(tiny_model, max_bytes=1 << 23)  # room for a layer, not a full trace
    ids = tuple(range(500, 600))
    assert full_trace_bytes(tiny_model.config, len(ids)) > store.full_limit
    whole = store.trace_units(ids, 1)  # nothing kept yet: the base pass, then the block
    store.base(ids)
    one_block = store.trace_units(ids, 1)
    assert one_block == pytest.approx(whole / (1 + tiny_model.config.n_layer))
    passes = []
    monkeypatch.setitem(vars(tiny_model), "trace", lambda *a, **k: passes.append(a))
    layer = store.layer(ids, 1)
    assert passes == []  # no forward pass over the prompt: block 1 ran on the kept input
    assert "blocks.1.attn.hook_pattern" in layer and store.trace_units(ids, 1) == 0.0


def test_a_long_prompts_layer_views_do_not_push_out_the_base_they_run_on(tiny_model, monkeypatch):
    """A 3,000-token prompt on SmolLM2: each step view took 36-42 s, a whole pass. A block's
    trace (its attention scores over every pair of positions) filled the cache and pushed out
    the base trace, so the next view traced the prompt again."""
    ids = tuple(range(500, 600))
    store = TraceStore(tiny_model, max_bytes=1_500_000)  # the base and one block, not both
    base, _ = store.base(ids)
    passes = []
    monkeypatch.setitem(vars(tiny_model), "trace", lambda *a, **k: passes.append(a))
    for layer in (1, 0, 1):
        assert "blocks.1.attn.hook_pattern" in store.layer(ids, 1)
        assert f"blocks.{layer}.mlp.hook_post" in store.layer(ids, layer)
    assert passes == [] and store.base(ids) == (base, True)  # the base stayed; no pass again


def small_model(tokenizer, vocab_size: int):
    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT, GPTConfig

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=vocab_size, n_ctx=32, n_embd=32, n_layer=1, n_head=2)
    return LanguageModel(GPT(config), tokenizer, "small")


@pytest.mark.slow
def test_a_character_model_works_end_to_end():
    from lmscope.tokenizers import CharTokenizer

    tok = CharTokenizer.from_text("to be or not to be")
    with TestClient(create_app(small_model(tok, len(tok)))) as c:
        data = c.post("/api/trace", json={"text": "to be"}).json()
        assert [t["text"] for t in data["tokens"]] == list("to be")
        ids = [t["id"] for t in data["tokens"]]
        merges = c.post("/api/tokenizer", json={"ids": ids, "position": 1}).json()
        assert merges["merges"] == [] and merges["token"]["text"] == "o"
        r = c.post("/api/trace", json={"text": "xyz"})  # not in the vocabulary
        assert r.status_code == 400 and r.json()["error"]
        out = events(c, {"ids": ids, "n": 2, "seed": 3})
        assert [e["type"] for e in out] == ["token", "token", "done"]


def test_a_model_without_tokenizer_takes_ids():
    with TestClient(create_app(small_model(None, 100))) as c:
        assert c.get("/api/model").json()["tokenizer"] is None
        r = c.post("/api/trace", json={"text": "hello"})
        assert r.status_code == 400 and "token ids" in r.json()["error"]
        data = c.post("/api/trace", json={"ids": [1, 2, 3]}).json()
        assert [t["text"] for t in data["tokens"]] == ["#1", "#2", "#3"]
        tok = c.post("/api/tokenizer", json={"ids": [1, 2, 3], "position": 0}).json()
        assert tok["note"] == "this model has no tokenizer"
        assert events(c, {"ids": [1, 2, 3], "n": 1, "seed": 0})[0]["text"].startswith("#")


@pytest.mark.slow
def test_a_sentencepiece_model_works_end_to_end(tmp_path):
    """A Llama 2-shaped tokenizer (characters, "▁" for spaces, <s> first) through the page's
    requests: tokens, the merges of " Data", and generated text that reads as text."""
    import lmscope
    from helpers_hf import save_random_llama
    from helpers_spm import spm_folder

    save_random_llama(tmp_path, "llama", vocab_size=1456)
    spm_folder(tmp_path, "metaspace-first")
    with TestClient(create_app(lmscope.load(tmp_path))) as c:
        data = c.post("/api/trace", json={"text": "Data visualization"}).json()
        texts = [t["text"] for t in data["tokens"]]
        assert texts[0] == "<s>" and "".join(texts[1:]) == " Data visualization"
        ids = [t["id"] for t in data["tokens"]]
        tok = c.post("/api/tokenizer", json={"ids": ids, "position": 1}).json()
        assert tok["pretoken"] == " Data" and tok["note"] is None
        assert tok["merges"][-1]["result"] == tok["token"]["text"] == texts[1]
        out = events(c, {"ids": ids, "n": 3, "seed": 0})
        assert [e["type"] for e in out] == ["token", "token", "token", "done"]


def test_a_llamas_norms_are_rmsnorms_in_every_view(tmp_path):
    """/api/layer and /api/final called SmolLM2's RMSNorm "layernorm", with a "mean" it never
    takes away and its rms under "std" (described as sqrt(var + eps))."""
    import lmscope
    from helpers_hf import save_random_llama

    save_random_llama(tmp_path, "llama")
    model = lmscope.load(tmp_path)
    ids = [5, 6, 7, 8]
    trace = model.trace(ids)
    with TestClient(create_app(model)) as c:
        layer = c.post("/api/layer", json={"ids": ids, "layer": 1, "position": 2}).json()
        final = c.post("/api/final", json={"ids": ids, "position": 3}).json()
    for view, probe, at in (
        (layer["ln1"], "blocks.1.ln1", 2),
        (layer["ln2"], "blocks.1.ln2", 2),
        (final["ln_final"], "ln_final", 3),
    ):
        assert view["kind"] == "rmsnorm" and "std" not in view and "beta" not in view
        assert view["rms"] == pytest.approx(float(trace[f"{probe}.hook_scale"][at]), rel=1e-5)
        assert view["which"] == probe.rsplit(".", 1)[-1].replace("ln_final", "final")


def test_a_too_long_prompt_is_told_what_the_api_can_do(client):
    """The API said "Shorten it or use truncate to keep the last 128": a request that then sent
    "truncate" was refused as an extra input."""
    for path, body in (("/api/trace", {"ids": [5] * 300}), ("/api/generate", {"ids": [5] * 300})):
        r = client.post(path, json=body)
        said = r.json()["error"]
        assert r.status_code == 400 and said.endswith("Shorten it"), (path, said)
        assert "truncate" not in said
        assert r.json()["code"] == "error.prompt.too-long"
        assert r.json()["params"]["advice"]["code"] == "error.advice.shorten"


def test_nan_and_infinity_are_refused_as_what_they_are(client):
    """A temperature of NaN was refused as "Input should be less than or equal to 100"."""
    for literal in ("NaN", "Infinity", "-Infinity"):
        body = '{"ids": [5, 6], "position": 1, "sampling": {"temperature": ' + literal + "}}"
        r = client.post("/api/pool", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422
        assert r.json()["error"] == "sampling.temperature: Input should be a finite number"
