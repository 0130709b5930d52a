"""lmscope: see inside language models by running real ones.

import lmscope
model = lmscope.load("gpt2")          # or a local folder, or the shipped default
trace = model.trace("Data visualization empowers users to")
trace["blocks.0.attn.hook_pattern"]   # [head, query, key], the model's real numbers
"""

from lmscope.engine.trace import Trace
from lmscope.engine.transformer import LanguageModel, load
from lmscope.errors import (
    CheckpointError,
    InvalidInputError,
    LmscopeError,
    ModelNotFoundError,
    TokenizerError,
)

__version__ = "0.1.0"


__all__ = [
    "CheckpointError",
    "InvalidInputError",
    "LanguageModel",
    "LmscopeError",
    "ModelNotFoundError",
    "TokenizerError",
    "Trace",
    "__version__",
    "load",
]
