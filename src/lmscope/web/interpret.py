"""The research endpoints: logit lens, ablation and side-by-side models.

Each answer comes from the library's own function on the served model (``logit_lens``,
``ablation_effect``, ``compare``), so the page shows exactly what the Python API returns. The
second model of a comparison is one the server was started with (``lmscope serve --compare``):
a request can only pick one of those by name, never make the server load anything.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping

import torch
from fastapi import FastAPI

from lmscope.engine.lens import logit_lens
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError
from lmscope.interpret.ablation import ablation_effect, parse_ablations
from lmscope.interpret.compare import compare
from lmscope.web import interpret_schemas as s
from lmscope.web.views import token_text, tokens

# --- views ----------------------------------------------------------------------------------


def window(n_tokens: int, position: int, start: int | None, size: int) -> tuple[int, int]:
    """A window of at most ``size`` positions: from ``start``, or placed so ``position`` sits
    three quarters of the way in (the lens is read left to right, towards the prediction)."""
    size = min(size, n_tokens)
    if start is None:
        start = position - (3 * size) // 4
    return max(0, min(start, n_tokens - size)), size


def lens_view(model, trace: Trace, start: int, size: int, k: int) -> dict:
    positions = list(range(start, start + size))
    lens = logit_lens(trace, k=k, positions=positions)
    body = lens.to_dict(lambda i: token_text(model, i))
    toks = tokens(model, trace)
    return {
        "stages": body["stages"],
        "n_tokens": len(trace),
        "start": start,
        "positions": positions,
        "tokens": [toks[p] for p in positions],
        "next": [toks[p + 1] if p + 1 < len(toks) else None for p in positions],
        "final": [
            {"position": p, "id": f["id"], "text": f["token"]}
            for p, f in zip(positions, body["final"], strict=True)
        ],
        "cells": body["cells"],
    }


def heads_view(layers: list[Trace], position: int, size: int) -> dict:
    """Every head's attention pattern over the ``size`` positions up to ``position``."""
    start = max(0, position + 1 - size)
    w = slice(start, position + 1)
    out = []
    for i, trace in enumerate(layers):
        pattern = trace[f"blocks.{i}.attn.hook_pattern"][:, w, w]
        thumbs = (pattern.clamp(0, 1) * 255).round().to(torch.uint8).numpy()
        out.append([base64.b64encode(t.tobytes()).decode("ascii") for t in thumbs])
    return {"position": position, "start": start, "size": position + 1 - start, "layers": out}


def finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def ablation_view(model, ids: list[int], specs: list[str], mode: str, position: int, k: int):
    effect = ablation_effect(model, ids, specs, mode=mode, position=position, k=k).to_dict()
    effect["kl"] = finite(effect["kl"])
    return effect


def compare_view(model_a, model_b, text: str) -> dict:
    body = compare(model_a, model_b, text).to_dict()
    for key in ("loss_a", "loss_b", "diff"):
        body[key] = [finite(x) for x in body[key]]
    body["mean_a"], body["mean_b"] = finite(body["mean_a"]), finite(body["mean_b"])
    return body


def canonical(specs: list[str], config) -> list[str]:
    """Parsed, de-duplicated and sorted specs: the same ablation always has the same key."""
    parsed = parse_ablations(specs, config)
    order = {"head": 0, "attn": 1, "mlp": 2}
    parsed.sort(key=lambda a: (a.layer, order[a.kind], -1 if a.head is None else a.head))
    return [str(a) for a in parsed]


def compare_names(models) -> dict[str, object]:
    """Name -> model for the allowlist; a repeated name gets " (2)", " (3)"..."""
    named: dict[str, object] = {}
    for m in models:
        name = getattr(m, "name", None) or "model"
        label, n = name, 1
        while label in named:
            n += 1
            label = f"{name} ({n})"
        named[label] = m
    return named


# --- routes ---------------------------------------------------------------------------------


def register(app: FastAPI, model, store, others: Mapping[str, object], errors: dict) -> None:
    c = model.config

    def checked(ids: list[int]) -> tuple[int, ...]:
        return tuple(model.check_ids(ids))

    def position_in(ids: tuple[int, ...], position: int | None) -> int:
        if position is None:
            return len(ids) - 1
        if position >= len(ids):
            raise InvalidInputError(
                f"position {position} does not exist; the sequence has positions 0..{len(ids) - 1}"
            )
        return position

    @app.post("/api/lens", response_model=s.LensResponse, responses=errors, tags=["interpret"])
    def lens(req: s.LensRequest):
        """Logit lens: the residual stream after the embedding and after each block, read out
        through the final LayerNorm and unembedding, for a window of at most 32 positions.
        The last row is the model's real output."""
        ids = checked(req.ids)
        position = position_in(ids, req.position)
        start, size = window(len(ids), position, req.start, req.size)

        def compute():  # the trace only when this answer is not cached already
            view = lens_view(model, store.base(ids)[0], start, size, req.k)
            return view, 96 * req.k * size * (c.n_layer + 1)

        body, _ = store.cached(store._key("lens", ids, start, size, req.k), compute)
        return body

    @app.post("/api/heads", response_model=s.HeadsResponse, responses=errors, tags=["interpret"])
    def heads(req: s.HeadsRequest):
        """Every head of every layer: its attention pattern over the positions up to
        ``position`` (at most 32), as bytes, for the ablation grid."""
        ids = checked(req.ids)
        position = position_in(ids, req.position)

        def compute():
            layers = [store.layer(ids, i) for i in range(c.n_layer)]
            return heads_view(layers, position, req.size), c.n_layer * c.n_head * req.size**2

        body, _ = store.cached(store._key("heads", ids, position, req.size), compute)
        return body

    @app.post("/api/ablate", response_model=s.AblateResponse, responses=errors, tags=["interpret"])
    def ablate(req: s.AblateRequest):
        """The next-token distribution at ``position`` with and without the ablations (heads,
        whole attention or MLP outputs set to zero or to their mean over the positions), and
        KL(before || after). Same numbers as ``lmscope.interpret.ablation_effect``."""
        ids = checked(req.ids)
        position = position_in(ids, req.position)
        specs = canonical(req.ablate, c)  # unknown heads or layers: 400 before any work
        body, _ = store.cached(
            store._key("ablate", ids, tuple(specs), req.mode, position, req.k),
            lambda: (ablation_view(model, list(ids), specs, req.mode, position, req.k), 8192),
        )
        return body

    @app.get("/api/compare/models", response_model=s.CompareModels, tags=["interpret"])
    def compare_models():
        """The models this server was started with for comparison (``--compare``)."""
        return {"model": model.name, "models": list(others)}

    @app.post(
        "/api/compare", response_model=s.CompareResponse, responses=errors, tags=["interpret"]
    )
    def compare_text(req: s.CompareRequest):
        """Per-token loss of the served model (A) and of ``model`` (B) on the text, and B - A;
        per character when their tokenizers split the text differently."""
        if not others:
            raise InvalidInputError(
                "this server has no model to compare with; start it with "
                "lmscope serve --compare MODEL"
            )
        other = others.get(req.model)
        if other is None:
            offered = ", ".join(repr(n) for n in others)
            raise InvalidInputError(
                f"model {req.model!r} is not offered by this server; choose one of {offered}"
            )
        # an empty text is refused by compare() itself, with a readable message
        text = req.text if req.text is not None else model.decode(checked(req.ids))
        body, _ = store.cached(
            (model.name, "compare", req.model, text),
            lambda: (compare_view(model, other, text), 200 * len(text) + 1024),
        )
        return body
