"""What a model folder is, from its JSON and its safetensors headers alone: family, parameter
count, tensor types and size on disk. No weight is read."""

from __future__ import annotations

import json
import math
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lmscope.errors import CheckpointError
from lmscope.formats.layout import LMSCOPE_CONFIG, WEIGHTS_FILE, WEIGHTS_INDEX, read_json

# safetensors' dtype names, as the listing shows them (GGUF's spelling: F32, BF16, ...)
_DTYPES = {"F64": "F64", "F32": "F32", "F16": "F16", "BF16": "BF16", "I8": "I8", "U8": "U8"}
_MAX_HEADER = 100 * 1024 * 1024  # safetensors' own limit on its JSON header


@dataclass(frozen=True)
class FolderSummary:
    """A model folder, summed up."""

    family: str | None  # config.json's model_type, or lmscope.json's arch
    n_params: int | None  # None when the weights are not safetensors (or missing)
    tensor_types: dict[str, int] = field(default_factory=dict)
    weights: bool = True  # whether the folder has weights at all
    quantized: str | None = None  # a quantization lmscope does not read (config's quant method)


def folder_summary(folder: Path) -> FolderSummary:
    """The summary of an lmscope or Hugging Face model folder; a broken file is one line."""
    if (folder / LMSCOPE_CONFIG).is_file():
        meta = read_json(folder / LMSCOPE_CONFIG)
        family = meta.get("arch", "gpt")
        quantized = None
    else:
        config = read_json(folder / "config.json")
        family = config.get("model_type", "gpt2" if "n_embd" in config else None)
        quantized = _quantized(config)
    files = weight_files(folder)
    if not files:
        has_bin = (folder / "pytorch_model.bin").is_file()
        return FolderSummary(_name(family), None, {}, weights=has_bin, quantized=quantized)
    n_params, types = 0, Counter[str]()
    for path in files:
        for info in _safetensors_header(path).values():
            n_params += math.prod(info["shape"])
            types[_DTYPES.get(info["dtype"], info["dtype"])] += 1
    return FolderSummary(_name(family), n_params, dict(types.most_common()), True, quantized)


def weight_files(folder: Path) -> list[Path]:
    """The folder's safetensors weights: its one file, or the shards its index names."""
    if (folder / WEIGHTS_FILE).is_file():
        return [folder / WEIGHTS_FILE]
    index = folder / WEIGHTS_INDEX
    if index.is_file():
        shards = read_json(index).get("weight_map", {})
        if isinstance(shards, dict):
            return [folder / name for name in sorted(set(map(str, shards.values())))]
    return []


def size_on_disk(paths: list[Path]) -> int:
    """Bytes the files take, each real file counted once (a Hugging Face snapshot links its
    files to shared blobs)."""
    seen: dict[Path, int] = {}
    for path in paths:
        try:
            real = path.resolve()
            if real not in seen and real.is_file():
                seen[real] = real.stat().st_size
        except OSError:
            continue
    return sum(seen.values())


def files_in(folder: Path) -> list[Path]:
    """Every file in a folder, not below it."""
    try:
        return [entry for entry in folder.iterdir() if entry.is_file()]
    except OSError:
        return []


def _name(family: object) -> str | None:
    return family if isinstance(family, str) else None


def _quantized(config: dict) -> str | None:
    """The quantization a Hugging Face config declares (GPTQ, AWQ, bitsandbytes, MLX), which
    lmscope's loader does not undo."""
    found = config.get("quantization_config")
    if isinstance(found, dict):
        return str(found.get("quant_method") or "quantized")
    if isinstance(config.get("quantization"), dict):  # MLX's config.json
        return "mlx"
    return None


def _safetensors_header(path: Path) -> dict[str, dict]:
    """A safetensors file's tensor table: name -> dtype and shape (its JSON header)."""
    label = str(path)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise CheckpointError("error.store.safetensors-short", file=label)
            (length,) = struct.unpack("<Q", head)
            if length > _MAX_HEADER:
                raise CheckpointError(
                    "error.store.safetensors-header", file=label, size=str(length)
                )
            table = json.loads(f.read(length))
    except OSError as err:
        raise CheckpointError("error.cannot-read", file=label, why=err.strerror or err) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError("error.weights.unreadable", file=label, why=str(err)[:200]) from None
    if not isinstance(table, dict):
        raise CheckpointError("error.weights.not-tensors", file=label)
    table.pop("__metadata__", None)
    good = all(
        isinstance(info, dict)
        and isinstance(info.get("shape"), list)
        and isinstance(info.get("dtype"), str)
        for info in table.values()
    )
    if not good:
        raise CheckpointError("error.weights.not-tensors", file=label)
    return table
