"""A server that explains two models (``lmscope serve --model A --model B``): every explainer
route answers from the model ``?model=`` names, with that model's own numbers (the same as a
server of that model alone); a name the server does not hold is one readable 400 naming the
served ones, and nothing is loaded for it; both models share one cache, one gate and one work
queue; the served models are comparable with each other; ``GET /api/models`` lists them and the
models on this machine (fake Ollama and LM Studio stores) with the command that serves each, or
why lmscope cannot open it, without changing a byte of the stores."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from helpers_families import tiny_gemma3
from helpers_stores import build_stores, fingerprint, use_stores
from lmscope.web.on_disk import OnDisk, same_model, serve_command

IDS = [5, 17, 3, 12, 8, 11, 2, 9]  # longer than the Gemma 3's window of 6


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    """A tiny Gemma 3 with a character vocabulary (the other model: its own family, its own
    tokenizer, a sliding window)."""
    return tiny_gemma3(tmp_path_factory.mktemp("switch") / "tiny-gemma3", "Hello there")


@pytest.fixture(scope="module")
def gemma(gemma_dir):
    import lmscope

    return lmscope.load(gemma_dir)


@pytest.fixture(scope="module")
def specs(tiny_hf_dir, gemma_dir):
    return [str(tiny_hf_dir), str(gemma_dir)]


@pytest.fixture(scope="module")
def app(tiny_model, gemma, specs):
    from lmscope.web import create_app

    return create_app(tiny_model, more=[gemma], specs=specs, cache_bytes=64 << 20)


@pytest.fixture(scope="module")
def names(app):
    return list(app.state.served.models)


@pytest.fixture(scope="module")
def alone(tiny_model, gemma):
    """A server of each model by itself: what its answers must equal."""
    from lmscope.web import create_app

    return {m.name: TestClient(create_app(m, cache_bytes=64 << 20)) for m in (tiny_model, gemma)}


def without_timing(body: dict) -> dict:
    return {k: v for k, v in body.items() if k not in ("cached", "elapsed_ms", "timing")}


def test_each_route_answers_from_the_model_asked_for(client, alone, names, tiny_model, gemma):
    gpt2, other = names
    assert other == gemma.name and gpt2 == tiny_model.name
    requests = [
        ("post", "/api/trace", {"ids": IDS}),
        ("post", "/api/layer", {"ids": IDS, "layer": 1, "position": 3}),
        ("post", "/api/attention", {"ids": IDS, "layer": 0, "head": 1, "position": 4}),
        ("post", "/api/final", {"ids": IDS, "position": 5}),
        ("post", "/api/step", {"ids": IDS, "key": "mlp", "layer": 1, "position": 2}),
        ("get", "/api/steps", None),
        ("get", "/api/circuits/examples", None),
        ("get", "/api/model", None),
    ]
    for name, model in ((gpt2, tiny_model), (other, gemma)):
        for method, path, body in requests:
            got = getattr(client, method)(
                f"{path}?model={name}", **({"json": body} if body else {})
            )
            want = getattr(alone[model.name], method)(path, **({"json": body} if body else {}))
            assert got.status_code == want.status_code == 200, (name, path, got.text)
            assert without_timing(got.json()) == without_timing(want.json()), (name, path)
    # no ?model=: the first model; the two answer differently (Gemma 3: its own family)
    first = client.post("/api/trace", json={"ids": IDS}).json()
    assert without_timing(first) == without_timing(
        client.post(f"/api/trace?model={gpt2}", json={"ids": IDS}).json()
    )
    assert client.get(f"/api/model?model={other}").json()["family"] == "gemma3"
    assert client.get("/api/model").json()["family"] == "gpt2"
    body = {"ids": IDS, "key": "masked-attention", "layer": 0, "position": 7}
    step = client.post(f"/api/step?model={other}", json=body).json()
    window = step["family_data"][0]
    assert step["family"] == "gemma3" and window["kind"] == "sliding-window"
    assert window["window"] == 6 and window["first_key"] == 2
    assert client.post("/api/step", json=body).json()["family_data"] == []


def test_a_model_the_server_does_not_hold_is_one_line_naming_those_it_does(
    client, names, monkeypatch
):
    import lmscope

    def never(*args, **kwargs):
        raise AssertionError("a request made the server load a model")

    monkeypatch.setattr(lmscope, "load", never)
    for method, path, body in (
        ("get", "/api/model", None),
        ("get", "/api/steps", None),
        ("post", "/api/trace", {"ids": IDS}),
        ("post", "/api/circuits/induction", {"length": 4}),
    ):
        for asked in ("gpt2", "../etc/passwd", ""):
            r = getattr(client, method)(
                path, params={"model": asked}, **({"json": body} if body else {})
            )
            assert r.status_code == 400, (path, asked, r.text)
            body_ = r.json()
            assert body_["code"] == "error.web.model-not-served"
            assert body_["params"]["name"] == repr(asked)
            assert body_["params"]["choices"] == ", ".join(repr(n) for n in names)
    said = client.get("/api/model", params={"model": "gpt2", "lang": "zh"}).json()["error"]
    assert "没有提供模型" in said and names[1] in said


def test_routes_of_other_pages_take_no_model(client):
    """/why's results and /rnn's char models are the server's, whatever model the page shows."""
    assert client.get("/api/lab?model=nope").status_code == 200
    assert client.get("/api/rnn/models?model=nope").status_code == 200


