"""The 20 steps are listed once (engine.steps); the explanation layer gives each its titles
and texts in English and Chinese, per architecture, and the page reads them from GET
/api/steps. Requests to see a layer, head or position are checked in one place."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from lmscope import i18n
from lmscope.engine import checks
from lmscope.engine.steps import STEPS, STEPS_BY_KEY
from lmscope.errors import InvalidInputError
from lmscope.explain import catalogue as cat


def test_every_step_has_titles_and_texts_in_both_languages():
    for doc in cat.catalogue("gpt2").steps:
        said = cat.step_text(doc.key, "gpt2")
        assert said.title["en"] and said.title["zh"] and said.summary["en"]
        assert len(said.text["en"]) > 100 and len(said.text["zh"]) > 50, doc.key
        assert doc.head <= doc.layer  # a step that shows a head shows its layer
    heads = [d.key for d in cat.catalogue("gpt2").steps if d.head]
    assert heads == ["self-attention", "qkv", "multi-head", "masked-attention", "attention-output"]


def test_an_architecture_can_say_a_step_differently(monkeypatch):
    monkeypatch.setitem(
        cat.VARIANTS, "llama", {"positional-encoding": cat.Variant(frozenset({"text"}))}
    )
    llama = {d.key: d for d in cat.catalogue("llama").steps}["positional-encoding"]
    gpt2 = {d.key: d for d in cat.catalogue("gpt2").steps}["positional-encoding"]
    assert llama.texts["text"].id == "step.positional-encoding.text.llama"
    said = cat.step_text("positional-encoding", "llama")
    assert said.text["zh"] == i18n.catalog("zh")["step.positional-encoding.text.llama"]
    assert llama.texts["title"] == gpt2.texts["title"]
    assert llama.texts["summary"] == gpt2.texts["summary"]
    assert (llama.layer, llama.head) == (False, False)
    assert llama.probes == list(STEPS_BY_KEY["positional-encoding"].probes_for("llama"))
    assert cat.catalogue("llama").family == "llama"


def test_the_page_reads_the_steps_from_the_api(tiny_model):
    from lmscope.web import create_app

    with TestClient(create_app(tiny_model)) as client:
        served = client.get("/api/steps").json()
        model = client.get("/api/model").json()
        chinese = client.get("/api/steps?lang=zh").json()
        assert client.get("/api/steps?lang=fr").status_code == 422
    facts = cat.step_values(tiny_model)
    assert served == cat.catalogue("gpt2", values=facts).model_dump(mode="json")
    assert chinese == cat.catalogue("gpt2", values=facts, lang="zh").model_dump(mode="json")
    mask = chinese["steps"][10]
    assert mask["texts"]["title"] == {"id": "step.masked-attention.title", "values": {}}
    assert mask["said"]["title"] == "带掩码的自注意力" and served["steps"][10]["said"] is None
    blocks = served["steps"][6]["texts"]["text"]
    assert blocks["values"]["n_layer"] == tiny_model.config.n_layer
    assert [s["key"] for s in served["steps"]] == [s.key for s in STEPS]
    # /api/model names the same titles and summaries
    assert [(s["key"], s["texts"]["title"]) for s in model["steps"]] == [
        (s["key"], s["texts"]["title"]) for s in served["steps"]
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: checks.layer(c, 2), "layer 2 does not exist; this model has layers 0..1"),
        (lambda c: checks.layer(c, -1), "layer -1 does not exist"),
        (lambda c: checks.head(c, 4), "head 4 does not exist; this model has heads 0..3"),
        (lambda c: checks.position(3, 3), "position 3 does not exist; the sequence has"),
        (lambda c: checks.position(3, -4), "position -4 does not exist"),
    ],
)
def test_one_readable_line_for_what_does_not_exist(tiny_model, call, message):
    with pytest.raises(InvalidInputError, match=message):
        call(tiny_model.config)


def test_positions_count_from_the_end_and_default_to_the_last():
    assert checks.position(5, None) == 4
    assert checks.position(5, -1) == 4 and checks.position(5, -5) == 0
    assert checks.position(5, 2) == 2


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_chinese_texts_call_a_block_a_layer_as_the_page_does(family):
    """The page and the CLI say 层 (第 0 层, 30 层); the step texts must not say "block"."""
    import re

    for doc in cat.catalogue(family).steps:
        said = cat.step_text(doc.key, family)
        for text in (said.title["zh"], said.text["zh"]):
            assert "block" not in text.lower(), (doc.key, text)
            assert not re.search(r"层 [\u4e00-\u9fff]", text), (doc.key, text)  # no stray space


def test_every_step_of_every_variant_is_said_whole_in_every_language():
    """Each text, for every architecture and tokenizer variant, renders in English, Chinese
    and the pseudo-language with every placeholder filled; the Chinese is not the English,
    and the pseudo text is all catalog text (bracketed, no plain Latin word but the values)."""
    from types import SimpleNamespace

    from lmscope.engine.transformer import ModelInfo
    from lmscope.i18n.pseudo import CLOSE, OPEN

    info = ModelInfo("SmolLM2-135M", "", 30, 9, 576, 64, 1536, 49152, 8192, 134_515_008, "bpe")
    info.n_kv_head = 3
    values = cat.step_values(SimpleNamespace(info=lambda: info))
    assert values["kv_group"] == 3 and values["vocab"] == 49152 and values["scale"] == "0.125"
    shown = {str(v) for v in values.values()} | {"49,152", "8,192"}
    said = 0
    for family in (None, *cat.VARIANTS):
        for kind in (None, *cat.TOKENIZER_VARIANTS):
            for s in STEPS:
                for field, texts in cat.step_text(s.key, family, kind).fields().items():
                    en, zh, fake = (texts.say(lang, **values) for lang in ("en", "zh", "pseudo"))
                    where = (family, kind, s.key, field)
                    assert "{" not in en + zh + fake and "}" not in en + zh + fake, where
                    assert zh != en and re.search(r"[\u4e00-\u9fff]", zh), where
                    assert fake.startswith(OPEN) and fake.endswith(CLOSE), where
                    for value in sorted(shown, key=len, reverse=True):
                        fake = fake.replace(value, "")
                    assert not re.search(r"[a-z]{2,}", fake), (where, fake)
                    said += 1
    # every family (Gemma 3, Qwen3... tell some steps and fall back to Llama) and the default
    assert said == (1 + len(cat.VARIANTS)) * (1 + len(cat.TOKENIZER_VARIANTS)) * 20 * 3
