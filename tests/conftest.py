"""Shared fixtures: random Hugging Face GPT-2 models saved into temporary folders (no network)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
torch.set_num_threads(min(2, torch.get_num_threads()))


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


@pytest.fixture
def make_hf_gpt2(tmp_path):
    """Factory: save_random_hf_gpt2 into a fresh temporary folder."""
    counter = iter(range(1000))
    return lambda **config: save_random_hf_gpt2(tmp_path / f"hf{next(counter)}", **config)


@pytest.fixture(scope="session")
def tiny_hf_dir(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 with GPT-2's full vocabulary, so the GPT-2 tokenizer applies."""
    return save_random_hf_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_model(tiny_hf_dir):
    import lmscope

    return lmscope.load(tiny_hf_dir)


@pytest.fixture(scope="session")
def tiny_hf_reference(tiny_hf_dir):
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(tiny_hf_dir).eval()
