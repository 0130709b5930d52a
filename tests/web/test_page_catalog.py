"""The page speaks the catalog: /i18n/<lang>.json serves each language's texts (cacheable,
outside the work queue), and the page's renderer (static/js/catalog.js, run here with Node)
fills in every catalog text exactly as lmscope.i18n.message_format does."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from lmscope import i18n
from lmscope.i18n import message_format as mf
from lmscope.web.pages import STATIC, TEMPLATES, catalog_version, rendered

CATALOG_JS = STATIC / "js" / "catalog.js"
COUNTS = (0, 1, 2, 21, 1234567)  # =0, one, other, and a number with separators


@pytest.fixture(scope="module")
def pages_client():
    """The pages' routes alone: the catalog needs no model."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from lmscope.web.errors import add_error_handlers
    from lmscope.web.routers import pages

    app = FastAPI()
    app.include_router(pages.router)
    add_error_handlers(app)
    with TestClient(app) as client:
        yield client


def test_the_catalog_route_serves_every_language_with_a_validator(pages_client):
    client = pages_client
    version = catalog_version()
    for lang in i18n.LANGUAGES:
        answer = client.get(f"/i18n/{lang}.json", params={"v": version})
        assert answer.status_code == 200, lang
        assert answer.json() == dict(i18n.catalog(lang))
        assert "immutable" in answer.headers["cache-control"]
        again = client.get(f"/i18n/{lang}.json", headers={"if-none-match": answer.headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == "no-cache"
    missing = client.get("/i18n/klingon.json")
    assert missing.status_code == 404 and missing.json()["code"] == "error.page.no-such-language"


def test_every_page_names_the_catalogs_version_and_says_its_words_from_the_catalog():
    for name in ("index.html", "rnn.html", "why.html"):
        assert (TEMPLATES / name).is_file()
        body = rendered(name)[0].decode()
        assert f'<meta name="lmscope-catalog" content="{catalog_version()}"' in body
        words = "page.tagline" if name == "index.html" else "page.explainer-link"
        assert i18n.text(words, "en") in body
        # the languages the page offers are i18n.LANGUAGES': a new one needs no JavaScript
        listed = re.search(r'<meta name="lmscope-languages" content="([^"]+)"', body)
        tags = json.loads(html.unescape(listed.group(1)))
        assert tags == {code: i18n.page_tag(code) for code in i18n.LANGUAGES}
        assert tags["zh"] == "zh-CN" and tags["pseudo"] == "en-XA"


@pytest.mark.parametrize(
    ("asked", "lang"),
    [
        ({}, "en"),
        ({"headers": {"accept-language": "zh-TW,zh;q=0.9,en;q=0.8"}}, "zh"),
        ({"headers": {"accept-language": "fr-FR,fr;q=0.9"}}, "en"),
        ({"headers": {"accept-language": "zh-CN"}, "cookies": {"lmscope.lang": "en"}}, "en"),
        ({"cookies": {"lmscope.lang": "zh"}}, "zh"),
        ({"cookies": {"lmscope.lang": "pseudo"}}, "en"),  # pseudo only by the address
        ({"params": {"lang": "pseudo"}, "cookies": {"lmscope.lang": "zh"}}, "pseudo"),
    ],
)
def test_a_page_is_sent_in_the_language_its_script_will_speak(pages_client, asked, lang):
    """A Chinese reader's page came in English and switched when its script ran: the header,
    the title and the toggle were English for the first paint."""
    cookies = asked.get("cookies", {})
    pages_client.cookies.clear()
    for name, value in cookies.items():
        pages_client.cookies.set(name, value)
    answer = pages_client.get("/", params=asked.get("params"), headers=asked.get("headers"))
    body = answer.text
    assert f'<html lang="{i18n.page_tag(lang)}">' in body
    assert i18n.text("page.tagline", lang) in body
    toggle = {"en": "zh", "zh": "en", "pseudo": "en"}[lang]
    assert f'lang="{i18n.page_tag(toggle)}"' in body
    assert f">{i18n.text('page.language-name', toggle)}</button>" in body
    assert answer.headers["vary"] == "Accept-Language, Cookie"
    assert answer.headers["content-language"] == i18n.page_tag(lang)
    pages_client.cookies.clear()


def sample_values(text: str) -> list[dict[str, object]]:
    """Values for a text's placeholders: every plural count through =0, one, other and a
    number with thousands separators; plain values as words (Chinese too) and numbers in
    turn."""
    counts, plain = set(), set()

    def walk(parts):
        for part in parts:
            if isinstance(part, mf.Plural):
                counts.add(part.name)
                for body in part.forms.values():
                    walk(body)
            elif isinstance(part, mf.Value):
                plain.add(part.name)

    walk(mf.parse(text))
    plain -= counts
    samples = []
    for i, count in enumerate(COUNTS):
        values: dict[str, object] = {name: count for name in counts}
        for j, name in enumerate(sorted(plain)):
            values[name] = [f"<{name}>", 12345, "x'y", 7, "汉字"][(i + j) % 5]
        samples.append(values)
        if not counts and not plain:
            break
    return samples


@pytest.mark.slow
def test_the_page_renders_every_catalog_text_as_python_does(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    cases, expected = [], []
    for lang in i18n.LANGUAGES:
        rule = i18n._plural_rule(lang)
        for key, text in i18n.catalog(lang).items():
            for values in sample_values(text):
                cases.append([key, lang, text, values])
                expected.append(mf.render(text, values, rule, i18n._number))
    module = tmp_path / "catalog.mjs"  # the page's module, read by Node as one
    shutil.copyfile(CATALOG_JS, module)
    script = tmp_path / "render.mjs"
    script.write_text(
        'import { readFileSync } from "node:fs";\n'
        'import { format } from "./catalog.mjs";\n'
        "const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));\n"
        "process.stdout.write(JSON.stringify(cases.map(([, lang, text, values]) =>"
        " format(text, values, lang))));\n"
    )
    data = tmp_path / "cases.json"
    data.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(
        [node, str(script), str(data)], capture_output=True, text=True, check=True, timeout=60
    )
    rendered = json.loads(done.stdout)
    wrong = [
        (key, lang, values, want, got)
        for (key, lang, _, values), want, got in zip(cases, expected, rendered, strict=True)
        if want != got
    ]
    assert not wrong, wrong[:5]
    assert len(cases) > 3 * len(i18n.catalog("en"))


@pytest.mark.slow
def test_the_page_refuses_what_python_refuses(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed")
    bad = ["{", "}", "{not a name}", "{n, select, a {x}}", "{n, plural, one {x}}", "{n, plural"]
    for text in bad:
        with pytest.raises(mf.MessageFormatError):
            mf.parse(text)
    shutil.copyfile(CATALOG_JS, tmp_path / "catalog.mjs")
    script = tmp_path / "refuse.mjs"
    script.write_text(
        'import { parse, format } from "./catalog.mjs";\n'
        f"const bad = {json.dumps(bad)};\n"
        "const refused = bad.map((text) => { try { parse(text); return false; }"
        " catch (e) { return e.constructor.name === 'MessageFormatError'; } });\n"
        "let missing = false;\n"
        "try { format('no such file: {name}', {}); } catch { missing = true; }\n"
        "process.stdout.write(JSON.stringify({ refused, missing }));\n"
    )
    done = subprocess.run(
        [node, str(script)], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == {"refused": [True] * len(bad), "missing": True}


def said_ids(script: str) -> list[str]:
    """The message ids a script hands ``t(id, ...)`` and ``tIn(lang, id, ...)`` as literals:
    every quoted string of that argument except the operands of a comparison (``x === "a" ?
    "page.a" : "page.b"`` says page.a or page.b)."""
    ids = []
    for call in re.finditer(r"(?<![\w.$])(t|tIn)\(", script):
        args, depth, start, i = [], 0, call.end(), call.end()
        while i < len(script) and len(args) < (2 if call.group(1) == "tIn" else 1):
            c = script[i]
            if c in "\"'`":
                i = script.index(c, i + 1)
            elif c in "([{":
                depth += 1
            elif c in ")]}" and depth:
                depth -= 1
            elif (c == "," and not depth) or c in ")]}":
                args.append(script[start:i])
                start = i + 1
                if c != ",":
                    break
            i += 1
        argument = args[-1] if len(args) == (2 if call.group(1) == "tIn" else 1) else ""
        for quoted in re.finditer(r"""(["'`])((?:(?!\1).)*)\1""", argument):
            if not argument[: quoted.start()].rstrip().endswith("=") and "${" not in quoted[2]:
                ids.append(quoted[2])
    return ids


def test_every_id_a_script_says_is_in_the_catalog():
    """A key of the old JavaScript dictionaries ("rnnPartHeld-out") survived the move to the
    catalog, in the branch of a choice: the catalog-id scan looks for dotted ids only, and /rnn
    logged "no message" and showed the id wherever the finder's note named the held-out half."""
    english = i18n.catalog("en")
    said = {
        (path.name, i) for path in (STATIC / "js").glob("*.js") for i in said_ids(path.read_text())
    }
    assert len(said) > 400  # the scan reads the scripts' calls
    assert {(name, i) for name, i in said if i not in english} == set()
