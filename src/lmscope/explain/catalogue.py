"""The 20 steps as the explanation tells them: a title, a one-line summary and the page's
text, in every language of the catalog, and which choices (layer, head) each step offers.

The list of steps itself (keys, numbers, the probes each reads) is ``lmscope.engine.steps``;
this catalogue says which catalog message (``lmscope.i18n``) holds each text, for the CLI
(``lmscope explain``) and the page (``GET /api/steps``) alike: ``step.<key>.<field>``, with
``<field>`` one of title, summary, text. Placeholders such as ``{n_layer}`` in a text are the
served model's facts (``step_values``).

Texts are written for GPT-2. An architecture that does a step differently (RoPE instead of
learned positions, RMSNorm instead of LayerNorm, ...) adds a variant under its
``capabilities.family`` in ``VARIANTS`` (``explain.variants``): the fields it tells its own
way, as ``step.<key>.<field>.<family>`` in the catalog, and the probes its step reads when
they differ (``engine.steps.FAMILY_PROBES``). A family built on another (Gemma 3 on Llama,
``engine.families``) falls back to that one's texts for what it does not retell, then to
GPT-2's. A tokenizer kind's variant (``chars``) goes over the architecture's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, Field

from lmscope import i18n
from lmscope.engine.families import lineage
from lmscope.engine.steps import STEPS, STEPS_BY_KEY, Step
from lmscope.explain.family_variants import FAMILY_VARIANTS
from lmscope.explain.variants import CHARS, FIELDS, LLAMA, Variant
from lmscope.i18n.message_format import placeholders

__all__ = [
    "FIELDS",
    "VARIANTS",
    "CatalogText",
    "StepCatalogue",
    "StepDoc",
    "StepText",
    "Texts",
    "Variant",
    "catalogue",
    "message_ids",
    "step_text",
    "step_values",
]

# the steps that show one layer, and those of them that show one attention head
LAYER_STEPS = frozenset(
    {"blocks", "mlp", "residual", "layernorm", "dropout"}
    | {"self-attention", "qkv", "multi-head", "masked-attention", "attention-output"}
)
HEAD_STEPS = frozenset(
    {"self-attention", "qkv", "multi-head", "masked-attention", "attention-output"}
)

# family -> step key -> what that architecture does differently
# (a family that builds on another, engine.families, tells only the steps it does differently)
VARIANTS: dict[str, dict[str, Variant]] = {"llama": LLAMA, **FAMILY_VARIANTS}
# tokenizer kind -> step key -> what that tokenizer does differently (over the family's)
TOKENIZER_VARIANTS: dict[str, dict[str, Variant]] = {"chars": CHARS}


class Texts(Mapping[str, str]):
    """One text of a step (its title, summary or explanation): its catalog id, and by
    language the catalog's text with its placeholders unfilled (``texts["zh"]``)."""

    def __init__(self, message_id: str):
        self.id = message_id

    def __getitem__(self, lang: str) -> str:
        if lang not in i18n.LANGUAGES:
            raise KeyError(lang)
        return i18n.catalog(lang).get(self.id) or i18n.catalog(i18n.SOURCE)[self.id]

    def __iter__(self) -> Iterator[str]:
        return iter(i18n.LANGUAGES)

    def __len__(self) -> int:
        return len(i18n.LANGUAGES)

    def say(self, lang: str | None = None, /, **values: object) -> str:
        """The text in ``lang`` (default: the current language), its placeholders filled."""
        return i18n.text(self.id, lang, **values)

    def names(self) -> set[str]:
        """The values the text fills in ({n_layer}, {model}...)."""
        return placeholders(i18n.catalog(i18n.SOURCE)[self.id])

    def __repr__(self) -> str:
        return f"Texts({self.id!r})"


@dataclass(frozen=True)
class StepText:
    """What a step says for one architecture and tokenizer, in any language."""

    key: str
    title: Texts
    summary: Texts  # one line: the CLI's subtitle
    text: Texts  # the page's explanation
    layer: bool = False  # the step shows one layer (the page offers a layer choice)
    head: bool = False  # ... and one attention head

    def fields(self) -> dict[str, Texts]:
        return {field: getattr(self, field) for field in FIELDS}


def text_id(key: str, field: str, variant: str | None = None) -> str:
    """The catalog id of one text of a step: the default's, or a variant's own."""
    return ".".join(("step", key, field, *([variant] if variant else [])))


def step_text(key: str, family: str | None = None, tokenizer: str | None = None) -> StepText:
    """The texts of step ``key`` for an architecture (its variant over the default) and a
    tokenizer kind (its variant over both)."""
    ids = {field: text_id(key, field) for field in FIELDS}
    layer, head = key in LAYER_STEPS, key in HEAD_STEPS
    # the family's lineage (engine.families), farthest first, so the nearest family's own
    # texts win; then the tokenizer kind's over all of them
    told = [(name, VARIANTS) for name in reversed(lineage(family))]
    for name, table in (*told, (tokenizer, TOKENIZER_VARIANTS)):
        variant = table.get(name or "", {}).get(key)
        if variant is None:
            continue
        ids |= {field: text_id(key, field, name) for field in variant.fields}
        layer = layer if variant.layer is None else variant.layer
        head = head if variant.head is None else variant.head
    title, summary, text = (Texts(ids[field]) for field in FIELDS)
    return StepText(key, title, summary, text, layer=layer, head=head)


