"""lmscope: see inside language models by running real ones.

import lmscope
model = lmscope.load()                # SmolLM2-135M-Instruct when installed; or a name or folder
trace = model.trace("Data visualization empowers users to")
trace["blocks.0.attn.hook_pattern"]   # [head, query, key], the model's real numbers

The names below are imported on first use: ``import lmscope`` (and ``lmscope --help``) does not
load torch until a model is asked for.
"""

from importlib import import_module

from lmscope.errors import (
    ArgumentError,
    CheckpointError,
    InvalidInputError,
    LmscopeError,
    ModelNotFoundError,
    ProbeNotFoundError,
    TokenizerError,
)
from lmscope.i18n import language, set_language
from lmscope.lazy import lazy_names

__version__ = "0.2.0.dev0"

_LAZY = {
    "Capabilities": "lmscope.engine.protocol",
    "GeneratedToken": "lmscope.engine.generation",
    "LanguageModel": "lmscope.engine.transformer",
    "Model": "lmscope.engine.protocol",
    "RNNLanguageModel": "lmscope.engine.rnn_model",
    "SamplingParams": "lmscope.engine.sampling",
    "Trace": "lmscope.engine.trace",
    "candidate_pool": "lmscope.engine.sampling",
    "find_cells": "lmscope.interpret.cell_finder",
    "generate": "lmscope.engine.generation",
    "load": "lmscope.engine.loading",
    "neuron_activations": "lmscope.interpret.neurons",
}


def _notebook() -> None:
    """In a Jupyter kernel a Trace left as a cell's value shows the explainer (lmscope.show)."""
    import sys

    if "IPython" in sys.modules:  # by name: the package's root imports no front door
        import_module("lmscope.show.notebook").register()


_notebook()


_lazy_getattr, _lazy_dir = lazy_names(__name__, _LAZY)
# Packages of the public API, imported on first use too: lmscope.circuits.patch(...)
_SUBMODULES = ("circuits",)


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")  # which sets it among the globals
    return _lazy_getattr(name)


def __dir__() -> list[str]:
    return sorted({*_lazy_dir(), *_SUBMODULES})


__all__ = [
    "language",
    "set_language",
    "ArgumentError",
    "Capabilities",
    "CheckpointError",
    "GeneratedToken",
    "InvalidInputError",
    "LanguageModel",
    "LmscopeError",
    "Model",
    "ModelNotFoundError",
    "ProbeNotFoundError",
    "RNNLanguageModel",
    "SamplingParams",
    "TokenizerError",
    "Trace",
    "__version__",
    "candidate_pool",
    "circuits",
    "find_cells",
    "generate",
    "load",
    "neuron_activations",
]
