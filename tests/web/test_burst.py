"""Issue 16's burst, against a real ``lmscope serve`` on loopback: 100 concurrent heavy
``POST /api/trace`` requests (1,000-token prompts on a 2-layer, 4-head, d_model 64 GPT-2 with
GPT-2's vocabulary: each about 1-3 s of model time here) while one client asks for the model
facts, the step list, a static file and /docs one after another.

Before the work queue (``web.work``), the first answer came after 60 s, cheap requests waited
up to 87 s and heavy ones up to 145 s (``BENCHMARKS.md``). Now: every heavy request gets 200
or 503 within the limit, the refusals come at once with Retry-After, and no cheap request
waits for the model. The server runs with ``--max-wait 20`` (the default is 60 s): the same
promise, checked in a third of the time; the benchmark measures the default.
"""

from __future__ import annotations

import pytest

from helpers_hf import save_random_hf_gpt2
from lmscope.testing import burst

LIMIT_S = 20.0


@pytest.mark.slow
def test_a_burst_of_100_heavy_requests_never_stalls_the_server(tmp_path):
    model = save_random_hf_gpt2(tmp_path / "gpt2", n_positions=1024)
    result = burst.run_one(
        model, 100, tokens=1000, limit_s=LIMIT_S, args=("--max-wait", str(LIMIT_S)), log=print
    )
    statuses = result["statuses"]
    assert set(statuses) <= {"200", "503"}, result["past_limit_examples"]
    assert sum(statuses.values()) == 100
    # the burst is several times the limit's work: some answered, the rest refused
    assert statuses.get("200", 0) >= 1 and statuses.get("503", 0) >= 20, statuses
    assert result["past_limit"] == 0, result["past_limit_examples"]
    assert result["latency"]["max_s"] <= LIMIT_S
    assert result["first_answer_s"] < 5  # the first refusals do not wait for the model
    assert result["retry_after_s"]["n"] == statuses["503"]  # every 503 says when to retry
    cheap = result["cheap"]
    assert cheap["n"] >= 20 and result["cheap_failed"] == 0
    assert cheap["max_s"] < 1.0, cheap
