"""Web app speed: server time of the first /api/trace response, response sizes, on-demand
step requests, streaming generation, and (when Chromium is available) how long the page takes
to re-render the probabilities after a sampling control moves.

    python benchmarks/bench_web.py [--models default,small,...] [--repeats N] [--no-browser]

Server time is the Server-Timing header the app sets (handler plus JSON encoding, before the
body leaves). "shakespeare-shaped" is a random GPT with the shape planned for the shipped
model (4 layers, 6 heads, d_model 192, context 128, its own 2048-token BPE); "small" is
6 layers, 6 heads, d_model 384 with GPT-2's 50257-token vocabulary; "gpt2-small" has GPT-2
small's shape; "default" is the shipped model itself, skipped while it is not installed.
`run()` returns every figure as a dict.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

import torch

CORPUS = (
    Path(__file__).resolve().parents[1] / "src/lmscope/assets/corpora/tinyshakespeare/input.txt"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def build_model(kind: str):
    import lmscope
    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers import gpt2_tokenizer

    if kind == "default":
        try:
            return lmscope.load()
        except lmscope.ModelNotFoundError:
            return None
    shapes = {
        "shakespeare-shaped": GPTConfig(
            n_layer=4, n_head=6, n_embd=192, n_ctx=128, vocab_size=2048
        ),
        "small": GPTConfig(n_layer=6, n_head=6, n_embd=384, n_ctx=256),
        "gpt2-small": GPTConfig(),
    }
    if kind not in shapes:
        raise SystemExit(f"unknown model kind {kind!r}; use default, {', '.join(shapes)}")
    torch.manual_seed(0)
    config = shapes[kind]
    if config.vocab_size == 2048:
        # the shipped model's planned shape: its own 2048-token BPE, trained here on Shakespeare
        from lmscope.tokenizers import train_bpe

        tokenizer = train_bpe(CORPUS.read_text("utf-8")[:100_000], 2048, show_progress=False)
    else:
        tokenizer = gpt2_tokenizer()
    return LanguageModel(GPT(config), tokenizer, f"{kind}-random")


def prompts(model, length: int, count: int) -> list[list[int]]:
    """Distinct windows of Shakespeare, so every first request misses the cache."""
    text = CORPUS.read_text("utf-8")[:50_000]
    ids = model.tokenizer.encode(text)
    return [ids[i * length : (i + 1) * length] for i in range(count)]


def server_ms(response) -> float:
    header = response.headers["server-timing"]
    return float(header.split("dur=")[1])


def _median(values) -> float:
    return round(statistics.median(values), 2)


def measure_api(model, repeats: int) -> dict:
    from fastapi.testclient import TestClient

    from lmscope.web import create_app

    client = TestClient(create_app(model))
    p32 = prompts(model, 32, repeats + 1)
    client.post("/api/trace", json={"ids": p32[-1]})  # warm up the code paths
    first = [client.post("/api/trace", json={"ids": p}) for p in p32[:repeats]]
    cached = [client.post("/api/trace", json={"ids": p32[0]}) for _ in range(repeats)]
    ids = p32[0]
    last = len(ids) - 1
    step_ms = {}
    for name, path, body in [
        ("layer", "/api/layer", {"ids": ids, "layer": 0, "position": last}),
        ("attention", "/api/attention", {"ids": ids, "layer": 0, "head": 0, "position": last}),
        ("final (earlier position)", "/api/final", {"ids": ids, "position": 3}),
        ("embedding", "/api/embedding", {"ids": ids, "position": last}),
    ]:
        times = [server_ms(client.post(path, json=body)) for _ in range(repeats)]
        step_ms[name] = _median(times)
    p64 = prompts(model, 64, 1)[0] if model.config.n_ctx >= 64 else ids
    size64 = len(client.post("/api/trace", json={"ids": p64}).content)
    n_gen = 20
    start = time.perf_counter()
    r = client.post("/api/generate", json={"ids": ids, "n": n_gen, "seed": 0})
    gen_s = time.perf_counter() - start
    tokens = sum(1 for line in r.text.splitlines() if '"token"' in line)
    return {
        "first_trace_32_server_ms": _median(server_ms(r) for r in first),
        "first_trace_32_bytes": len(first[0].content),
        "cached_trace_32_server_ms": _median(server_ms(r) for r in cached),
        "first_trace_64_bytes": size64,
        "step_request_server_ms": step_ms,
        "generate_tokens_per_s": round(tokens / gen_s, 1),
    }


def measure_browser(model, moves: int = 20) -> dict | None:
    """Median time the page takes to recompute and redraw after a temperature change."""
    found = _browser()
    if found is None:
        return None
    sync_playwright, chromium = found
    url, stop = _serve(model)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            page.evaluate("performance.clearMeasures('sampling-render')")
            slider = page.get_by_test_id("temperature")
            for i in range(moves):
                slider.fill(f"{0.1 + 0.05 * (i % 30):.2f}")
            renders = page.evaluate(
                "performance.getEntriesByName('sampling-render').map(e => e.duration)"
            )
            trace = page.evaluate("performance.getEntriesByName('trace').map(e => e.duration)")
            browser.close()
    finally:
        stop()
    return {
        "sampling_render_ms_median": _median(renders),
        "sampling_render_ms_max": round(max(renders), 2),
        "first_trace_round_trip_ms": round(trace[0], 1) if trace else None,
    }


def _browser():
    """(playwright's sync_playwright, the Chromium executable), or None without either."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    return None if chromium is None else (sync_playwright, chromium)


def _serve(model):
    """(url, stop) of the app for ``model`` on a free loopback port."""
    import uvicorn

    from lmscope.web import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(model), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)

    def stop():
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return f"http://127.0.0.1:{sock.getsockname()[1]}/", stop


