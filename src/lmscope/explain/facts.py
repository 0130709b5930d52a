"""What the served model is: its sizes, its tokenizer and the choices its architecture made."""

from __future__ import annotations

from pydantic import BaseModel


class ModelFacts(BaseModel):
    name: str
    source: str
    n_layer: int
    n_head: int
    d_model: int
    d_head: int
    d_mlp: int
    vocab_size: int
    n_ctx: int
    n_params: int
    tokenizer: str | None
    activation: str
    dropout: float
    layer_norm_eps: float
    tied_unembedding: bool = True


def model_facts(model) -> ModelFacts:
    info, c = model.info(), model.config
    return ModelFacts(
        name=info.name,
        source=info.source or "",
        n_layer=c.n_layer,
        n_head=c.n_head,
        d_model=c.n_embd,
        d_head=c.d_head,
        d_mlp=c.d_mlp,
        vocab_size=c.vocab_size,
        n_ctx=c.n_ctx,
        n_params=info.n_params,
        tokenizer=info.tokenizer,
        activation=c.activation,
        dropout=c.dropout,
        layer_norm_eps=model.net.ln_f.eps,
    )
