"""One catalog per language: the message syntax, the languages, errors that carry an id and
its values and are said in the language current when shown (Python, the CLI, the JSON API),
and the checks that keep the catalogs complete."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

import lmscope
from lmscope import i18n
from lmscope.errors import CheckpointError, InvalidInputError, LmscopeError, ModelNotFoundError
from lmscope.i18n import message_format as mf
from lmscope.i18n.pseudo import CLOSE, OPEN, pseudo_text

SRC = Path(lmscope.__file__).parent
CATALOGS = SRC / "i18n" / "catalog"
FILES = sorted(p.stem for p in CATALOGS.glob("*.json"))
# a catalog text may equal its English where it is only names, numbers and code
SAME_IN_EVERY_LANGUAGE = {
    "report.ablate.token",
    "report.compare.token",
    "report.explain.beta",
    "report.explain.blocks",
    "report.explain.gamma",
    "report.explain.logit",
    "report.explain.logits",
    "report.explain.query",
    "report.explain.residual-check",
    "report.explain.softmax",
    "report.explain.token",
    "report.explain.w1",
    "report.lens.logit-lens",
    # the page's names of model parts, code and settings, the same in Chinese
    "page.api",
    "page.at-t",
    "page.at-t1",
    "page.attn-out-short",
    "page.d-model",
    "page.interpret.abl-mlp",
    "page.interpret.cmp-token",
    "page.k-vec",
    "page.llama.ln-short",
    "page.logit",
    "page.logits",
    "page.min-p",
    "page.mlp-out-short",
    "page.modern.ln-short",
    "page.modern.sw-hist-gate",
    "page.modern.sw-hist-post",
    "page.modern.sw-shapes",
    "page.modern.sw-silu",
    "page.q-vec",
    "page.qkv-weights",
    "page.rank-n",
    "page.resid-mid",
    "page.stage-min-p",
    "page.stage-top-k",
    "page.stage-top-p",
    "page.token",
    "page.top-k",
    "page.top-p",
    "page.v-vec",
}


@pytest.fixture(autouse=True)
def english_by_default(monkeypatch):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)


def render(text: str, **values) -> str:
    return mf.render(text, values, lambda n: "one" if n == 1 else "other", str)


# -- the message syntax -------------------------------------------------------------------------


def test_placeholders_and_plurals():
    text = "the prompt is {n, plural, one {# token} other {# tokens}} in {name}"
    assert mf.placeholders(text) == {"n", "name"}
    assert render(text, n=1, name="a") == "the prompt is 1 token in a"
    assert render(text, n=7, name="b") == "the prompt is 7 tokens in b"
    exact = "{n, plural, =0 {nothing} one {one thing} other {# things}}"
    assert [render(exact, n=n) for n in (0, 1, 2)] == ["nothing", "one thing", "2 things"]


@pytest.mark.parametrize(
    ("text", "values", "said"),
    [
        ("{method} 在 N = {n}", {"method": "朴素注意力", "n": 8}, "朴素注意力在 N = 8"),
        ("{method} 在 N = {n}", {"method": "LSTM", "n": 8}, "LSTM 在 N = 8"),
        ("头 {value} 不存在", {"value": 3}, "头 3 不存在"),
        ("头 {value} 不存在", {"value": "三号"}, "头三号不存在"),
        ("收到 {got}", {"got": "'我 爱'"}, "收到 '我 爱'"),  # quoted: a Latin mark
        ("用 {x} 表示", {"x": "全 角"}, "用全 角表示"),  # the value's own space stays
        ("see {x} here", {"x": "汉字"}, "see 汉字 here"),  # English keeps its spaces
        ("{n, plural, other {共 #}} {what} 个", {"n": 2, "what": "字"}, "共 2 字个"),
    ],
)
def test_a_texts_space_beside_a_chinese_value_is_left_out(text, values, said):
    """The lab's Chinese verdict read "朴素注意力 在 N = 8,192 处停止": the catalog writes a
    space on each side of a placeholder for numbers and Latin names, and kept it beside a
    Chinese one."""
    assert render(text, **values) == said


def test_apostrophes_are_text_and_quoted_braces_are_literal():
    assert render("tensor '{name}' isn't '{'{x}'}'", name="w", x=1) == "tensor 'w' isn't {1}"
    assert mf.placeholders("'{'not_a_value'}'") == set()
    assert pseudo_text("'{'{x}'}'").count("{x}") == 1


def test_the_pseudo_language_keeps_names_where_english_reads_like_a_plural_form():
    """In "the other {model}" the word is text and the braces a name: only a plural is forms."""
    fake = pseudo_text("the other {model}, one {n, plural, one {# token} other {# tokens}}")
    assert "{model}" in fake and "{n, plural, one {# ţöķéñ} other {# ţöķéñš}}" in fake


def test_parse_and_serialize_round_trip():
    text = "a '{'b'}' {c} {n, plural, =0 {none} one {# d} other {# ds}}"
    assert mf.serialize(mf.parse(text)) == text


@pytest.mark.parametrize(
    "bad", ["{", "}", "{not a name}", "{n, select, a {x}}", "{n, plural, one {x}}", "{n, plural"]
)
def test_a_malformed_text_is_refused(bad):
    with pytest.raises(mf.MessageFormatError):
        mf.parse(bad)


def test_a_missing_value_is_an_error_not_a_blank():
    with pytest.raises(mf.MessageFormatError, match="no value for {name}"):
        render("no such file: {name}")


def test_numbers_get_thousands_separators_and_plural_forms_per_language():
    assert i18n.text("error.gguf.truncated-tensor", "en", file="f", tensor="t", needs=12345, size=2)
    line = i18n.text("error.gguf.truncated-tensor", "zh", file="f", tensor="t", needs=12345, size=2)
    assert "12,345" in line and "文件" in line


# -- the languages ------------------------------------------------------------------------------


def test_set_language_and_the_environment(monkeypatch):
    assert i18n.language() == "en"
    monkeypatch.setenv("LMSCOPE_LANG", "zh_CN.UTF-8")
    assert i18n.language() == "zh"
    assert lmscope.set_language("en") == "en"  # the call wins over the environment
    assert lmscope.set_language(None) == "zh"
    with pytest.raises(i18n.UnknownLanguageError, match="en, zh"):
        lmscope.set_language("klingon")
    # said in the language in use (zh, from the environment), like every other refusal
    with pytest.raises(i18n.UnknownLanguageError, match="'klingon' 不是 lmscope 支持的语言"):
        lmscope.set_language("klingon")


@pytest.mark.parametrize(
    ("locale", "said"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.UTF-8"}, "zh"),
        ({"LANG": "en_GB.UTF-8"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),  # no French catalog
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C"}, "en"),  # LC_ALL wins, as in gettext
        ({"LANG": "en_US.UTF-8", "LANGUAGE": "fr:zh_CN:en"}, "zh"),  # the first one lmscope has
        ({"LANG": "C", "LANGUAGE": "zh_CN"}, "en"),  # the C locale ignores $LANGUAGE
        ({"LANG": "zh_CN.UTF-8", "LANGUAGE": "pseudo"}, "en"),  # a test language, not a locale's
    ],
)
def test_without_lmscope_lang_the_system_locale_chooses(monkeypatch, locale, said):
    """A Chinese desktop (LANG=zh_CN.UTF-8) got English until $LMSCOPE_LANG was set."""
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in locale.items():
        monkeypatch.setenv(var, value)
    assert i18n.language() == said
    monkeypatch.setenv("LMSCOPE_LANG", "pseudo")  # $LMSCOPE_LANG comes first
    assert i18n.language() == "pseudo"
    assert lmscope.set_language("en") == "en"  # and the call before it


def test_using_sets_the_language_for_one_block_only():
    with i18n.using("zh"):
        assert i18n.language() == "zh"
        with i18n.using("pseudo"):
            assert i18n.language() == "pseudo"
        assert i18n.language() == "zh"
    assert i18n.language() == "en"


def test_every_language_has_its_catalog_and_only_those():
    assert set(FILES) | {"pseudo"} == set(i18n.LANGUAGES)
    assert "pseudo" not in FILES  # made from English, never written by hand


# -- errors carry an id and values --------------------------------------------------------------


def test_a_python_api_error_speaks_the_chosen_language(tmp_path):
    missing = str(tmp_path / "nowhere" / "model")
    with pytest.raises(ModelNotFoundError) as caught:
        lmscope.load(missing)
    err = caught.value
    assert err.code == "error.no-such-file" and err.values == {"name": missing}
    assert str(err) == f"no such file or folder: {missing}"
    lmscope.set_language("zh")
    assert str(err) == f"没有这个文件或文件夹：{missing}"  # the same error, shown again
    assert err.render("en") == f"no such file or folder: {missing}"
    lmscope.set_language("pseudo")
    assert str(err).startswith(OPEN) and str(err).endswith(CLOSE) and missing in str(err)


def test_an_error_survives_pickling_with_its_values():
    import pickle

    err = CheckpointError("error.gguf.truncated-tensor", file="f", tensor="t", needs=9, size=1)
    back = pickle.loads(pickle.dumps(err))
    assert (back.code, back.values, str(back)) == (err.code, err.values, str(err))


def test_an_english_line_is_still_shown_as_it_is():
    err = InvalidInputError("a line written before the catalog")
    assert str(err) == "a line written before the catalog" and err.code is None
    with pytest.raises(KeyError):
        LmscopeError("error.no-such-id", value=1)  # values promise a catalog id


@pytest.fixture
def truncated_gguf(tmp_path):
    from helpers_gguf import TINY, random_weights, write_model

    path = tmp_path / "truncated.gguf"
    write_model(path, random_weights(TINY), TINY)
    path.write_bytes(path.read_bytes()[:-300])
    return path


def test_a_truncated_gguf_is_one_chinese_line_at_the_command_line(truncated_gguf, capsys):
    """It was 'lmscope: 错误：truncated.gguf: the data of tensor ... runs past the end of the
    file (...): the file is truncated': a Chinese prefix on an English line."""
    from lmscope.cli import main

    assert main(["explain", "--lang", "zh", "--model", str(truncated_gguf), "hi"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lmscope: 错误：") and "\n" not in err
    words = set(re.findall(r"[A-Za-z]{3,}", err.replace(str(truncated_gguf), "")))
    assert words <= {"lmscope", "blk", "ffn", "down", "weight"}, words  # the tensor's name only
    assert "文件不完整" in err


def test_a_catalog_error_in_the_json_api_carries_its_code_and_values():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from lmscope.web.errors import add_error_handlers

    app = FastAPI()
    add_error_handlers(app)

    @app.get("/boom")
    def boom():
        raise ModelNotFoundError("error.no-such-file", name="x/y")

    body = TestClient(app).get("/boom").json()
    assert body == {
        "error": "no such file or folder: x/y",
        "code": "error.no-such-file",
        "params": {"name": "x/y"},
    }


# -- the catalogs are complete ------------------------------------------------------------------


def catalog_file(lang: str) -> dict[str, str]:
    return json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))


