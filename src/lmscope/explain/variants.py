"""How an architecture tells a step differently from GPT-2, for ``explain.catalogue``.

``LLAMA`` covers the Llama family (Llama, SmolLM2, Qwen2, Mistral), every one of the 20 steps:
each text says what GPT-2 does and what this model does instead (or that it does the same).
``CHARS`` is a tokenizer's variant (a character vocabulary), applied over the architecture's.
The texts are in ``variants.json`` (package data). Placeholders such as ``{n_kv_head}`` are
filled by the page from the served model's facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

Lang = dict[str, str]  # language ("en", "zh") -> text


@dataclass(frozen=True)
class Variant:
    """What one architecture says differently about a step; None/empty keeps the default."""

    title: Lang = field(default_factory=dict)
    summary: str | None = None
    text: Lang = field(default_factory=dict)
    layer: bool | None = None  # the step shows one layer here (None: as the default says)
    head: bool | None = None  # ... and one attention head


def _read_variants(family: str) -> dict[str, Variant]:
    # Texts are data, so they live in variants.json (package data) beside the default texts
    # in steps.json; the probes an architecture reads are engine.steps.FAMILY_PROBES.
    raw = json.loads(resources.files(__package__).joinpath("variants.json").read_text("utf-8"))
    return {key: _variant(fields) for key, fields in raw[family].items()}


def _variant(fields: dict) -> Variant:
    return Variant(**fields)


LLAMA: dict[str, Variant] = _read_variants("llama")
# a character tokenizer (`lmscope train --tokenizer char`) tells step 5 its own way: one token
# per character, no merges; keyed by the tokenizer's ``kind``, not by an architecture
CHARS: dict[str, Variant] = _read_variants("chars")
