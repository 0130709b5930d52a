"""Model architectures. Each is plain PyTorch; loading and tokenizers live elsewhere.

The names below are imported on first use, so that a light module of this package
(``models.fields``, which the training config and the CLI's option parsing read) does not
pull in torch."""

from __future__ import annotations

from importlib import import_module

_WHERE = {
    "GPT": "lmscope.models.gpt2",
    "GPTConfig": "lmscope.models.gpt2",
    "KVCache": "lmscope.models.common",
}

__all__ = ["GPT", "GPTConfig", "KVCache"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'lmscope.models' has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
