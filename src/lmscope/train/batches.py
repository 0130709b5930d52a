"""Batch sources: what the trainer draws (x, y) from, in two kinds.

- "random": windows at random offsets (``lmscope.data.RandomBatches``), for GPTs. Under DDP
  every process draws from its own seed (``seed * world + rank``), so ranks see different
  windows and a single process (world 1) keeps the plain seed.
- "stream": the data cut into ``batch`` contiguous streams read a chunk at a time
  (``lmscope.data.StreamBatches``), for stateful models trained with truncated BPTT. Under DDP
  each process streams its own equal shard of the data.

Each ``next()`` returns a ``Batch`` whose ``new_epoch`` says the streams restarted, the moment
a stateful model must drop its hidden state (always False for random windows).
``state_dict`` holds plain numbers (JSON) and restores the exact position.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from lmscope.data import RandomBatches, StreamBatches
from lmscope.errors import CheckpointError, InvalidInputError


class Batch(NamedTuple):
    x: torch.Tensor
    y: torch.Tensor
    new_epoch: bool


class BatchSource:
    kind: str

    def __iter__(self):
        return self

    def __next__(self) -> Batch:
        raise NotImplementedError

    def state_dict(self) -> dict:
        raise NotImplementedError

    def load_state_dict(self, state: dict) -> None:
        raise NotImplementedError


class RandomSource(BatchSource):
    kind = "random"

    def __init__(self, data, batch: int, context: int, seed: int, rank: int = 0, world: int = 1):
        self.seed = seed
        self.loader = RandomBatches(data, batch, context, seed=seed * world + rank)

    def __next__(self) -> Batch:
        x, y = next(self.loader)
        return Batch(x, y, False)

    def state_dict(self) -> dict:
        return {"kind": self.kind, "seed": self.seed, "loader": self.loader.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        _check_kind(state, self.kind)
        if state.get("seed") != self.seed:
            raise CheckpointError(
                "error.training.batches-seed", saved=str(state.get("seed")), seed=str(self.seed)
            )
        # Every process restores the position (the step) but keeps its own per-rank seed.
        loader_state = dict(state["loader"], seed=self.loader.seed)
        _load(self.loader, loader_state)


class StreamSource(BatchSource):
    kind = "stream"

    def __init__(self, data, batch: int, context: int, rank: int = 0, world: int = 1):
        shard = len(data) // world
        self.loader = StreamBatches(data[rank * shard : (rank + 1) * shard], batch, context)

    def __next__(self) -> Batch:
        x, y = next(self.loader)
        return Batch(x, y, self.loader.new_epoch)

    def state_dict(self) -> dict:
        return {"kind": self.kind, "loader": self.loader.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        _check_kind(state, self.kind)
        _load(self.loader, state["loader"])


def _check_kind(state: dict, kind: str) -> None:
    if not isinstance(state, dict) or state.get("kind") != kind or "loader" not in state:
        found = state.get("kind") if isinstance(state, dict) else None
        raise CheckpointError(
            "error.training.batches-kind", found=f"{found!r:.40}", kind=repr(kind)
        )


def _load(loader, state: dict) -> None:
    try:
        loader.load_state_dict(state)
    except (InvalidInputError, KeyError, TypeError, ValueError) as err:
        why = err if isinstance(err, InvalidInputError) else str(err)
        raise CheckpointError("error.training.batches-restore", why=why) from None


def make_batches(
    kind: str, data, batch: int, context: int, seed: int, rank: int = 0, world: int = 1
) -> BatchSource:
    if kind == "random":
        return RandomSource(data, batch, context, seed, rank, world)
    if kind == "stream":
        return StreamSource(data, batch, context, rank, world)
    raise InvalidInputError("error.training.batch-kind", kind=f"{kind!r:.40}")


def eval_batches(
    kind: str, data, batch: int, context: int, n: int, seed: int, rank: int = 0, world: int = 1
) -> list[Batch]:
    """The fixed set of ``n`` batches an evaluation averages over.

    The same batches every time, so successive evaluations compare like with like, and drawn
    without touching any global generator, so evaluating never changes a training run.
    """
    source = make_batches(kind, data, batch, context, seed + 1_000_003, rank, world)
    return [next(source) for _ in range(n)]


def min_tokens(kind: str, batch: int, context: int, world: int = 1) -> int:
    """How many tokens a split needs for this kind of batches."""
    if kind == "stream":
        return world * batch * (context + 1)
    return context + 1
