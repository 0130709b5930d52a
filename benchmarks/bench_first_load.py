"""What the explainer's first view costs the browser: the requests it makes (all of them,
JavaScript modules, stylesheets, ``GET /api/model``) and, on /why, the plot images fetched
before the reader scrolls. Headless Chromium with an empty cache at 1440x900, against the app
serving the default model (SmolLM2 when installed).

    python -m benchmarks --only first-load

The figures before issue 38's changes were counted the same way on the tree of 2026-12-04,
and those before the page's modules were joined into one script (web/bundle.py) on commit
0c70bcc (2026-12-05); both are kept here as constants (BEFORE, UNJOINED), since those trees no
longer run from this one.
"""

from __future__ import annotations

from urllib.parse import urlparse

from benchmarks.bench_web import CHROMIUM_ARGS, _browser, _serve

# issue 38, counted on the page before its changes (the issue's own figures)
BEFORE = {
    "requests": 40,
    "scripts": 30,
    "stylesheets": 4,
    "api_model": 2,
    "why_images": 11,
}


# the same count on commit 0c70bcc, each JavaScript module still fetched on its own
UNJOINED = {
    "requests": 39,
    "scripts": 26,
    "stylesheets": 4,
    "api_model": 1,
    "why_images": 2,
}


def _count(requests: list) -> dict:
    paths = [(r.resource_type, urlparse(r.url).path) for r in requests]
    return {
        "requests": len(paths),
        "scripts": sum(kind == "script" for kind, _ in paths),
        "stylesheets": sum(kind == "stylesheet" for kind, _ in paths),
        "api_model": sum(path == "/api/model" for _, path in paths),
    }


def run(model_name: str | None = None) -> dict:
    import lmscope

    found = _browser()
    if found is None:
        return {"skipped": "chromium or playwright missing"}
    sync_playwright, chromium = found
    model = lmscope.load(model_name)
    url, stop = _serve(model)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            seen: list = []
            page.on("request", lambda request: seen.append(request))
            page.goto(url)
            page.wait_for_selector("[data-testid=flow][data-loaded='1']", timeout=300_000)
            page.wait_for_load_state("networkidle")
            explainer = _count(seen)
            seen.clear()
            page.goto(url + "why")
            page.wait_for_load_state("networkidle")
            images = [r for r in seen if r.resource_type == "image"]
            browser.close()
    finally:
        stop()
    return {"model": model.name, "after": {**explainer, "why_images": len(images)}}


ROWS = (
    ("requests", "`/`: every request until the network is idle"),
    ("scripts", "`/`: JavaScript files (modules, or the one joined script)"),
    ("stylesheets", "`/`: style sheets (files, or the one joined sheet)"),
    ("api_model", "`/`: `GET /api/model`"),
    ("why_images", "`/why`: plot images fetched before any scroll"),
)


def markdown(result: dict) -> str:
    lines = ["## The explainer's first load: requests (issue 38)", ""]
    if "skipped" in result:
        return "\n".join([*lines, f"Not measured: {result['skipped']}."])
    lines += [
        "Requests the browser makes for the first view, in headless Chromium at 1440x900 with "
        f"an empty cache, against the app serving {result['model']}. Before: the page as issue "
        "38 found it; modules apart: each JavaScript module fetched on its own as the import "
        "graph found it (commit 0c70bcc); after: this tree, where the server joins a page's "
        "modules into one script and its sheets into one (`lmscope/web/bundle.py`, no build "
        "step). /why's plots load "
        'as the reader scrolls (`loading="lazy"`).',
        "",
        "| what | before | modules apart | after |",
        "| --- | ---: | ---: | ---: |",
    ]
    after = result["after"]
    lines += [
        f"| {label} | {BEFORE[key]} | {UNJOINED[key]} | {after[key]} |" for key, label in ROWS
    ]
    return "\n".join(lines)
