"""lmscope.show's Python side, on a tiny random GPT-2: the widget's requests are answered with
the trace's own numbers (the web API's bodies, from the same explain functions), the static
snapshot carries them, and the widget's JavaScript is the page's own modules."""

from __future__ import annotations

import json
import math
import re

import pytest
import torch

pytest.importorskip("anywidget")

import lmscope  # noqa: E402
from lmscope.explain.logits import position_logits  # noqa: E402
from lmscope.explain.pictures import attention_lines, flow_view  # noqa: E402
from lmscope.show import bundle  # noqa: E402
from lmscope.show.answers import Answers  # noqa: E402

TEXT = "The cat sat on the mat and the dog"


@pytest.fixture(scope="module")
def trace(tiny_model):
    return tiny_model.trace(TEXT)


def ok(reply: dict) -> dict:
    assert reply["ok"], reply
    return reply["data"]


def test_requests_are_answered_with_the_traces_numbers(tiny_model, trace):
    answers = Answers(tiny_model, trace)
    ids = list(trace.ids)
    lines = ok(answers.answer("/api/attention/lines", {"ids": ids, "layer": 1, "position": 5}))
    pattern = trace["blocks.1.attn.hook_pattern"]
    for h in range(tiny_model.config.n_head):
        for q in range(len(ids)):
            for k in range(len(ids)):
                got = lines["patterns"][h][q][k]
                assert got == pytest.approx(float(pattern[h, q, k]), abs=1e-4)
    assert lines == attention_lines(tiny_model, trace, 1, 5).model_dump(mode="json")

    flow = ok(answers.answer("/api/flow", {"ids": ids, "position": 3}))
    logits = position_logits(tiny_model, trace, 3)
    assert flow == flow_view(tiny_model, trace, 3, logits).model_dump(mode="json")
    probs = torch.softmax(logits.detach().float(), -1)
    assert flow["top"][0]["id"] == int(probs.argmax())
    assert flow["top"][0]["prob"] == pytest.approx(float(probs.max()), rel=1e-3)

    step = ok(answers.answer("/api/step", {"key": "mlp", "ids": ids, "layer": 1, "position": 2}))
    assert (step["key"], step["number"]) == ("mlp", 13)
    assert json.dumps(step["data"])  # the step's typed data, as /api/step sends it

    final = ok(answers.answer("/api/final", {"ids": ids, "position": len(ids) - 1}))
    top = final["logits"]
    assert top["ids"][0] == int(trace.last_logits.argmax())
    assert top["lse"] == pytest.approx(float(torch.logsumexp(trace.last_logits.float(), -1)), 1e-4)

    lens = ok(answers.answer("/api/lens", {"ids": ids}))
    assert len(lens["stages"]) == tiny_model.config.n_layer + 1
    assert len(answers.traces) == 1  # every answer read the notebook's trace: none was made


def test_bad_requests_are_one_line_with_their_catalog_id(tiny_model, trace):
    answers = Answers(tiny_model, trace)
    ids = list(trace.ids)
    reply = answers.answer("/api/flow", {"ids": ids, "position": 99})
    assert not reply["ok"] and reply["code"].startswith("error.check.")
    assert "99" in reply["error"]
    reply = answers.answer("/api/nothing", {})
    assert (reply["ok"], reply["code"]) == (False, "error.show.no-such-request")
    reply = answers.answer("/api/flow", {"ids": "no", "position": 0})
    assert (reply["ok"], reply["code"]) == (False, "error.show.bad-request")
    assert "ids" in reply["error"]
    reply = answers.answer("/api/attention/lines", {"ids": ids, "layer": 9, "position": 0})
    assert not reply["ok"] and "9" in reply["error"]


def test_the_widget_answers_a_message_by_its_id(tiny_model, trace, monkeypatch):
    widget = lmscope.show.attention(trace, layer=1, head=2)
    sent = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append(content))
    body = {"ids": list(trace.ids), "layer": 0, "position": 4}
    widget._answer(widget, {"id": 7, "path": "/api/attention/lines", "body": body}, [])
    assert sent[0]["id"] == 7 and sent[0]["ok"]
    expected = attention_lines(tiny_model, trace, 0, 4).model_dump(mode="json")
    assert sent[0]["data"] == expected
    widget._answer(widget, "not a request", [])
    assert len(sent) == 1
    setup = widget.setup
    assert (setup["view"], setup["layer"], setup["head"]) == ("attention", 1, 2)
    assert [t["id"] for t in setup["trace"]["tokens"]] == list(trace.ids)


