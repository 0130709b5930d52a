"""RNNLanguageModel: a char-RNN/LSTM/GRU plus its tokenizer, following the same model protocol
as a Transformer (``.tokenizer``, ``.name``, ``.info()``, ``.logits(ids) -> [T, V]``,
``.generate(...)``), plus ``.activations(text)`` for every gate.

An RNN has no context window: it reads any length, carrying its hidden state, so nothing is
ever truncated. ``lmscope.load`` returns one of these for folders whose lmscope.json says
"arch": "rnn" | "lstm" | "gru".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from lmscope.engine.protocol import Capabilities
from lmscope.engine.text_model import TextModel
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.models.rnn import CharRNN, LayerRecord
from lmscope.tokenizers import CharTokenizer

ARCH_NAMES = {"rnn": "char-RNN", "lstm": "char-LSTM", "gru": "char-GRU"}


@dataclass
class RNNModelInfo:
    name: str
    source: str
    arch: str  # rnn | lstm | gru
    n_layer: int
    hidden: int
    embed: int  # 0: one-hot input
    dropout: float
    vocab_size: int
    n_params: int
    tokenizer: str | None
    n_ctx: None = None  # no context window: the hidden state carries any length

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Activations:
    """A stepwise run over one text: logits and every layer's gates, cells and states."""

    ids: list[int]
    pieces: list[str]  # the character at each step
    logits: torch.Tensor  # [T, V]: scores for the character after each step
    layers: list[LayerRecord]  # tensors [T, hidden]
    state: object  # the state after the last step (feed it to continue the text)

    def __repr__(self) -> str:
        # the dataclass repr printed every tensor (31,000 characters for 260 characters of text)
        text = "".join(self.pieces)
        shown = repr(text if len(text) <= 24 else text[:23] + "…")
        kinds = ["h", *(["c"] if self.layers and self.layers[0].c is not None else [])]
        kinds += list(self.layers[0].gates) if self.layers else []
        return (
            f"Activations({len(self.ids)} steps {shown}, {len(self.layers)} layers of "
            f"{', '.join(kinds)} {list(self.layers[0].h.shape) if self.layers else []}, "
            f"logits {list(self.logits.shape)})"
        )


class RNNLanguageModel(TextModel):
    """``RNNLanguageModel(net: CharRNN, tokenizer=None, name="char-rnn", source="", meta=None)``"""

    default_name = "char-rnn"
    net: CharRNN

    # narrower than TextModel's nn.Module: __init__ passes it its own net, a CharRNN
    def capabilities_of(self, net: CharRNN) -> Capabilities:  # type: ignore[override]
        return Capabilities(
            family=net.config.cell,
            kind="recurrent",
            trace=False,
            attention=False,
            activations=True,
            context=None,
        )

    @property
    def arch(self) -> str:
        return self.config.cell

    @property
    def device(self) -> torch.device:
        return self.net.head.weight.device

    def info(self) -> RNNModelInfo:
        c = self.config
        return RNNModelInfo(
            name=self.name,
            source=str(self.source),
            arch=c.cell,
            n_layer=c.layers,
            **{key: getattr(c, key) for key in ("hidden", "embed", "dropout", "vocab_size")},
            n_params=self.net.num_params(),
            tokenizer=getattr(self.tokenizer, "name", None),
        )

    def __repr__(self) -> str:
        c = self.config
        return (
            f"<{ARCH_NAMES[c.cell]} {self.name!r}: {c.layers} x {c.hidden}, vocab {c.vocab_size}>"
        )

    # --- what only a Transformer has: say so in one line --------------------------------------

    def trace(self, *args, **kwargs):
        raise InvalidInputError(
            "error.rnn.no-trace", name=str(self.name), arch=ARCH_NAMES[self.arch]
        )

    def _tokenize(self, text: str, *, skip_unknown: bool = False) -> list[int]:
        """Characters outside the vocabulary raise a TokenizerError naming them, or are dropped
        with ``skip_unknown``. There is no context limit: nothing is ever truncated."""
        tokenizer = self._need_tokenizer()
        if skip_unknown and getattr(tokenizer, "unknown", None) == "error":
            tokenizer = CharTokenizer(tokenizer.chars, unknown="skip", name=tokenizer.name)
        return tokenizer.encode(text)

    # --- running ----------------------------------------------------------------------------

    def initial_state(self, batch: int = 1):
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InvalidInputError(
                "error.value.whole-at-least", name="batch", low=1, got=f"{batch!r:.40}"
            )
        return self.net.initial_state(batch, self.device)

    @torch.no_grad()
    def run(self, ids: Sequence[int], state=None) -> tuple[torch.Tensor, object]:
        """Feed ids after ``state`` (None: the zero state); return (logits [T, V], new state)."""
        idx = torch.tensor([self.check_ids(ids)], device=self.device)
        logits, _, state = self.net(idx, state)
        return logits[0].float(), state

    # the protocol's generation steps: the hidden state carries the whole past
    def start(self, ids: list[int]) -> tuple[torch.Tensor, object]:
        logits, state = self.run(ids)
        return logits[-1], state

    def step(self, state, token: int) -> tuple[torch.Tensor, object]:
        logits, state = self.run([token], state)
        return logits[-1], state

    def step_many(self, states: list, tokens: list[int]) -> list[tuple[torch.Tensor, object]]:
        """``step`` for several runs (one after the other: a char-RNN's step is tiny)."""
        return [self.step(s, t) for s, t in zip(states, tokens, strict=True)]

    @torch.no_grad()  # not inference_mode: callers compute freely with the results
    def logits(self, text_or_ids) -> torch.Tensor:
        """Full-vocabulary logits for every position, [T, V], from the zero state."""
        return self.run(self.to_ids(text_or_ids))[0]

    @torch.no_grad()
    @checked_keywords
    def activations(self, text_or_ids, state=None, *, skip_unknown: bool = False) -> Activations:
        """Run the stepwise cell over the text: every gate, cell and hidden state, per layer."""
        ids = self.to_ids(text_or_ids, skip_unknown=skip_unknown)
        logits, layers, state = self.net.trace(ids, state)
        pieces = [p.text for p in self.pieces(ids)] if self.tokenizer is not None else []
        return Activations(ids, pieces, logits.float(), layers, state)
