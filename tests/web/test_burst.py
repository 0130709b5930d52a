"""Issue 16's burst, against a real ``lmscope serve`` on loopback: 100 concurrent heavy
``POST /api/trace`` requests (1,000-token prompts on a 2-layer, 4-head, d_model 64 GPT-2 with
GPT-2's vocabulary: each about 1-3 s of model time here) while one client asks for the model
facts, the step list, a static file and /docs one after another.

Before the work queue (``web.work``), the first answer came after 60 s, cheap requests waited
up to 87 s and heavy ones up to 145 s (``BENCHMARKS.md``). Now: every heavy request gets 200
or 503, the refusals come before any model work is done, with Retry-After, no request waits
much past the limit, and no cheap request waits for the model. The server runs with
``--max-wait 20`` (the default is 60 s).

CI runs this on 2 busy cores beside other tests, so the test reads no second as a goal: it
measures the model's work in the same burst (the time between two answers the one worker
gave) and checks against that. ``benchmarks/burst.py`` measures the seconds themselves (every
answer within the limit, cheap ones under 1 s) on a machine left alone.
"""

from __future__ import annotations

import asyncio
import statistics

import httpx
import pytest

from helpers_hf import save_random_hf_gpt2
from lmscope.testing import burst

LIMIT_S = 20.0
TOKENS = 1000
HANG_S = 900.0  # only a hung request waits this long


@pytest.mark.slow
def test_a_burst_of_100_heavy_requests_never_stalls_the_server(tmp_path):
    model = save_random_hf_gpt2(tmp_path / "gpt2", n_positions=1024)
    bodies = [{"ids": ids} for ids in burst.prompts(100, TOKENS)]
    with burst.server(model, args=("--max-wait", str(LIMIT_S))) as (url, _):
        warm = {"ids": burst.prompts(1, TOKENS, seed=10_000)[0]}  # one answer before the burst
        assert httpx.post(f"{url}/api/trace", json=warm, timeout=HANG_S).status_code == 200
        raw = asyncio.run(burst.burst(url, bodies, timeout_s=HANG_S))
    result = burst.summarize(raw, LIMIT_S)
    statuses, heavy, cheap = result["statuses"], raw["heavy"], result["cheap"]
    answered = sorted(r["done"] for r in heavy if r["status"] == 200)
    refused = sorted(r["done"] for r in heavy if r["status"] == 503)
    # one worker runs the model, one trace after another: the time between two answers is at
    # least one trace's model work on this machine, now
    traces = [b - a for a, b in zip([0.0, *answered], answered, strict=False)]
    print(result, f"model work per trace: {traces}")

    assert set(statuses) <= {"200", "503"}, result["past_limit_examples"]
    assert sum(statuses.values()) == 100
    # the burst is several times the limit's work: some answered, the rest refused
    assert statuses.get("200", 0) >= 1 and statuses.get("503", 0) >= 20, statuses
    # the first refusal came before any model work was done: refusals do not wait for it
    assert refused[0] < answered[0], (refused[:3], answered[:3])
    assert result["retry_after_s"]["n"] == statuses["503"]  # every 503 says when to retry
    # nobody waits for the backlog: a request starts within the limit or is refused, so the
    # slowest answer is the limit and its own trace at most (twice that, for a busy machine's
    # slips). Without the queue the last of 100 waited for all 100 traces.
    assert result["latency"]["max_s"] <= LIMIT_S + 2 * max(traces), (result["latency"], traces)
    assert cheap["n"] >= 20 and result["cheap_failed"] == 0
    # no cheap request waits for the model: each is answered in less than one trace's work
    assert cheap["max_s"] < statistics.median(traces), (cheap, traces)
