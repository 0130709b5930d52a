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
from lmscope.engine.hooks import Ablation, parse_ablations
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS, find_step
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.explain.catalogue import probe_names, step_text, tokenizer_kind
from lmscope.explain.family_views import family_data
from lmscope.explain.step_data import StepContext, build
from lmscope.i18n import Message


class StepReport(BaseModel):
    number: int
    key: str
    title: str
    summary: str
    probes: list[str]
    data: SerializeAsAny[BaseModel]
    # what the model's family adds to the step (Gemma 3's √d scale, QK-norm, a router...):
    # explain.family_views; [] for GPT-2 and the Llama recipe
    family_data: list[SerializeAsAny[BaseModel]] = []

    def __repr__(self) -> str:  # pydantic's would print every number of the step
        probes = f"{self.probes[0]}, ... ({len(self.probes)} probes)" if self.probes else "none"
        return f"StepReport({self.number} {self.key}: {self.title!r}; reads {probes})"

    __str__ = __repr__  # print() too: pydantic's str lists every field


class Report(BaseModel):
    model: str
    text: str | None
    ablated: list[str]
    n_tokens: int
    layer: int
    head: int
    position: int
    steps: list[StepReport]

    def __repr__(self) -> str:  # pydantic's ran to about 236,000 characters
        steps = ", ".join(f"{s.number} {s.key}" for s in self.steps)
        return (
            f"Report({self.model}, {self.n_tokens} tokens, layer {self.layer}, head {self.head}, "
            f"position {self.position}; steps {steps})"
        )

    __str__ = __repr__


def chosen_steps(steps: Iterable[int | str] | int | str | None):
    """The steps named by number or key (one, or several), in order (all of them for None);
    a name that is no step is refused, naming the steps."""
    if steps is None:
        return list(STEPS)
    if isinstance(steps, int | str):
        steps = [steps]
    if not isinstance(steps, Iterable):
        raise InvalidInputError("error.explain.steps-type", got=f"{steps!r:.40}")
    wanted = set()
    for step in steps:
        wanted.add(find_step(step).number)  # an UnknownStepError names the steps
    if not wanted:
        raise InvalidInputError("error.explain.steps-empty", last=str(len(STEPS)))
    return [s for s in STEPS if s.number in wanted]


@checked_keywords
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
    capabilities = getattr(model, "capabilities", None)
    if not getattr(capabilities, "trace", False):
        raise InvalidInputError("error.explain.needs-transformer", got=_what(model))
    checks.layer(model.config, layer)
    checks.head(model.config, head)
    chosen = chosen_steps(steps)
    if params is not None and not isinstance(params, SamplingParams):
        raise InvalidInputError("error.sampling.params-type", type=type(params).__name__)
    if isinstance(ablate, str | Ablation):
        ablate = [ablate]
    specs = list(ablate) if isinstance(ablate, Iterable) else ablate  # else refused just below
    ablations = parse_ablations(specs, model.config) if specs else []
    trace = model.trace(text_or_ids, ablate=ablations)
    position = checks.position(len(trace), position)
    context = StepContext(model, trace, layer, head, position, params or SamplingParams())
    family, kind = model.capabilities.family, tokenizer_kind(model)
    return Report(
        model=model.name,
        text=model.decode(trace.ids) if model.tokenizer is not None else None,
        ablated=[str(a) for a in specs] if specs else [],
        n_tokens=len(trace),
        layer=layer,
        head=head,
        position=position,
        steps=[
            StepReport(
                number=s.number,
                key=s.key,
                title=step_text(s.key, family, kind).title.say(),  # in the current language
                summary=step_text(s.key, family, kind).summary.say(),
                probes=probe_names(s.key, family, layer),
                data=build(s.key, context),
                family_data=family_data(s.key, context),
            )
            for s in chosen
        ],
    )


def _what(model) -> object:
    capabilities = getattr(model, "capabilities", None)
    if capabilities is not None:  # a char-RNN: name what it is
        return Message(
            "error.explain.part.char-model",
            name=str(getattr(model, "name", "?")),
            arch=capabilities.family.upper(),
        )
    return type(model).__name__


@checked_keywords(like=report)
def explain(model, text_or_ids, **options) -> dict:
    """``report()`` as a JSON-ready dict (what ``lmscope explain --json`` prints)."""
    return report(model, text_or_ids, **options).model_dump(mode="json")
