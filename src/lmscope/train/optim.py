"""Optimizers and the learning-rate schedule.

Weight decay applies to matrices only (embeddings and the weights of linear layers: every
parameter with two or more dimensions). Biases and LayerNorm gains stay undecayed: shrinking
them towards zero is not regularisation, just a worse fit.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.train.config import TrainConfig

# Flags that choose an implementation rather than describe the run: they follow the device in
# use, not the checkpoint, so a run saved on a GPU resumes on a CPU.
_IMPLEMENTATION_FLAGS = ("foreach", "fused", "capturable", "differentiable")


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]


def make_optimizer(model: nn.Module, cfg: TrainConfig, device_type: str) -> torch.optim.Optimizer:
    groups = param_groups(model, cfg.weight_decay)
    betas = (cfg.beta1, cfg.beta2)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=betas, fused=device_type == "cuda")
    if cfg.optimizer == "adam":
        # Adam's weight decay is the classic L2 term added to the gradient.
        return torch.optim.Adam(groups, lr=cfg.lr, betas=betas)
    if cfg.optimizer == "rmsprop":
        return torch.optim.RMSprop(groups, lr=cfg.lr, alpha=cfg.beta2, eps=1e-8)
    raise InvalidInputError("error.training.unknown-optimizer", name=f"{cfg.optimizer!r:.40}")


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    chosen = [{k: g[k] for k in _IMPLEMENTATION_FLAGS if k in g} for g in optimizer.param_groups]
    try:
        optimizer.load_state_dict(state)
    except (ValueError, KeyError, RuntimeError, TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError("error.training.optimizer-fit", why=first) from None
    for group, flags in zip(optimizer.param_groups, chosen, strict=True):
        group.update(flags)
    # A mismatch in shapes only shows when the state meets the parameters; check it now.
    for group in optimizer.param_groups:
        for p in group["params"]:
            for name, value in optimizer.state.get(p, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() and value.shape != p.shape:
                    raise CheckpointError(
                        "error.training.optimizer-shape",
                        name=name,
                        shape=str(tuple(value.shape)),
                        param=str(tuple(p.shape)),
                    )


def lr_at(iteration: int, cfg: TrainConfig) -> float:
    """Linear warm-up to ``lr``, then half a cosine down to ``min_lr``, then ``min_lr``."""
    if iteration < cfg.warmup:
        return cfg.lr * (iteration + 1) / (cfg.warmup + 1)
    end = cfg.lr_decay_iters
    if iteration >= end:
        return cfg.min_lr
    progress = (iteration - cfg.warmup) / (end - cfg.warmup)
    return cfg.min_lr + (cfg.lr - cfg.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
