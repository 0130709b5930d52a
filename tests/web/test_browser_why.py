"""The "Why Transformers" page in headless Chromium: it renders the shipped results (tables,
plots, verdicts, the hardware), switches between English and Chinese, shows a user's own
result beside the shipped one, and copies the re-run command. Offline: any request to
another host fails the test (conftest.py). Screenshots go to test-artifacts/ (gitignored)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from webtools import ARTIFACTS

from lmscope.lab.results import shown

pytestmark = pytest.mark.browser

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def app(tiny_model, tmp_path_factory):
    """The app, started in a folder whose ./lmscope-results holds one result of the user's:
    the race copied from the shipped one, measured on "My Laptop CPU"."""
    from lmscope.lab.results import shipped_dir
    from lmscope.web import create_app

    home = tmp_path_factory.mktemp("why-home")
    mine = home / "lmscope-results" / "race"
    shutil.copytree(shipped_dir("race"), mine)
    doc = json.loads((mine / "result.json").read_text(encoding="utf-8"))
    doc["hardware"]["cpu"] = "My Laptop CPU"
    (mine / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    before = Path.cwd()
    os.chdir(home)
    try:
        return create_app(tiny_model)
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/why", "allowed": (), "lang": "en", "clipboard": True}


def all_images_loaded(page) -> None:
    """Every plot loads (each is lazy, issue 38: asked for now, as if scrolled to)."""
    assert page.evaluate(
        "[...document.images].every((i) => i.loading === 'lazy' || i.dataset.asked)"
    )
    page.wait_for_function(
        "() => { document.querySelectorAll('img[loading=lazy]').forEach((i) => { "
        "i.dataset.asked = '1'; i.loading = 'eager'; }); "
        "return [...document.images].length > 0 && "
        "[...document.images].every((i) => i.complete && i.naturalWidth > 0) }"
    )


def result(page, name: str, source: str) -> dict:
    return page.evaluate(f"fetch('/api/lab/{name}?source={source}').then((r) => r.json())")


def test_renders_the_shipped_results_and_switches_language(page):
    ARTIFACTS.mkdir(exist_ok=True)
    articles = page.locator("[data-testid=why-experiment]")
    names = articles.evaluate_all("(nodes) => nodes.map((n) => n.dataset.name)")
    assert names[:3] == ["serial-depth", "memory-wall", "race"]
    depth = page.locator("#exp-serial-depth")
    assert depth.get_attribute("data-source") == "shipped"
    assert "Xeon" in depth.locator("[data-testid=why-hardware]").inner_text()
    all_images_loaded(page)
    shipped = result(page, "serial-depth", "shipped")
    plots = sum(1 for s in shipped["sections"] if s["plot"])
    assert depth.locator("[data-testid=why-plot]").count() == plots
    assert depth.locator("[data-testid=why-section]").count() == len(shipped["sections"])
    first = shipped["sections"][0]
    verdict = depth.locator("[data-testid=why-verdict]").first.inner_text()
    assert verdict == shown(first["verdict"], "en")
    table = depth.locator("[data-testid=why-table]").first
    assert table.locator("tbody tr").count() == len(first["rows"])
    assert table.locator("tbody tr").first.locator("td").first.inner_text() == f"{64:,}"
    assert "5–10×" in page.locator("#exp-race .why-claim").inner_text()
    page.screenshot(path=str(ARTIFACTS / "why-en.png"), full_page=True)

    page.get_by_test_id("lang-toggle").click()
    assert page.locator("h1").inner_text() == "为什么 Transformer 取代了 RNN"
    verdict = depth.locator("[data-testid=why-verdict]").first.inner_text()
    assert verdict == shown(first["verdict"], "zh") and CJK.search(verdict)
    assert CJK.search(page.locator("#exp-race .why-claim").inner_text())
    assert page.get_by_test_id("lang-toggle").inner_text() == "English"
    all_images_loaded(page)
    page.screenshot(path=str(ARTIFACTS / "why-zh.png"), full_page=True)
    page.get_by_test_id("lang-toggle").click()
    assert page.locator("h1").inner_text() == "Why Transformers replaced RNNs"


def _as_terminal(cell: str) -> str:
    """A page cell in the terminal's spelling: the page writes U+2212 for minus and exponents
    without padding (7.7e-8 where Python writes 7.7e-08)."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", cell.replace("\u2212", "-"))


