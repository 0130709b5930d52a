"""Errors as catalog ids and values, so the page (or any client) can say them in its own
language.

Every error answer is JSON ``{"error": "<one line>", "code": "<catalog id>", "params": {...}}``:

- ``code`` is the catalog id of the message (``LmscopeError.code``: ``error.load.no-such-file``,
  ``error.prompt.too-long``...), the same id the CLI and Python render;
- ``params`` are its values, JSON-safe: numbers stay numbers, text and paths are strings, and a
  value that is a message itself (a part of the sentence) is ``{"code": ..., "params": ...}``;
- ``error`` is the line rendered, in English unless the request asks for another language:
  ``?lang=zh`` (or ``pseudo``) in the query, else its ``Accept-Language`` header
  (``zh-CN,zh;q=0.9``: the first language lmscope speaks, by preference). The page renders
  ``code`` and ``params`` from the catalog itself, so it does not depend on either.

Errors of HTTP itself have catalog ids of their own, their numbers as params:

- ``error.web.not-found`` (path): 404, no such route, result or file
- ``error.web.method-not-allowed`` (method, path): 405
- ``error.web.body-too-large`` (kib): 413
- ``error.web.bad-json``: 422, a body that is not JSON
- ``error.web.invalid-field`` / ``error.web.invalid-field.more`` (field, problem[, more]) and
  ``error.web.invalid-body`` / ``.more`` (problem[, more]): 422, a body or query that breaks the
  schema; ``problem`` is a message ``error.web.schema.<pydantic's error type>`` (its ``ctx``
  values as params: ``min_length``, ``ge``, ``expected``...) or a validator's own error
- ``error.web.busy.requests`` (n), ``error.web.busy.gate`` (seconds), ``error.web.busy.queued``
  / ``.queued-waited`` (wait, limit, retry[, waited]), ``error.web.busy.alone`` (need, limit,
  wait, retry): 503, with ``Retry-After``
- ``error.web.internal`` (name): 500, a bug; ``error.web.http`` (status): any other status
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from urllib.parse import parse_qs

from lmscope import i18n
from lmscope.errors import LmscopeError
from lmscope.i18n import Message

# pydantic's error types the request schemas can produce -> the catalog's words for them
SCHEMA_PROBLEMS = {
    "missing": "error.web.schema.missing",
    "extra_forbidden": "error.web.schema.extra-forbidden",
    "string_too_short": "error.web.schema.string-too-short",
    "string_too_long": "error.web.schema.string-too-long",
    "too_short": "error.web.schema.too-short",
    "too_long": "error.web.schema.too-long",
    "greater_than_equal": "error.web.schema.greater-than-equal",
    "greater_than": "error.web.schema.greater-than",
    "less_than_equal": "error.web.schema.less-than-equal",
    "less_than": "error.web.schema.less-than",
    "int_parsing": "error.web.schema.int",
    "int_type": "error.web.schema.int",
    "int_from_float": "error.web.schema.int-from-float",
    "float_parsing": "error.web.schema.number",
    "float_type": "error.web.schema.number",
    "finite_number": "error.web.schema.finite-number",
    "string_type": "error.web.schema.string",
    "list_type": "error.web.schema.list",
    "bool_type": "error.web.schema.bool",
    "bool_parsing": "error.web.schema.bool",
    "literal_error": "error.web.schema.expected",
    "enum": "error.web.schema.expected",
    "model_type": "error.web.schema.object",
    "model_attributes_type": "error.web.schema.object",
    "dict_type": "error.web.schema.object",
}
SCHEMA_OTHER = "error.web.schema.other"  # a type not above: pydantic's own English line


def request_language(scope: Mapping) -> str:
    """The language an error line is said in: ``?lang=`` in the query, else the first of the
    ``Accept-Language`` header's languages lmscope speaks, else English."""
    query = parse_qs(bytes(scope.get("query_string") or b"").decode("latin-1"))
    for asked in query.get("lang", []):
        try:
            return i18n.parse_language(asked)
        except i18n.UnknownLanguageError:
            pass
    headers = dict(scope.get("headers") or [])
    header = headers.get(b"accept-language", b"").decode("latin-1")
    return accepted_language(header)


def accepted_language(header: str) -> str:
    """The language of an ``Accept-Language`` header (``zh-CN,zh;q=0.9,en;q=0.8``): the one
    lmscope speaks with the highest weight, the earlier on a tie; English when none."""
    choices: list[tuple[float, int, str]] = []
    for order, item in enumerate(header.split(",")):
        name, _, rest = item.strip().partition(";")
        weight = 1.0
        if rest.strip().startswith("q="):
            try:
                weight = float(rest.strip()[2:])
            except ValueError:
                weight = 0.0
        try:
            lang = i18n.parse_language(name) if name and name != "*" else None
        except i18n.UnknownLanguageError:
            lang = None
        if lang is not None and weight > 0 and math.isfinite(weight):
            choices.append((-weight, order, lang))
    return min(choices)[2] if choices else i18n.SOURCE


def json_value(value: object) -> object:
    """A message's value as JSON: numbers as numbers (not NaN), a message as its code and
    params, anything else as its text."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Message):
        return {"code": value.id, "params": json_params(value.values)}
    if isinstance(value, LmscopeError) and value.code is not None:
        return {"code": value.code, "params": json_params(value.values)}
    return str(value)


def json_params(values: Mapping[str, object]) -> dict[str, object]:
    return {name: json_value(value) for name, value in values.items()}


def error_body(error: LmscopeError, lang: str = i18n.SOURCE) -> dict:
    """The JSON of an error answer: the line in ``lang``, its catalog id and its values. An
    error still raised as an English line (no id) keeps it, with no code."""
    return {
        "error": error.render(lang),
        "code": error.code,
        "params": json_params(error.values),
    }
