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

``unused_parameters`` tells DDP to look for weights without a gradient in a step (a mixture
of experts' unchosen experts). ``stateful`` tells the trainer whether to carry state;
``default_batches`` whether random windows ("random", GPTs) or contiguous streams ("stream",
RNNs) suit the family. ``defaults`` holds training settings that suit the family better than
``TrainConfig``'s (the CLI applies them to flags left out); ``describe(cfg)`` is the model's
shape in the run's first line.
A carried state must be None, a tensor, or a tuple of tensors, so checkpoints can store it.
An adapter whose ``language_model`` wraps the model for ``lmscope.engine`` gets samples drawn
with ``sample_params`` by the one generation loop.

Registered here: "gpt" (``lmscope.models.gpt2``, random windows, stateless), "moe" (a
mixture of experts in Mixtral's layout, ``lmscope.models.moe``: random windows, stateless, a
load-balancing loss beside the language-modelling one while training) and "rnn", "lstm",
"gru" (``lmscope.models.rnn``: contiguous streams, the state carried from chunk to chunk).
``dim`` is a char-RNN's hidden size, ``dropout`` its dropout between layers and ``embed`` its
input embedding (0: one-hot).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import torch
from torch import nn

from lmscope.engine.generation import generate
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.transformer import LanguageModel
from lmscope.errors import InvalidInputError
from lmscope.i18n import text
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.models.moe import MoE, MoEConfig
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.train.balance import BALANCE_WEIGHT, RouterTap
from lmscope.train.config import TrainConfig


class ModelAdapter(ABC):
    arch: ClassVar[str]
    stateful: ClassVar[bool] = False
    default_batches: ClassVar[str] = "random"
    defaults: ClassVar[dict] = {}
    sample_params: ClassVar[SamplingParams] = SamplingParams(temperature=0.8)
    unused_parameters: ClassVar[bool] = False  # some weights may get no gradient in a step

    @abstractmethod
    def model_config(self, cfg: TrainConfig, vocab_size: int) -> dict: ...

    @abstractmethod
    def build(self, config: dict) -> nn.Module: ...

    def config_of(self, model: nn.Module) -> dict:
        return model.config.to_dict()

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

    def language_model(self, model: nn.Module, tokenizer):
        """The model as ``lmscope.engine`` runs it, for samples; None: no samples."""
        return None

    def sample(self, model: nn.Module, tokenizer, prompt_ids: list[int], length: int, seed: int):
        lm = self.language_model(model, tokenizer)  # eval mode; the trainer switches it back
        if lm is None:
            return None
        stream = generate(lm, prompt_ids, length, self.sample_params, seed=seed, stop_at_eot=False)
        return tokenizer.decode(list(prompt_ids) + [t.id for t in stream])

    def describe(self, cfg: TrainConfig) -> str:
        return text("report.training.shape", layers=cfg.layers, heads=cfg.heads, dim=str(cfg.dim))


class FamilyAdapter(ModelAdapter):
    """A family lmscope builds itself: its config class (JSON via ``to_dict``/``from_dict``),
    its network, and the engine wrapper its samples run through. ``shape(cfg)`` maps the
    training settings to the config's fields; the vocabulary and dropout are every family's."""

    config_class: ClassVar[type]
    network: ClassVar[type[nn.Module]]
    wrapper: ClassVar[type]

    @abstractmethod
    def shape(self, cfg: TrainConfig) -> dict: ...

    def model_config(self, cfg: TrainConfig, vocab_size: int) -> dict:
        config = self.config_class(vocab_size=vocab_size, dropout=cfg.dropout, **self.shape(cfg))
        return config.to_dict()

    def build(self, config: dict) -> nn.Module:
        return self.network(self.config_class.from_dict(config))

    def language_model(self, model, tokenizer):
        return self.wrapper(model, tokenizer)


class GPTAdapter(FamilyAdapter):
    """GPTs see random windows; every batch stands alone, so there is no state."""

    arch = "gpt"
    sample_params = SamplingParams(temperature=0.8, top_k=200)  # nanoGPT's sample.py choice
    config_class, network, wrapper = GPTConfig, GPT, LanguageModel

    def shape(self, cfg: TrainConfig) -> dict:
        return dict(n_layer=cfg.layers, n_head=cfg.heads, n_embd=cfg.dim, n_ctx=cfg.context)

    def forward(self, net, x, targets, state):
        logits, loss = net(x, targets)
        return logits, loss, state


class MoEAdapter(FamilyAdapter):
    """A small mixture of experts in Mixtral's layout (the Llama recipe: RoPE, RMSNorm, SwiGLU,
    with ``experts`` SwiGLU MLPs per block and a router sending each token to
    ``experts_used`` of them), the model class the explainer runs. Random windows, stateless.

    While training (``net.training``) the loss is the language-modelling loss plus
    ``BALANCE_WEIGHT`` times the Switch Transformer's load-balancing loss averaged over the
    blocks (``lmscope.train.balance``), so that every expert gets tokens to learn from; the
    evaluations (the model in eval mode) report the language-modelling loss alone. Each expert
    is 2 x ``dim`` wide, so a token's two experts hold as many weights as one dense MLP
    4 x ``dim`` wide. The embedding and unembedding are tied, as in the shipped GPT."""

    arch = "moe"
    sample_params = SamplingParams(temperature=0.8, top_k=200)
    unused_parameters = True  # an expert no token of a batch chose gets no gradient
    config_class, network, wrapper = MoEConfig, MoE, LanguageModel

    def shape(self, cfg: TrainConfig) -> dict:
        return dict(
            model_type="mixtral",
            n_layer=cfg.layers,
            n_head=cfg.heads,
            n_embd=cfg.dim,
            n_ctx=cfg.context,
            n_inner=2 * cfg.dim,
            n_expert=cfg.experts,
            n_expert_used=cfg.experts_used,
            tie_word_embeddings=True,
        )

    def forward(self, net, x, targets, state):
        if not net.training:
            logits, loss = net(x, targets)
            return logits, loss, state
        with RouterTap(net) as tap:
            logits, loss = net(x, targets)
        return logits, loss + BALANCE_WEIGHT * tap.balance().to(loss.device), state

    def describe(self, cfg: TrainConfig) -> str:
        return text(
            "report.training.shape-moe",
            layers=cfg.layers,
            heads=cfg.heads,
            dim=str(cfg.dim),
            experts=str(cfg.experts),
            used=str(cfg.experts_used),
        )


# Training settings that suit char-RNNs better than the GPT defaults (``lmscope train --arch
# lstm`` uses them for flags left out): char-rnn's 2 layers, 50 streams of 50 characters, and
# a constant-then-decaying Adam step without weight decay or warm-up.
RNN_DEFAULTS = {
    "layers": 2,
    "dim": 128,
    "context": 50,
    "batch": 50,
    "optimizer": "adam",
    "lr": 2e-3,
    "min_lr": 2e-4,
    "warmup": 0,
    "weight_decay": 0.0,
    "beta2": 0.99,
    "grad_clip": 5.0,
}


class CharRNNAdapter(FamilyAdapter):
    """Char-RNNs read contiguous streams and carry (h) or (h, c) from chunk to chunk; the
    trainer detaches it after each chunk (truncated BPTT) and resets it at epoch boundaries."""

    stateful = True
    default_batches = "stream"
    defaults: ClassVar[dict] = RNN_DEFAULTS
    config_class, network, wrapper = CharRNNConfig, CharRNN, RNNLanguageModel

    def shape(self, cfg: TrainConfig) -> dict:
        return dict(cell=self.arch, layers=cfg.layers, hidden=cfg.dim, embed=cfg.embed)

    def forward(self, net, x, targets, state):
        return net(x, state, targets)

    def initial_state(self, model, batch, device):
        return model.initial_state(batch, device)

    def describe(self, cfg: TrainConfig) -> str:
        return text(
            "report.training.shape-rnn",
            layers=cfg.layers,
            hidden=str(cfg.dim),
            context=str(cfg.context),
        )


class RNNAdapter(CharRNNAdapter):
    arch = "rnn"


class LSTMAdapter(CharRNNAdapter):
    arch = "lstm"


class GRUAdapter(CharRNNAdapter):
    arch = "gru"


ARCHS: dict[str, ModelAdapter] = {
    adapter.arch: adapter
    for adapter in (GPTAdapter(), MoEAdapter(), RNNAdapter(), LSTMAdapter(), GRUAdapter())
}


def register_arch(adapter: ModelAdapter) -> ModelAdapter:
    """Make an architecture trainable under ``adapter.arch`` (``--arch NAME``)."""
    ARCHS[adapter.arch] = adapter
    return adapter


def get_adapter(arch: str) -> ModelAdapter:
    if arch in ARCHS:
        return ARCHS[arch]
    raise InvalidInputError(
        "error.training.unknown-arch", arch=f"{arch!r:.40}", known=", ".join(sorted(ARCHS))
    )
