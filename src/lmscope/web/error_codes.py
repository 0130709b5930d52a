"""Errors as codes the page can say in its own words, in English or Chinese.

The library raises one readable English line (``LmscopeError``); the API keeps that line in
``error`` and adds ``code`` (and the numbers in it as ``params``) so the page can translate it
and name only the controls it has. A message that matches no pattern gets a code from its
status (``invalid_input``, ``invalid_request``, ``busy``...), never a missing one.
"""

from __future__ import annotations

import re

# (code, pattern): the first match wins; named groups become params (numbers without commas).
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern))
    for code, pattern in (
        ("empty_prompt", r"^the prompt is empty"),
        # the request schema refuses an empty text before the model sees it (strict bodies)
        ("empty_prompt", r"^(?:text|prompt): String should have at least 1 character"),
        (
            "too_long",
            r"^the prompt is (?P<n>[\d,]+) tokens(?: plus (?P<room>\d+) to generate)?; "
            r"the model's context is (?P<context>[\d,]+)",
        ),
        ("context_full", r"already fills the model's context of (?P<context>[\d,]+) tokens"),
        ("trace_too_long", r"^a full trace of (?P<n>[\d,]+) tokens is refused: the limit is "),
        ("unknown_id", r"^token id (?P<id>-?\d+) is outside the vocabulary \(0\.\.(?P<last>\d+)\)"),
        ("no_known_chars", r"^no character of the prompt is in the model's vocabulary"),
        (
            "unknown_chars",
            r"^(?P<n>\d+) character\(s\) are not in the .* vocabulary: (?P<chars>.+?)"
            r"(?: and (?P<more>\d+) more)?; ",
        ),
        ("no_tokenizer", r"has no tokenizer"),
        ("out_of_range", r"^(?P<what>\w+) (?P<value>-?\d+) does not exist; .* 0\.\.(?P<last>\d+)$"),
        # an ablation typed in the page's box (engine/hooks.py parse_ablations); the quote
        # around the spec is repr's
        (
            "ablation_out_of_range",
            r"^(['\"])(?P<spec>.*)\1: (?P<what>layer|head) (?P<value>-?\d+) does not exist "
            r"\(0\.\.(?P<last>\d+)\)$",
        ),
        ("ablation_unreadable", r"^cannot read ablation (['\"])(?P<spec>.*)\1; use "),
        (
            "busy",
            r"^the server is busy: this request alone needs about (?P<need>\d+) s .*"
            r"try again in (?P<retry>\d+) s$",
        ),
        ("busy", r"^the server is busy.*; try again in (?P<retry>\d+) s$"),
        ("busy", r"^the server is busy"),
        ("body_too_large", r"^request body too large: the limit is (?P<kib>\d+) KiB"),
        ("bad_json", r"^the request body is not valid JSON"),
        ("not_found", r"^not found: "),
        ("method", r" is not allowed on "),
        ("internal", r"^internal error"),
    )
)
BY_STATUS = {413: "body_too_large", 422: "invalid_request", 503: "busy", 500: "internal"}


def error_code(message: str, status: int = 400) -> tuple[str, dict[str, str]]:
    """(code, params) of one error line."""
    for code, pattern in PATTERNS:
        found = pattern.search(message)
        if found:
            # numbers lose their thousands commas; text (the characters named) stays as it is
            params = {k: _plain(v) for k, v in found.groupdict().items() if v}
            return code, params
    return BY_STATUS.get(status, "invalid_input"), {}


def _plain(value: str) -> str:
    return value.replace(",", "") if re.fullmatch(r"-?[\d,]+", value) else value


def error_body(message: str, status: int = 400) -> dict:
    """The JSON of an error answer: the line itself, its code and the numbers in it."""
    code, params = error_code(message, status)
    return {"error": message, "code": code, "params": params}
