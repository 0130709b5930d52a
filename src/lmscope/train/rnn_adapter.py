"""The char-RNN family in the one trainer: ``--arch rnn``, ``--arch lstm``, ``--arch gru``.

The trainer's settings map onto a ``CharRNNConfig``: ``dim`` is the hidden size (``--hidden``),
``layers`` the number of recurrent layers, ``dropout`` the dropout between layers, ``embed`` the
input embedding (0: one-hot). The models are stateful: they read contiguous streams, carry
(h) or (h, c) from chunk to chunk, and the trainer detaches it after each chunk (truncated
BPTT) and resets it at epoch boundaries.
"""

from __future__ import annotations

from typing import ClassVar

from torch import nn

from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.train.adapters import ModelAdapter, register_arch
from lmscope.train.config import TrainConfig

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


class CharRNNAdapter(ModelAdapter):
    stateful = True
    default_batches = "stream"
    defaults: ClassVar[dict] = RNN_DEFAULTS
    sample_temperature: ClassVar[float] = 0.8  # the GPT adapter's choice, so samples compare

    def model_config(self, cfg: TrainConfig, vocab_size: int) -> dict:
        return CharRNNConfig(
            vocab_size=vocab_size,
            cell=self.arch,
            hidden=cfg.dim,
            layers=cfg.layers,
            dropout=cfg.dropout,
            embed=getattr(cfg, "embed", 0),
        ).to_dict()

    def build(self, config: dict) -> nn.Module:
        return CharRNN(CharRNNConfig.from_dict(config))

    def config_of(self, model: nn.Module) -> dict:
        return model.config.to_dict()

    def forward(self, net, x, targets, state):
        return net(x, state, targets)

    def initial_state(self, model, batch, device):
        return model.initial_state(batch, device)

    def describe(self, cfg: TrainConfig) -> str:
        return f"{cfg.layers} layers, hidden {cfg.dim}, chunks of {cfg.context}"

    def sample(self, model, tokenizer, prompt_ids, length, seed):
        from lmscope.engine.rnn_model import RNNLanguageModel
        from lmscope.engine.sampling import SamplingParams

        lm = RNNLanguageModel(model, tokenizer)  # eval mode; the trainer switches it back
        params = SamplingParams(temperature=self.sample_temperature)
        ids = [t.id for t in lm.generate(prompt_ids, length, params, seed=seed)]
        return tokenizer.decode(list(prompt_ids) + ids)


class RNNAdapter(CharRNNAdapter):
    arch = "rnn"


class LSTMAdapter(CharRNNAdapter):
    arch = "lstm"


class GRUAdapter(CharRNNAdapter):
    arch = "gru"


for _adapter in (RNNAdapter(), LSTMAdapter(), GRUAdapter()):
    register_arch(_adapter)