def message_ids() -> set[str]:
    """Every catalog id the steps' texts use, in every variant (the ids are made at run time,
    so the catalog's completeness check asks this function)."""
    ids = {text_id(s.key, field) for s in STEPS for field in FIELDS}
    ids |= {text_id(s.key, "plain") for s in STEPS}  # the page's plain words, every family
    for tables in (VARIANTS, TOKENIZER_VARIANTS):
        for name, steps in tables.items():
            ids |= {text_id(key, f, name) for key, v in steps.items() for f in v.fields}
    return ids


Value = str | int | float  # a value a text fills in


def step_values(model) -> dict[str, Value]:
    """The served model's facts that the steps' texts name: ``{n_layer}``, ``{vocab}``..."""
    info = model.info()
    n_kv_head = info.n_kv_head or info.n_head
    group = info.n_head / n_kv_head
    return {
        "model": info.name,
        "n_layer": info.n_layer,
        "n_head": info.n_head,
        "n_kv_head": n_kv_head,
        "kv_group": int(group) if group.is_integer() else group,
        # sizes as the config writes them (3072); counts with separators (50,257)
        "d_model": str(info.d_model),
        "d_head": str(info.d_head),
        "d_mlp": str(info.d_mlp),
        "vocab": info.vocab_size,
        "n_ctx": info.n_ctx,
        "scale": f"{1 / math.sqrt(info.d_head):.4g}",  # 1/sqrt(d_head), 4 digits
    }


def step_probes(key: str, family: str | None = None) -> tuple[str, ...]:
    """The probes step ``key`` reads in an architecture ({L}: the layer)."""
    return STEPS_BY_KEY[key].probes_for(family)


def probe_names(key: str, family: str | None, layer: int) -> list[str]:
    return [p.format(L=layer) for p in step_probes(key, family)]


class CatalogText(BaseModel):
    """A text as the catalog holds it: its message id, and the values that fill it in."""

    id: str = Field(..., description="catalog message id, e.g. step.attention-output.title")
    values: dict[str, Value] = Field(
        default_factory=dict, description="the placeholders' values: the served model's facts"
    )


class StepDoc(BaseModel):
    """One step as the page and the CLI show it."""

    number: int
    key: str
    probes: list[str] = Field(..., description="probe names; {L} stands for the layer")
    layer: bool = Field(..., description="the step shows one layer")
    head: bool = Field(..., description="the step shows one attention head")
    texts: dict[str, CatalogText] = Field(
        ..., description="title, summary, text: each one's catalog id and values"
    )
    said: dict[str, str] | None = Field(
        None, description="title, summary, text rendered in the language asked for (?lang=)"
    )


class StepCatalogue(BaseModel):
    family: str = Field(..., description="the architecture the texts are written for")
    lang: str | None = Field(None, description="the language of each step's `said`")
    steps: list[StepDoc]


def tokenizer_kind(model) -> str | None:
    """The ``kind`` of a model's tokenizer ("chars", ...), which may have its own texts."""
    return getattr(getattr(model, "tokenizer", None), "kind", None)


def step_doc(
    step: Step,
    family: str | None = None,
    tokenizer: str | None = None,
    values: Mapping[str, Value] | None = None,
    lang: str | None = None,
) -> StepDoc:
    """A step's doc; with ``values`` (``step_values``) each text names the ones it fills in,
    and with ``lang`` too the texts are said in that language."""
    text = step_text(step.key, family, tokenizer)
    texts = {
        field: CatalogText(
            id=t.id, values={k: v for k, v in (values or {}).items() if k in t.names()}
        )
        for field, t in text.fields().items()
    }
    said = None
    if lang is not None:
        said = {field: t.say(lang, **(values or {})) for field, t in text.fields().items()}
    return StepDoc(
        number=step.number,
        key=step.key,
        probes=list(step_probes(step.key, family)),
        layer=text.layer,
        head=text.head,
        texts=texts,
        said=said,
    )


def catalogue(
    family: str,
    tokenizer: str | None = None,
    values: Mapping[str, Value] | None = None,
    lang: str | None = None,
) -> StepCatalogue:
    """Every step, in order, with the texts for ``family`` and the ``tokenizer`` kind; with
    the model's ``values``, each text's values, and with ``lang`` each text said in it."""
    if lang is not None:
        lang = i18n.parse_language(lang)
    steps = [step_doc(s, family, tokenizer, values, lang) for s in STEPS]
    return StepCatalogue(family=family, lang=lang, steps=steps)


def _check() -> None:
    keys = {s.key for s in STEPS}
    for family, steps in (VARIANTS | TOKENIZER_VARIANTS).items():
        unknown = set(steps) - keys
        if unknown:
            raise RuntimeError(f"variants of {family!r} name unknown steps: {sorted(unknown)}")
    if LAYER_STEPS - keys:
        raise RuntimeError(f"layer steps that are not steps: {sorted(LAYER_STEPS - keys)}")


_check()
