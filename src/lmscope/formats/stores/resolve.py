"""Names of models in other programs' stores, turned into the file or folder to open:
``ollama:qwen3:0.6b``, ``lmstudio:<publisher>/<repo>[/<file>]``, and a bare Ollama name
(``qwen3:0.6b``) when no other kind of name claims it and one store has it."""

from __future__ import annotations

import re
from pathlib import Path

from lmscope.errors import CheckpointError
from lmscope.formats.hub import HUB_MODELS
from lmscope.formats.layout import SUPPORTED_ARCHITECTURES
from lmscope.formats.stores import lmstudio, ollama
from lmscope.formats.stores.gguf_header import is_gguf, read_summary

# registry/namespace/model:tag, as Ollama spells names
_OLLAMA_NAME = re.compile(r"[A-Za-z0-9][\w.\-]*(/[\w.\-]+){0,2}(:[\w.\-]+)?")


def resolve(name: str) -> Path | None:
    """The file or folder ``name`` stands for in a store; None when it is no store's name.
    A name a store should have but has not, or cannot open, is one line."""
    if name.startswith(ollama.PREFIX):
        found = ollama.find(name.removeprefix(ollama.PREFIX))
    elif name.startswith(lmstudio.PREFIX):
        found = lmstudio.find(name.removeprefix(lmstudio.PREFIX))
    elif _bare_ollama(name):
        bare = ollama.find(name, bare=True)
        if bare is None:
            return None
        found = bare
    else:
        return None
    if found is not None and found.is_file() and is_gguf(found):
        family = read_summary(found).architecture
        if family not in SUPPORTED_ARCHITECTURES:
            raise CheckpointError(
                "error.store.family-unsupported",
                name=name,
                family=repr(family),
                families=", ".join(SUPPORTED_ARCHITECTURES),
            )
    return found


def _bare_ollama(name: str) -> bool:
    """Whether ``name`` may be an Ollama name typed without ``ollama:``: not a file's name, not
    a GPT-2 short name, and an Ollama name's shape. A hub id (owner/name) goes to the hub
    unless it carries a tag (a hub id never has a colon)."""
    if name in HUB_MODELS or name.lower().endswith(".gguf") or not _OLLAMA_NAME.fullmatch(name):
        return False
    return ":" in name or "/" not in name
