"""Character-level RNN, LSTM and GRU language models, with two ways to run the same weights.

- ``forward``: the fused kernels (``torch.nn.RNN/LSTM/GRU``), for training speed;
- ``stepwise``: the cell equations written out one time step at a time, recording every gate,
  cell and hidden state on the way (``LayerRecord``), for inspection.

Both read the very same parameters (the fused modules' ``weight_ih_l{k}``, ``weight_hh_l{k}``,
``bias_ih_l{k}``, ``bias_hh_l{k}``) and agree to float rounding. The cell equations are
PyTorch's, with its gate order:

    LSTM  i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)    sigmoid, sigmoid, tanh, sigmoid
          c' = f * c + i * g;   h' = o * tanh(c')
    GRU   r, z = sigmoid(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z})
          n = tanh(W_in x + b_in + r * (W_hn h + b_hn));   h' = (1 - z) * n + z * h
    RNN   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)

Input is one-hot (``embed=0``, as in char-rnn) or a learned embedding of ``embed`` dims.
Dropout acts between layers and before the output layer. The LSTM forget-gate bias starts at
1 (char-rnn's choice), so early in training the cell keeps what it holds.

The carried state is a tensor ``h`` [layers, batch, hidden] (RNN, GRU) or a tuple ``(h, c)``
(LSTM): exactly what the fused modules take and return, and what checkpoints store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.i18n import Message
from lmscope.models.fields import JsonConfig, check_field_types

CELLS = ("rnn", "lstm", "gru")
GATES = {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n"), "rnn": ()}
_FUSED = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
_GATE_ROWS = {"rnn": 1, "lstm": 4, "gru": 3}  # weight rows per hidden unit


@dataclass
class CharRNNConfig(JsonConfig):
    vocab_size: int
    cell: str = "lstm"  # rnn | lstm | gru
    hidden: int = 128
    layers: int = 2
    dropout: float = 0.0  # between layers and before the output layer
    embed: int = 0  # 0: one-hot input (char-rnn); N: a learned N-dim embedding

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        check_field_types(self, Message("error.rnn.part.config", cell=str(self.cell)))
        if self.cell not in CELLS:
            raise InvalidInputError(
                "error.rnn.unknown-cell", cell=repr(self.cell), cells=", ".join(CELLS)
            )
        for name, low in (("vocab_size", 1), ("hidden", 1), ("layers", 1), ("embed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInputError(
                    "error.rnn.field", cell=self.cell, name=name, low=low, got=repr(value)
                )
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise InvalidInputError("error.value.fraction", name="dropout", got=repr(self.dropout))

    @property
    def input_size(self) -> int:
        return self.embed or self.vocab_size

    @classmethod
    def from_dict(cls, data: dict) -> CharRNNConfig:
        try:
            return super().from_dict(data)
        except TypeError as err:
            raise CheckpointError("error.rnn.config-incomplete", why=str(err)) from None


@dataclass
class LayerRecord:
    """What one layer did at every step of a stepwise run. Tensors are [batch, T, hidden]
    (``trace`` on a single sequence squeezes them to [T, hidden])."""

    layer: int
    cell: str
    h: torch.Tensor  # hidden state after each step
    c: torch.Tensor | None = None  # LSTM cell state after each step
    gates: dict[str, torch.Tensor] = field(default_factory=dict)  # i f g o | r z n

    def __getattr__(self, name: str) -> torch.Tensor:
        # record.f reads the forget gate; only called when normal lookup fails.
        gates = self.__dict__.get("gates", {})
        if name in gates:
            return gates[name]
        raise AttributeError(name)

    def squeeze(self) -> LayerRecord:
        one = {k: v[0] for k, v in self.gates.items()}
        return LayerRecord(
            self.layer, self.cell, self.h[0], None if self.c is None else self.c[0], one
        )


class CharRNN(nn.Module):
    """A character model: input (one-hot or embedding) -> N recurrent layers -> logits."""

    def __init__(self, config: CharRNNConfig):
        super().__init__()
        config.validate()
        self.config = config
        c = config
        self.embedding = nn.Embedding(c.vocab_size, c.embed) if c.embed else None
        self.rnn = _FUSED[c.cell](
            c.input_size,
            c.hidden,
            num_layers=c.layers,
            dropout=c.dropout if c.layers > 1 else 0.0,
            batch_first=True,
        )
        self.drop = nn.Dropout(c.dropout)
        self.head = nn.Linear(c.hidden, c.vocab_size)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # char-rnn draws every weight from U(-0.08, 0.08); biases start at 0 except the LSTM
        # forget gate (below).
        for name, p in self.named_parameters():
            if name.startswith("rnn.bias"):
                nn.init.zeros_(p)
            else:
                nn.init.uniform_(p, -0.08, 0.08)
        if self.config.cell == "lstm":
            hidden = self.config.hidden
            with torch.no_grad():
                for layer in range(self.config.layers):
                    # i, f, g, o blocks: the forget gate is the second; b_ih + b_hh = 1.
                    getattr(self.rnn, f"bias_ih_l{layer}")[hidden : 2 * hidden].fill_(1.0)

    # --- shared pieces ------------------------------------------------------------------------

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def initial_state(self, batch: int = 1, device=None):
        c = self.config
        device = device if device is not None else self.head.weight.device
        h = torch.zeros(c.layers, batch, c.hidden, device=device)
        return (h, torch.zeros_like(h)) if c.cell == "lstm" else h

    def _inputs(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.dim() != 2:
            raise InvalidInputError("error.rnn.ids-shape", shape=str(tuple(ids.shape)))
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.config.vocab_size):
            raise InvalidInputError("error.rnn.ids-range", last=str(self.config.vocab_size - 1))
        if self.embedding is not None:
            return self.embedding(ids)
        return F.one_hot(ids, self.config.vocab_size).to(self.head.weight.dtype)

    def _check_state(self, state, batch: int):
        if state is None:
            return self.initial_state(batch, self.head.weight.device)
        c = self.config
        parts = state if isinstance(state, tuple) else (state,)
        want = 2 if c.cell == "lstm" else 1
        shape = (c.layers, batch, c.hidden)
        if not all(isinstance(t, torch.Tensor) for t in parts):
            got = [type(t).__name__ for t in parts]
            raise InvalidInputError(
                "error.rnn.state-type", cell=c.cell, n=want, shape=str(shape), got=", ".join(got)
            )
        if len(parts) != want or any(tuple(t.shape) != shape for t in parts):
            shapes = [tuple(t.shape) for t in parts]
            raise InvalidInputError(
                "error.rnn.state-shape", cell=c.cell, n=want, shape=str(shape), got=str(shapes)
            )
        return state

    @staticmethod
    def _loss(logits: torch.Tensor, targets: torch.Tensor | None):
        if targets is None:
            return None
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1))

    # --- the fused path -----------------------------------------------------------------------

    def forward(self, ids: torch.Tensor, state=None, targets: torch.Tensor | None = None):
        """ids [B, T] -> (logits [B, T, V], mean cross-entropy or None, state after step T)."""
        state = self._check_state(state, ids.shape[0])
        out, state = self.rnn(self._inputs(ids), state)
        logits = self.head(self.drop(out))
        return logits, self._loss(logits, targets), state

    # --- the stepwise path --------------------------------------------------------------------

    def stepwise(self, ids: torch.Tensor, state=None, targets: torch.Tensor | None = None):
        """Like ``forward``, one time step at a time, recording every gate.

        Returns (logits, loss, state, records): ``records[k]`` is layer k's ``LayerRecord``.
        """
        c = self.config
        state = self._check_state(state, ids.shape[0])
        h0 = state[0] if c.cell == "lstm" else state
        c0 = state[1] if c.cell == "lstm" else None
        x = self._inputs(ids)
        records, last_h, last_c = [], [], []
        for layer in range(c.layers):
            if layer > 0 and c.dropout and self.training:
                x = F.dropout(x, c.dropout, training=True)
            weights = [getattr(self.rnn, f"{kind}_l{layer}") for kind in _PARAM_KINDS]
            cell_c = None if c0 is None else c0[layer]
            record = _run_layer(c.cell, layer, x, h0[layer], cell_c, *weights)
            records.append(record)
            x = record.h
            last_h.append(record.h[:, -1])
            if record.c is not None:
                last_c.append(record.c[:, -1])
        logits = self.head(self.drop(x))
        h = torch.stack(last_h) if last_h else h0
        state = (h, torch.stack(last_c)) if c.cell == "lstm" else h
        return logits, self._loss(logits, targets), state, records

    @torch.no_grad()
    def trace(self, ids, state=None) -> tuple[torch.Tensor, list[LayerRecord], object]:
        """One sequence (a list or 1-D tensor of ids) through the stepwise path in eval mode:
        (logits [T, V], one LayerRecord per layer with [T, hidden] tensors, final state)."""
        ids = torch.as_tensor(ids, dtype=torch.long, device=self.head.weight.device)
        if ids.dim() != 1 or ids.numel() == 0:
            raise InvalidInputError("error.rnn.trace-ids")
        was_training = self.training
        self.eval()
        try:
            logits, _, state, records = self.stepwise(ids[None], state)
        finally:
            self.train(was_training)
        return logits[0], [r.squeeze() for r in records], state


_PARAM_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _run_layer(cell, layer, x, h, c, w_ih, w_hh, b_ih, b_hh) -> LayerRecord:
    """One layer over all T steps. The input projections do not depend on the state, so they
    are computed for every step at once; only the recurrence runs step by step."""
    steps = x.shape[1]
    from_input = F.linear(x, w_ih, b_ih)  # [B, T, rows * hidden]
    hs, cs = [], []
    gates: dict[str, list[torch.Tensor]] = {name: [] for name in GATES[cell]}
    for t in range(steps):
        from_state = F.linear(h, w_hh, b_hh)
        if cell == "lstm":
            i, f, g, o = (from_input[:, t] + from_state).chunk(4, dim=-1)
            i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
            c = f * c + i * g
            h = o * c.tanh()
            cs.append(c)
            for name, value in zip("ifgo", (i, f, g, o), strict=True):
                gates[name].append(value)
        elif cell == "gru":
            xr, xz, xn = from_input[:, t].chunk(3, dim=-1)
            hr, hz, hn = from_state.chunk(3, dim=-1)
            r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
            n = (xn + r * hn).tanh()
            h = (1 - z) * n + z * h
            for name, value in zip("rzn", (r, z, n), strict=True):
                gates[name].append(value)
        else:
            h = (from_input[:, t] + from_state).tanh()
        hs.append(h)
    return LayerRecord(
        layer,
        cell,
        torch.stack(hs, dim=1),
        torch.stack(cs, dim=1) if cs else None,
        {name: torch.stack(values, dim=1) for name, values in gates.items()},
    )


def param_count(cell: str, vocab_size: int, hidden: int, layers: int, embed: int = 0) -> int:
    """Parameters of a CharRNN with these settings, without building it."""
    rows = _GATE_ROWS[cell] * hidden
    first_in = embed or vocab_size
    total = embed * vocab_size if embed else 0
    for layer in range(layers):
        inputs = first_in if layer == 0 else hidden
        total += rows * (inputs + hidden) + 2 * rows
    return total + hidden * vocab_size + vocab_size
