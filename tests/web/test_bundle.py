"""Each page's JavaScript is one request (issue 38), and so are its style sheets: joined at
serve time (lmscope/web/bundle.py). Every page's modules join (none in a form the joining
cannot keep the same), each module once, dependencies first, served with a version the page
names; what the joining cannot keep the same is refused by name. The browser tests run the
pages from these bundles."""

from __future__ import annotations

import re

import pytest

from lmscope.web import bundle
from lmscope.web.pages import TEMPLATES


def entries(page: str) -> tuple[str, ...]:
    """The entry modules a template sets (`scripts`)."""
    line = re.search(r"^\{% set [^%]*scripts[^%]*%\}$", (TEMPLATES / page).read_text(), re.M)
    return tuple(re.findall(r'"(\w+\.js)"', line[0]))


PAGES = ("index.html", "rnn.html", "why.html", "circuits.html")


@pytest.mark.parametrize("page", PAGES)
def test_every_page_joins_its_modules_once_dependencies_first(page):
    wanted = entries(page)
    assert wanted, page
    modules = bundle.order(wanted)
    names = [name for name, _ in modules]
    assert len(names) == len(set(names)) and set(wanted) <= set(names)
    for i, (name, source) in enumerate(modules):
        for dep, _, _ in bundle._imports(source):
            assert names.index(dep) < i, (name, dep)
    joined = bundle.join(wanted)
    assert joined.count("{ // ---- ") == len(names)
    assert not re.search(r"^(import|export)\s", joined, re.MULTILINE)


def test_the_pages_name_one_versioned_script_and_the_server_sends_it(client):
    page = client.get("/").text
    scripts = re.findall(r"<script[^>]*src=\"([^\"]+)\"", page)
    assert len(scripts) == 1 and scripts[0].startswith("/bundle/app+precision.js?v=")
    r = client.get(scripts[0])
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert "immutable" in r.headers["cache-control"]
    assert "app.js" in r.text and "precision.js" in r.text
    again = client.get(scripts[0], headers={"if-none-match": r.headers["etag"]})
    assert again.status_code == 304
    # an old version's address is answered with the current one, checked again next time
    stale = client.get("/bundle/app+precision.js?v=0")
    assert stale.status_code == 200 and stale.headers["cache-control"] == "no-cache"
    for bad in ("nope.js", "app+...js", "APP.js", "app+app+app+app+app+app+app.js", "app.py"):
        r = client.get(f"/bundle/{bad}")
        assert r.status_code == 404 and "no page script" in r.json()["error"], bad
    assert client.get("/bundle/app+..%2Fpages.js").status_code == 404
    # and its style sheets, one after another in the order the page had them
    sheets = re.findall(r"<link rel=\"stylesheet\" href=\"([^\"]+)\"", page)
    assert len(sheets) == 1 and sheets[0].startswith("/bundle/style+interpret+picture+flow.css?v=")
    r = client.get(sheets[0])
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/css")
    assert r.text == bundle.sheets(("style.css", "interpret.css", "picture.css", "flow.css"))
    assert r.text.index("---- style.css") < r.text.index("---- flow.css")


def test_a_module_it_cannot_join_is_refused_with_the_reason(tmp_path):
    (tmp_path / "a.js").write_text('import { b as c } from "./b.js";\nexport const a = c + 1;\n')
    (tmp_path / "b.js").write_text("export function b() {}\nlet x = 1;\n")
    joined = bundle.join(("a.js",), tmp_path)
    assert 'const { b: c } = __lmscopeModules.get("b.js");' in joined
    assert joined.index("---- b.js") < joined.index("---- a.js")
    cases = {
        "export default 1;\n": "`export`",
        'import x from "./b.js";\n': "`import`",
        'const m = await import("./b.js");\n': "`import()`",
        'import { nope } from "./b.js";\n': "nope, which b.js does not export",
        'import { a } from "./a.js";\nexport const a = 1;\n': "import cycle",
    }
    for source, reason in cases.items():
        (tmp_path / "a.js").write_text(source)
        with pytest.raises(bundle.BundleError, match=re.escape(reason)):
            bundle.join(("a.js",), tmp_path)
