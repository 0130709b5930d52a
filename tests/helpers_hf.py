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


# A small Llama-family shape: 2 layers, 4 query heads sharing 2 key/value heads.
LLAMA_BASE = dict(
    vocab_size=101,
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    bos_token_id=None,
    eos_token_id=None,
    pad_token_id=None,
)


def _hf_classes(family: str):
    import transformers as tf

    return {
        "llama": (tf.LlamaConfig, tf.LlamaForCausalLM),
        "mistral": (tf.MistralConfig, tf.MistralForCausalLM),
        "qwen2": (tf.Qwen2Config, tf.Qwen2ForCausalLM),
    }[family]


def save_random_llama(directory: Path, family: str, seed: int = 0, **overrides):
    """A random transformers model, every weight (norm gains and biases too) drawn at a scale
    that makes the layers matter, saved as safetensors; returns the model in eval mode."""
    config_cls, model_cls = _hf_classes(family)
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = model_cls(config_cls(**{**LLAMA_BASE, **overrides})).eval()
        with torch.no_grad():
            for name, p in hf.named_parameters():
                if "norm" in name:
                    p.uniform_(0.5, 1.5)
                else:
                    p.normal_(0.0, 0.15)
        hf.save_pretrained(directory, safe_serialization=True)
    return hf


def load_random_llama(tmp_path_factory, family: str, **overrides):
    """``lmscope.load`` of a random ``family`` model (``save_random_llama``) in a fresh folder."""
    import lmscope

    folder = tmp_path_factory.mktemp(family)
    save_random_llama(folder, family, **overrides)
    return lmscope.load(folder)


def tiny_or_random_llama(case, tmp_path_factory, tiny_model):
    """A family-parametrized fixture's model: the shared tiny GPT-2 for ``None``, else
    ``load_random_llama`` of a (family, config overrides) case."""
    if case is None:
        return tiny_model
    family, overrides = case
    return load_random_llama(tmp_path_factory, family, **overrides)
