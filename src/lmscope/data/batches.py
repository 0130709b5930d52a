"""Batches of token ids for training: random windows (GPTs) and parallel streams (char-RNNs).

Both yield `(x, y)` int64 tensors of shape [batch, time] where `y` is `x` moved one token on,
and both can save and restore their position so a resumed run sees the very same batches.
Their state dicts hold plain ints and bools only, so they fit in a JSON checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch

from lmscope.errors import InvalidInputError


def _as_ids(data: object) -> np.ndarray:
    """A 1-D integer array view of token ids (numpy array, memmap, tensor or list)."""
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    array = np.asarray(data)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise InvalidInputError("error.batches.ids", shape=str(array.shape), dtype=str(array.dtype))
    return array


def _positive(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidInputError("error.batches.positive", name=what, got=f"{value!r:.40}")
    return int(value)


def _to_tensor(windows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    # Windows hold T+1 ids; inputs are the first T, targets the last T.
    ids = torch.from_numpy(np.ascontiguousarray(windows, dtype=np.int64))
    return ids[:, :-1], ids[:, 1:]


def _check_state(state: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Refuse a state saved for a different loader shape or a different dataset."""
    for name, value in expected.items():
        if state.get(name) != value:
            raise InvalidInputError(
                "error.batches.state-mismatch",
                name=name,
                saved=f"{state.get(name)!r:.40}",
                value=f"{value!r:.40}",
            )


class _Batches:
    """What both loaders share: they are their own iterators, and a saved state must come from
    a loader of the same shape (kind, batch size, window length, data length)."""

    kind: str
    window: str  # the attribute that holds the window length

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self

    def _shape(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "batch_size": self.batch_size,
            self.window: getattr(self, self.window),
            "data_len": len(self.data),
        }


class RandomBatches(_Batches):
    """Windows of `context + 1` ids at random offsets, as nanoGPT's get_batch draws them.

    Batch number k is drawn from a generator seeded by (seed, k), so the sequence depends
    only on the seed, and resuming needs nothing more than the step counter.
    """

    kind, window = "random", "context"

    def __init__(self, data: object, batch_size: int, context: int, seed: int = 0) -> None:
        self.data = _as_ids(data)
        self.batch_size = _positive(batch_size, "batch_size")
        self.context = _positive(context, "context")
        if self.context >= len(self.data):
            raise InvalidInputError(
                "error.batches.context",
                context=self.context,
                need=self.context + 1,
                have=len(self.data),
            )
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise InvalidInputError("error.batches.seed", got=f"{seed!r:.40}")
        self.seed = int(seed)
        self.step = 0

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        rng = np.random.default_rng([self.seed, self.step])
        # A window starting at i needs ids i..i+context, so i < len - context.
        starts = rng.integers(0, len(self.data) - self.context, size=self.batch_size)
        windows = self.data[starts[:, None] + np.arange(self.context + 1)]
        self.step += 1
        return _to_tensor(windows)

    def state_dict(self) -> dict[str, Any]:
        return {**self._shape(), "seed": self.seed, "step": self.step}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        _check_state(state, self._shape())
        self.seed = int(state["seed"])
        self.step = int(state["step"])


class StreamBatches(_Batches):
    """The data cut into `batch_size` contiguous streams, read `seq_len` ids at a time.

    Row b of consecutive batches walks along stream b without gaps, so an RNN can carry its
    hidden state from one batch to the next (truncated backpropagation through time). After
    the last whole chunk the streams start again from their beginnings: a new epoch, where
    the trainer must drop its hidden state. Check `new_epoch` after each batch.
    """

    kind, window = "stream", "seq_len"

    def __init__(self, data: object, batch_size: int, seq_len: int) -> None:
        self.data = _as_ids(data)
        self.batch_size = _positive(batch_size, "batch_size")
        self.seq_len = _positive(seq_len, "seq_len")
        need = self.batch_size * (self.seq_len + 1)
        if len(self.data) < need:
            raise InvalidInputError(
                "error.batches.streams",
                n=self.batch_size,
                seq=self.seq_len,
                need=need,
                have=len(self.data),
            )
        # Each stream keeps one id past its last chunk, as the target of that chunk's last input.
        self.stream_len = len(self.data) // self.batch_size
        self.chunks_per_epoch = (self.stream_len - 1) // self.seq_len
        self.epoch = 0
        self.chunk = 0  # index within the epoch of the next batch to hand out
        self.new_epoch = False  # True when the batch just returned opens an epoch

    def __len__(self) -> int:
        return self.chunks_per_epoch

    @property
    def is_epoch_start(self) -> bool:
        """True when the next batch will be the first of an epoch (streams at their starts)."""
        return self.chunk == 0

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        self.new_epoch = self.chunk == 0
        offsets = np.arange(self.batch_size) * self.stream_len + self.chunk * self.seq_len
        windows = self.data[offsets[:, None] + np.arange(self.seq_len + 1)]
        self.chunk += 1
        if self.chunk == self.chunks_per_epoch:
            self.chunk, self.epoch = 0, self.epoch + 1
        return _to_tensor(windows)

    def state_dict(self) -> dict[str, Any]:
        position = {"epoch": self.epoch, "chunk": self.chunk, "new_epoch": self.new_epoch}
        return {**self._shape(), **position}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        _check_state(state, self._shape())
        chunk = int(state["chunk"])
        if not 0 <= chunk < self.chunks_per_epoch:
            raise InvalidInputError(
                "error.batches.chunk", chunk=str(chunk), last=str(self.chunks_per_epoch - 1)
            )
        self.epoch, self.chunk = int(state["epoch"]), chunk
        self.new_epoch = bool(state["new_epoch"])
