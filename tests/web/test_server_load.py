"""The server under load, on loopback: a short class of concurrent learners gets no errors
and bounded memory; a saturated server answers a readable 503 at once instead of piling
requests up; the page still loads while the model is busy; the model gate is first come,
first served. The harness is ``lmscope.testing.load``; ``benchmarks/bench_load.py`` runs the
32-client, 60-second version and measures the seconds: CI runs these on 2 busy cores beside
other tests, so here a limit in seconds only stops a hung test, and "at once" is checked as
"while the model was still held"."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import torch
from webtools import HANG_S, serve

import lmscope
import lmscope.web
from lmscope.testing import load
from lmscope.web import create_app
from lmscope.web.limits import Busy, Gate


@pytest.mark.slow
def test_a_short_class_gets_no_errors_and_memory_stays_bounded():
    result = load.run(
        clients=8,
        seconds=5,
        cache_mb=32,
        reference_s=1.0,
        leak_after=150,
        model="shakespeare",  # the small shipped model: the load, not the model, is tested
        log=lambda s: None,
    )
    loaded, rss = result["loaded"], result["rss_mb"]
    assert loaded["errors"] == 0, loaded["error_examples"]
    # every learner went through one session at least (a trace and a view), however busy the
    # machine; how many fit in the 5 s is the benchmark's. The learners' first sessions are
    # seeded: among them they trace, pool and generate
    assert loaded["requests"] >= 2 * 8 and loaded["generated_tokens"] > 0
    assert {"trace", "pool", "generate"} <= set(loaded["by_kind"])
    assert loaded["cache"]["bytes"] <= loaded["cache"]["max_bytes"] == 32 << 20
    # a 32 MiB trace cache, the model and the interpreter: well under this
    assert rss["peak"] - rss["start"] < 250, rss
    from benchmarks.bench_load import markdown

    assert "## A class at one server" in markdown(result)


@pytest.fixture
def busy_server():
    """A server that admits 3 API requests and waits 0.5 s for the model; yields its URL
    and its model gate, which the test can hold to play a long forward pass."""
    app = create_app(lmscope.load("shakespeare"), max_active=3, wait_s=0.5)
    with serve(app) as url:
        yield url, app.state.store.gate


@pytest.fixture
def full_server():
    """A server that admits 3 API requests, which wait for the model as long as the test holds
    its gate (up to HANG_S): they stay in progress until the test says."""
    app = create_app(lmscope.load("shakespeare"), max_active=3, wait_s=HANG_S)
    with serve(app) as url:
        yield url, app.state.store.gate


async def _flood(url: str, n: int, answered: list | None = None) -> list[httpx.Response]:
    """``n`` traces at once; each answer is also put in ``answered`` as it comes."""
    async with httpx.AsyncClient(base_url=url, timeout=HANG_S) as client:

        async def one(body: dict) -> httpx.Response:
            r = await client.post("/api/trace", json=body)
            if answered is not None:
                answered.append(r)
            return r

        return await asyncio.gather(*(one({"text": f"ROMEO: prompt {i}"}) for i in range(n)))


def _wait_until(check) -> None:
    deadline = time.monotonic() + HANG_S
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.slow
def test_a_saturated_server_answers_503_at_once_and_the_page_still_loads(full_server):
    url, gate = full_server
    answered: list = []
    with gate:  # the model is busy for as long as the test holds its gate
        flood = threading.Thread(target=lambda: asyncio.run(_flood(url, 8, answered)))
        flood.start()
        # at once: 5 refusals while the model is still held (the 3 admitted wait for it)
        _wait_until(lambda: len(answered) >= 5)
        refused = list(answered)
        # no model needed, never refused: answered while the model is still held
        assert httpx.get(f"{url}/", timeout=HANG_S).status_code == 200
        assert len(answered) == 5  # the 3 admitted still wait: nothing piles up past them
    flood.join(timeout=HANG_S)
    assert all(r.status_code == 503 for r in refused), [r.status_code for r in refused]
    assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
    errors = [r.json()["error"] for r in refused]
    assert all(e.startswith("the server is busy") for e in errors), errors
    assert all("requests in progress" in e for e in errors), errors
    # the 3 admitted got the model once it was free
    assert [r.status_code for r in answered[5:]] == [200] * 3
    # once the model is free again, the same requests go through
    assert all(r.status_code == 200 for r in asyncio.run(_flood(url, 3)))


@pytest.mark.slow
def test_a_stream_whose_first_token_waits_too_long_is_a_503(busy_server):
    url, gate = busy_server
    ids = lmscope.load("shakespeare").encode("ROMEO:")
    with gate:
        r = httpx.post(f"{url}/api/generate", json={"ids": ids, "n": 3}, timeout=HANG_S)
    assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
    assert r.json()["error"].startswith("the server is busy")


def test_the_gate_is_first_come_first_served_and_reentrant():
    gate = Gate(wait_s=HANG_S)  # the 6 are queued before any may give up
    order: list[int] = []
    arrived = []

    def worker(i: int):
        arrived.append(i)
        with gate:
            order.append(i)

    with gate, gate:  # re-entrant: views nest
        threads = []
        for i in range(6):
            threads.append(threading.Thread(target=worker, args=(i,)))
            threads[-1].start()
            while gate.waiting < i + 1:  # each is queued before the next arrives
                time.sleep(0.001)
    for t in threads:
        t.join(timeout=HANG_S)
    assert order == arrived == list(range(6))


@pytest.mark.slow
def test_the_gate_gives_up_after_its_wait():
    gate = Gate(wait_s=0.2)
    holder = threading.Event()
    done = threading.Event()

    def hold():
        with gate:
            holder.set()
            done.wait(HANG_S)  # until the test says

    t = threading.Thread(target=hold)
    t.start()
    holder.wait(HANG_S)
    started = time.perf_counter()
    with pytest.raises(Busy, match="not free within 0.2 s"), gate:
        pass
    # not before its wait; and it gave up by itself, while the gate was still held. 5 s is 25
    # times the wait: a timer, not work, that a busy machine is late with by milliseconds
    assert 0.15 < time.perf_counter() - started < 5
    assert t.is_alive() and not done.is_set()
    assert gate.waiting == 0  # the one that gave up left the queue
    done.set()
    t.join()
    with gate:
        pass


@pytest.mark.slow  # the machine description runs uname
def test_the_benchmarks_page_is_rendered_from_the_saved_figures():
    """BENCHMARKS.md is what `python -m benchmarks --render` makes of benchmarks/results/:
    every figure on the page comes from a saved run (the header, which names today's date and
    this machine, aside)."""
    from benchmarks import suite

    def sections(text: str) -> list[str]:
        return text.split("\n## ")[1:]

    page = suite.PAGE.read_text("utf-8")
    assert sections(page) == sections(suite.render_page(suite.RESULTS))
    assert len(sections(page)) == len(suite.saved(suite.RESULTS)) >= 6


@pytest.mark.slow  # the machine description runs uname
def test_the_page_header_names_torch_default_threads_after_a_run_set_its_own():
    """The page is rendered by the process that ran the benchmarks, which set their own thread
    counts: the header still names the default, read before any of them ran."""
    from benchmarks import suite

    default = torch.get_num_threads()
    suite._default_threads.cache_clear()
    try:
        assert suite.machine()["torch_threads"] == default
        torch.set_num_threads(default + 1)
        assert suite.machine()["torch_threads"] == default
    finally:
        torch.set_num_threads(default)


def test_the_simulated_class_asks_for_the_lens_window_the_page_asks_for():
    """The load test plays the page: its lens requests have the page's number of columns
    (the API's default is wider, and costs a third more)."""
    script = (Path(lmscope.web.__file__).parent / "static/js/lens.js").read_text("utf-8")
    assert f"const SIZE = {load.PAGE_LENS_SIZE};" in script


_REUSE = """
import resource, sys, torch
from lmscope.web.limits import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
faults = []
for _ in range(3):  # a trace's probes: a few hundred MB in blocks of a few MB, then freed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    probes = [torch.empty(1024, 1536).fill_(1.0) for _ in range(40)]
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    del probes
print(faults[-1])
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc settings")
def test_the_server_reuses_the_memory_a_trace_frees():
    """Found profiling a 1,024-token SmolLM2 trace (1.06x transformers' forward): glibc gave the
    memory each trace freed back to the kernel, which zeroed every page again for the next
    one, ~350,000 page faults a trace. `lmscope serve` keeps it for reuse."""
    import subprocess

    def faults(mode: str, **env: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _REUSE, mode],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env},
        )
        return int(done.stdout.split()[-1])

    # glibc's default depends on where the heap can grow, so the measurement is checked
    # against memory that is certainly given back: 240 MB of fresh pages, ~60,000 faults
    given_back = faults("default", MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    assert given_back > 10_000
    # kept: the pages are reused (a block or two may still land on fresh ones, ~1,500 each)
    assert faults("keep") < given_back / 10


def test_the_answers_a_p95_allows_over_the_goal_match_the_p95_it_reports():
    """Found reading the class load section: "a p95 within the goal allows 20" of 416 answers,
    but the nearest-rank p95 the benchmark reports stays within the goal with 21 over it."""
    for n in range(1, 600):
        allowed = load.allowed_over(n)
        within = [1.0] * (n - allowed) + [3.0] * allowed
        assert load.percentiles(within, "s")["p95_s"] <= 1.0, n
        if allowed < n:
            beyond = [1.0] * (n - allowed - 1) + [3.0] * (allowed + 1)
            assert load.percentiles(beyond, "s")["p95_s"] > 1.0, n
