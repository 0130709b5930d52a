"""Reading and writing model files: Hugging Face folders and lmscope model folders (safetensors
+ JSON). Weights are read from safetensors; a legacy ``pytorch_model.bin`` is opened with
``torch.load(weights_only=True)`` so nothing is ever unpickled.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from lmscope.errors import CheckpointError
from lmscope.formats.atomic import write_folder
from lmscope.formats.layout import (
    LMSCOPE_CONFIG,
    WEIGHTS_FILE,
    WEIGHTS_INDEX,
    read_json,
    shard_names,
)


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file, or a legacy .bin/.pt without unpickling arbitrary objects."""
    try:
        if path.suffix == ".safetensors":
            state = load_file(str(path))
        else:
            state = torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError("error.weights.unpickle", file=str(path)) from None
    except (SafetensorError, OSError, RuntimeError, EOFError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError("error.weights.unreadable", file=str(path), why=first[:200]) from None
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise CheckpointError("error.weights.not-tensors", file=str(path))
    return state


def weights_file(directory: Path) -> Path:
    """The one weights file of a folder (lmscope folders always have exactly one)."""
    for name in (WEIGHTS_FILE, "pytorch_model.bin"):
        if (directory / name).is_file():
            return directory / name
    raise CheckpointError("error.weights.no-file", folder=str(directory), name=WEIGHTS_FILE)


def read_folder_weights(directory: Path) -> dict[str, torch.Tensor]:
    """Every tensor of a Hugging Face folder: its single weights file, or its shards."""
    if not any((directory / name).is_file() for name in (WEIGHTS_FILE, "pytorch_model.bin")):
        if (directory / WEIGHTS_INDEX).is_file():
            return read_shards(directory / WEIGHTS_INDEX)
        if any(directory.glob("model-*.safetensors")):
            raise CheckpointError(
                "error.weights.no-index", folder=str(directory), index=WEIGHTS_INDEX
            )
    return read_tensors(weights_file(directory))


def read_shards(index_path: Path) -> dict[str, torch.Tensor]:
    """The tensors of every shard an index names, each where the index says it is."""
    index = read_json(index_path)
    state: dict[str, torch.Tensor] = {}
    for name in shard_names(index, index_path):
        path = index_path.parent / name
        if not path.is_file():
            raise CheckpointError(
                "error.weights.shard-missing", file=str(index_path), shard=str(name)
            )
        part = read_tensors(path)
        twice = sorted(state.keys() & part.keys())
        if twice:
            raise CheckpointError(
                "error.weights.shard-twice", file=str(path), tensor=repr(twice[0])
            )
        state.update(part)
    for tensor, name in index["weight_map"].items():
        if tensor not in state:
            raise CheckpointError(
                "error.weights.shard-lacks",
                file=str(index_path),
                tensor=repr(tensor),
                shard=str(name),
            )
    return state


def save_model_dir(
    state: dict[str, torch.Tensor],
    meta: dict,
    directory: str | os.PathLike,
    dtype: torch.dtype = torch.float32,
    extra_files: dict[str, bytes] | None = None,
    write_more: Callable[[Path], None] | None = None,
) -> Path:
    """Write an lmscope model folder (``lmscope.json`` holding ``meta``, ``model.safetensors``
    holding ``state``, any extra files, and whatever ``write_more(folder)`` adds, such as a
    tokenizer's files) atomically (``lmscope.formats.atomic``): a crash
    never leaves a half-written model, and the previous folder survives any failure."""

    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):  # before any writing
        raise CheckpointError("error.weights.save-dtype", dtype=str(dtype).removeprefix("torch."))

    def fill(tmp: Path):
        tensors = {k: v.detach().to("cpu", dtype).contiguous() for k, v in state.items()}
        save_file(tensors, str(tmp / WEIGHTS_FILE))
        full_meta = {"format": "lmscope", **meta}
        (tmp / LMSCOPE_CONFIG).write_text(json.dumps(full_meta, indent=2), encoding="utf-8")
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        if write_more is not None:
            write_more(tmp)

    return write_folder(directory, fill)
