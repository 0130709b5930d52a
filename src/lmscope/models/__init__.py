"""Model architectures. Each is plain PyTorch; loading and tokenizers live elsewhere."""

from lmscope.models.common import KVCache
from lmscope.models.gpt2 import GPT, GPTConfig

__all__ = ["GPT", "GPTConfig", "KVCache"]
