"""How an architecture tells a step differently from GPT-2, for ``explain.catalogue``.

``LLAMA`` covers the Llama family (Llama, SmolLM2, Qwen2, Mistral), every one of the 20 steps:
each text says what GPT-2 does and what this model does instead (or that it does the same).
``CHARS`` is a tokenizer's variant (a character vocabulary), applied over the architecture's.

A variant names the fields it tells its own way; their texts are in the catalog
(``lmscope.i18n``) as ``step.<key>.<field>.<variant>`` beside the default
``step.<key>.<field>``. Placeholders such as ``{n_kv_head}`` are the served model's facts.
"""

from __future__ import annotations

from dataclasses import dataclass

FIELDS = ("title", "summary", "text")  # what a step says: a title, one line, the explanation


@dataclass(frozen=True)
class Variant:
    """What one architecture says differently about a step; None keeps the default."""

    fields: frozenset[str]  # of FIELDS: the ones this variant has its own texts for
    layer: bool | None = None  # the step shows one layer here (None: as the default says)
    head: bool | None = None  # ... and one attention head


def retold(*fields: str, layer: bool | None = None, head: bool | None = None) -> Variant:
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"a step has no field {sorted(unknown)}: {FIELDS}")
    return Variant(frozenset(fields), layer, head)


ALL = FIELDS
TEXT = ("text",)
SUMMARY_TEXT = ("summary", "text")

LLAMA: dict[str, Variant] = {
    "transformer": retold(*ALL),
    "how-it-works": retold(*TEXT),
    "architecture": retold(*SUMMARY_TEXT),
    "token-embedding": retold(*TEXT),
    "embedding": retold(*SUMMARY_TEXT),
    # RoPE rotates each head's queries and keys in every layer: the step shows one of each
    "positional-encoding": retold(*ALL, layer=True, head=True),
    "blocks": retold(*TEXT),
    "self-attention": retold(*TEXT),
    "qkv": retold(*SUMMARY_TEXT),
    "multi-head": retold(*ALL),
    "masked-attention": retold(*TEXT),
    "attention-output": retold(*TEXT),
    "mlp": retold(*ALL),
    "logits": retold(*SUMMARY_TEXT),
    "probabilities": retold(*TEXT),
    "temperature": retold(*TEXT),
    "sampling": retold(*TEXT),
    "residual": retold(*SUMMARY_TEXT),
    "layernorm": retold(*ALL),
    "dropout": retold(*TEXT),
}
# a character tokenizer (`lmscope train --tokenizer char`) tells step 5 its own way: one token
# per character, no merges; keyed by the tokenizer's ``kind``, not by an architecture
CHARS: dict[str, Variant] = {"token-embedding": retold(*ALL)}
