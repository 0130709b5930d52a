"""Typed errors. Each carries one readable line; the CLI prints it without a traceback.

An error raised with a catalog id and its values (``InvalidInputError("error.no-such-file",
name=path)``) holds them, not a sentence: ``str(err)`` renders it in the language current
when it is shown (``lmscope.set_language``, ``$LMSCOPE_LANG``), and ``err.code`` and
``err.values`` say what it was, for the JSON API. An error raised with an English line (the
older way, until every message is in the catalog) shows that line.

``checked_keywords`` turns a mistyped keyword into one such line for every public function it
decorates."""

import difflib
import functools
import inspect

from lmscope.i18n import Message, has


class LmscopeError(Exception):
    """Base class for every error lmscope raises on purpose."""

    message: Message | None = None

    def __init__(self, message: object = "", /, **values: object):
        if isinstance(message, Message):
            self.message = message
        elif isinstance(message, str) and (values or has(message)):
            self.message = Message(message, **values)
        if self.message is None:
            super().__init__(message)
        else:  # args hold the id: pickling rebuilds the error, then restores its message
            super().__init__(self.message.id)

    @property
    def code(self) -> str | None:
        """The catalog id of the message, or None for an English line."""
        return self.message.id if self.message is not None else None

    @property
    def values(self) -> dict[str, object]:
        return dict(self.message.values) if self.message is not None else {}

    def render(self, lang: str | None = None) -> str:
        """The one line, in ``lang`` (default: the current language)."""
        if self.message is not None:
            return self.message.render(lang)
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        return self.render()


class InvalidInputError(LmscopeError, ValueError):
    """Text, ids or parameters a caller passed are not usable (empty, too long, out of range)."""


class ModelNotFoundError(LmscopeError, FileNotFoundError):
    """A model id or path that cannot be resolved to weights."""


class CheckpointError(LmscopeError):
    """A checkpoint or weight file that is missing, corrupt or incompatible."""


class TokenizerError(LmscopeError, ValueError):
    """Tokenizer files that cannot be read, or text a tokenizer cannot encode."""


class ProbeNotFoundError(InvalidInputError, KeyError):
    """A probe name a trace does not hold (also a KeyError: a trace reads like a mapping)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return self.render()


class ArgumentError(InvalidInputError, TypeError):
    """A call with a keyword the function does not take, or too many positional arguments
    (also a TypeError, as Python's own error for the same mistake is)."""


# Keywords a user brings from elsewhere (another lmscope function, TransformerLens,
# transformers) -> what lmscope calls them, where the spelling alone would not suggest it.
_SAME_THING = {
    "pos": ("position",),
    "positions": ("position",),
    "top_k": ("k", "top"),
    "k": ("top_k", "top"),
    "top": ("k", "top_k"),
    "n": ("k", "top_k", "max_new_tokens"),
    "max_tokens": ("max_new_tokens",),
    "max_length": ("max_new_tokens",),
    "prompt": ("text_or_ids", "text"),
    "text": ("text_or_ids",),
    "input": ("text_or_ids", "text"),
    "tokens": ("text_or_ids",),
    "model": ("name_or_path",),
    "name": ("name_or_path",),
    "path": ("name_or_path",),
    "hook": ("names",),
    "hooks": ("names",),
    "names_filter": ("names",),
    "heads": ("head", "ablate"),
    "mode": ("ablate_mode",),
}


def unknown_keyword(function: str, name: str, valid) -> ArgumentError:
    """The one line for a keyword ``function`` does not take: the keyword(s) meant, if one is
    close (by spelling, by singular/plural, or a name another library uses), then all of them."""
    valid = list(valid)
    close = [v for v in _SAME_THING.get(name, ()) if v in valid]
    close += [v for v in valid if v.rstrip("s") == name.rstrip("s") and v not in close]
    close += [v for v in difflib.get_close_matches(name, valid, n=2) if v not in close]
    if len(name) >= 3:  # the start of one: skip for skip_unknown
        close += [v for v in valid if v.startswith(name) and v not in close]
    listed = ", ".join(valid) if valid else Message("error.args.part.none")
    values = {"name": repr(name), "function": function, "options": listed}
    if not close:
        return ArgumentError("error.args.unknown-option", **values)
    meant: object = close[0]
    if len(close) > 1:
        meant = Message("error.config.part.or", first=close[0], second=close[1])
    return ArgumentError("error.args.unknown-option-close", close=meant, **values)


def checked_keywords(function=None, *, like=None):
    """Decorate a public function or method so that a mistyped keyword, or one positional
    argument too many, raises one ``ArgumentError`` line naming what it takes instead of
    Python's "unexpected keyword argument" traceback. The check is a set difference per call;
    ``inspect.signature`` and ``help()`` still show the function's own signature. A function
    that passes ``**options`` on to another names it: ``@checked_keywords(like=report)``."""
    if function is None:
        return lambda function: checked_keywords(function, like=like)
    parameters = list(inspect.signature(function).parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in parameters) and like is None:
        raise TypeError(f"{function.__qualname__} takes **kwargs: name where they go, like=")
    keywords = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if like is not None:
        passed_on = inspect.signature(like).parameters.values()
        keywords += [
            p.name
            for p in passed_on
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in keywords
        ]
    shown = [k for k in keywords if k != "self"]
    allowed = frozenset(keywords)
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    most = None if any(p.kind is p.VAR_POSITIONAL for p in parameters) else len(positional)
    own = "self" in positional[:1]
    label = (
        function.__name__
        if function.__name__ != "__init__"
        else function.__qualname__.split(".")[0]
    )

    @functools.wraps(function)
    def checked(*args, **kwargs):
        if kwargs.keys() - allowed:
            name = sorted(kwargs.keys() - allowed)[0]
            raise unknown_keyword(label, name, shown) from None
        if most is not None and len(args) > most:
            taken = positional[1:] if own else positional
            others = [k for k in shown if k not in taken]
            raise ArgumentError(
                "error.args.positional-keywords" if others else "error.args.positional",
                function=label,
                n=len(taken),
                names=", ".join(taken) or Message("error.args.part.none"),
                got=str(len(args) - own),
                others=", ".join(others),
            )
        return function(*args, **kwargs)

    return checked
