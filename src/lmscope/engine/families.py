"""Which architecture each family builds on: the one place that decides where the explainer
looks when a family does not tell a step its own way.

A family's ``lineage`` is its own name, then the families it builds on, nearest first: Gemma 3
is the Llama recipe with changes, so a step Gemma 3 does not retell is told as Llama tells it,
and a step Llama does not retell as GPT-2 (the default) tells it. Texts (``explain.catalogue``),
probes (``engine.steps``), designs (``explain.modern``) and the page (``/api/model``'s
``lineage``) all walk this list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")

# family -> the families it builds on, nearest first (GPT-2, the default, ends every lineage)
BASES: dict[str, tuple[str, ...]] = {
    "llama": (),
    "qwen3": ("llama",),
    "phi3": ("llama",),
    "gemma3": ("llama",),
    "moe": ("llama",),
    "mixtral": ("moe", "llama"),  # Mistral's attention, experts for the MLP
    "qwen3_moe": ("moe", "qwen3", "llama"),  # Qwen3's attention (QK-norm), experts
}


def lineage(family: str | None) -> tuple[str, ...]:
    """``family`` and the families it builds on, nearest first ("" or None: none)."""
    if not family:
        return ()
    return (family, *BASES.get(family, ()))


def first(family: str | None, table: Mapping[str, T]) -> T | None:
    """The entry of ``table`` for the nearest family of ``family``'s lineage that has one."""
    for name in lineage(family):
        if name in table:
            return table[name]
    return None
