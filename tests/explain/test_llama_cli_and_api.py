"""A Llama-family model through the front doors: ``lmscope explain`` (text and --json),
``--chat`` in explain, generate and sample, and the JSON API's ``POST /api/step``, which gives
the same numbers as the CLI for the same step, and ``POST /api/trace`` with ``chat``."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from lmscope.cli import main

PROMPT = "The capital of France is"
# A chat template in the style of SmolLM2's, with GPT-2's one special token as the marker
TEMPLATE = (
    "{% for m in messages %}<|endoftext|>{{ m['role'] }}\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|endoftext|>assistant\n{% endif %}"
)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def llama_dir(tiny_llama):
    return tiny_llama.source


@pytest.fixture(scope="module")
def chat_llama(tiny_llama, tmp_path_factory):
    """The tiny Llama saved as an lmscope folder whose metadata holds a chat template."""
    import lmscope
    from lmscope.engine.loading import save_model

    folder = tmp_path_factory.mktemp("chat-llama") / "model"
    save_model(
        tiny_llama.net, folder, tokenizer=tiny_llama.tokenizer, meta={"chat_template": TEMPLATE}
    )
    return lmscope.load(folder)


@pytest.mark.slow
def test_explain_prints_the_llama_steps_in_its_own_words(capsys, llama_dir):
    code, out, _ = run(capsys, "explain", PROMPT, "--model", llama_dir, "--layer", 1, "--head", 3)
    assert code == 0
    for n in range(1, 21):
        assert f"Step {n}/20" in out
    for words in ("RoPE", "RMSNorm", "SwiGLU", "grouped-query", "same distance", "KV cache"):
        assert words in out, words
    assert "LayerNorm" not in out and "GELU" not in out
    assert "position embedding" in out and "none: positions rotate q and k" in out


def test_explain_json_is_the_typed_step_data(capsys, llama_dir, tiny_llama):
    from lmscope.explain.report import report

    code, out, _ = run(
        capsys, "explain", PROMPT, "--model", llama_dir, "--json", "--layer", 1, "--head", 2,
        "--step", "positional-encoding", "--step", "mlp", "--step", "layernorm",
        "--step", "multi-head",
    )  # fmt: skip
    assert code == 0
    body = json.loads(out)
    steps = {s["key"]: s for s in body["steps"]}
    assert [s["number"] for s in body["steps"]] == [6, 10, 13, 19]
    rope, mlp = steps["positional-encoding"]["data"], steps["mlp"]["data"]
    assert rope["kind"] == "rotary" and rope["kv_head"] == 1
    assert "blocks.1.attn.hook_rot_q" in steps["positional-encoding"]["probes"]
    assert mlp["kind"] == "swiglu" and mlp["d_mlp"] == tiny_llama.config.d_mlp
    assert steps["layernorm"]["data"]["kind"] == "rmsnorm"
    assert steps["multi-head"]["data"]["grouping"]["kv_head_of"] == [0, 0, 1, 1]
    want = report(tiny_llama, PROMPT, layer=1, head=2, steps=[6, 10, 13, 19])
    assert body == json.loads(want.model_dump_json())


def test_chat_needs_a_template_and_says_so_in_one_line(capsys, llama_dir):
    for argv in (
        ("explain", PROMPT, "--model", llama_dir, "--chat"),
        ("generate", PROMPT, "--model", llama_dir, "--chat", "-n", 2),
        ("sample", llama_dir, "--prompt", PROMPT, "--chat", "--length", 2),
    ):
        code, out, err = run(capsys, *argv)
        assert code != 0 and not out, argv
        assert err.count("\n") == 1 and "has no chat template" in err, err


@pytest.mark.slow
def test_chat_wraps_the_prompt_in_the_template(capsys, chat_llama):
    folder = chat_llama.source
    code, out, _ = run(capsys, "explain", "hi", "--model", folder, "--chat", "--json", "--step", 1)
    assert code == 0
    body = json.loads(out)
    assert body["text"] == "<|endoftext|>user\nhi\n<|endoftext|>assistant\n"
    code, plain, _ = run(capsys, "explain", "hi", "--model", folder, "--json", "--step", 1)
    assert json.loads(plain)["text"] == "hi"  # plain completion stays the default
    code, out, _ = run(capsys, "generate", "hi", "--model", folder, "--chat", "-n", 3, "--greedy")
    assert code == 0 and out.startswith("<|endoftext|>user\nhi\n<|endoftext|>assistant\n")
    code, out, _ = run(
        capsys, "sample", folder, "--prompt", "hi", "--chat", "--length", 3, "--greedy"
    )
    assert code == 0 and out.startswith("<|endoftext|>user\nhi\n")


@pytest.fixture(scope="module")
def client(chat_llama):
    from lmscope.web import create_app

    with TestClient(create_app(chat_llama)) as c:
        yield c


@pytest.mark.slow
def test_the_api_gives_the_cli_numbers_for_each_step(client, chat_llama):
    from lmscope.engine.steps import STEPS
    from lmscope.explain.report import report

    ids = chat_llama.encode(PROMPT)
    want = report(chat_llama, ids, layer=1, head=3, position=3)
    for step in STEPS:
        r = client.post(
            "/api/step", json={"ids": ids, "key": step.key, "layer": 1, "head": 3, "position": 3}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        expected = json.loads(want.steps[step.number - 1].model_dump_json())
        assert body["family"] == "llama" and body["number"] == step.number
        assert body["probes"] == expected["probes"]
        assert body["data"] == expected["data"], step.key
    final = client.post(
        "/api/step", json={"ids": ids, "key": "layernorm", "norm": "final", "position": 3}
    ).json()["data"]
    assert final["which"] == "final" and final["kind"] == "rmsnorm"


def test_a_step_is_named_by_number_or_key_in_any_case(client, chat_llama):
    """/api/step refused "8" and "Masked-Attention", which trace.step and the CLI take."""
    ids = chat_llama.encode(PROMPT)
    for key in ("11", "Masked-Attention", " masked-attention "):
        body = client.post("/api/step", json={"ids": ids, "key": key, "position": 3}).json()
        assert body["key"] == "masked-attention" and body["number"] == 11, key
    r = client.post("/api/step", json={"ids": ids, "key": "21", "position": 3})
    assert r.status_code == 400 and "no step '21'" in r.json()["error"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"key": "no-such-step"}, "no step 'no-such-step'"),
        ({"key": "mlp", "layer": 7}, "layer 7 does not exist"),
        ({"key": "qkv", "head": 4}, "head 4 does not exist"),
        ({"key": "mlp", "norm": "ln3"}, "norm"),
    ],
)
def test_a_step_request_for_what_does_not_exist_is_one_line(client, chat_llama, body, words):
    ids = chat_llama.encode(PROMPT)
    r = client.post("/api/step", json={"ids": ids, "position": 0, **body})
    assert r.status_code in (400, 422) and words in r.json()["error"], r.text


@pytest.mark.slow
def test_the_page_can_ask_for_the_chat_template(client, chat_llama):
    model = client.get("/api/model").json()
    assert model["chat"] is True and model["family"] == "llama" and model["n_kv_head"] == 2
    plain = client.post("/api/trace", json={"text": "hi"}).json()
    chat = client.post("/api/trace", json={"text": "hi", "chat": True}).json()
    assert [t["text"] for t in plain["tokens"]] == ["hi"]
    assert [t["text"] for t in chat["tokens"]].count("<|endoftext|>") == 2
    assert chat["text"] == "<|endoftext|>user\nhi\n<|endoftext|>assistant\n"
    r = client.post("/api/trace", json={"ids": [1, 2], "chat": True})
    assert r.status_code == 422 and "chat" in r.json()["error"]  # the schema says: chat needs text


def test_a_model_without_a_template_offers_no_chat(tiny_llama):
    from lmscope.web import create_app

    with TestClient(create_app(tiny_llama)) as c:
        assert c.get("/api/model").json()["chat"] is False
        r = c.post("/api/trace", json={"text": "hi", "chat": True})
        assert r.status_code == 400 and "no chat template" in r.json()["error"]


@pytest.mark.slow
def test_a_long_prompts_steps_come_from_a_partial_trace(chat_llama):
    """Past the full-trace budget the server records the base probes and one layer's: every
    step still gives the numbers of a full trace."""
    from lmscope.engine.steps import STEPS
    from lmscope.explain.report import report
    from lmscope.web import create_app

    ids = chat_llama.encode(PROMPT)
    want = report(chat_llama, ids, layer=0, head=1, position=2)
    with TestClient(create_app(chat_llama, cache_bytes=64 * 1024)) as c:
        assert not c.app.state.store.is_full(tuple(ids))
        for step in STEPS:
            body = {"ids": ids, "key": step.key, "layer": 0, "head": 1, "position": 2}
            r = c.post("/api/step", json=body)
            assert r.status_code == 200, r.text
            expected = json.loads(want.steps[step.number - 1].model_dump_json())["data"]
            assert r.json()["data"] == expected, step.key