def test_the_snapshot_holds_the_numbers_the_widget_shows_first(tiny_model, trace):
    widget = lmscope.show.attention(trace, layer=1, head=2, position=6)
    data, _ = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    html = data["text/html"]
    assert html == widget.snapshot
    for piece in trace.pieces:
        assert f'data-id="{piece.id}"' in html
    pattern = trace["blocks.1.attn.hook_pattern"][2]
    cells = re.findall(r'data-q="(\d+)" data-k="(\d+)" data-w="([0-9.e-]+)"', html)
    assert len(cells) == len(trace) * (len(trace) + 1) // 2  # the causal half, every cell
    for q, k, w in cells:
        assert float(w) == pytest.approx(float(pattern[int(q), int(k)]), abs=1e-4)

    html = lmscope.show.sampling(trace)._repr_html_()
    probs = torch.softmax(trace.last_logits.float(), -1)
    best = probs.topk(3)
    for p in best.values.tolist():
        assert f"{100 * p:.2f}%" in html
    assert "<script" not in html  # self-contained: no code, no external address
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_every_view_is_made_with_its_first_numbers(tiny_model, trace):
    for widget in (
        lmscope.show.explainer(trace),
        lmscope.show.flow(trace),
        lmscope.show.step(trace, "mlp", layer=1),
        lmscope.show.lens(trace),
        lmscope.show.ablation(trace),
    ):
        assert widget.setup["trace"]["tokens"][0]["id"] == trace.ids[0]
        assert widget.snapshot.startswith('<div class="lmscope-snapshot"')
    flow = lmscope.show.flow(trace).snapshot
    norms = [float(v) for v in re.findall(r'data-norm="([0-9.e-]+)"', flow)]
    expected = flow_view(tiny_model, trace, len(trace) - 1, trace.last_logits).norms
    assert norms == pytest.approx(expected)


def test_a_pattern_from_anywhere_is_drawn_as_the_traces_own(tiny_model, trace):
    tokens = [p.text for p in trace.pieces]
    pattern = trace["blocks.1.attn.hook_pattern"]
    widget = lmscope.show.attention(tokens, head=1, pattern=pattern.numpy())
    got = widget.answers.answer("/api/attention/lines", {"position": 5})["data"]
    want = attention_lines(tiny_model, trace, 1, 5).model_dump(mode="json")
    assert got["patterns"] == want["patterns"]
    assert got["outside"] == want["outside"]
    assert [t["text"] for t in got["tokens"]] == [t["text"] for t in want["tokens"]]
    with pytest.raises(lmscope.InvalidInputError, match=r"\[2, 3\]"):
        lmscope.show.attention(tokens, pattern=torch.zeros(2, 3))
    with pytest.raises(lmscope.InvalidInputError, match="head 7"):
        lmscope.show.attention(tokens, head=7, pattern=pattern)


def test_language_follows_set_language(trace):
    lmscope.set_language("zh")
    try:
        widget = lmscope.show.sampling(trace)
    finally:
        lmscope.set_language("en")
    assert widget.setup["lang"] == "zh"
    assert set(widget.setup["catalogs"]) == {"en", "zh"}
    assert re.search(r"[\u4e00-\u9fff]", widget.setup["catalogs"]["zh"]["page.sampling"])
    assert re.search(r"[\u4e00-\u9fff]", widget.snapshot)


def test_the_widgets_javascript_is_the_pages_own_modules():
    modules = bundle.modules()
    for name in ("flow.js", "steps.js", "attention_lines.js", "lens.js", "sampling.js"):
        assert modules[name] == (bundle.PAGE_JS / name).read_text(encoding="utf-8")
    for name, source in modules.items():  # every import is one of the modules sent
        assert set(bundle.imports(source)) <= set(modules), name
    esm = bundle.esm()
    assert json.dumps(modules["flow.js"], ensure_ascii=False) in esm
    assert "export default" in esm
    # the page's sheets in the shadow root: their :root is the widget's host
    assert ":host {" in bundle.styles() and "\n:root" not in bundle.styles()
    assert bundle.document_css().startswith(".tip {") and "var(" not in bundle.document_css()


def test_a_trace_as_a_cells_value_shows_the_explainer(trace):
    from lmscope.show.notebook import show_trace

    data, _ = show_trace(trace)
    assert "application/vnd.jupyter.widget-view+json" in data
    assert 'data-view="explainer"' in data["text/html"]
    probs = torch.softmax(trace.last_logits.float(), -1)
    assert f"{100 * float(probs.max()):.2f}%" in data["text/html"]
    assert math.isfinite(float(probs.max()))