# Long animation frames (Chromium's LoAF) during the step changes: a frame's own work is its
# scripts plus style, layout and paint; the rest of a long frame is time the page did not run
# (another process had the CPU). OWN_WORK counts frames whose own work passed 32 ms.
LOAF = """() => { window.benchLoafs = []; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.benchLoafs.push(e.toJSON());
}).observe({type: "long-animation-frame"}); }"""
OWN_WORK = """() => {
  const steps = performance.getEntriesByName("flow-step");
  const inStep = (e) => steps.some((m) => e.startTime < m.startTime + m.duration
    && e.startTime + e.duration > m.startTime);
  const own = (e) => e.scripts.reduce((s, x) => s + x.duration, 0)
    + (e.renderStart ? e.startTime + e.duration - e.renderStart : 0);
  return window.benchLoafs.filter(inStep).filter((e) => own(e) > 32).length;
}"""

# step changes that move the flow's packet between different parts, there and back
FLOW_STEPS = ("embedding", "blocks", "self-attention", "mlp", "logits", "probabilities")


def _frames(changes: list[dict]) -> dict:
    gaps = sorted(g for c in changes for g in c["frames"])
    if not gaps:
        return {}
    return {
        "step_changes": len(changes),
        "frames": len(gaps),
        "frame_ms_median": _median(gaps),
        "frame_ms_p95": round(gaps[min(len(gaps) - 1, int(0.95 * len(gaps)))], 1),
        "frame_ms_max": round(gaps[-1], 1),
        "frames_over_32ms": sum(g > 32 for g in gaps),
        "fps": round(1000 / statistics.mean(gaps), 1),
    }


