"""Random Hugging Face models saved into folders, for tests that compare against transformers
(no network: the weights are made here)."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch


def save_random_hf_gpt2(directory: Path, seed: int = 0, **config) -> Path:
    """Build a GPT2LMHeadModel with random weights and save_pretrained it (safetensors)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    defaults = dict(
        vocab_size=50257,
        n_positions=128,
        n_embd=64,
        n_layer=2,
        n_head=4,
        initializer_range=0.2,
        bos_token_id=None,
        eos_token_id=None,
    )
    defaults.update(config)
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GPT2LMHeadModel(GPT2Config(**defaults)).eval()
    model.save_pretrained(directory)
    return directory
