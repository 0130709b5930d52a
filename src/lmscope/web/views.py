"""Deprecated: the views moved to ``lmscope.explain``, whose builders return typed models
(``explain.logits.logits_view``, ``pool_view``, ...). These two keep returning the old
JSON-ready dicts for callers not yet moved; use ``lmscope.explain`` in new code."""

from __future__ import annotations

from lmscope.explain import logits as _logits
from lmscope.explain.logits import TEMPERATURES, TOP_N

__all__ = ["TEMPERATURES", "TOP_N", "logits_view", "pool_view"]


def logits_view(logits, position: int) -> dict:
    return _logits.logits_view(logits, position).model_dump()


def pool_view(model, logits, position: int, params) -> dict:
    return _logits.pool_view(model, logits, position, params).model_dump()
