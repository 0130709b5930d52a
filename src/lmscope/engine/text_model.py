"""What every model wrapper shares: a name, a tokenizer, and checked text <-> ids.

Prompts are checked once, here, for every family: text must be text and not empty, ids must be
integers inside the vocabulary, and a model with a context window refuses (or, asked to,
truncates) prompts that do not fit.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch

from lmscope.engine import advice
from lmscope.engine.generation import generate
from lmscope.engine.protocol import Capabilities
from lmscope.errors import InvalidInputError, TokenizerError
from lmscope.i18n import Message


class TextModel:
    """Base of ``LanguageModel`` and ``RNNLanguageModel``: a network (put in eval mode) with its
    ``config`` (with ``vocab_size``), its tokenizer, a name (``default_name`` when none is
    given), where it came from and its metadata. Subclasses say what the network can show
    (``capabilities_of``) and give ``device``, ``info``, ``logits``, ``start`` and ``step``."""

    capabilities: Capabilities
    # the first generation step, which each subclass defines (declared for the type checker)
    start: Callable[[list[int]], tuple[torch.Tensor, Any]]
    default_name: ClassVar[str] = ""
    # Options text may be encoded with (``encode``, ``generate``): ``skip_unknown`` drops
    # characters a char vocabulary lacks (a byte-level BPE has none to drop).
    encode_options: ClassVar[frozenset[str]] = frozenset({"skip_unknown"})

    def __init__(
        self,
        net: torch.nn.Module,
        tokenizer=None,
        name: str | None = None,
        source: str | Message = "",
        meta: dict | None = None,
    ):
        self.net = net.eval()
        self.tokenizer = tokenizer
        self.name = self.default_name if name is None else name
        # where it came from: a path as it is, or a catalog message ("shipped model {name}")
        self.source, self.meta = source, meta or {}
        self.folder: Path | None = None  # the folder its files were read from, if one
        self.capabilities = self.capabilities_of(net)

    def source_message(self) -> dict | None:
        """Where the model came from as a catalog message ``{"id", "values"}`` (a page says it
        in its own language), or None when the source is a path shown as it is."""
        if not isinstance(self.source, Message):
            return None
        return {"id": self.source.id, "values": {k: str(v) for k, v in self.source.values.items()}}

    def capabilities_of(self, net: torch.nn.Module) -> Capabilities:
        raise NotImplementedError

    @property
    def config(self):
        return self.net.config

    @property
    def vocab_size(self) -> int:
        """Ids a prompt may hold: the tokenizer's tokens. A network's embedding may have more rows
        (padded to a round number for speed); those padding ids are never real tokens."""
        size = self.config.vocab_size
        tokens = getattr(self.tokenizer, "vocab_size", None)
        return min(size, tokens) if isinstance(tokens, int) and tokens > 0 else size

    def _need_tokenizer(self):
        if self.tokenizer is None:
            raise TokenizerError(
                "error.model.no-tokenizer",
                name=repr(self.name),
                advice=Message(advice.ADVICE_NO_TOKENIZER),
            )
        return self.tokenizer

    def _tokenize(self, text: str, *, skip_unknown: bool = False) -> list[int]:
        return self._need_tokenizer().encode(text)

    def encode(self, text: str, *, truncate: bool = False, room: int = 0, **options) -> list[int]:
        """Text to ids, checked against the vocabulary and the context. ``room`` reserves
        positions for tokens still to be generated; ``truncate`` keeps the last tokens that fit
        instead of failing."""
        if not isinstance(text, str):
            raise InvalidInputError("error.prompt.type", type=type(text).__name__)
        self._check_options(options)
        if not text:
            raise InvalidInputError("error.prompt.empty")
        try:
            ids = self._tokenize(text, **options)
        except TokenizerError as err:  # the tokenizer's advice names its constructor's unknown=
            said = err.values.get("advice")
            if not isinstance(said, Message) or said.id != advice.ADVICE_UNKNOWN_CHARS_TOKENIZER:
                raise
            raise advice.with_advice(err, advice.ADVICE_UNKNOWN_CHARS) from None
        if not ids:
            raise InvalidInputError("error.prompt.no-known-char")
        bos = self._bos_first()
        if bos is not None and ids[0] != bos:  # one, never two: a chat template writes its own
            ids = [bos, *ids]
        ids = self.check_ids(ids, truncate=truncate, room=room)
        if bos is not None and ids[0] != bos:  # truncation kept the end; the BOS still opens it
            ids = [bos, *ids[1:]]
        return ids

    def _check_options(self, options: dict) -> None:
        unknown = sorted(set(options) - self.encode_options)
        if unknown:
            known = ", ".join(["truncate", *sorted(self.encode_options)])
            raise InvalidInputError(
                "error.prompt.unknown-option", name=repr(unknown[0]), known=known
            )

    def _bos_first(self) -> int | None:
        """The token a text opens with where the tokenizer says the model was trained so
        (Llama 3's <|begin_of_text|>), as transformers' tokenizer and llama.cpp add it."""
        tokenizer = self.tokenizer
        if tokenizer is None or not getattr(tokenizer, "add_bos", False):
            return None
        return getattr(tokenizer, "bos_id", None)

    def check_ids(self, ids: Sequence[int], *, truncate: bool = False, room: int = 0) -> list[int]:
        if isinstance(ids, str | bytes | bytearray) or not isinstance(ids, Sequence):
            raise InvalidInputError("error.prompt.ids-type", type=type(ids).__name__)
        for i in ids:  # a plain int skips the slow abstract-class check (8x on 1,000 ids)
            if type(i) is not int and (isinstance(i, bool) or not isinstance(i, numbers.Integral)):
                raise InvalidInputError("error.prompt.id-type", got=f"{i!r:.40}")
        ids = [int(i) for i in ids]
        if not ids:
            raise InvalidInputError("error.prompt.no-ids")
        vocab = self.vocab_size  # a property: once, not per id
        bad = [i for i in ids if not 0 <= i < vocab]
        if bad:
            values = {"id": str(bad[0]), "last": str(self.vocab_size - 1)}
            if self.vocab_size <= bad[0] < self.config.vocab_size:
                rows = {"first": str(self.vocab_size), "end": str(self.config.vocab_size - 1)}
                raise InvalidInputError("error.prompt.id-padding", **values, **rows)
            raise InvalidInputError("error.prompt.id-range", **values)
        context = self.capabilities.context
        if context is None:
            return ids
        limit = context - room
        if len(ids) > limit:
            if not truncate:
                raise InvalidInputError(
                    "error.prompt.too-long-room" if room else "error.prompt.too-long",
                    n=len(ids),
                    room=str(room),
                    context=context,
                    advice=Message(advice.ADVICE_TRUNCATE, limit=limit),
                )
            ids = ids[-limit:]
        return ids

    def to_ids(self, text_or_ids, *, truncate: bool = False, **options) -> list[int]:
        self._check_options(options)
        if isinstance(text_or_ids, str):
            return self.encode(text_or_ids, truncate=truncate, **options)
        if isinstance(text_or_ids, torch.Tensor):
            if text_or_ids.is_floating_point() or text_or_ids.is_complex():
                raise InvalidInputError(
                    "error.prompt.ids-tensor-dtype", dtype=str(text_or_ids.dtype)
                )
            if text_or_ids.dim() > 1 and text_or_ids.shape[0] != 1:  # a batch: not one prompt
                raise InvalidInputError(
                    "error.prompt.ids-tensor-shape", shape=str(list(text_or_ids.shape))
                )
            text_or_ids = text_or_ids.flatten().tolist()
        if text_or_ids is None:
            raise InvalidInputError("error.prompt.missing")
        return self.check_ids(text_or_ids, truncate=truncate)

    def decode(self, ids: Sequence[int]) -> str:
        return self._need_tokenizer().decode(_id_list(ids))

    def pieces(self, ids: Sequence[int]):
        ids = _id_list(ids)
        return self.tokenizer.pieces(ids) if self.tokenizer is not None else None

    def next_token_logits(self, text_or_ids) -> torch.Tensor:
        return self.start(self.to_ids(text_or_ids))[0]

    def generate(self, prompt, max_new_tokens: int = 20, params=None, **options):
        """Stream generated tokens; see ``lmscope.engine.generation.generate``."""
        return generate(self, prompt, max_new_tokens, params, **options)


def _id_list(ids) -> list:
    """Ids to decode as a list (the tokenizer checks each); one clear line for what is no list."""
    if isinstance(ids, torch.Tensor):
        return ids.flatten().tolist()
    if isinstance(ids, str | bytes | bytearray) or not isinstance(ids, Iterable):
        raise InvalidInputError("error.prompt.ids-type", type=type(ids).__name__)
    return list(ids)
