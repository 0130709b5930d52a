"""The advice that ends some of the engine's errors: a Message in the error's value
``advice``, in the Python API's words (the ids below); a front door without the Python
argument it names (the CLI, the JSON API) says its own in its place (``in_front_words``), in
whatever language the error is shown in.

No torch: the CLI reads this while it reports an error.
"""

from __future__ import annotations

from collections.abc import Container

from lmscope.errors import LmscopeError
from lmscope.i18n import Message

# a prompt longer than the context: ``truncate=True`` keeps its last ``limit`` tokens
ADVICE_TRUNCATE = "error.advice.truncate"  # {limit}
# a full trace over the token limit (LMSCOPE_MAX_TRACE_TOKENS)
ADVICE_TRACE_LIMIT = "error.advice.trace-limit"
# characters outside a character vocabulary: what tokenizers/chars.py ends its error with (the
# ground layer cannot import this module; a test keeps the two equal) ...
ADVICE_UNKNOWN_CHARS_TOKENIZER = "error.advice.unknown-chars-tokenizer"  # tokenizers/chars.py's
# ... and what a model's encode says instead: unknown= is the tokenizer's constructor argument,
# which a loaded model's user no longer calls
ADVICE_UNKNOWN_CHARS = "error.advice.unknown-chars"
# weights with NaN or infinity (models/state.py writes it, as above)
ADVICE_NONFINITE = "error.advice.allow-nonfinite"  # models/state.py's
# a model without tokenizer files asked to read text (text_model.py): Python can pass ids
ADVICE_NO_TOKENIZER = "error.advice.pass-ids"


def _cli(advice_id: str, options: Container[str]) -> str | None:
    """The command line's words for an advice; ``options`` are the command's own."""
    if advice_id == ADVICE_TRUNCATE:
        return "error.advice.cli.truncate" if "truncate" in options else "error.advice.shorten"
    if advice_id in (ADVICE_UNKNOWN_CHARS, ADVICE_UNKNOWN_CHARS_TOKENIZER):
        # sample drops them with --skip-unknown; elsewhere the text must change
        skip = "skip_unknown" in options
        return "error.advice.cli.skip-unknown" if skip else "error.advice.remove-chars"
    if advice_id == ADVICE_NONFINITE:  # serve, export...: the commands that look inside take it
        if "allow_nonfinite" in options:
            return "error.advice.cli.allow-nonfinite"
        return "error.advice.cli.allow-nonfinite-elsewhere"
    if advice_id == ADVICE_NO_TOKENIZER:  # the command line reads text only
        return "error.advice.cli.tokenizer-files"
    if advice_id == ADVICE_TRACE_LIMIT:
        return "error.advice.cli.trace-limit"
    return None


def _api(advice_id: str, options: Container[str]) -> str | None:
    """The JSON API's words for an advice (no truncate=, unknown= or layers= there)."""
    return {
        ADVICE_TRUNCATE: "error.advice.shorten",
        ADVICE_UNKNOWN_CHARS: "error.advice.remove-chars",
        ADVICE_UNKNOWN_CHARS_TOKENIZER: "error.advice.remove-chars",
        ADVICE_TRACE_LIMIT: "error.advice.api.trace-limit",
    }.get(advice_id)


_FRONTS = {"cli": _cli, "api": _api}


def with_advice(error: LmscopeError, advice_id: str) -> LmscopeError:
    """``error`` again, its advice said by ``advice_id`` (with the same values)."""
    said = error.values.get("advice")
    if error.code is None or not isinstance(said, Message):
        return error
    values = {**error.values, "advice": Message(advice_id, **said.values)}
    return type(error)(error.code, **values)


def in_front_words(error: LmscopeError, front: str, options: Container[str] = ()) -> LmscopeError:
    """``error`` with its advice in the words of ``front`` ("cli" or "api"), which lacks the
    Python arguments the advice names; ``options`` are what the command takes (the names of
    the CLI's parsed arguments). An error without such advice is returned as it is."""
    said = error.values.get("advice")
    if not isinstance(said, Message):
        return error
    instead = _FRONTS[front](said.id, options)
    return error if instead is None else with_advice(error, instead)