def test_the_models_share_one_cache_gate_and_queue(app, client, names):
    served = app.state.served.models
    a, b = (served[n].store for n in names)
    assert a.cache is b.cache and a.gate is b.gate and a.work is b.work
    assert a.steps_group != b.steps_group and a.traces_group != b.traces_group
    assert set(a.work.batchers) >= {a.steps_group, b.steps_group}
    before = a.cache.stats().entries
    for name in names:  # the same ids on each model: two traces, kept apart
        client.post(f"/api/trace?model={name}", json={"ids": [9, 8, 7]})
    keys = [k for k in a.cache._entries if k[1:3] == ("full", (9, 8, 7))]
    assert sorted(k[0] for k in keys) == sorted(names)
    assert a.cache.stats().entries >= before + 2


def test_the_served_models_are_comparable_with_each_other(client, names):
    gpt2, other = names
    offered = client.get(f"/api/compare/models?model={other}").json()
    assert offered == {"model": other, "models": [gpt2]}
    assert client.get("/api/compare/models").json()["models"] == [other]
    r = client.post(f"/api/compare?model={other}", json={"text": "Hello there", "model": gpt2})
    assert r.status_code == 200, r.text
    r = client.post("/api/compare", json={"text": "Hello there", "model": "nope"})
    assert r.status_code == 400 and r.json()["code"] == "error.web.compare-model-not-offered"


def test_generation_runs_on_the_model_asked_for(client, names, alone, gemma):
    body = {"ids": IDS, "n": 3, "seed": 7, "sampling": {"temperature": 1.0}}
    got = client.post(f"/api/generate?model={names[1]}", json=body).text
    want = alone[gemma.name].post("/api/generate", json=body).text
    assert got == want and got.count("\n") == 4


def test_the_listing_is_read_once_in_the_background(app, client, monkeypatch):
    """Until the stores are read the answer says so at once; then the models come."""
    go, calls = threading.Event(), []

    def slow():
        calls.append(1)
        go.wait(10)
        return []

    fresh = OnDisk(slow)
    for one in app.state.served.models.values():
        monkeypatch.setattr(one, "on_disk", fresh)
    first = client.get("/api/models").json()
    assert first["ready"] is False and first["on_disk"] == []
    assert [m["default"] for m in first["served"]] == [True, False]
    assert [m["family"] for m in first["served"]] == ["gpt2", "gemma3"]
    go.set()
    fresh.wait(10)
    assert client.get("/api/models").json()["ready"] is True and calls == [1]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return build_stores(tmp_path_factory.mktemp("switch-stores"))


def test_the_models_on_disk_come_with_the_command_that_serves_them(
    app, client, alone, tiny_model, stores, specs, monkeypatch
):
    use_stores(monkeypatch, stores)
    before = fingerprint(stores.ollama, stores.lmstudio, stores.hf_cache)
    fresh = OnDisk()
    for one in app.state.served.models.values():
        monkeypatch.setattr(one, "on_disk", fresh)
    fresh.wait(30)
    listing = client.get("/api/models", params={"lang": "en"}).json()
    assert listing["ready"] is True and listing["error"] is None
    found = {m["name"]: m for m in listing["on_disk"]}
    tiny = found["ollama:tiny:q8"]
    assert (tiny["store"], tiny["family"], tiny["quantization"]) == ("ollama", "llama", "Q8_0")
    assert (
        tiny["command"]
        == f"lmscope serve --model {specs[0]} --model {specs[1]} --model ollama:tiny:q8"
    )
    assert tiny["problem"] is None and tiny["size_bytes"] > 0 and tiny["n_params"] > 0
    studio = found["lmstudio:lmstudio-community/Tiny-GGUF"]
    assert studio["command"].endswith("--model lmstudio:lmstudio-community/Tiny-GGUF")
    gemma2 = found["ollama:gemma2:2b"]
    assert gemma2["command"] is None and gemma2["family"] == "gemma2"
    assert gemma2["problem"]["id"] == "error.store.family-cannot-run"
    assert "gemma2" in gemma2["problem"]["said"]
    # a char model is for the /rnn page: served with --rnn, or already there
    lstm = found["warpeace-lstm"]
    assert lstm["page"] == "/rnn" and not lstm["on_page"]
    assert (
        lstm["command"]
        == f"lmscope serve --model {specs[0]} --model {specs[1]} --rnn warpeace-lstm"
    )
    assert found["shakespeare"]["page"] == "/" and found["shakespeare"]["command"].endswith(
        "--model shakespeare"
    )
    monkeypatch.setitem(app.state.served.rnn, "warpeace-lstm", object())
    there = {m["name"]: m for m in client.get("/api/models").json()["on_disk"]}["warpeace-lstm"]
    assert there["on_page"] and there["command"] is None
    zh = client.get("/api/models", params={"lang": "zh"}).json()
    said = {m["name"]: m for m in zh["on_disk"]}["ollama:gemma2:2b"]["problem"]["said"]
    assert said != gemma2["problem"]["said"] and any("\u4e00" <= c <= "\u9fff" for c in said)
    # a server of one model lists the others too; what opened it is not known (made in
    # Python), so the command serves the other model alone
    one = alone[tiny_model.name]
    fresh = OnDisk()
    monkeypatch.setattr(one.app.state.served, "on_disk", fresh)
    fresh.wait(30)
    single = one.get("/api/models").json()
    assert [m["default"] for m in single["served"]] == [True]
    tiny = {m["name"]: m for m in single["on_disk"]}["ollama:tiny:q8"]
    assert tiny["command"] == "lmscope serve --model ollama:tiny:q8"
    assert fingerprint(stores.ollama, stores.lmstudio, stores.hf_cache) == before


