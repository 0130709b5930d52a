"""lmscope: see inside language models by running real ones."""

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
    "LmscopeError",
    "ModelNotFoundError",
    "TokenizerError",
    "__version__",
]
