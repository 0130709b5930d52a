"""The views one can show, each a widget over a trace: what it is set up with and the static
snapshot of what it shows first."""

from __future__ import annotations

from typing import Any

import torch

from lmscope.engine import checks
from lmscope.engine.steps import find_step
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError
from lmscope.explain.attention import window
from lmscope.explain.catalogue import catalogue, step_values, tokenizer_kind
from lmscope.explain.facts import model_facts
from lmscope.explain.numbers import rounded
from lmscope.explain.pictures import LINES_WINDOW, AttentionLines
from lmscope.explain.summary import trace_summary
from lmscope.explain.tokens import Token
from lmscope.i18n import catalog, language, text
from lmscope.show import snapshot
from lmscope.show.answers import Answers

# the page's "look inside" views the explainer answers (compare needs a second model: show.compare)
INSIDE = ("lens", "ablation")


def model_of(trace: Trace, model=None):
    """The model a trace came from: the one given, else the one whose readout the trace keeps
    (``LanguageModel.trace`` hands it its own bound ``readout``)."""
    if model is not None:
        return model
    found = getattr(trace.readout, "__self__", None)
    if found is None:
        raise InvalidInputError("error.show.no-model")
    return found


def catalogs() -> tuple[str, dict[str, dict[str, str]]]:
    """The current language and the catalogs the views speak (English, the fallback, too)."""
    lang = language()
    return lang, {code: page_texts(code) for code in dict.fromkeys(("en", lang))}


def page_texts(code: str) -> dict[str, str]:
    """A language's texts the page's views say: its words (``page.``) and the steps'."""
    return {k: v for k, v in catalog(code).items() if k.split(".", 1)[0] in ("page", "step")}


def setup_of(view: str, model, trace: Trace, position, layer, head, step: str) -> dict:
    c = model.config
    lang, texts = catalogs()
    family = model.capabilities.family
    steps = catalogue(family, tokenizer_kind(model), values=step_values(model))
    return {
        "view": view,
        "lang": lang,
        "catalogs": texts,
        "model": model_facts(model).model_dump(mode="json"),
        "steps": [s.model_dump(mode="json") for s in steps.steps],
        "trace": trace_summary(model, trace).model_dump(mode="json"),
        "position": checks.position(len(trace), position),
        "layer": checks.layer(c, layer),
        "head": checks.head(c, head),
        "step": step,
        "n_layer": c.n_layer,
    }


def result_setup(view: str, model: dict, result: dict, n_layer: int = 0) -> dict:
    """What a view of one experiment's result is set up with (no trace): the page's words, the
    model's facts and the result as the web API sends it."""
    lang, texts = catalogs()
    return {
        "view": view,
        "lang": lang,
        "catalogs": texts,
        "model": model,
        "steps": [],
        "trace": None,
        "position": 0,
        "layer": 0,
        "head": 0,
        "step": view,
        "n_layer": n_layer,
        "result": result,
    }


def first(answers: Answers, path: str, body: dict) -> dict:
    reply = answers.answer(path, body)
    if not reply["ok"]:
        raise InvalidInputError(reply["code"], **reply["params"])
    return reply["data"]


def explainer(trace: Trace, model=None, *, position=None, layer=0, head=0, step="transformer"):
    model = model_of(trace, model)
    key = step if step in INSIDE else find_step(step).key
    s = setup_of("explainer", model, trace, position, layer, head, key)
    answers = Answers(model, trace)
    html = snapshot.frame(
        "explainer", s, snapshot.chips(s), snapshot.next_tokens(s, s["trace"]["next"])
    )
    return s, answers, html


def asked_view(view: str, step: str, path: str, draw, trace: Trace, model, position):
    """A view whose snapshot draws one request's answer at the position (``/api/flow``,
    ``/api/lens``, ``/api/final``) with ``draw(setup, data)``."""
    model = model_of(trace, model)
    s = setup_of(view, model, trace, position, 0, 0, step)
    answers = Answers(model, trace)
    data = first(answers, path, {"ids": trace.ids, "position": s["position"]})
    return s, answers, snapshot.frame(view, s, snapshot.chips(s), draw(s, data))


def flow(trace: Trace, model=None, *, position=None):
    return asked_view("flow", "transformer", "/api/flow", snapshot.flow, trace, model, position)


