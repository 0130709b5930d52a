"""What the served model is: the facts its wrapper reports (``ModelInfo``: sizes, tokenizer,
family), and the choices its architecture made (activation, dropout, the norm's epsilon)."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import get_type_hints

from pydantic import BaseModel, create_model

from lmscope.engine.chat import chat_template_of
from lmscope.engine.families import lineage
from lmscope.engine.transformer import ModelInfo


def _info_fields() -> dict:
    """ModelInfo's fields as pydantic fields: the list of facts is written once, there."""
    hints = get_type_hints(ModelInfo)
    return {
        f.name: (hints[f.name], ... if f.default is MISSING else f.default)
        for f in fields(ModelInfo)
    }


ModelFacts: type[BaseModel] = create_model(
    "ModelFacts",
    __doc__="The served model: ModelInfo, and the choices its architecture made.",
    **_info_fields(),
    activation=(str, ...),
    dropout=(float, ...),
    layer_norm_eps=(float, ...),
    tied_unembedding=(bool, True),
    chat=(bool, False),  # the model has a chat template (instruction-tuned)
    # the family and those it builds on, nearest first (engine.families): the page's fallback
    lineage=(list[str], []),
)


def tied_unembedding(model) -> bool:
    """Whether the logits come from the token embedding W_E (GPT-2 always ties them; a Llama
    config says ``tie_word_embeddings``) rather than a separate lm_head."""
    return bool(getattr(model.config, "tie_word_embeddings", True))


def model_facts(model) -> BaseModel:
    info, c = model.info().to_dict(), model.config
    return ModelFacts(
        **{**info, "source": info["source"] or ""},
        activation=c.activation,
        dropout=c.dropout,
        layer_norm_eps=model.net.ln_f.eps,
        tied_unembedding=tied_unembedding(model),
        chat=chat_template_of(model) is not None,
        lineage=list(lineage(model.capabilities.family)),
    )
