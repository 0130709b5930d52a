"""The page when the server refuses a trace for now (503): the refusal is said with its numbers,
and the page asks again by itself after the seconds the server gave."""

from __future__ import annotations

import pytest
from webtools import api, chip_ids, traces, wait_for_trace

from lmscope.web.error_codes import error_body
from lmscope.web.limits import Busy

pytestmark = pytest.mark.browser

# what WorkQueue says to a prompt too long to wait behind other work (test_admission.py)
ALONE = Busy("error.web.busy.alone", 1, need=70, limit=60, wait=1, retry=1)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/", "allowed": ("503",)}


def test_the_refusal_carries_its_numbers_as_params_the_page_can_say():
    body = error_body(ALONE)
    assert body["code"] == "error.web.busy.alone"
    assert body["params"] == {"need": 70, "limit": 60, "wait": 1, "retry": 1}
    assert body["error"] == (
        "the server is busy: this request alone needs about 70 s of model work, too long to "
        "answer within 60 s behind other work, so it runs only when nothing else is queued; "
        "about 1 s of model work is ahead of it: try again in 1 s"
    )


def test_a_prompt_the_server_cannot_take_yet_is_asked_again_when_it_says(page):
    """A long prompt refused with 503 stayed refused ("The server is busy; try again in a
    moment"), with no hint of why or when, until the learner typed again."""
    refused = []

    def once(route):
        if refused:
            return route.continue_()
        refused.append(route.request.post_data)
        route.fulfill(status=503, json=error_body(ALONE), headers={"Retry-After": "1"})

    page.route("**/api/trace", once)
    before = traces(page)
    page.get_by_test_id("prompt-input").fill("Asked again")
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    said = error.inner_text()
    assert "alone needs about 70 s" in said and "try again in 1 s" in said
    assert "tries again by itself" in said
    wait_for_trace(page, before)  # the second ask, a second later
    assert error.is_hidden() and len(refused) == 1
    expected = api(page, "/api/trace", {"text": "Asked again"})["tokens"]
    assert chip_ids(page) == [t["id"] for t in expected]


def test_a_slow_trace_counts_its_seconds(page):
    """A 3,000-token prompt took a minute with nothing but "Running the model…" on screen."""
    held = []
    page.route("**/api/trace", lambda route: held.append(route))  # answered below
    before = traces(page)
    page.get_by_test_id("prompt-input").fill("A slow one")
    # two seconds or more (a busy machine may first look at 12 s): the count goes on
    page.wait_for_function(
        "() => /Running the model… ([2-9]|[1-9][0-9]+) s/"
        ".test(document.getElementById('timing').textContent)"
    )
    held[0].continue_()
    wait_for_trace(page, before)
    assert "Running" not in page.locator("#timing").inner_text()
    page.unroute("**/api/trace")
