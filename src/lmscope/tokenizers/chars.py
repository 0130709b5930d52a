"""A character-level vocabulary, the usual choice for small char-RNN experiments.

Ids are positions in the sorted list of distinct characters of the training text. The
vocabulary is stored as JSON in `chars.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path

from lmscope.errors import InvalidInputError, TokenizerError
from lmscope.i18n import Message
from lmscope.tokenizers.base import (
    TokenExplanation,
    Tokenizer,
    check_ids,
    check_text,
)
from lmscope.tokenizers.json_files import file_in, read_json

# what ends the error about unseen characters: the constructor's unknown= (engine.advice names
# what a loaded model's user and the front doors can do instead)
UNKNOWN_ADVICE = "error.advice.unknown-chars-tokenizer"

CHARS_FILE = "chars.json"
_FORMAT = "lmscope-chars"
_UNKNOWN_MODES = ("error", "skip")


class CharTokenizer(Tokenizer):
    """One token per character; `unknown` decides what encode does with unseen characters."""

    kind = "chars"

    def __init__(self, chars: Iterable[str], *, unknown: str = "error", name: str = "char"):
        if unknown not in _UNKNOWN_MODES:
            raise InvalidInputError("error.tokenizer.unknown-option", got=repr(unknown))
        if isinstance(chars, bytes) or not isinstance(chars, Iterable):  # a str lists its own
            raise TokenizerError("error.tokenizer.chars-type", type=type(chars).__name__)
        self.chars = tuple(chars)
        _check_chars(self.chars)
        self.unknown = unknown
        self.name = name
        self.vocab_size = len(self.chars)
        self.eot_id = None
        self._ids = {char: i for i, char in enumerate(self.chars)}

    @classmethod
    def from_text(cls, text: str, *, unknown: str = "error") -> CharTokenizer:
        """Build the vocabulary from the sorted distinct characters of `text`."""
        check_text(text)
        if not text:
            raise InvalidInputError("error.tokenizer.chars-from-empty")
        return cls(sorted(set(text)), unknown=unknown)

    @classmethod
    def load(cls, path: str | PathLike[str], *, unknown: str = "error") -> CharTokenizer:
        """Read a chars.json file (or the directory that holds one)."""
        path = file_in(path, CHARS_FILE)
        data = read_json(path, Message("error.tokenizer.part.chars-vocab"))
        if not isinstance(data, dict) or not isinstance(data.get("chars"), list):
            raise TokenizerError("error.tokenizer.chars-file", file=str(path))
        return cls(data["chars"], unknown=unknown, name=data.get("name", "char"))

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        # allow_special has nothing to act on: a character vocabulary has no special tokens.
        check_text(text)
        ids = self._ids
        try:
            return [ids[char] for char in text]
        except KeyError:
            unseen = [char for char in dict.fromkeys(text) if char not in ids]
            if self.unknown == "skip":
                return [ids[char] for char in text if char in ids]
            raise TokenizerError(
                "error.tokenizer.unknown-chars-more"
                if len(unseen) > 5
                else "error.tokenizer.unknown-chars",
                n=len(unseen),
                name=self.name,
                chars=", ".join(repr(char) for char in unseen[:5]),
                more=len(unseen) - 5,
                advice=Message(UNKNOWN_ADVICE),
            ) from None

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self.chars[i] for i in check_ids(ids, self.vocab_size))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return self.decode(ids).encode("utf-8")

    def token_bytes(self, token_id: int) -> bytes:
        (token_id,) = check_ids([token_id], self.vocab_size)
        return self.chars[token_id].encode("utf-8")

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        # Every character is its own pre-token and no merges are involved.
        ids = self.encode(text, allow_special=allow_special)
        return [TokenExplanation(i, self.piece(i), self.chars[i]) for i in ids]

    def save(self, directory: str | PathLike[str]) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        data = {"format": _FORMAT, "name": self.name, "chars": list(self.chars)}
        (directory / CHARS_FILE).write_text(json.dumps(data, ensure_ascii=False), "utf-8")


def _check_chars(chars: Sequence[str]) -> None:
    """A vocabulary must list distinct single characters that UTF-8 can encode."""
    if not chars:
        raise TokenizerError("error.tokenizer.chars-empty")
    for char in chars:
        if not isinstance(char, str) or len(char) != 1:
            raise TokenizerError("error.tokenizer.chars-entry", entry=repr(char))
        check_text(char)
    if len(set(chars)) != len(chars):
        raise TokenizerError("error.tokenizer.chars-twice")
