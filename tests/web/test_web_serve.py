"""``lmscope serve``: which model it loads, where it binds, and that it really serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from webtools import HANG_S

import lmscope
from lmscope.cli import main


@pytest.fixture
def fake_run(monkeypatch, tiny_model):
    """Record uvicorn.run and lmscope.load calls instead of serving."""
    import uvicorn

    calls = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.update(app=app, **kw))

    def load(name=None, **kwargs):
        calls["model"] = name
        return tiny_model

    monkeypatch.setattr(lmscope, "load", load)
    return calls


@pytest.fixture
def any_port(monkeypatch):
    """Tests that name a fixed port must not depend on it being free on this machine."""
    from lmscope.commands import serve

    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)


@pytest.mark.slow
def test_serve_uses_the_default_model_on_loopback(fake_run, any_port, capsys):
    assert main(["serve"]) == 0
    assert fake_run["model"] is None  # no --model: lmscope.load() picks the shipped default
    assert fake_run["host"] == "127.0.0.1" and fake_run["port"] == 8000
    err = capsys.readouterr().err
    assert "warning" not in err and "http://127.0.0.1:8000/" in err


@pytest.mark.slow
def test_serve_warns_when_binding_beyond_loopback(fake_run, any_port, capsys):
    assert main(["serve", "--model", "somewhere", "--host", "0.0.0.0", "--port", "9001"]) == 0
    assert fake_run["model"] == "somewhere" and fake_run["host"] == "0.0.0.0"
    assert "warning" in capsys.readouterr().err


@pytest.mark.slow
def test_every_interface_names_the_addresses_learners_open(fake_run, any_port, capsys, monkeypatch):
    """0.0.0.0 is no address to give a class: the lines name this machine's own."""
    from lmscope.commands import serve

    monkeypatch.setattr(serve, "network_addresses", lambda: ["192.168.1.23", "10.0.0.5"])
    assert main(["serve", "--host", "0.0.0.0", "--port", "9001"]) == 0
    err = capsys.readouterr().err
    assert "http://192.168.1.23:9001/, http://10.0.0.5:9001/" in err
    monkeypatch.setattr(serve, "network_addresses", lambda: [])  # none found: nothing to say
    assert main(["serve", "--host", "0.0.0.0", "--port", "9001"]) == 0
    assert "learners" not in capsys.readouterr().err
    assert main(["serve", "--host", "192.168.1.23", "--port", "9001"]) == 0  # named: it is that
    assert "learners" not in capsys.readouterr().err


def test_this_machines_addresses_are_its_own_and_not_loopback():
    import ipaddress

    from lmscope.commands.serve import network_addresses

    for address in network_addresses():
        ip = ipaddress.ip_address(address)
        assert ip.version == 4 and not ip.is_loopback and not ip.is_unspecified


def test_serve_refuses_bad_options(fake_run, capsys):
    assert main(["serve", "--port", "70000"]) == 2
    assert "port" in capsys.readouterr().err
    assert main(["serve", "--cache-mb", "0"]) == 2
    assert main(["serve", "--threads", "0"]) == 2


