"""The burst harness: N heavy requests at one server in the same instant, and cheap ones
during them.

`run_bursts(...)` starts `lmscope serve` on 127.0.0.1 (`server(...)`, the lmscope of another
source tree when ``src`` is given) with a small random GPT-2 (2 layers, 4 heads, d_model 64,
GPT-2's 50,257-token vocabulary, 1,024 positions: the shape of issue 16's probe), then sends
``size`` concurrent ``POST /api/trace`` with distinct ``tokens``-token prompts (each one
forward pass and its per-position predictions, about a second of model time on 2 busy cores)
while another process asks for the cheap things a page needs (``GET /api/model``,
``/api/steps``, a static file, ``/docs``) one after another. Every answer is recorded: its
status, when it came, and the ``Retry-After`` of a 503; `summarize` turns the records into the
figures. The promise checked: every heavy request is answered 200 or 503 within the server's
wait limit (60 s by default), and no cheap one waits for the model (under 1 s). `batching(...)`
measures whether one forward pass over several prompts beats one pass per prompt.

``tests/web/test_burst.py`` runs one 100-request burst in CI; ``benchmarks/burst.py`` runs the
sizes before and after the work queue and renders the BENCHMARKS.md section. Only loopback
traffic, bounded in count and time. Needs httpx (a test extra).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from lmscope.testing.load import percentiles, serve_process

CHEAP = ("/api/model", "/api/steps", "/static/style.css", "/docs")
SHAPE = {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_ctx": 1024}
RESTED_S = 7.0  # past the work queue's IDLE_S (5 s), when the server gives kept memory back


def small_model(directory: Path) -> Path:
    """A random GPT-2 of ``SHAPE`` with GPT-2's tokenizer, written as an lmscope model."""
    import torch

    from lmscope.engine.loading import save_model
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers.gpt2 import gpt2_tokenizer

    if (directory / "lmscope.json").is_file():
        return directory
    torch.manual_seed(0)
    net = GPT(GPTConfig(vocab_size=50257, **SHAPE))
    save_model(net, directory, tokenizer=gpt2_tokenizer(), meta={"name": "burst-gpt2"})
    return directory


@contextmanager
def server(model: Path, *, src: str | None = None, args=(), startup_s: float = 120):
    """`lmscope serve --threads 1` in a subprocess on a free loopback port (the lmscope of
    ``src`` when given); yields (base url, process)."""
    env = {}
    if src:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(src) / "src"), os.environ.get("PYTHONPATH", "")]
        )
    serve_args = ["--model", str(model), "--rnn", "none", *args]
    with serve_process(serve_args, env=env, startup_s=startup_s) as served:
        yield served


def prompts(size: int, tokens: int, seed: int = 0, vocab: int = 50257) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(tokens)] for _ in range(size)]


def _request(method: str, path: str, port: int, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + "\r\n").encode() + body


def _status(response: bytes) -> tuple[int, dict[str, str]]:
    """The status and headers of a raw HTTP/1.1 response."""
    head = response.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in head[1:] if ": " in line)
    return int(head[0].split()[1]), headers


