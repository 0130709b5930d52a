"""The smallest GPT training run the tests make, and training with no progress bar and no log."""

from __future__ import annotations

from pathlib import Path


def tiny_settings(corpus: str | Path, out: str | Path, **changes) -> dict:
    """TrainConfig's fields for a one-layer GPT, 16 wide, trained 12 steps on ``corpus`` on the
    CPU, evaluated every 4 steps and never sampled; ``changes`` override any of them."""
    shape = dict(layers=1, heads=2, dim=16, context=16, batch=4)
    schedule = dict(iters=12, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=4, eval_iters=2)
    run = dict(data=str(corpus), sample_every=0, out=str(out), device="cpu")
    return {**shape, **schedule, **run, **changes}


def quiet_train(cfg, **kwargs):
    from lmscope.train import train  # here: lmscope loads after conftest.py set HF_HUB_OFFLINE

    return train(cfg, progress=False, log=lambda text: None, **kwargs)