def test_a_served_model_is_not_listed_again(tmp_path):
    from lmscope.formats.stores.entry import StoredModel

    folder = tmp_path / "m"
    folder.mkdir()
    stored = StoredModel("shipped", "shakespeare", folder, "folder")
    assert same_model(stored, ["shakespeare"])
    assert same_model(stored, [str(folder)]) and same_model(stored, [None, str(folder)])
    assert not same_model(stored, ["other", str(tmp_path), None])


def test_the_command_names_each_served_model_as_it_was_opened():
    assert serve_command(["smollm2", "x y.gguf"], "ollama:qwen3:0.6b") == (
        "lmscope serve --model smollm2 --model 'x y.gguf' --model ollama:qwen3:0.6b"
    )
    # an app made in Python: what opened its models is not known, so the model alone
    assert serve_command([None], "shakespeare") == "lmscope serve --model shakespeare"
    assert serve_command(["smollm2"], "stdlib-lstm", char=True) == (
        "lmscope serve --model smollm2 --rnn stdlib-lstm"
    )
    assert serve_command([None], "stdlib-lstm", char=True) == "lmscope serve --rnn stdlib-lstm"


def test_serve_settings_carry_every_model(tiny_hf_dir, gemma_dir):
    from lmscope.web.factory import ServeSettings, build_app

    settings = ServeSettings(str(tiny_hf_dir), rnn=["none"], more=[str(gemma_dir)])
    again = ServeSettings.from_env(settings.to_env())
    assert again.more == [str(gemma_dir)] and again.specs() == [str(tiny_hf_dir), str(gemma_dir)]
    app = build_app(again)
    served = app.state.served
    assert [s.spec for s in served.models.values()] == again.specs()
    assert [s.model.capabilities.family for s in served.models.values()] == ["gpt2", "gemma3"]


@pytest.mark.slow
def test_serve_takes_several_models_and_says_the_page_switches(
    tiny_hf_dir, gemma_dir, monkeypatch, capsys
):
    import uvicorn

    from lmscope.cli import main
    from lmscope.commands import serve

    calls = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.update(app=app))
    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)
    argv = ["serve", "--model", str(tiny_hf_dir), "-m", str(gemma_dir), "--rnn", "none"]
    assert main(argv) == 0
    served = calls["app"].state.served
    assert list(served.models) == [served.model.name, "tiny-gemma3"]
    assert [s.spec for s in served.models.values()] == [str(tiny_hf_dir), str(gemma_dir)]
    err = capsys.readouterr().err
    assert "the page switches between" in err and "tiny-gemma3" in err
    # a char model is not one to explain: one line pointing to --rnn
    from lmscope.engine.loading import ASSET_MODELS

    lstm = str(ASSET_MODELS / "warpeace-lstm")
    assert main(["serve", "--model", str(tiny_hf_dir), "--model", lstm]) == 2
    assert f"lmscope serve --rnn {lstm}" in capsys.readouterr().err


def test_two_models_never_run_at_once(app, monkeypatch):
    """Requests for both models at once: their forward passes take turns on the one queue."""
    import asyncio
    import time

    served = list(app.state.served.models.values())
    running, most, lock = [0], [0], threading.Lock()

    def one_at_a_time(fn):
        def run(*args, **kwargs):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.02)  # room for another pass to start, if anything let it
            try:
                return fn(*args, **kwargs)
            finally:
                with lock:
                    running[0] -= 1

        return run

    for one in served:
        for name in ("trace", "trace_many"):
            # in the instance's dict, removed after: setattr's undo would leave the bound
            # method there, hiding the class from the session model's later patches
            monkeypatch.setitem(vars(one.model), name, one_at_a_time(getattr(one.model, name)))

    async def together():
        asks = [
            one.store.base_trace((n + 1, i + 2, 7))
            for n, one in enumerate(served)
            for i in range(3)
        ]
        return await asyncio.gather(*asks)

    traces = asyncio.run(together())
    assert len(traces) == 6 and most[0] == 1
