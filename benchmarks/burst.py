"""Bursts at one server: N heavy requests at the same instant, and cheap ones during them.

    python -m benchmarks.burst [--sizes 100,300,1000] [--tokens 1000] [--src DIR] [--json]

Starts `lmscope serve` on 127.0.0.1 with a small random GPT-2 (2 layers, 4 heads, d_model 64,
GPT-2's 50,257-token vocabulary, 1,024 positions: the shape of issue 16's probe), then sends
``size`` concurrent ``POST /api/trace`` with distinct ``tokens``-token prompts (each one
forward pass and its per-position predictions, about a second of model time on 2 busy cores)
while one client asks for the cheap things a page needs (``GET /api/model``, ``/api/steps``,
a static file, ``/docs``) one after another. Every answer is recorded: its status, when it
came, and the ``Retry-After`` of a 503. The promise checked: every heavy request is answered
200 or 503 within the server's wait limit (60 s by default), and no cheap one waits for the
model (under 1 s).

``--src`` runs another copy of lmscope's source (``git archive <commit> src | tar -x -C DIR``)
for the figures before a change. `run_bursts(...)` returns the figures; `markdown(result)`
renders them. Only loopback traffic, bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

CHEAP = ("/api/model", "/api/steps", "/static/style.css", "/docs")
SHAPE = {"n_layer": 2, "n_head": 4, "n_embd": 64, "n_ctx": 1024}


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(model: Path, *, src: str | None = None, args=(), startup_s: float = 120):
    """`lmscope serve --threads 1` in a subprocess on a free loopback port (the lmscope of
    ``src`` when given); yields (base url, process)."""
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "lmscope", "serve", "--model", str(model), "--port", str(port)]
    cmd += ["--threads", "1", "--rnn", "none", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    if src:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(src) / "src"), env.get("PYTHONPATH", "")])
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below, after the server
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errors, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            try:
                if httpx.get(f"{url}/api/model", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                errors.seek(0)
                raise RuntimeError(f"lmscope serve did not start: {errors.read()[-2000:]}")
            time.sleep(0.2)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errors.close()


def prompts(size: int, tokens: int, seed: int = 0, vocab: int = 50257) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(tokens)] for _ in range(size)]


async def burst(url: str, bodies: list[dict], *, timeout_s: float, path="/api/trace") -> dict:
    """Send every body at once and probe the cheap paths until the last answer; the raw
    per-request records (seconds from the start of the burst)."""
    import httpx

    limits = httpx.Limits(max_connections=len(bodies) + 4, max_keepalive_connections=0)
    heavy: list[dict] = []
    cheap: list[dict] = []
    done = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=timeout_s, limits=limits) as client:
        start = time.perf_counter()

        async def one(body: dict) -> None:
            sent = time.perf_counter()
            record = {"sent": sent - start}
            try:
                r = await client.post(path, json=body)
                record.update(status=r.status_code, retry_after=r.headers.get("retry-after"))
                if r.status_code not in (200, 503):
                    record["error"] = r.text[:200]
            except Exception as err:  # a timeout or a dropped connection: what we look for
                record.update(status=None, error=f"{type(err).__name__}: {err}"[:200])
            record["done"] = time.perf_counter() - start
            record["latency"] = time.perf_counter() - sent
            heavy.append(record)

        async def probe() -> None:
            async with httpx.AsyncClient(base_url=url, timeout=timeout_s) as own:
                i = 0
                while not done.is_set():
                    target = CHEAP[i % len(CHEAP)]
                    sent = time.perf_counter()
                    try:
                        status = (await own.get(target)).status_code
                    except Exception as err:
                        status = f"{type(err).__name__}"
                    took = time.perf_counter() - sent
                    cheap.append({"path": target, "at": sent - start, "s": took, "status": status})
                    i += 1
                    await asyncio.sleep(0.1)

        prober = asyncio.create_task(probe())
        await asyncio.sleep(0)
        await asyncio.gather(*(one(b) for b in bodies))
        done.set()
        await prober
    return {"heavy": heavy, "cheap": cheap}


def percentiles(values: list[float]) -> dict:
    """p50/p95/p99 and max in seconds (nearest rank)."""
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    return {
        "n": len(ordered),
        "p50_s": round(rank(50), 3),
        "p95_s": round(rank(95), 3),
        "p99_s": round(rank(99), 3),
        "max_s": round(ordered[-1], 3),
    }


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
        "latency": percentiles([r["latency"] for r in heavy]),
        "latency_200": percentiles(ok),
        "latency_503": percentiles(refused),
        "retry_after_s": percentiles(retry),
        "past_limit": len(late),
        "past_limit_examples": [r.get("error") or f"{r['latency']:.1f} s" for r in late[:5]],
        "cheap": percentiles([c["s"] for c in cheap]),
        "cheap_over_1s": sum(c["s"] > 1.0 for c in cheap),
        "cheap_failed": sum(c["status"] != 200 for c in cheap),
    }


def run_one(
    model: Path, size: int, *, tokens: int, limit_s: float, src=None, args=(), seed=0, log=print
) -> dict:
    """One burst of ``size`` requests against a fresh server."""
    bodies = [{"ids": ids} for ids in prompts(size, tokens, seed)]
    with server(model, src=src, args=args) as (url, _):
        import httpx

        warm = {"ids": prompts(1, tokens, seed + 10_000)[0]}
        httpx.post(f"{url}/api/trace", json=warm, timeout=120)  # one answer before the burst
        raw = asyncio.run(burst(url, bodies, timeout_s=max(900.0, 3 * limit_s)))
    result = summarize(raw, limit_s)
    log(
        f"{size} concurrent: {result['statuses']}, first answer {result['first_answer_s']} s, "
        f"p99 {result['latency'].get('p99_s')} s, cheap max {result['cheap'].get('max_s')} s"
    )
    return result


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300,1000")
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=60.0, help="the server's wait limit")
    parser.add_argument("--src", help="a copy of lmscope's source to serve instead")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    result = run_bursts(
        sizes, tokens=args.tokens, limit_s=args.limit, src=args.src, workers=args.workers
    )
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