async def _send(port: int, payload: bytes) -> tuple[int, dict[str, str]]:
    """One request on its own connection, read to the end (a bare client: with hundreds in
    flight, an HTTP library's own overhead would be what is measured)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        await writer.drain()
        return _status(await reader.read())
    finally:
        writer.close()


def _probe(port: int, epoch: float, stop, out) -> None:
    """The cheap requests, one after another, in a process of their own so the burst's
    client never delays them; (path, seconds after epoch, seconds taken, status) each."""
    import socket as sockets

    records, i = [], 0
    while not stop.is_set():
        path = CHEAP[i % len(CHEAP)]
        sent = time.time()
        try:
            with sockets.create_connection(("127.0.0.1", port), timeout=600) as conn:
                conn.sendall(_request("GET", path, port))
                chunks = []
                while chunk := conn.recv(65536):
                    chunks.append(chunk)
            status = _status(b"".join(chunks))[0]
        except OSError as err:
            status = type(err).__name__
        records.append((path, sent - epoch, time.time() - sent, status))
        i += 1
        stop.wait(0.1)
    out.send(records)


async def burst(url: str, bodies: list[dict], *, timeout_s: float, path="/api/trace") -> dict:
    """Send every body at once and probe the cheap paths (from another process) until the
    last answer; the raw per-request records (seconds from the start of the burst)."""
    import multiprocessing

    port = int(url.rsplit(":", 1)[1])
    payloads = [_request("POST", path, port, json.dumps(b).encode()) for b in bodies]
    context = multiprocessing.get_context("spawn")
    stop, (receive, send) = context.Event(), context.Pipe(duplex=False)
    epoch = time.time()
    prober = context.Process(target=_probe, args=(port, epoch, stop, send), daemon=True)
    prober.start()
    heavy: list[dict] = []
    start = time.perf_counter() - (time.time() - epoch)

    async def one(payload: bytes) -> None:
        sent = time.perf_counter()
        record = {"sent": sent - start}
        try:
            status, headers = await asyncio.wait_for(_send(port, payload), timeout_s)
            record.update(status=status, retry_after=headers.get("retry-after"))
        except Exception as err:  # a timeout or a dropped connection: what we look for
            record.update(status=None, error=f"{type(err).__name__}: {err}"[:200])
        record["done"] = time.perf_counter() - start
        record["latency"] = time.perf_counter() - sent
        heavy.append(record)

    try:
        await asyncio.gather(*(one(p) for p in payloads))
    finally:
        stop.set()
        cheap = receive.recv() if receive.poll(60) else []
        prober.join(timeout=10)
    keys = ("path", "at", "s", "status")
    return {"heavy": heavy, "cheap": [dict(zip(keys, r, strict=True)) for r in cheap]}


def summarize(raw: dict, limit_s: float) -> dict:
    heavy, cheap = raw["heavy"], raw["cheap"]
    statuses: dict[str, int] = {}
    for r in heavy:
        statuses[str(r["status"])] = statuses.get(str(r["status"]), 0) + 1
    ok = [r["latency"] for r in heavy if r["status"] == 200]
    refused = [r["latency"] for r in heavy if r["status"] == 503]
    retry = [int(r["retry_after"]) for r in heavy if (r.get("retry_after") or "").isdigit()]
    late = [r for r in heavy if r["latency"] > limit_s or r["status"] not in (200, 503)]
    return {
        "requests": len(heavy),
        "statuses": dict(sorted(statuses.items())),
        "first_answer_s": round(min((r["done"] for r in heavy), default=0.0), 3),
        "first_200_s": round(min((r["done"] for r in heavy if r["status"] == 200), default=0), 3),
        "last_answer_s": round(max((r["done"] for r in heavy), default=0.0), 3),
        "latency": percentiles([r["latency"] for r in heavy], "s"),
        "latency_200": percentiles(ok, "s"),
        "latency_503": percentiles(refused, "s"),
        "retry_after_s": percentiles(retry, "s"),
        "past_limit": len(late),
        "past_limit_examples": [r.get("error") or f"{r['latency']:.1f} s" for r in late[:5]],
        "cheap": percentiles([c["s"] for c in cheap], "s"),
        "cheap_over_1s": sum(c["s"] > 1.0 for c in cheap),
        "cheap_failed": sum(c["status"] != 200 for c in cheap),
    }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def processes(pid: int) -> dict:
    """Resident memory (MiB) of the server and of each worker process it started."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                cmdline = (stat.parent / "cmdline").read_bytes()
                if b"spawn_main" in cmdline:
                    children.append(rss_mb(int(stat.parent.name)))
        except (OSError, ValueError, IndexError):
            continue
    return {"server_mb": rss_mb(pid), "workers_mb": sorted(children)}


def run_one(
    model: Path, size: int, *, tokens: int, limit_s: float, src=None, args=(), seed=0, log=print
) -> dict:
    """One burst of ``size`` requests against a fresh server."""
    bodies = [{"ids": ids} for ids in prompts(size, tokens, seed)]
    with server(model, src=src, args=args) as (url, proc):
        import httpx

        warm = {"ids": prompts(1, tokens, seed + 10_000)[0]}
        httpx.post(f"{url}/api/trace", json=warm, timeout=120)  # one answer before the burst
        idle = processes(proc.pid)
        raw = asyncio.run(burst(url, bodies, timeout_s=max(900.0, 3 * limit_s)))
        after = processes(proc.pid)
        time.sleep(RESTED_S)  # the server hands kept memory back once its queue is idle
        rested = processes(proc.pid)
    result = summarize(raw, limit_s)
    result["memory"] = {"before": idle, "after": after, "rested": rested}
    log(
        f"{size} concurrent: {result['statuses']}, first answer {result['first_answer_s']} s, "
        f"p99 {result['latency'].get('p99_s')} s, cheap max {result['cheap'].get('max_s')} s"
    )
    return result


