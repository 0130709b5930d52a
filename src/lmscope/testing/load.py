"""The load harness: a class of simulated learners against `lmscope serve` on loopback.

`server(...)` starts `lmscope serve` in a subprocess on a free 127.0.0.1 port; `run(...)`
measures each request kind alone (one client, the reference), then lets ``clients`` simulated
browsers loose for ``seconds``: each types a prompt (a fresh slice of Shakespeare, or one of a
few prompts the whole class shares), opens step views on it, moves the sampling controls and
generates. Every answer is checked: any status but 200, an error event in a stream, a timeout
or a dropped connection is an error. The server's resident memory is sampled throughout. The
goal: 0 errors and a p95 of every request but generation <= 2 s. It returns every figure as a
dict.

``tests/web/test_server_load.py`` runs a short class in CI; ``benchmarks/bench_load.py`` runs
the 32-client, 60-second one and renders its BENCHMARKS.md section. Needs httpx (a test extra).
"""

from __future__ import annotations

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

# the bundled corpus the learners take their prompts from
CORPUS = Path(__file__).resolve().parents[1] / "assets/corpora/tinyshakespeare/input.txt"
SHARED_PROMPTS = 12  # prompts the whole class pastes (cache hits)
REQUEST_TIMEOUT_S = 90.0  # a request slower than this counts as a hang
GOAL_P95_MS = 2000.0  # the goal: 0 errors, p95 of every request but generation <= 2 s
PAGE_LENS_SIZE = 12  # positions the page's logit lens asks for (SIZE in static/js/lens.js)


# --- the server -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextmanager
def serve_process(args, *, threads: int = 1, env=None, startup_s: float = 120):
    """`lmscope serve ARGS` in a subprocess on a free loopback port, offline, with ``threads``
    threads; yields (base url, process) once it answers. Its error output goes to a temporary
    file, read when it fails to start (a pipe that nobody reads could fill and stop it)."""
    port = free_port()
    cmd = [sys.executable, "-m", "lmscope", "serve", *args, "--port", str(port)]
    cmd += ["--threads", str(threads)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1", **(env or {})}
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below, after the server
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errors, text=True)
    url = f"http://127.0.0.1:{port}"

    def error_output() -> str:
        errors.seek(0)
        return errors.read()

    try:
        wait_ready(url, proc, startup_s, error_output)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        errors.close()


@contextmanager
def server(
    model: str | None = None,
    *,
    cache_mb: int = 128,
    threads: int = 1,
    startup_s=120,
    dtype: str = "float32",
):
    """`lmscope serve` with ``model`` (the default one if None); yields (base url, pid)."""
    args = ["--cache-mb", str(cache_mb), "--dtype", dtype, *(["--model", model] if model else [])]
    with serve_process(args, threads=threads, startup_s=startup_s) as (url, proc):
        yield url, proc.pid


def wait_ready(url: str, proc: subprocess.Popen, startup_s: float, errors) -> None:
    """Wait until the server at ``url`` answers /api/model; a RuntimeError when ``proc`` exits
    first (with the end of ``errors()``, its error output) or ``startup_s`` passes."""
    import httpx

    deadline = time.monotonic() + startup_s
    while True:
        try:
            if httpx.get(f"{url}/api/model", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"lmscope serve exited: {errors()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"lmscope serve did not answer within {startup_s:.0f} s")
        time.sleep(0.2)


# --- the clients ----------------------------------------------------------------------------


class Tally:
    """Latency per request kind, errors with a few examples, generated-token count."""

    def __init__(self):
        self.latency: dict[str, list[float]] = {}
        self.errors: dict[str, int] = {}
        self.examples: list[str] = []
        self.tokens = 0
        self.first_token: list[float] = []
        self.began = time.perf_counter()  # reset when the class starts
        self.timeline: list[tuple[float, str, float]] = []  # (sent at, kind, seconds)

    def ok(self, kind: str, seconds: float) -> None:
        self.latency.setdefault(kind, []).append(seconds)
        sent = time.perf_counter() - seconds - self.began
        self.timeline.append((sent, kind, seconds))

    def error(self, kind: str, what: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.examples) < 8:
            self.examples.append(f"{kind}: {what[:300]}")

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.latency.values()) + sum(self.errors.values())


