"""Data-parallel training with PyTorch DDP, set up from the variables ``torchrun`` exports.

Under ``torchrun --nproc_per_node N -m lmscope train ...`` every process runs the same trainer:
it joins the process group (NCCL on CUDA, gloo on CPU), draws its own batches, and DDP
averages the gradients during ``backward``, so all processes take identical steps. Only rank 0
writes checkpoints and logs. Without torchrun (WORLD_SIZE unset or 1) nothing here does
anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from lmscope.errors import InvalidInputError


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def world_from_env() -> DistInfo:
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError:
        raise InvalidInputError("error.training.world-env") from None
    return DistInfo(rank, world, local_rank)


def start(info: DistInfo, device_type: str) -> None:
    """Join the process group torchrun described (once per process)."""
    if not info.enabled or dist.is_initialized():
        return
    if device_type == "cuda":
        torch.cuda.set_device(info.local_rank)
    dist.init_process_group(backend="nccl" if device_type == "cuda" else "gloo")


def stop(info: DistInfo) -> None:
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()


def mean_over_ranks(value: float, info: DistInfo, device: torch.device) -> float:
    """The average of a number across processes (itself when there is one process)."""
    if not info.enabled:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.item() / info.world


def main_says(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """Rank 0's ``flag`` on every rank (``flag`` itself with one process): what only rank 0
    can know, such as whether the checkpoint it alone writes was written, so that every rank
    takes the same path after it."""
    if not info.enabled:
        return flag
    t = torch.tensor([int(flag)], device=device)
    dist.broadcast(t, src=0)
    return bool(t.item())


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()
