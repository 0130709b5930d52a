"""The /why page's figures in Chinese: the index says which results have Chinese figures
(<stem>.zh.png beside each <stem>.png their result.json names), the API serves them and
refuses every other name, and answers an older result (made before there were Chinese
figures) with its English ones; the page in Chinese shows the Chinese figures, in English the
English ones, and the language switch swaps them."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webtools import ARTIFACTS

from lmscope.lab.results import RESULT_FILE, plot_name, read_result, shipped_dir

REVIEW = Path("/tmp/whyzh")  # screenshots for a person to look at, beside test-artifacts/


def english_files(name: str) -> list[str]:
    doc = read_result(shipped_dir(name))
    return [f for s in doc["sections"] if s["plot"] for f in s["plot"].values()]


@pytest.fixture(scope="module")
def app(tiny_model, tmp_path_factory):
    """The app, started in a folder whose ./lmscope-results holds the user's own race, made
    before lmscope drew Chinese figures: its result.json and English figures only."""
    from lmscope.web import create_app

    home = tmp_path_factory.mktemp("why-zh-home")
    mine = home / "lmscope-results" / "race"
    mine.mkdir(parents=True)
    shutil.copy(shipped_dir("race") / RESULT_FILE, mine)
    for file in english_files("race"):
        shutil.copy(shipped_dir("race") / file, mine)
    doc = json.loads((mine / RESULT_FILE).read_text(encoding="utf-8"))
    doc["hardware"]["cpu"] = "My Old Laptop CPU"
    (mine / RESULT_FILE).write_text(json.dumps(doc), encoding="utf-8")
    before = Path.cwd()
    os.chdir(home)
    try:
        return create_app(tiny_model)
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


def sources(client, name: str) -> dict[str, dict]:
    entry = next(e for e in client.get("/api/lab").json()["results"] if e["name"] == name)
    return {s["source"]: s for s in entry["sources"]}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["serial-depth", "memory-wall", "race", "gradient-flow", "recall"])
def test_the_shipped_results_serve_their_chinese_figures(client, name):
    assert sources(client, name)["shipped"]["figures"] == ["en", "zh"]
    doc = client.get(f"/api/lab/{name}").json()  # as saved: it names the English files
    assert doc == read_result(shipped_dir(name))
    plots = [s["plot"] for s in doc["sections"] if s["plot"]]
    assert plots
    for plot in plots:
        for kind, media in (("png", "image/png"), ("svg", "image/svg+xml")):
            zh = plot_name(plot[kind], "zh")
            got = client.get(f"/api/lab/{name}/plot/{zh}")
            assert got.status_code == 200 and got.headers["content-type"].startswith(media)
            assert got.content == (shipped_dir(name) / zh).read_bytes()
            english = client.get(f"/api/lab/{name}/plot/{plot[kind]}")
            assert english.content == (shipped_dir(name) / plot[kind]).read_bytes()
            assert english.content != got.content


@pytest.mark.parametrize(
    "file",
    [
        "race-speed.zh.zh.png",
        "race-speed.en.png",
        "race-speed.zz.png",
        "race-speed.ZH.png",
        "race-speed.zh.jpg",
        "result.zh.json",
        "result.json",
        "depth.zh.png",  # another experiment's figure
        "race-speed.zh.png.zh.png",
        "..%2Frecall%2Frecall-memory.zh.png",
        "%2Fetc%2Fpasswd.zh.png",
    ],
)
def test_refuses_any_other_name(client, file):
    assert client.get(f"/api/lab/race/plot/{file}").status_code == 404, file
    assert client.get(f"/api/lab/race/plot/{file}?source=local").status_code == 404, file


def test_an_older_result_has_no_chinese_figure_and_falls_back_to_english(client):
    assert sources(client, "race")["local"]["figures"] == ["en"]  # the page shows English
    for file in english_files("race"):
        zh = client.get(f"/api/lab/race/plot/{plot_name(file, 'zh')}?source=local")
        english = client.get(f"/api/lab/race/plot/{file}?source=local")
        assert zh.status_code == english.status_code == 200
        assert zh.content == english.content == (shipped_dir("race") / file).read_bytes()


# --- the page --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/why", "allowed": (), "lang": "zh"}


def shown(page) -> list[dict]:
    """Each figure on the page: its experiment, source, image and PNG/SVG links."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.why-figure')].map((f) => {
            const exp = f.closest('[data-testid=why-experiment]');
            const links = [...f.querySelectorAll('figcaption a')].map((a) => a.href);
            return {name: exp.dataset.name, source: exp.dataset.source,
                    img: f.querySelector('img').getAttribute('src'), links};
        })"""
    )


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


def file_of(url: str) -> str:
    return re.search(r"/plot/([^?]+)", url).group(1)


@pytest.mark.browser
def test_the_page_in_chinese_shows_the_chinese_figures_and_english_the_english(page):
    ARTIFACTS.mkdir(exist_ok=True)
    REVIEW.mkdir(exist_ok=True)
    all_images_loaded(page)
    figures = shown(page)
    assert {f["name"] for f in figures} == {
        "serial-depth",
        "memory-wall",
        "race",
        "gradient-flow",
        "recall",
    }
    for f in figures:
        files = [file_of(f["img"]), *map(file_of, f["links"])]
        if f["source"] == "shipped":
            assert all(".zh." in x for x in files), f
        else:  # the user's older race: no Chinese figure, the English one
            assert f["name"] == "race" and not any(".zh." in x for x in files), f
    assert len(figures) == 11 and sum(f["source"] == "local" for f in figures) == 2
    page.locator("#exp-race").get_by_test_id("why-source-shipped").click()
    page.wait_for_function("() => document.querySelector('#exp-race').dataset.source === 'shipped'")
    race = [f for f in shown(page) if f["name"] == "race"]
    assert [file_of(f["img"]) for f in race] == ["race-speed.zh.png", "race-loss.zh.png"]
    all_images_loaded(page)
    page.locator("#exp-race").scroll_into_view_if_needed()
    page.locator("#exp-race").screenshot(path=str(ARTIFACTS / "why-zh-race-figures.png"))
    page.locator("#exp-race").screenshot(path=str(REVIEW / "why-zh-race-page.png"))

    page.get_by_test_id("lang-toggle").click()  # English: the English figures
    assert page.locator("h1").inner_text() == "Why Transformers replaced RNNs"
    all_images_loaded(page)
    for f in shown(page):
        assert not any(".zh." in file_of(x) for x in [f["img"], *f["links"]]), f
    race = [f for f in shown(page) if f["name"] == "race"]
    assert [file_of(f["img"]) for f in race] == ["race-speed.png", "race-loss.png"]

    page.get_by_test_id("lang-toggle").click()  # and back
    race = [f for f in shown(page) if f["name"] == "race"]
    assert [file_of(f["img"]) for f in race] == ["race-speed.zh.png", "race-loss.zh.png"]
    all_images_loaded(page)
    page.locator("#exp-serial-depth").screenshot(path=str(REVIEW / "why-zh-serial-depth-page.png"))
