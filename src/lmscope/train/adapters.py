"""The one protocol between the trainer and a model family.

The trainer never touches a model's internals. For each architecture it asks an adapter to:

- ``model_config(cfg, vocab_size) -> dict``: turn training settings into the model's
  JSON-ready config (what lmscope.json stores as "model");
- ``build(config) -> nn.Module``: make a fresh model from that config (also used on resume);
- ``config_of(model) -> dict``: read the config back from a built model;
- ``forward(net, x, targets, state) -> (logits, loss, state)``: one forward pass. ``net`` may
  be the model itself or a DistributedDataParallel wrapper around it, so adapters call
  ``net(...)`` rather than its methods. Stateless models return ``state`` unchanged (None);
- ``initial_state(model, batch, device)``: the state a stateful model starts from (zeros)
  at the start of a run and at every epoch boundary of a stream of batches;
- ``detach_state(state)``: cut the state from the graph after each chunk, so backpropagation
  is truncated there while the values flow on (truncated BPTT);
- ``sample(model, tokenizer, prompt_ids, length, seed) -> str``: a short text to show
  progress (optional; returning None skips samples).

``stateful`` tells the trainer whether to carry state; ``default_batches`` whether random
windows ("random", GPTs) or contiguous streams ("stream", RNNs) suit the family. ``defaults``
holds training settings that suit the family better than ``TrainConfig``'s (the CLI applies
them to flags left out); ``describe(cfg)`` is the model's shape in the run's first line.
A carried state must be None, a tensor, or a tuple of tensors, so checkpoints can store it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch
from torch import nn

from lmscope.errors import InvalidInputError
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.train.config import TrainConfig


class ModelAdapter(ABC):
    arch: ClassVar[str]
    stateful: ClassVar[bool] = False
    default_batches: ClassVar[str] = "random"
    defaults: ClassVar[dict] = {}

    @abstractmethod
    def model_config(self, cfg: TrainConfig, vocab_size: int) -> dict: ...

    @abstractmethod
    def build(self, config: dict) -> nn.Module: ...

    @abstractmethod
    def config_of(self, model: nn.Module) -> dict: ...

    @abstractmethod
    def forward(
        self, net: nn.Module, x: torch.Tensor, targets: torch.Tensor, state: Any
    ) -> tuple[torch.Tensor, torch.Tensor, Any]: ...

    def initial_state(self, model: nn.Module, batch: int, device: torch.device) -> Any:
        return None

    def detach_state(self, state: Any) -> Any:
        if state is None:
            return None
        if isinstance(state, torch.Tensor):
            return state.detach()
        return tuple(t.detach() for t in state)

    def sample(self, model: nn.Module, tokenizer, prompt_ids: list[int], length: int, seed: int):
        return None

    def describe(self, cfg: TrainConfig) -> str:
        return f"{cfg.layers} layers, {cfg.heads} heads, {cfg.dim} dims"


class GPTAdapter(ModelAdapter):
    """GPTs see random windows; every batch stands alone, so there is no state."""

    arch = "gpt"

    def model_config(self, cfg: TrainConfig, vocab_size: int) -> dict:
        return GPTConfig(
            vocab_size=vocab_size,
            n_ctx=cfg.context,
            n_embd=cfg.dim,
            n_layer=cfg.layers,
            n_head=cfg.heads,
            dropout=cfg.dropout,
        ).to_dict()

    def build(self, config: dict) -> nn.Module:
        return GPT(GPTConfig.from_dict(config))

    def config_of(self, model: nn.Module) -> dict:
        return model.config.to_dict()

    def forward(self, net, x, targets, state):
        logits, loss = net(x, targets)
        return logits, loss, state

    def sample(self, model, tokenizer, prompt_ids, length, seed):
        from lmscope.engine.generation import generate
        from lmscope.engine.sampling import SamplingParams
        from lmscope.engine.transformer import LanguageModel

        lm = LanguageModel(model, tokenizer)  # puts the model in eval mode; the trainer undoes it
        params = SamplingParams(temperature=0.8, top_k=200)  # nanoGPT's sample.py choice
        ids = [t.id for t in generate(lm, prompt_ids, length, params, seed=seed, stop_at_eot=False)]
        return tokenizer.decode(prompt_ids + ids)


ARCHS: dict[str, ModelAdapter] = {"gpt": GPTAdapter()}
PLANNED_ARCHS = ("rnn", "lstm", "gru")


def register_arch(adapter: ModelAdapter) -> ModelAdapter:
    """Make an architecture trainable under ``adapter.arch`` (``--arch NAME``)."""
    ARCHS[adapter.arch] = adapter
    return adapter


def get_adapter(arch: str) -> ModelAdapter:
    if arch in ARCHS:
        return ARCHS[arch]
    planned = " (char-RNN, LSTM and GRU training is planned)" if arch in PLANNED_ARCHS else ""
    raise InvalidInputError(
        f"unknown --arch {arch!r}{planned}; available: {', '.join(sorted(ARCHS))}"
    )