class Browser:
    """One simulated learner: what the page asks for as someone uses it."""

    def __init__(self, client, tally: Tally, rng: random.Random, corpus: str, shared, info):
        self.client, self.tally, self.rng = client, tally, rng
        self.corpus, self.shared, self.info = corpus, shared, info

    async def call(self, kind: str, path: str, body: dict) -> dict | None:
        start = time.perf_counter()
        try:
            r = await self.client.post(path, json=body)
        except Exception as err:  # timeouts and dropped connections are what we look for
            self.tally.error(kind, f"{type(err).__name__}: {err}")
            return None
        if r.status_code != 200:
            self.tally.error(kind, f"{r.status_code} {r.text}")
            return None
        self.tally.ok(kind, time.perf_counter() - start)
        return r.json()

    async def generate(self, ids: list[int], n: int) -> None:
        body = {"ids": ids, "n": n, "seed": self.rng.randrange(2**31), "sampling": self.sampling()}
        start = time.perf_counter()
        first = None
        try:
            async with self.client.stream("POST", "/api/generate", json=body) as r:
                if r.status_code != 200:
                    await r.aread()
                    self.tally.error("generate", f"{r.status_code} {r.text}")
                    return
                async for line in r.aiter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    if event["type"] == "error":
                        self.tally.error("generate", event["error"])
                        return
                    if event["type"] == "token":
                        first = first or time.perf_counter() - start
                        self.tally.tokens += 1
        except Exception as err:
            self.tally.error("generate", f"{type(err).__name__}: {err}")
            return
        self.tally.ok("generate", time.perf_counter() - start)
        if first is not None:
            self.tally.first_token.append(first)

    def sampling(self) -> dict:
        r = self.rng
        return {
            "temperature": r.choice([0.0, 0.3, 0.7, 1.0, 1.5, 2.0]),
            "top_k": r.choice([None, 0, 5, 40]),
            "top_p": r.choice([None, 0.5, 0.9, 1.0]),
            "min_p": r.choice([None, 0.0, 0.05]),
            "greedy": r.random() < 0.1,
        }

    def prompt(self) -> str:
        if self.rng.random() < 0.4:
            return self.rng.choice(self.shared)
        start = self.rng.randrange(len(self.corpus) - 600)
        return self.corpus[start : start + self.rng.randint(5, 500)]

    async def session(self) -> None:
        """Type a prompt, look at a few steps, move the sampling controls, generate."""
        rng, c = self.rng, self.info
        data = await self.call("trace", "/api/trace", {"text": self.prompt()})
        if data is None:
            return
        ids = [t["id"] for t in data["tokens"]]
        last = len(ids) - 1
        for _ in range(rng.randint(1, 4)):
            pos, layer = rng.randint(0, last), rng.randrange(c["n_layer"])
            kind = rng.choice(["layer", "attention", "final", "embedding", "tokenizer", "lens"])
            body = {"ids": ids, "position": pos}
            if kind in ("layer", "attention"):
                body["layer"] = layer
            if kind == "attention":
                body["head"] = rng.randrange(c["n_head"])
            if kind == "lens":
                body["size"] = PAGE_LENS_SIZE
            if kind == "lens" and "/api/lens" not in self.info["paths"]:
                kind, body = "final", {"ids": ids, "position": pos}
            await self.call(kind, f"/api/{kind}", body)
        for _ in range(rng.randint(0, 3)):
            body = {"ids": ids, "position": last, "sampling": self.sampling()}
            await self.call("pool", "/api/pool", body)
        if rng.random() < 0.6 and len(ids) < c["n_ctx"]:
            await self.generate(ids, rng.randint(1, 40))


async def _drive(
    url: str, clients: int, seconds: float, seed: int, on_count=None, join_s: float = 0.0
) -> dict:
    """``clients`` learners for ``seconds``; with ``join_s`` they join one by one, evenly over
    its first ``join_s`` seconds, instead of all in the same instant."""
    import httpx

    corpus = CORPUS.read_text("utf-8")
    rng = random.Random(seed)
    shared = [corpus[i : i + rng.randint(20, 300)] for i in rng.sample(range(500_000), 12)]
    tally = Tally()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
        info = (await client.get("/api/model")).json()
        facts = {k: info.get(k) for k in ("name", "family", "n_layer", "d_model", "n_ctx")}
        info["paths"] = set((await client.get("/openapi.json")).json()["paths"])
        deadline = time.perf_counter() + seconds

        async def learner(i: int):
            browser = Browser(client, tally, random.Random(seed * 1000 + i), corpus, shared, info)
            await asyncio.sleep(i * join_s / clients)
            while time.perf_counter() < deadline:
                await browser.session()
                if on_count is not None:
                    on_count(tally.count)

        began = tally.began = time.perf_counter()
        await asyncio.gather(*(learner(i) for i in range(clients)))
        wall = time.perf_counter() - began
        cache = (await client.get("/api/cache")).json()
    return {"tally": tally, "wall_s": wall, "cache": cache, "model": facts}


def percentiles(values: list[float], unit: str = "ms") -> dict:
    """p50/p95/p99 and max (nearest rank) of seconds, in milliseconds ("ms", 0.1 ms) or
    seconds ("s", 1 ms): keys p50_ms ... max_ms, or p50_s ... max_s."""
    if not values:
        return {"n": 0}
    scale, digits = {"ms": (1e3, 1), "s": (1.0, 3)}[unit]
    ordered = sorted(values)

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    out = {"n": len(ordered)}
    for p in (50, 95, 99):
        out[f"p{p}_{unit}"] = round(rank(p) * scale, digits)
    out[f"max_{unit}"] = round(ordered[-1] * scale, digits)
    return out


def allowed_over(n: int, p: float = 95) -> int:
    """How many of ``n`` answers may be over a bound with the ``p``th percentile (nearest rank,
    as ``percentiles`` reads it) still within it."""
    return n - max(1, round(p / 100 * n)) if n else 0


