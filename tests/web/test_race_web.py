"""The "Why Transformers" page's API: saved lab results (shipped, and the user's own from
./lmscope-results), their plots, and refusals for anything else."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from fastapi.testclient import TestClient

from lmscope.lab.results import shipped_dir, shipped_experiments, shown
from lmscope.web.lab import EXPERIMENTS

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def local(tmp_path, monkeypatch):
    """The server's folder: results the user made go under ./lmscope-results there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path / "lmscope-results"


@pytest.fixture
def client(tiny_model, local):
    from lmscope.web import create_app

    return TestClient(create_app(tiny_model))


@pytest.mark.slow
def test_index_lists_the_experiments_in_the_lessons_order(client, local):
    body = client.get("/api/lab").json()
    names = [e["name"] for e in body["results"]]
    assert names[:4] == ["serial-depth", "memory-wall", "race", "gradient-flow"]
    assert body["local_dir"] == str(local)
    by = {e["name"]: e for e in body["results"]}
    for name in shipped_experiments():
        sources = by[name]["sources"]
        assert [s["source"] for s in sources] == ["shipped"]
        assert "cores" in shown(sources[0]["machine"], "en")  # the hardware is named
        assert CJK.search(shown(by[name]["title"], "zh")) and shown(by[name]["title"], "en")
    assert by["race"]["commands"][0]["command"] == "lmscope race"
    assert by["serial-depth"]["commands"][0]["command"].endswith("--quick")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["serial-depth", "memory-wall", "race"])
def test_shipped_results_and_every_plot_they_name(client, name):
    doc = client.get(f"/api/lab/{name}").json()
    assert doc == json.loads((shipped_dir(name) / "result.json").read_text(encoding="utf-8"))
    plots = [s["plot"] for s in doc["sections"] if s["plot"]]
    assert plots
    for plot in plots:
        png = client.get(f"/api/lab/{name}/plot/{plot['png']}")
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content[:4] == b"\x89PNG"
        svg = client.get(f"/api/lab/{name}/plot/{plot['svg']}")
        assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/api/lab/secrets", 404, "no lab experiment named 'secrets'"),
        ("/api/lab/race?source=local", 404, "no local result for 'race' yet; run it with"),
        ("/api/lab/race?source=elsewhere", 422, "source"),
        ("/api/lab/race/plot/result.json", 404, "has no plot named 'result.json'"),
        ("/api/lab/race/plot/..%2F..%2F..%2Fpyproject.toml", 404, "has no plot named"),
        ("/api/lab/..%2Fmodels/plot/x.png", 404, "no lab experiment named"),
    ],
)
def test_refuses_anything_but_a_result_and_its_own_plots(client, path, status, message):
    r = client.get(path)
    assert r.status_code == status, r.text
    error = r.json()["error"]  # a path the router itself cannot match is "not found: ..."
    assert message in error or (status == 404 and error.startswith("not found: ")), error


@pytest.mark.slow
def test_the_users_own_result_appears_beside_the_shipped_one(client, local):
    mine = local / "race"
    shutil.copytree(shipped_dir("race"), mine)
    doc = json.loads((mine / "result.json").read_text(encoding="utf-8"))
    doc["hardware"]["cpu"] = "My Laptop CPU"
    (mine / "result.json").write_text(json.dumps(doc), encoding="utf-8")
    entry = next(e for e in client.get("/api/lab").json()["results"] if e["name"] == "race")
    sources = {s["source"]: shown(s["machine"], "en") for s in entry["sources"]}
    assert sources["local"].startswith("My Laptop CPU") and "shipped" in sources
    assert client.get("/api/lab/race?source=local").json()["hardware"]["cpu"] == "My Laptop CPU"
    png = doc["sections"][0]["plot"]["png"]
    assert client.get(f"/api/lab/race/plot/{png}?source=local").status_code == 200
    # a damaged file of the user's is left out of the index instead of breaking the page
    (mine / "result.json").write_text("{not json", encoding="utf-8")
    entry = next(e for e in client.get("/api/lab").json()["results"] if e["name"] == "race")
    assert [s["source"] for s in entry["sources"]] == ["shipped"]


@pytest.mark.slow
def test_the_page_and_its_link_from_the_explainer(client):
    page = client.get("/why")
    assert page.status_code == 200 and 'src="/bundle/why.js?v=' in page.text
    assert 'href="/why"' in client.get("/").text
    for asset in ("js/why.js", "js/catalog.js", "why.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert set(EXPERIMENTS) >= {"serial-depth", "memory-wall", "race", "gradient-flow"}


@pytest.mark.slow
def test_the_page_gets_every_header_as_a_catalog_text(client):
    """The page says headers, cells and the machine from the catalog, as the terminal does."""
    for name in shipped_experiments():
        doc = client.get(f"/api/lab/{name}").json()
        labels = [c["label"] for s in doc["sections"] for c in s["columns"]]
        names = [label for label in labels if not isinstance(label, dict)]
        assert all(" " not in label or label.startswith("k=") for label in names), name
    depth = client.get("/api/lab/serial-depth").json()["sections"][0]["columns"][1]["label"]
    assert shown(depth, "zh") == "循环深度"  # the prose's word, not 递归
    entry = next(e for e in client.get("/api/lab").json()["results"] if e["name"] == "race")
    assert "核" in shown(entry["sources"][0]["machine"], "zh")
    assert shown(entry["commands"][0]["note"], "en") == "about 10 min on 2 cores"


def test_the_re_run_commands_match_how_the_shipped_results_were_measured(client):
    from lmscope.lab.memory_wall import parse_size
    from lmscope.lab.results import read_result

    by = {e["name"]: e for e in client.get("/api/lab").json()["results"]}
    commands = {name: [c["command"] for c in e["commands"]] for name, e in by.items()}
    shipped = {name: read_result(shipped_dir(name))["params"] for name in shipped_experiments()}
    wall = commands["memory-wall"][0]
    budget = wall.split("--budget ")[1].split()[0]
    assert parse_size(budget) == shipped["memory-wall"]["budget_bytes"]
    gradients = shipped["gradient-flow"]
    assert any(
        f"--state both --train-iters {gradients['train_iters']} --threads 1" in c
        for c in commands["gradient-flow"]
    )
    assert shipped["recall"]["command"] in commands["recall"]
    for name in shipped_experiments():  # every shipped experiment can be re-run from the page
        assert commands[name], name
