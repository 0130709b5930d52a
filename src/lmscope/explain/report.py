"""The 20 explainer steps for one prompt: ``report()`` traces the text and returns typed data
per step (``Report``), which ``lmscope explain`` renders and ``--json`` prints (``explain()``
gives the same as a JSON-ready dict). Every number is read from a probe of the traced forward
pass or from the model's weights, by the builders the web app serves too.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from pydantic import BaseModel, SerializeAsAny

from lmscope.engine import checks
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS
from lmscope.explain.catalogue import probe_names, step_text, tokenizer_kind
from lmscope.explain.step_data import StepContext, build


class StepReport(BaseModel):
    number: int
    key: str
    title: str
    summary: str
    probes: list[str]
    data: SerializeAsAny[BaseModel]


class Report(BaseModel):
    model: str
    text: str | None
    ablated: list[str]
    n_tokens: int
    layer: int
    head: int
    position: int
    steps: list[StepReport]


def chosen_steps(steps: Iterable[int | str] | None):
    """The steps named by number or key, in order (all of them for None)."""
    if steps is None:
        return list(STEPS)
    wanted = set(steps)
    return [s for s in STEPS if s.number in wanted or s.key in wanted]


@torch.no_grad()
def report(
    model,
    text_or_ids,
    *,
    layer: int = 0,
    head: int = 0,
    position: int | None = None,
    params: SamplingParams | None = None,
    steps=None,
    ablate=None,
) -> Report:
    """Trace ``text_or_ids`` and build each of the 20 steps (or ``steps``, numbers or keys) for
    ``layer``/``head`` at ``position`` (default: the last token, whose output predicts the
    next token)."""
    checks.layer(model.config, layer)
    checks.head(model.config, head)
    trace = model.trace(text_or_ids, ablate=ablate)
    position = checks.position(len(trace), position)
    context = StepContext(model, trace, layer, head, position, params or SamplingParams())
    family, kind = model.capabilities.family, tokenizer_kind(model)
    return Report(
        model=model.name,
        text=model.decode(trace.ids) if model.tokenizer is not None else None,
        ablated=[str(a) for a in ablate] if ablate else [],
        n_tokens=len(trace),
        layer=layer,
        head=head,
        position=position,
        steps=[
            StepReport(
                number=s.number,
                key=s.key,
                title=step_text(s.key, family, kind).title["en"],
                summary=step_text(s.key, family, kind).summary,
                probes=probe_names(s.key, family, layer),
                data=build(s.key, context),
            )
            for s in chosen_steps(steps)
        ],
    )


def explain(model, text_or_ids, **options) -> dict:
    """``report()`` as a JSON-ready dict (what ``lmscope explain --json`` prints)."""
    return report(model, text_or_ids, **options).model_dump(mode="json")