@pytest.mark.slow
def test_serve_sets_threads(fake_run, any_port):
    import torch

    before = torch.get_num_threads()
    try:
        assert main(["serve", "--threads", "1"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_taken_port_is_one_line(fake_run, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    assert "cannot listen" in capsys.readouterr().err
    assert "model" not in fake_run  # refused before loading the model


@pytest.mark.parametrize("host", ["999.1.1.1", "192.0.2.1"])  # no name; a test address
def test_a_host_that_is_not_this_machine_is_one_line_about_the_host(fake_run, capsys, host):
    """The port was fine: the advice must name --host, not ask for another --port."""
    assert main(["serve", "--host", host, "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()  # one line: no warning about reaching other machines
    assert err.startswith(f"lmscope: error: cannot listen on {host}:0 ("), err
    assert err.endswith(
        f"--host {host} is not an address of this machine; use 127.0.0.1 (this machine only) "
        "or 0.0.0.0 (every network interface)"
    ), err
    assert "--port" not in err and "model" not in fake_run


@pytest.mark.slow
def test_missing_default_model_is_one_line(monkeypatch, any_port, capsys):
    from lmscope.errors import ModelNotFoundError

    def missing(name=None, **kwargs):
        raise ModelNotFoundError("the default model is not installed in this copy of lmscope")

    monkeypatch.setattr(lmscope, "load", missing)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmscope: error: the default model") and "Traceback" not in err


START_S = 300.0  # a subprocess that imports torch and loads a model, on 2 busy cores


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(args: list[str], start_s: float):
    """``lmscope serve ARGS`` in a subprocess on a free loopback port, offline; yields its URL,
    what /api/model answered once it came up (within ``start_s``), and the process."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "lmscope", "serve", *args, "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_s
        while True:
            try:
                info = httpx.get(f"{url}/api/model", timeout=HANG_S).json()
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read()) from None
                time.sleep(0.2)
        yield url, info, proc
    finally:
        proc.terminate()
        proc.wait(timeout=HANG_S)
        proc.stderr.close()


@pytest.mark.slow
def test_serve_really_serves(tiny_hf_dir):
    with serving(["--model", str(tiny_hf_dir)], start_s=START_S) as (url, info, _):
        assert info["n_layer"] == 2
        trace = httpx.post(f"{url}/api/trace", json={"text": "Hi"}, timeout=HANG_S).json()
        assert trace["tokens"][0]["text"] == "Hi"


@pytest.mark.slow
def test_serve_workers_hand_uvicorn_the_app_factory(fake_run, any_port, monkeypatch, tiny_model):
    from lmscope.web import factory

    monkeypatch.setenv(factory.ENV, "")  # restored after the test; main() sets it
    argv = ["serve", "--workers", "2", "--rnn", "none", "--max-wait", "30", "--cache-mb", "64"]
    assert main(argv) == 0
    assert fake_run["app"] == "lmscope.web.factory:app_from_env"
    assert fake_run["factory"] is True and fake_run["workers"] == 2
    settings = factory.ServeSettings.from_env(os.environ[factory.ENV])
    assert settings.max_wait == 30 and settings.cache_mb == 64 and settings.rnn == ["none"]
    assert settings.threads == max(1, (os.cpu_count() or 1) // 2)  # the cores shared out
    app = factory.app_from_env()  # what each worker does: its own model, cache and queue
    assert app.state.store.work.limit_s == 30 and app.state.store.cache.max_bytes == 64 << 20
    assert app.state.model is tiny_model


def test_serve_refuses_bad_worker_options(fake_run, capsys):
    assert main(["serve", "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err
    assert main(["serve", "--max-wait", "0"]) == 2
    assert "--max-wait" in capsys.readouterr().err


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts worker processes in /proc")
def test_serve_with_two_workers_serves_from_two_processes(tiny_hf_dir):
    args = ["--model", str(tiny_hf_dir), "--rnn", "none", "--workers", "2"]
    with serving(args, start_s=START_S) as (url, info, proc):
        assert info["n_layer"] == 2
        with httpx.Client(base_url=url, timeout=HANG_S) as client:
            for text in ("Hi", "Hello there", "Good morning"):
                assert client.post("/api/trace", json={"text": text}).status_code == 200
        # uvicorn's manager and its two workers (and nothing more: spawn's helper aside)
        workers = [p for p in _children(proc.pid) if "spawn_main" in _cmdline(p)]
        assert len(workers) == 2, [_cmdline(p) for p in _children(proc.pid)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.slow
def test_a_char_rnn_in_serve_model_is_pointed_to_serve_rnn(any_port, monkeypatch, capsys):
    import uvicorn

    from lmscope.engine.loading import ASSET_MODELS

    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    folder = str(ASSET_MODELS / "warpeace-lstm")  # a char-LSTM folder, as runs/wp would be
    assert main(["serve", "--model", folder]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"lmscope serve --rnn {folder}" in err, err


@pytest.mark.slow
def test_serve_rnn_takes_a_char_rnn_folder(fake_run, any_port, capsys):
    """The route the refusal above points to works: the folder is on the /rnn page."""
    from lmscope.engine.loading import ASSET_MODELS

    assert main(["serve", "--rnn", str(ASSET_MODELS / "warpeace-lstm")]) == 0
    assert [m.name for m in fake_run["app"].state.rnn.values()] == ["warpeace-lstm"]
    assert "/rnn" in capsys.readouterr().err


@pytest.mark.slow
def test_serve_names_the_why_page_at_start_up(fake_run, any_port, capsys):
    from lmscope.engine.loading import ASSET_MODELS

    assert main(["serve", "--rnn", str(ASSET_MODELS / "warpeace-lstm")]) == 0
    err = capsys.readouterr().err
    assert "why Transformers replaced RNNs, measured, at http://" in err and "/why\n" in err
