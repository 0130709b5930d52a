"""The one model interface every front door uses, whatever the family.

A GPT-2, a Llama-family model and a char-RNN all answer the same questions: what are you
(``info``, ``capabilities``), text <-> ids (``encode``, ``decode``, ``pieces``), logits for a
text, and ``start``/``step`` for generation (next-token logits plus an opaque state). What a
model can additionally show is declared in ``capabilities``, never sniffed from its class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch


@dataclass(frozen=True)
class Capabilities:
    """What a model can show, declared by its wrapper."""

    family: str  # "gpt2", "llama", "rnn", "lstm", "gru": for display and step texts
    kind: str  # "transformer" or "recurrent"
    trace: bool  # the 20 steps, probes, logit lens, ablation
    attention: bool  # attention heads to look at or switch off
    activations: bool  # per-step gates and states (char-RNN neurons)
    context: int | None  # the context window in tokens; None: any length

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@runtime_checkable
class Model(Protocol):
    """What ``lmscope.load`` returns: ``LanguageModel`` (transformers) or
    ``RNNLanguageModel`` (char-RNNs)."""

    name: str
    source: str
    meta: dict
    tokenizer: Any

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def device(self) -> torch.device: ...

    def info(self) -> Any: ...

    def encode(self, text: str, **options) -> list[int]: ...

    def check_ids(self, ids: Sequence[int], **options) -> list[int]: ...

    def to_ids(self, text_or_ids, **options) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def pieces(self, ids: Sequence[int]) -> Any: ...

    def logits(self, text_or_ids) -> torch.Tensor: ...

    def next_token_logits(self, text_or_ids) -> torch.Tensor: ...

    def start(self, ids: list[int]) -> tuple[torch.Tensor, Any]:
        """Read the prompt: the next-token logits after it, and the state to continue from."""
        ...

    def step(self, state: Any, token: int) -> tuple[torch.Tensor, Any]:
        """Append one token: the next-token logits after it, and the new state."""
        ...

    def step_many(self, states: list, tokens: list[int]) -> list[tuple[torch.Tensor, Any]]:
        """``step`` for several runs at once (what a server batches)."""
        ...