def by_window(timeline: list[tuple[float, str, float]], width_s: float = 10.0) -> list[dict]:
    """Latency of every request but generation by when it was sent (``width_s`` windows from
    the start of the class): whether slow answers are the first wave (every learner's first
    trace in the same instant) or the steady state."""
    windows: dict[int, list[float]] = {}
    for sent, kind, seconds in timeline:
        if kind != "generate":
            windows.setdefault(int(sent // width_s), []).append(seconds)
    return [
        {"from_s": i * width_s, "to_s": (i + 1) * width_s, **percentiles(windows[i])}
        for i in sorted(windows)
    ]


def _summary(result: dict) -> dict:
    tally: Tally = result["tally"]
    every = [x for v in tally.latency.values() for x in v]
    return {
        "requests": tally.count,
        "errors": sum(tally.errors.values()),
        "errors_by_kind": tally.errors,
        "error_examples": tally.examples,
        "wall_s": round(result["wall_s"], 2),
        "requests_per_s": round(tally.count / result["wall_s"], 2),
        "generated_tokens": tally.tokens,
        "generated_tokens_per_s": round(tally.tokens / result["wall_s"], 1),
        "latency": percentiles(every),
        "latency_without_generation": percentiles(
            [x for k, v in tally.latency.items() if k != "generate" for x in v]
        ),
        "by_kind": {k: percentiles(v) for k, v in sorted(tally.latency.items())},
        "over_goal_by_kind": {  # how many answers took longer than the goal's 2 s
            k: n
            for k, v in sorted(tally.latency.items())
            if k != "generate" and (n := sum(x * 1e3 > GOAL_P95_MS for x in v))
        },
        "without_generation_by_window": by_window(tally.timeline),
        "first_token": percentiles(tally.first_token),
        "cache": result["cache"],
        "model": result["model"],
    }


def run(
    clients: int = 32,
    seconds: float = 60.0,
    *,
    cache_mb: int = 128,
    reference_s: float = 8.0,
    model: str | None = None,
    threads: int = 1,
    seed: int = 0,
    leak_after: int = 1000,
    dtype: str = "float32",
    join_s: float = 0.0,
    log=print,
) -> dict:
    """Serve, measure alone (the reference), then under load (the learners joining over
    ``join_s`` seconds, or all at once); returns every figure."""
    import datetime as dt
    import threading

    with server(model, cache_mb=cache_mb, threads=threads, dtype=dtype) as (url, pid):
        # one client first: the latency each request kind has on an idle server
        alone = _summary(asyncio.run(_drive(url, 1, reference_s, seed + 1)))
        log(f"alone: {alone['requests']} requests, p50 {alone['latency'].get('p50_ms')} ms")
        rss = {"start": rss_mb(pid), "peak": 0.0, f"after_{leak_after}": None}
        samples: list[tuple[float, float]] = []
        stop = threading.Event()

        def sample():
            began = time.perf_counter()
            while not stop.wait(0.5):
                value = rss_mb(pid)
                samples.append((round(time.perf_counter() - began, 1), round(value, 1)))
                rss["peak"] = max(rss["peak"], value)

        def on_count(n: int):
            if n >= leak_after and rss[f"after_{leak_after}"] is None:
                rss[f"after_{leak_after}"] = rss_mb(pid)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            drive = _drive(url, clients, seconds, seed, on_count, join_s)
            loaded = _summary(asyncio.run(drive))
        finally:
            stop.set()
            sampler.join()
        rss["end"] = rss_mb(pid)
        rss["peak"] = max(rss["peak"], rss["end"])
    log(f"under load: {loaded['requests']} requests, {loaded['errors']} errors")
    from lmscope.web.app import MAX_ACTIVE, WAIT_S

    ratios = {
        k: round(v["p50_ms"] / alone["by_kind"][k]["p50_ms"], 2)
        for k, v in loaded["by_kind"].items()
        if k in alone["by_kind"] and alone["by_kind"][k].get("p50_ms")
    }
    views = loaded["latency_without_generation"]
    return {
        "benchmark": "load",
        "clients": clients,
        "seconds": seconds,
        "join_s": join_s,
        "cache_mb": cache_mb,
        "model": model or "the default model",
        "served": loaded["model"],
        "server_threads": threads,
        "dtype": dtype,
        "goal": {
            "errors": 0,
            "p95_without_generation_ms": GOAL_P95_MS,
            "met": loaded["errors"] == 0 and views.get("p95_ms", 0) <= GOAL_P95_MS,
        },
        "limits": {"max_active": MAX_ACTIVE, "wait_s": WAIT_S},
        "alone": alone,
        "loaded": loaded,
        "p50_ratio_loaded_over_alone": ratios,
        "rss_mb": {k: (round(v, 1) if v is not None else None) for k, v in rss.items()},
        "rss_samples": samples[:: max(1, len(samples) // 120)],
        "leak_after": leak_after,
        "date": dt.date.today().isoformat(),
    }