def test_every_number_reads_as_the_terminal_prints_it(page):
    """The page formats a table's numbers itself (why.js, "as the CLI's tables show them"):
    every shown cell of every shipped experiment equals lab.results.format_cell's. Every byte
    column of the memory wall read as seconds ("3,145,728 s"): the rule for long times had
    been pasted into the bytes' formatter too."""
    from lmscope.lab.results import format_cell

    names = page.locator("[data-testid=why-experiment]").evaluate_all(
        "(nodes) => nodes.map((n) => n.dataset.name)"
    )
    checked = 0
    for name in names:
        sections = [s for s in result(page, name, "shipped")["sections"] if s["rows"]]
        tables = page.locator(f"#exp-{name} [data-testid=why-table]")
        assert tables.count() == len(sections), name
        for table, section in zip(tables.all(), sections, strict=True):
            rows = table.locator("tbody tr").evaluate_all(
                "(rows) => rows.map((r) => [...r.cells].map((c) => c.innerText))"
            )
            for cells, row in zip(rows, section["rows"], strict=False):
                for cell, column in zip(cells, section["columns"], strict=True):
                    if column["kind"] in ("text", "bool") or not cell:  # words; a folded row
                        continue
                    want = format_cell(row.get(column["key"]), column["kind"])
                    assert _as_terminal(cell) == _as_terminal(want), (name, column["key"], cell)
                    checked += 1
    assert checked > 500


def test_the_users_own_race_comes_first_and_the_shipped_one_a_click_away(page):
    race = page.locator("#exp-race")
    assert race.get_attribute("data-source") == "local"
    assert "My Laptop CPU" in race.locator("[data-testid=why-hardware]").inner_text()
    race.get_by_test_id("why-source-shipped").click()
    race = page.locator("#exp-race")
    page.wait_for_function("() => document.querySelector('#exp-race').dataset.source === 'shipped'")
    assert "Xeon" in race.locator("[data-testid=why-hardware]").inner_text()
    shipped = result(page, "race", "shipped")
    speed = shipped["sections"][0]
    assert race.locator("[data-testid=why-verdict]").first.inner_text() == shown(
        speed["verdict"], "en"
    )
    all_images_loaded(page)
    race.scroll_into_view_if_needed()
    race.screenshot(path=str(ARTIFACTS / "why-race.png"))


def test_copies_the_command_that_re_runs_an_experiment(page):
    command = page.locator("#exp-race [data-testid=why-command]").first
    command.locator("xpath=ancestor::details").evaluate("(d) => (d.open = true)")
    assert command.locator("code").inner_text() == "lmscope race"
    command.get_by_role("button").click()
    assert page.evaluate("navigator.clipboard.readText()") == "lmscope race"
    assert command.get_by_role("button").inner_text() == "Copied"
    command.get_by_role("button").click()  # a second copy while "Copied" still shows
    assert command.get_by_role("button").inner_text() == "Copied"
    page.wait_for_function(
        "(b) => b.textContent === 'Copy'", arg=command.get_by_role("button").element_handle()
    )


def test_where_the_clipboard_is_refused_the_command_is_selected_for_ctrl_c(page):
    """The model menu said "Select and copy" and left the selecting to the reader, /why
    selected the command and said nothing: both now select it and say so (clipboard.js)."""
    command = page.locator("#exp-race [data-testid=why-command]").first
    command.locator("xpath=ancestor::details").evaluate("(d) => (d.open = true)")
    refuse = "navigator.clipboard.writeText = () => Promise.reject(new Error('refused'))"
    page.evaluate(f"() => {{ window.keptWrite = navigator.clipboard.writeText; {refuse}; }}")
    try:
        command.get_by_role("button").click()
        assert command.get_by_role("button").inner_text() == "Selected: press Ctrl+C"
        assert page.evaluate("window.getSelection().toString()") == "lmscope race"
    finally:
        page.evaluate("() => { navigator.clipboard.writeText = window.keptWrite; }")
        page.evaluate("() => window.getSelection().removeAllRanges()")


