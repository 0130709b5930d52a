"""The page's example prompts, checked against the served model: a small model trained on
its own text may lack their characters or have a context shorter than them. Each example says
whether it works, cut to fit where that keeps whole words, and if not, why (the page disables
it and says so in its tooltip)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from lmscope.errors import LmscopeError

EXAMPLES = (
    "Data visualization empowers users to",
    "To be, or not to be, that is the question:",
    "数据可视化让用户能够",
    "The capital of France is",
    "ROMEO:\nBut soft, what light through yonder window breaks?",
)


class Example(BaseModel):
    full: str = Field(..., description="the example as written")
    text: str = Field(..., description="what the page puts in the box: the example, cut to fit")
    usable: bool
    cut: bool = Field(False, description="text is the example's first words, not all of it")
    problem: Literal["unknown_chars", "too_long", "no_tokenizer"] | None = None
    unknown: list[str] = Field(default_factory=list, description="characters the model lacks")


def room_left(context: int | None) -> int | None:
    """Tokens an example may take: a quarter of the context stays free, so the page can still
    generate after it."""
    return None if context is None else max(1, context - context // 4)


def _fits(model, text: str, limit: int | None) -> bool:
    """Whether /api/trace reads ``text`` in at most ``limit`` tokens."""
    try:
        ids = model.to_ids(text)
    except LmscopeError:  # longer than the context, or nothing left to read
        return False
    return limit is None or len(ids) <= limit


def _readable(model, text: str) -> bool:
    try:
        model.tokenizer.encode(text)
    except LmscopeError:
        return False
    return True


def _unknown(model, text: str) -> list[str]:
    return [c for c in dict.fromkeys(text) if not c.isspace() and not _readable(model, c)][:8]


def _prefixes(text: str):
    """Shorter versions of ``text``, longest first, each ending at a word: before a space, or,
    in text without spaces (Chinese), after any character."""
    if re.search(r"\s", text):
        ends = [m.start() for m in re.finditer(r"\s+", text)]
        return [text[:i].rstrip(",;:") for i in reversed(ends) if text[:i].strip()]
    return [text[:i] for i in range(len(text) - 1, 0, -1)]


def check_example(model, full: str) -> Example:
    if model.tokenizer is None:
        return Example(full=full, text=full, usable=False, problem="no_tokenizer")
    if not _readable(model, full):
        unknown = _unknown(model, full)
        return Example(full=full, text=full, usable=False, problem="unknown_chars", unknown=unknown)
    limit = room_left(model.capabilities.context)
    if _fits(model, full, limit):
        return Example(full=full, text=full, usable=True)
    for text in _prefixes(full):
        if _fits(model, text, limit):
            return Example(full=full, text=text, usable=True, cut=True)
    return Example(full=full, text=full, usable=False, problem="too_long")


def examples_for(model) -> list[Example]:
    return [check_example(model, text) for text in EXAMPLES]
