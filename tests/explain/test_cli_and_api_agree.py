"""The CLI (``lmscope explain --json``) and the web API show the same numbers for the same
step: both are built by lmscope.explain from the same probes."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from explaintools import HEAD, LAYER, POSITION, PROMPT
from fastapi.testclient import TestClient

from lmscope.cli import main
from lmscope.web import create_app

SAMPLING = {"temperature": 0.7, "top_k": 40, "top_p": 0.9}


@pytest.fixture(scope="module")
def cli(tiny_hf_dir):
    """Step key -> data, as ``lmscope explain --json`` prints them."""
    argv = ["explain", PROMPT, "--model", str(tiny_hf_dir), "--json"]
    argv += ["--layer", str(LAYER), "--head", str(HEAD), "--position", str(POSITION)]
    argv += ["-t", "0.7", "--top-k", "40", "--top-p", "0.9"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    report = json.loads(out.getvalue())
    assert [s["number"] for s in report["steps"]] == list(range(1, 21))
    return {s["key"]: s["data"] for s in report["steps"]}


@pytest.fixture(scope="module")
def api(tiny_model):
    ids = tiny_model.encode(PROMPT)
    at = {"ids": ids, "position": POSITION}
    with TestClient(create_app(tiny_model)) as client:

        def post(path, **extra):
            r = client.post(path, json={**at, **extra})
            assert r.status_code == 200, r.text
            return r.json()

        yield {
            "layer": post("/api/layer", layer=LAYER),
            "attention": post("/api/attention", layer=LAYER, head=HEAD),
            "embedding": post("/api/embedding"),
            "final": post("/api/final"),
            "pool": post("/api/pool", sampling=SAMPLING),
        }


@pytest.mark.slow
def test_layer_steps(cli, api):
    layer = api["layer"]
    assert cli["layernorm"] == layer["ln1"]
    assert cli["qkv"]["input"] == layer["ln1"]["output"]
    assert cli["qkv"]["q"]["values"] == layer["q"][HEAD]
    assert cli["qkv"]["k"]["values"] == layer["k"][HEAD]
    assert cli["qkv"]["v"]["values"] == layer["v"][HEAD]
    assert [z["values"] for z in cli["attention-output"]["z_by_head"]] == layer["z"]
    assert cli["attention-output"]["projected"] == layer["attn_out"]
    assert cli["attention-output"]["head_result_norms"] == [
        r["norm"] for r in layer["head_results"]
    ]
    assert cli["mlp"]["input"] == layer["ln2"]["output"]
    assert cli["mlp"]["pre_gelu"] == layer["mlp_pre_stats"]
    assert cli["mlp"]["post_gelu"] == layer["mlp_post_stats"]
    assert cli["mlp"]["output"] == layer["mlp_out"]
    for name in ("resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post"):
        assert cli["residual"][name] == layer[name], name
    dropout = {k: v for k, v in cli["dropout"].items() if k in layer["dropout"]}
    assert dropout == layer["dropout"]
    assert cli["self-attention"]["attn_out"] == layer["attn_out"]


def test_attention_rows(cli, api):
    row, masked = api["attention"]["row"], cli["masked-attention"]
    n = POSITION + 1
    for stage, cli_stage in [("raw", "raw"), ("scaled", "scaled"), ("masked", "masked")]:
        assert masked[cli_stage][:n] == row[stage], stage
    assert masked["softmax"][:n] == row["pattern"]
    assert masked["d_head"] == api["attention"]["d_head"]


def test_embedding_steps(cli, api):
    e = api["embedding"]
    assert cli["embedding"]["token"] == e["token_embedding"]
    assert cli["embedding"]["position"] == e["position_embedding"]
    assert cli["embedding"]["sum"] == e["sum"]
    assert cli["token-embedding"]["selected"] == e["token_embedding"]
    assert cli["token-embedding"]["embedding_matrix"] == e["embedding_matrix"]
    assert cli["positional-encoding"]["vector"] == e["position_embedding"]
    assert cli["positional-encoding"]["cosine_with_previous"] == e["position_cosine_previous"]


def test_logits_and_sampling_steps(cli, api):
    final = api["final"]
    assert cli["logits"]["final_ln"] == final["ln_final"]["output"]
    assert cli["logits"]["stats"] == final["logit_stats"]
    assert [t["logit"] for t in cli["logits"]["top"]] == final["logits"]["logits"][:10]
    pool = api["pool"]
    assert cli["sampling"]["pool"] == pool["top"]
    assert cli["sampling"]["pool_size"] == pool["size"]
    assert cli["sampling"]["stages"] == pool["stages"]