def test_the_explainer_links_to_the_page_in_both_languages(page):
    page.goto(page.server + "/")
    page.wait_for_selector("body[data-ready='1']")
    link = page.locator(".top-actions a[href='/why']")
    assert link.inner_text() == "Why Transformers"
    page.get_by_test_id("lang-toggle").click()
    assert link.inner_text() == "为什么是 Transformer"
    page.get_by_test_id("lang-toggle").click()


def test_the_race_table_fits_a_1280_pixel_page_in_both_languages(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    race = page.locator("#exp-race")
    race.get_by_test_id("why-source-shipped").click()
    page.wait_for_function("() => document.querySelector('#exp-race').dataset.source === 'shipped'")
    for lang in ("en", "zh"):
        table = race.locator("[data-testid=why-table]").first
        wide = table.evaluate(
            "(t) => { const w = t.closest('.why-table-wrap');"
            " return [t.scrollWidth, w.clientWidth, t.getBoundingClientRect().right]; }"
        )
        assert wide[0] <= wide[1] and wide[2] <= 1280, (lang, wide)
        last = table.locator("th").last.inner_text()
        assert last in ("val loss at the end", "最终验证损失")
        table.scroll_into_view_if_needed()
        race.screenshot(path=str(ARTIFACTS / f"why-race-1280-{lang}.png"))
        page.get_by_test_id("lang-toggle").click()
    page.set_viewport_size({"width": 1440, "height": 1000})


def test_every_experiment_has_its_lesson_and_re_run_commands(page):
    index = page.evaluate("fetch('/api/lab').then((r) => r.json())")
    for entry in index["results"]:
        article = page.locator(f"#exp-{entry['name']}")
        assert article.locator(".why-claim").count() == 1, entry["name"]
        assert article.locator("[data-testid=why-command]").count() == len(entry["commands"]) > 0
    recall = page.locator("#exp-recall [data-testid=why-command] code")
    assert recall.first.text_content() == "lmscope lab recall --quick --threads 1"


# the median brightness of a strip of an element's screenshot, at its left or right edge
STRIP = 6


def _edge_brightness(page, element, side: str) -> float:
    import io
    import statistics

    from PIL import Image

    image = Image.open(io.BytesIO(element.screenshot())).convert("L")
    width, height = image.size
    left = 0 if side == "left" else width - STRIP
    strip = image.crop((left, 0, left + STRIP, height))
    return statistics.median(strip.tobytes())  # one byte a pixel: "L" is 8-bit grey


def test_a_table_wider_than_a_phone_shows_that_it_scrolls(page):
    """At 390 px most tables are wider than the card and were cut at its edge ('最大相' of
    '最大相对差'), with nothing to say that the rest is a swipe away."""
    page.set_viewport_size({"width": 390, "height": 844})
    wide = (
        page.locator(".why-table-wrap")
        .filter(has=page.locator("table"))
        .evaluate_all("els => els.map((e, i) => [i, e.scrollWidth - e.clientWidth])")
    )
    index = next(i for i, extra in wide if extra > 40)
    box = page.locator(".why-table-wrap").nth(index)
    box.scroll_into_view_if_needed()
    box.evaluate("e => { e.scrollLeft = 0; }")
    at_start = _edge_brightness(page, box, "left"), _edge_brightness(page, box, "right")
    box.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    at_end = _edge_brightness(page, box, "left"), _edge_brightness(page, box, "right")
    # a shadow on the side with more to see, none on the side without
    assert at_start[1] < at_start[0] - 10, at_start
    assert at_end[0] < at_end[1] - 10, at_end
