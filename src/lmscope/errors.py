"""Typed errors. Each carries one readable line; the CLI prints it without a traceback."""


class LmscopeError(Exception):
    """Base class for every error lmscope raises on purpose."""


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
        return str(self.args[0]) if self.args else ""