# Ids made at run time (one per step, per lab table...) cannot be found as literals: each
# module that makes them names them all in a function listed here ("module:function", no
# arguments, returning an iterable of ids).
RUNTIME_IDS: list[str] = [
    "lmscope.cli:help_ids",  # each parser's help, by the names of its command and options
    "lmscope.explain.catalogue:message_ids",
    "lmscope.lab.catalog_ids:runtime_ids",
]


def ids_in_code() -> set[str]:
    """Every catalog id the code names: string literals in src/'s Python (``error.…``,
    ``help.…``...), quoted ids in the page's scripts and templates, and RUNTIME_IDS."""
    english = catalog_file("en")
    prefixes = tuple({key.split(".")[0] + "." for key in english})
    found = set()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if value.startswith(prefixes) and re.fullmatch(r"[a-z0-9_.-]+", value):
                    found.add(value)
    quoted = re.compile(r"""["'`]([a-z0-9_-]+\.[a-z0-9_.-]+)["'`]""")
    for pattern in ("web/static/**/*.js", "web/templates/**/*.html"):
        for path in SRC.glob(pattern):
            for value in quoted.findall(path.read_text(encoding="utf-8")):
                if value.startswith(prefixes):
                    found.add(value)
    for source in RUNTIME_IDS:
        module, function = source.split(":")
        found.update(getattr(importlib.import_module(module), function)())
    return found


