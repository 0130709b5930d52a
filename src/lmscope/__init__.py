"""lmscope: see inside language models by running real ones.

import lmscope
model = lmscope.load("gpt2")          # or a local folder, or the shipped default
trace = model.trace("Data visualization empowers users to")
trace["blocks.0.attn.hook_pattern"]   # [head, query, key], the model's real numbers
"""

from lmscope.engine.generation import GeneratedToken, generate
from lmscope.engine.loading import load
from lmscope.engine.protocol import Capabilities, Model
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.engine.trace import Trace
from lmscope.engine.transformer import LanguageModel
from lmscope.errors import (
    CheckpointError,
    InvalidInputError,
    LmscopeError,
    ModelNotFoundError,
    TokenizerError,
)

__version__ = "0.1.0"


__all__ = [
    "Capabilities",
    "CheckpointError",
    "GeneratedToken",
    "InvalidInputError",
    "LanguageModel",
    "LmscopeError",
    "Model",
    "ModelNotFoundError",
    "RNNLanguageModel",
    "SamplingParams",
    "TokenizerError",
    "Trace",
    "__version__",
    "candidate_pool",
    "generate",
    "load",
]
