"""Tokens as people read them: each position's piece of text, the BPE merges that built a
token, and labelled token probabilities."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.numbers import rounded
from lmscope.tokenizers import TokenExplanation, readable_bytes


class Token(BaseModel):
    position: int
    id: int
    text: str = Field(..., description="readable piece; stray UTF-8 bytes shown as <0xE4>")


class TokenProb(BaseModel):
    id: int
    token: str
    prob: float | None = Field(..., description="null where it is not a number (NaN weights)")


class Merge(BaseModel):
    left: str
    right: str
    rank: int
    result: str


class TokenizerResponse(BaseModel):
    position: int
    token: Token
    pretoken: str | None
    merges: list[Merge]
    note: str | None = None


def token_text(model, token_id: int) -> str:
    """The readable piece of one id; ``#id`` for a model without a tokenizer."""
    tok = model.tokenizer
    return tok.piece(int(token_id)).text if tok is not None else f"#{int(token_id)}"


def vocab_texts(model, ids: Iterable[int]) -> dict[str, str]:
    return {str(i): token_text(model, i) for i in {int(i) for i in ids}}


def tokens(trace: Trace) -> list[Token]:
    pieces = trace.pieces
    return [
        Token(position=i, id=t, text=pieces[i].text if pieces else f"#{t}")
        for i, t in enumerate(trace.ids)
    ]


def token_probs(model, probs: torch.Tensor, ids: torch.Tensor, n: int) -> list[TokenProb]:
    """The first ``n`` (id, probability) pairs, labelled."""
    values = rounded(probs[:n])
    return [
        TokenProb(id=int(i), token=token_text(model, int(i)), prob=p)
        for i, p in zip(ids[:n].tolist(), values, strict=True)
    ]


def merges(explanation) -> list[Merge]:
    """The merges a tokenizer applied to build one token, lowest rank first."""
    return [
        Merge(
            left=readable_bytes(m.left),
            right=readable_bytes(m.right),
            rank=m.rank,
            result=readable_bytes(m.result),
        )
        for m in explanation.merges
    ]


def explain_ids(model, ids: list[int], exact: bool = True) -> list | None:
    """The tokenizer's explanation of the decoded ids; with ``exact``, only when the text
    re-tokenizes to exactly these ids (the usual case for a prompt). None without a
    tokenizer."""
    tok = model.tokenizer
    if tok is None:
        return None
    ids = list(ids)
    explained = tok.explain(tok.decode(ids))
    bos = tok.bos_id
    if [e.id for e in explained] != ids and bos is not None and ids[:1] == [bos]:
        # The text after the BOS the model put first: a SentencePiece "▁" prefix goes on text
        # that starts there, not on text that follows a literal "<s>".
        piece = tok.piece(bos)
        explained = [TokenExplanation(bos, piece, piece.text), *tok.explain(tok.decode(ids[1:]))]
    return explained if not exact or [e.id for e in explained] == ids else None


def _alone(tok, token_id: int):
    """A generated token need not be how the tokenizer would split the text: explain its own
    bytes instead, when they spell it on their own."""
    try:
        text = tok.token_bytes(token_id).decode("utf-8")
    except (UnicodeDecodeError, ValueError):
        text = ""
    # A SentencePiece tokenizer puts its own "▁" in front of a text, so " Data" is tried as
    # "Data" too.
    for spelled in dict.fromkeys([text, text[1:] if text.startswith(" ") else text]):
        alone = tok.explain(spelled) if spelled else []
        if len(alone) == 1 and alone[0].id == token_id:
            return alone[0], "explained on its own: the full text would split differently here"
    return None, "this token's bytes do not re-tokenize to it alone, so no merge list"


def tokenizer_view(model, trace: Trace, position: int, explained: list | None) -> TokenizerResponse:
    """How BPE built the token at ``position``; ``explained`` is ``explain_ids`` of the trace."""
    token = tokens(trace)[position]
    entry = explained[position] if explained is not None else None
    note = None
    if model.tokenizer is None:
        note = "this model has no tokenizer"
    elif entry is None:
        entry, note = _alone(model.tokenizer, token.id)
    return TokenizerResponse(
        position=position,
        token=token,
        pretoken=entry.pretoken if entry is not None else None,
        merges=merges(entry) if entry is not None else [],
        note=note,
    )