def attention(trace: Trace, layer=0, head=0, model=None, *, position=None):
    model = model_of(trace, model)
    s = setup_of("attention", model, trace, position, layer, head, "softmax")
    answers = Answers(model, trace)
    body = {"ids": trace.ids, "layer": s["layer"], "position": s["position"]}
    lines = first(answers, "/api/attention/lines", body)
    html = snapshot.frame("attention", s, snapshot.chips(s), snapshot.attention(s, lines))
    return s, answers, html


def step(trace: Trace, key, model=None, *, layer=0, head=0, position=None):
    model = model_of(trace, model)
    found = find_step(key).key
    s = setup_of("step", model, trace, position, layer, head, found)
    texts = next(d for d in s["steps"] if d["key"] == found)["texts"]
    title, body = (text(texts[f]["id"], **texts[f]["values"]) for f in ("title", "text"))
    html = snapshot.frame("step", s, snapshot.chips(s), snapshot.step(s, title, body))
    return s, Answers(model, trace), html


def next_tokens(setup: dict, data: dict) -> str:
    return snapshot.next_tokens(setup, data["logits"])


def ablation(trace: Trace, model=None, *, position=None):
    return asked_view("ablation", "ablation", "/api/final", next_tokens, trace, model, position)


def sampling(trace: Trace, model=None, *, position=None):
    return asked_view("sampling", "sampling", "/api/final", next_tokens, trace, model, position)


def lens(trace: Trace, model=None, *, position=None):
    return asked_view("lens", "lens", "/api/lens", snapshot.lens, trace, model, position)


# -- a pattern from anywhere: tokens and a [head, query, key] tensor ----------------------------


class PatternAnswers:
    """The attention-lines answers for a pattern given as numbers (TransformerLens, transformers'
    ``output_attentions``): the same body ``explain.pictures.attention_lines`` gives."""

    def __init__(self, tokens: list[str], pattern: torch.Tensor):
        self.tokens, self.pattern = tokens, pattern

    def lines(self, position: int) -> AttentionLines:
        n = len(self.tokens)
        start, size = window(n, position, None, LINES_WINDOW, lead=0.75)
        w = slice(start, start + size)
        p = self.pattern
        outside = p[:, position, :start].sum(-1) if start else torch.zeros(p.shape[0])
        return AttentionLines(
            layer=0,
            position=position,
            start=start,
            size=size,
            n_head=p.shape[0],
            n_kv_head=p.shape[0],
            tokens=[Token(position=i, id=i, text=self.tokens[i]) for i in range(start, w.stop)],
            patterns=rounded(p[:, w, w], 4),
            outside=rounded(outside, 4),
        )

    def answer(self, path: str, body: dict) -> dict:
        if path != "/api/attention/lines":
            err = InvalidInputError("error.show.no-such-request", path=repr(path))
            return {
                "ok": False,
                "code": err.code,
                "params": {"path": repr(path)},
                "error": str(err),
            }
        position = checks.position(len(self.tokens), body.get("position"))
        return {"ok": True, "data": self.lines(position).model_dump(mode="json")}


def pattern_setup(tokens: list[str], pattern: Any, head: int, position) -> tuple[dict, Any, str]:
    p = torch.as_tensor(pattern, dtype=torch.float32)
    if p.dim() != 3 or p.shape[1] != p.shape[2] or p.shape[1] != len(tokens):
        raise InvalidInputError("error.show.pattern-shape", shape=str(list(p.shape)), n=len(tokens))
    n_head, n = p.shape[0], len(tokens)
    lang, texts = catalogs()
    head = int(head)
    if not 0 <= head < n_head:
        raise InvalidInputError("error.show.pattern-head", head=head, n=n_head, last=n_head - 1)
    position = checks.position(n, position)
    answers = PatternAnswers(list(tokens), p)
    s = {
        "view": "attention",
        "lang": lang,
        "catalogs": texts,
        "model": {
            "name": "",
            "n_layer": 1,
            "n_head": n_head,
            "n_kv_head": n_head,
            "d_head": 1,
            "d_model": 0,
            "d_mlp": 0,
            "vocab_size": 0,
            "n_ctx": n,
            "n_params": 0,
            "family": "gpt2",
        },
        "steps": [],
        "trace": {
            "tokens": [{"position": i, "id": i, "text": t} for i, t in enumerate(tokens)],
            "chars": [],
            "vocab": {},
            "next": None,
        },
        "position": position,
        "layer": 0,
        "head": head,
        "step": "softmax",
        "n_layer": 1,
    }
    lines = answers.lines(position).model_dump(mode="json")
    html = snapshot.frame("attention", s, snapshot.chips(s), snapshot.attention(s, lines))
    return s, answers, html
