"""The 20 steps as the explanation tells them: titles, a one-line summary and the page's text,
in English and Simplified Chinese, and which choices (layer, head) each step offers.

The list of steps itself (keys, numbers, the probes each reads) is ``lmscope.engine.steps``;
this catalogue adds what people read, once (the texts in ``steps.json``, package data), for
the CLI (``lmscope explain``) and the page (``GET /api/steps``) alike. Placeholders such as
``{n_layer}`` in a text are filled by the page from the served model's facts.

Texts are written for GPT-2. An architecture that does a step differently (RoPE instead of
learned positions, RMSNorm instead of LayerNorm, ...) adds a variant under its
``capabilities.family`` in ``VARIANTS``: only the fields that differ, per language, and the
probes its step reads when they differ (``engine.steps.FAMILY_PROBES``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from pydantic import BaseModel, Field

from lmscope.engine.steps import STEPS, STEPS_BY_KEY, Step
from lmscope.explain.variants import CHARS, LLAMA, Lang, Variant

__all__ = ["TEXTS", "VARIANTS", "StepCatalogue", "StepDoc", "StepText", "Variant"]


@dataclass(frozen=True)
class StepText:
    title: Lang
    summary: str  # one line, English: the CLI's subtitle
    text: Lang  # the page's explanation
    layer: bool = False  # the step shows one layer (the page offers a layer choice)
    head: bool = False  # ... and one attention head


def _read_texts() -> dict[str, StepText]:
    # The texts are data (reviewed and translated side by side), so they live in steps.json,
    # shipped as package data; the order of its keys is the order of the steps (_check).
    raw = json.loads(resources.files(__package__).joinpath("steps.json").read_text("utf-8"))
    return {key: StepText(**fields) for key, fields in raw.items()}


TEXTS: dict[str, StepText] = _read_texts()

# family -> step key -> what that architecture does differently
VARIANTS: dict[str, dict[str, Variant]] = {"llama": LLAMA}
# tokenizer kind -> step key -> what that tokenizer does differently (over the family's)
TOKENIZER_VARIANTS: dict[str, dict[str, Variant]] = {"chars": CHARS}


class StepDoc(BaseModel):
    """One step as the page and the CLI show it."""

    number: int
    key: str
    probes: list[str] = Field(..., description="probe names; {L} stands for the layer")
    layer: bool = Field(..., description="the step shows one layer")
    head: bool = Field(..., description="the step shows one attention head")
    title: Lang = Field(..., description="per language: en, zh")
    summary: str
    text: Lang = Field(..., description="per language; {placeholders} are model facts")


class StepCatalogue(BaseModel):
    family: str = Field(..., description="the architecture the texts are written for")
    steps: list[StepDoc]


def tokenizer_kind(model) -> str | None:
    """The ``kind`` of a model's tokenizer ("chars", ...), which may have its own texts."""
    return getattr(getattr(model, "tokenizer", None), "kind", None)


def step_text(key: str, family: str | None = None, tokenizer: str | None = None) -> StepText:
    """The texts of step ``key`` for an architecture (its variant over the default) and a
    tokenizer kind (its variant over both)."""
    text = _with_variant(TEXTS[key], VARIANTS.get(family or "", {}).get(key))
    return _with_variant(text, TOKENIZER_VARIANTS.get(tokenizer or "", {}).get(key))


def _with_variant(base: StepText, variant: Variant | None) -> StepText:
    if variant is None:
        return base
    return StepText(
        title=base.title | variant.title,
        summary=variant.summary or base.summary,
        text=base.text | variant.text,
        layer=base.layer if variant.layer is None else variant.layer,
        head=base.head if variant.head is None else variant.head,
    )


def step_probes(key: str, family: str | None = None) -> tuple[str, ...]:
    """The probes step ``key`` reads in an architecture ({L}: the layer)."""
    return STEPS_BY_KEY[key].probes_for(family)


def probe_names(key: str, family: str | None, layer: int) -> list[str]:
    return [p.format(L=layer) for p in step_probes(key, family)]


def step_doc(step: Step, family: str | None = None, tokenizer: str | None = None) -> StepDoc:
    text = step_text(step.key, family, tokenizer)
    return StepDoc(
        number=step.number,
        key=step.key,
        probes=list(step_probes(step.key, family)),
        layer=text.layer,
        head=text.head,
        title=text.title,
        summary=text.summary,
        text=text.text,
    )


def catalogue(family: str, tokenizer: str | None = None) -> StepCatalogue:
    """Every step, in order, with the texts for ``family`` and the ``tokenizer`` kind."""
    return StepCatalogue(family=family, steps=[step_doc(s, family, tokenizer) for s in STEPS])


def _check() -> None:
    keys = [s.key for s in STEPS]
    if list(TEXTS) != keys:
        raise RuntimeError(f"explain.catalogue covers {list(TEXTS)}, the steps are {keys}")
    for family, steps in (VARIANTS | TOKENIZER_VARIANTS).items():
        unknown = set(steps) - set(keys)
        if unknown:
            raise RuntimeError(f"variants of {family!r} name unknown steps: {sorted(unknown)}")


_check()