# --- would batching prompts into one forward pass buy anything? ---------------------------------


def _best(fn, repeats: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def batching(models=("burst", "shakespeare", "smollm2"), batch=8, repeats=3, log=print) -> dict:
    """Per prompt, one forward pass over ``batch`` prompts at once against ``batch`` passes of
    one, on one thread (as ``lmscope serve --threads 1``): prompts of 16, 128 and 1,000 tokens
    with logits at every position (what a trace's predictions need), and a generation step
    (one new token after 128 cached ones, ``batch`` sequences in one KV cache)."""
    import torch

    import lmscope

    torch.set_num_threads(1)
    out = {}
    for name in models:
        try:
            path = small_model(Path(tempfile.gettempdir()) / "lmscope-burst-gpt2")
            model = lmscope.load(path if name == "burst" else name)
        except Exception as err:  # smollm2 is an optional package
            log(f"batching: {name} skipped ({err})")
            continue
        net, ctx = model.net, model.capabilities.context or 1024
        row = {"params_m": round(sum(p.numel() for p in net.parameters()) / 1e6, 1)}
        with torch.inference_mode():
            for t in (16, 128, 1000):
                if t > ctx or (name == "smollm2" and t > 128):
                    continue  # smollm2 at 1,000 tokens x 8: minutes on 2 busy cores
                ids = torch.randint(0, model.config.vocab_size, (batch, t))
                one = _best(lambda n=net, x=ids: [n(x[i : i + 1]) for i in range(batch)], repeats)
                many = _best(lambda n=net, x=ids: n(x), repeats)
                row[f"prefill_{t}"] = {
                    "one_ms": one / batch * 1e3,
                    "batched_ms": many / batch * 1e3,
                }
            row["step_128"] = _steps(net, model.config.vocab_size, batch, repeats)
        for value in row.values():
            if isinstance(value, dict):
                value["gain"] = round(value["one_ms"] / value["batched_ms"], 2)
                value["one_ms"], value["batched_ms"] = (
                    round(value["one_ms"], 2),
                    round(value["batched_ms"], 2),
                )
        out[name] = row
        log(f"batching {name}: {row}")
    return out


def _steps(net, vocab: int, batch: int, repeats: int) -> dict:
    import torch

    prompt = torch.randint(0, vocab, (batch, 128))
    nxt = torch.randint(0, vocab, (batch, 1))

    def cached(rows: torch.Tensor):
        cache = net.new_cache()
        net(rows, cache=cache, last_only=True)
        return cache

    def step(rows, cache):
        net(rows, cache=cache, last_only=True)
        cache._filled = [128] * len(cache._filled)  # back to the prompt: the same step again

    singles = [cached(prompt[i : i + 1]) for i in range(batch)]
    together = cached(prompt)
    one = _best(lambda: [step(nxt[i : i + 1], singles[i]) for i in range(batch)], repeats)
    many = _best(lambda: step(nxt, together), repeats)
    return {"one_ms": one / batch * 1e3, "batched_ms": many / batch * 1e3}


def run_bursts(
    sizes=(100, 300, 1000),
    *,
    tokens: int = 1000,
    limit_s: float = 60.0,
    src: str | None = None,
    workers: int = 1,
    log=print,
) -> dict:
    """Every burst size against a fresh server; the figures of each."""
    import datetime as dt

    folder = Path(tempfile.gettempdir()) / "lmscope-burst-gpt2"
    model = small_model(folder)
    args = ("--workers", str(workers)) if workers > 1 else ()
    bursts = {
        str(n): run_one(model, n, tokens=tokens, limit_s=limit_s, src=src, args=args, log=log)
        for n in sizes
    }
    return {
        "benchmark": "burst",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "model": {"name": "burst-gpt2", **SHAPE, "vocab": 50257},
        "tokens": tokens,
        "limit_s": limit_s,
        "workers": workers,
        "src": src,
        "bursts": bursts,
    }