def measure_page(model, rounds: int = 3) -> dict | None:
    """The page's first load (bytes over the wire, gzip, the first API answers included), the
    time to the flow view's first frame and to its real vectors, and the frames of its step
    changes (performance marks and rAF gaps in headless Chromium)."""
    found = _browser()
    if found is None:
        return None
    sync_playwright, chromium = found
    url, stop = _serve(model)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            loaded = []
            page.on("requestfinished", lambda r: loaded.append(r))
            page.goto(url)
            drawn = "[data-testid=flow][data-loaded='1'][data-drawn='1']"
            page.wait_for_selector(drawn, timeout=300_000)
            page.wait_for_timeout(500)
            sizes = [(r.url, r.sizes()["responseBodySize"]) for r in loaded]
            marks = page.evaluate(
                "['flow-first-frame', 'flow-data-frame'].map("
                "n => performance.getEntriesByName(n)[0]?.startTime ?? null)"
            )
            page.evaluate(LOAF)  # long animation frames, with what the page did in them
            idle = (
                "() => !document.querySelector('.step-body.loading, .attn-lines.loading, "
                ".neighbours.loading')"
            )
            for _ in range(rounds):
                for key in FLOW_STEPS:
                    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
                    page.wait_for_function("() => !window.lmscope.flow.moving", timeout=30_000)
                    # the step panel asks the server and draws after the packet lands: let it
                    # finish, so each change is measured on its own (as a reader clicks)
                    page.wait_for_function(idle, timeout=60_000)
                    page.wait_for_timeout(300)
            changes = page.evaluate("window.lmscope.flow.changes")
            own = page.evaluate(OWN_WORK)
            browser.close()
    finally:
        stop()
    static = sum(n for u, n in sizes if "/static/" in u or u.endswith("/"))
    return {
        "first_load_bytes": sum(n for _, n in sizes),
        "first_load_static_bytes": static,
        "first_load_requests": len(sizes),
        "flow_first_frame_ms": round(marks[0], 1) if marks[0] is not None else None,
        "flow_vectors_ms": round(marks[1], 1) if marks[1] is not None else None,
        **_frames(changes),
        "frames_over_32ms_own_work": own,
    }


def measure_interpret(model, length: int = 200) -> dict:
    """Look inside on a long prompt: the ablation grid's every-head patterns (/api/heads) and
    the logit lens's 12-position window (/api/lens), first (uncached) answer, wall time."""
    from fastapi.testclient import TestClient

    from lmscope.web import create_app

    client = TestClient(create_app(model))
    out = {"prompt_tokens": length, "heads_s": [], "lens_s": []}
    for ids in prompts(model, length, 2):
        client.post("/api/trace", json={"ids": ids})  # what the page has asked for already
        for name, path, body in [
            ("heads_s", "/api/heads", {"ids": ids}),
            ("lens_s", "/api/lens", {"ids": ids, "size": 12}),
        ]:
            start = time.perf_counter()
            r = client.post(path, json=body)
            if r.status_code == 503:  # the queue judged this busy machine too slow: once more
                time.sleep(float(r.headers.get("retry-after", 1)))
                start = time.perf_counter()
                r = client.post(path, json=body)
            assert r.status_code == 200, r.text
            out[name].append(round(time.perf_counter() - start, 2))
    return out


MODELS = ("default", "shakespeare-shaped", "small", "gpt2-small")


def run(models=MODELS, *, repeats: int = 5, browser: bool = True, page: bool = True):
    results = {"torch_threads": torch.get_num_threads()}
    for kind in models:
        model = build_model(kind)
        if model is None:
            results[kind] = "not installed"
            continue
        info = model.info()
        entry = {
            "model": info.name,
            "shape": f"{info.n_layer}L {info.n_head}H d{info.d_model} vocab {info.vocab_size}",
            **measure_api(model, repeats),
        }
        if browser:
            entry["browser"] = measure_browser(model) or "chromium or playwright missing"
        if browser and page and kind == models[0]:  # the page itself: once, on the first model
            entry["page"] = measure_page(model) or "chromium or playwright missing"
        if kind == "gpt2-small":
            entry["interpret"] = measure_interpret(model)
        results[kind] = entry
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    figures = run(args.models.split(","), repeats=args.repeats, browser=not args.no_browser)
    print(json.dumps(figures, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
