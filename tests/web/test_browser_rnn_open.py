"""/rnn opens on the unit the cell finder ranks first (not layer 0 unit 0, a solid block),
links to /why, and shows the shipped War and Peace LSTM's sample timeline as a slider
(issue 14), at 1440 and 390 px, in English and Chinese."""

from __future__ import annotations

import pytest
from webtools import shot

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tiny_model):
    import lmscope
    from lmscope.web import create_app

    return create_app(tiny_model, rnn=[lmscope.load("warpeace-lstm")])


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/rnn", "allowed": ("400",)}


@pytest.mark.parametrize(("width", "lang"), [(1440, "en"), (390, "zh")])
def test_rnn_opens_on_the_finders_top_unit_with_its_timeline(page, client, width, lang):
    page.set_viewport_size({"width": width, "height": 900})
    report = client.post("/api/rnn/cells", json={"model": "warpeace-lstm", "top": 3}).json()
    top = next(f["best"][0] for f in report["features"] if f["best"])
    assert (top["layer"], top["unit"]) != (0, 0)
    assert page.get_by_test_id("rnn-layer").input_value() == str(top["layer"])
    assert page.get_by_test_id("rnn-unit").input_value() == str(top["unit"])
    assert page.get_by_test_id("rnn-kind").input_value() == top["kind"]
    if lang == "zh":
        page.get_by_test_id("lang-toggle").click()
        page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    note = page.get_by_test_id("rnn-top-unit").inner_text()
    assert str(top["unit"]) in note and (("单元" in note) == (lang == "zh"))
    # the sample timeline: one slider position per kept sample, the text as saved
    timeline = client.get("/api/rnn/timeline").json()
    slider = page.get_by_test_id("rnn-timeline-slider")
    assert int(slider.get_attribute("max")) == len(timeline["samples"]) - 1
    slider.fill("0")
    first = timeline["samples"][0]
    assert page.get_by_test_id("rnn-timeline-text").inner_text().strip() == first["text"].strip()
    label = page.get_by_test_id("rnn-timeline-label").inner_text()
    assert f"{first['iteration']}" in label and (("迭代" in label) == (lang == "zh"))
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"rnn-open-{width}-{lang}")
    # and a way to the lesson's experiments
    link = page.get_by_test_id("why-link")
    assert link.get_attribute("href") == "/why"
    link.click()
    page.wait_for_selector("body.why-page[data-ready='1']")


def test_the_timeline_api_says_which_models_keep_none(client):
    r = client.get("/api/rnn/timeline", params={"model": "nope"})
    assert r.status_code == 400 and "not served" in r.json()["error"]


def test_the_top_unit_line_goes_when_another_unit_is_shown(page):
    page.goto(page.server + "/rnn")
    page.wait_for_selector("body[data-ready='1']")
    note = page.get_by_test_id("rnn-top-unit")
    assert note.is_visible()
    unit = int(page.get_by_test_id("rnn-unit").input_value())
    page.get_by_test_id("rnn-unit").fill(str(unit + 1))
    page.get_by_test_id("rnn-unit").press("Enter")
    page.wait_for_function(
        f"() => document.getElementById('rnn-title').textContent.includes('unit {unit + 1}')"
    )
    assert note.is_hidden()
