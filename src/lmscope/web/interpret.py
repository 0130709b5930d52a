"""The research views: logit lens, every head's pattern, ablation and side-by-side models.

Each answer comes from the library's own function on the served model (``logit_lens``,
``ablation_effect``, ``compare``), so the page shows exactly what the Python API returns.
"""

from __future__ import annotations

import math

from lmscope.engine.lens import logit_lens
from lmscope.engine.trace import Trace
from lmscope.explain.attention import pattern_bytes
from lmscope.explain.probes import read
from lmscope.explain.tokens import Token, token_text, tokens
from lmscope.interpret.ablation import ablation_effect, parse_ablations
from lmscope.interpret.compare import Comparison, compare
from lmscope.web.schemas import interpret as s

LENS_LEAD = 0.75  # the lens is read left to right, towards the prediction


def lens_view(model, trace: Trace, start: int, size: int, k: int) -> s.LensResponse:
    positions = list(range(start, start + size))
    body = logit_lens(trace, k=k, positions=positions).to_dict(lambda i: token_text(model, i))
    toks = tokens(trace)
    return s.LensResponse(
        stages=body["stages"],
        n_tokens=len(trace),
        start=start,
        positions=positions,
        tokens=[toks[p] for p in positions],
        next=[toks[p + 1] if p + 1 < len(toks) else None for p in positions],
        final=[
            Token(position=p, id=f["id"], text=f["token"])
            for p, f in zip(positions, body["final"], strict=True)
        ],
        cells=body["cells"],
    )


def heads_view(layers: list[Trace], position: int, size: int) -> s.HeadsResponse:
    """Every head's attention pattern over the ``size`` positions up to ``position``."""
    start = max(0, position + 1 - size)
    w = slice(start, position + 1)
    return s.HeadsResponse(
        position=position,
        start=start,
        size=position + 1 - start,
        layers=[
            pattern_bytes(read(trace, f"blocks.{i}.attn.hook_pattern")[:, w, w])
            for i, trace in enumerate(layers)
        ],
    )


def finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def ablation_view(model, ids, specs: list[str], mode: str, position: int, k: int):
    effect = ablation_effect(model, list(ids), specs, mode=mode, position=position, k=k)
    body = effect.to_dict()
    return s.AblateResponse(**{**body, "kl": finite(body["kl"])})


def compare_view(model_a, model_b, text: str) -> s.CompareResponse:
    return comparison_view(compare(model_a, model_b, text))


def comparison_view(c: Comparison) -> s.CompareResponse:
    """A comparison as /api/compare sends it (and the notebook's compare view): no NaN."""
    body = c.to_dict()
    for key in ("loss_a", "loss_b", "diff"):
        body[key] = [finite(x) for x in body[key]]
    body["mean_a"], body["mean_b"] = finite(body["mean_a"]), finite(body["mean_b"])
    return s.CompareResponse(**body)


def canonical(specs: list[str], config) -> list[str]:
    """Parsed, de-duplicated and sorted specs: the same ablation always has the same key."""
    parsed = parse_ablations(specs, config)
    order = {"head": 0, "attn": 1, "mlp": 2}
    parsed.sort(key=lambda a: (a.layer, order[a.kind], -1 if a.head is None else a.head))
    return [str(a) for a in parsed]
