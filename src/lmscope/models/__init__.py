"""Model architectures. Each is plain PyTorch; loading and tokenizers live elsewhere."""

from lmscope.models.gpt2 import GPT, GPTConfig, KVCache

__all__ = ["GPT", "GPTConfig", "KVCache"]