@pytest.mark.parametrize("lang", FILES)
def test_every_catalog_parses_and_has_every_id_with_the_same_placeholders(lang):
    english, texts = catalog_file("en"), catalog_file(lang)
    assert set(texts) == set(english), set(texts) ^ set(english)
    for key, text in texts.items():
        assert mf.placeholders(text) == mf.placeholders(english[key]), key


def test_every_id_the_code_uses_is_in_the_catalog_and_every_entry_is_used():
    used, english = ids_in_code(), set(catalog_file("en"))
    assert used - english == set(), "ids missing from the catalog"
    assert english - used == set(), "catalog entries nothing uses"


def test_chinese_is_a_translation_not_a_copy():
    english, chinese = catalog_file("en"), catalog_file("zh")
    copies = {k for k in english if chinese[k] == english[k]} - SAME_IN_EVERY_LANGUAGE
    assert not copies


def test_the_pseudo_language_brackets_every_text_and_keeps_its_placeholders():
    for key, text in catalog_file("en").items():
        fake = pseudo_text(text)
        assert fake.startswith(OPEN) and fake.endswith(CLOSE)
        assert mf.placeholders(fake) == mf.placeholders(text), key
        syntax = r"\{\w+, plural,|(?:one|other|=\d+) \{|\{[^{}]*?[,}]"  # names, plural forms
        assert not re.search(r"[a-z]{2,}", re.sub(syntax, "", fake)), (key, fake)


ONE_OF_MANY = re.compile(r"(?<![\d.,])1 (?:key/value |query |kv )?(?:heads|layers|sets|experts)\b")


def test_a_count_of_one_head_layer_or_expert_is_singular():
    """Gemma 3 270M has one key/value head: "4 query heads × d_head 256; 1 key/value heads"."""
    wrong = {}
    for key, text in catalog_file("en").items():
        values = {name: 1 for name in mf.placeholders(text)}
        said = mf.render(text, values, lambda n: "one" if n == 1 else "other", str)
        if ONE_OF_MANY.search(said) and key != "error.tokenizer.added-stripping":  # "sets": a verb
            wrong[key] = said
    assert not wrong, wrong
