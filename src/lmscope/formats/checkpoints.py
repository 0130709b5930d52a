"""Training checkpoints: one folder that is both a loadable model and a resumable run.

    out/
      lmscope.json            format, arch, model config, name   (what ``lmscope.load`` reads)
      model.safetensors       the weights
      chars.json | encoder.json + vocab.bpe    the tokenizer, as ``tokenizer.save`` writes it
      optimizer.safetensors   optimizer tensors (moments, step counts), keyed "<param>.<name>"
      trainer.safetensors     RNG states (torch CPU/CUDA, numpy) and a carried hidden state
      trainer.json            iteration, training config, optimizer scalars and param groups,
                              Python RNG, batch-loader position, loss history

Nothing is pickled: tensors go to safetensors, everything else to JSON.

Writes are atomic at the folder level (``lmscope.formats.atomic``): a crash, even ``kill -9``,
at any moment leaves either the new checkpoint or the previous one, which ``recover`` (called before
every read and write) puts back in place.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from safetensors.torch import save_file

from lmscope.errors import CheckpointError
from lmscope.formats.atomic import recover, write_folder
from lmscope.formats.layout import LMSCOPE_CONFIG, WEIGHTS_FILE, read_json
from lmscope.formats.weights import read_tensors

TRAINER_FILE = "trainer.json"
TRAINER_TENSORS = "trainer.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
TRAINER_FORMAT = "lmscope-trainer"
TRAINER_VERSION = 1


@dataclass
class Checkpoint:
    """Everything read back from a checkpoint folder, ready to hand to torch."""

    path: Path
    meta: dict  # lmscope.json
    weights: dict[str, torch.Tensor]
    trainer: dict  # trainer.json
    optimizer: dict  # a torch optimizer state_dict
    rng: dict  # as capture_rng returns it
    carry: Any  # the hidden state a stateful model carried, or None

    @property
    def iteration(self) -> int:
        return int(self.trainer["iteration"])


# --- folder state -----------------------------------------------------------------------------


def is_checkpoint(directory: str | os.PathLike) -> bool:
    directory = Path(directory)
    return (directory / LMSCOPE_CONFIG).is_file() and (directory / TRAINER_FILE).is_file()


def folder_state(directory: str | os.PathLike) -> str:
    """'missing', 'empty', 'checkpoint', or 'other' (something lmscope must not overwrite)."""
    directory = Path(directory)
    if not directory.exists():
        return "missing"
    if not directory.is_dir():
        return "other"
    if is_checkpoint(directory):
        return "checkpoint"
    return "other" if any(directory.iterdir()) else "empty"


def checkpoint_iteration(directory: str | os.PathLike) -> int | None:
    """The iteration a checkpoint folder was saved at, or None when it cannot be read."""
    try:
        return int(read_json(Path(directory) / TRAINER_FILE)["iteration"])
    except (CheckpointError, KeyError, TypeError, ValueError):
        return None


# --- writing ----------------------------------------------------------------------------------


def save_checkpoint(
    directory: str | os.PathLike,
    *,
    arch: str,
    model_config: dict,
    weights: dict[str, torch.Tensor],
    tokenizer,
    optimizer_state: dict,
    trainer_state: dict,
    rng_state: dict | None = None,
    carry: Any = None,
    meta: dict | None = None,
    extra_files: dict[str, bytes] | None = None,
) -> Path:
    """Write a checkpoint folder atomically (see the module docstring) and return its path.

    ``trainer_state`` must be JSON-serialisable; it is stored with the iteration, config and
    history the trainer needs. ``meta`` adds entries to lmscope.json (name, training summary).
    ``extra_files`` (name -> bytes) are written alongside, e.g. the sample timeline.
    """

    def fill(tmp: Path) -> None:
        # the RNG state first, as it is before anything of the checkpoint is written
        rng = rng_state if rng_state is not None else capture_rng()
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)
        if tokenizer is not None:
            tokenizer.save(tmp)
        save_file(_cpu_tensors(weights), str(tmp / WEIGHTS_FILE))
        opt_tensors, opt_json = optimizer_to_files(optimizer_state)
        save_file(opt_tensors, str(tmp / OPTIMIZER_FILE))
        rng_tensors, rng_json = _rng_to_files(rng)
        carry_tensors, carry_kind = _carry_to_files(carry)
        save_file({**rng_tensors, **carry_tensors}, str(tmp / TRAINER_TENSORS))
        full_meta = {"format": "lmscope", "arch": arch, "model": model_config, **(meta or {})}
        _write_json(tmp / LMSCOPE_CONFIG, full_meta)
        trainer = {
            "format": TRAINER_FORMAT,
            "version": TRAINER_VERSION,
            **trainer_state,
            "optimizer": opt_json,
            "rng": rng_json,
            "carry": carry_kind,
            "torch_version": torch.__version__,
        }
        # trainer.json goes last: a folder holding it was written to the end.
        _write_json(tmp / TRAINER_FILE, trainer)

    return write_folder(directory, fill)


def _write_json(path: Path, data: dict) -> None:
    try:
        text = json.dumps(data, indent=1, allow_nan=True)
    except TypeError as err:
        raise CheckpointError(
            "error.checkpoint.cannot-store", file=path.name, why=str(err)
        ) from None
    path.write_text(text, encoding="utf-8")


def _cpu_tensors(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    # Fresh contiguous copies: safetensors refuses tensors that share memory.
    return {k: v.detach().to("cpu", copy=True).contiguous() for k, v in tensors.items()}


# --- reading ----------------------------------------------------------------------------------


def load_checkpoint(directory: str | os.PathLike, *, recover_first: bool = True) -> Checkpoint:
    """Read a checkpoint folder (after ``recover``); CheckpointError says what is wrong.

    Pass ``recover_first=False`` from processes that must not touch the folder (DDP ranks
    other than 0, which read while rank 0 owns it).
    """
    directory = Path(directory)
    if recover_first:
        recover(directory)
    if not directory.is_dir():
        raise CheckpointError("error.checkpoint.no-folder", folder=str(directory))
    if not is_checkpoint(directory):
        raise CheckpointError(
            "error.checkpoint.not-checkpoint",
            folder=str(directory),
            config=LMSCOPE_CONFIG,
            trainer=TRAINER_FILE,
        )
    meta = read_json(directory / LMSCOPE_CONFIG)
    trainer = read_json(directory / TRAINER_FILE)
    if trainer.get("format") != TRAINER_FORMAT or trainer.get("version") != TRAINER_VERSION:
        raise CheckpointError(
            "error.checkpoint.trainer-version",
            file=str(directory / TRAINER_FILE),
            version=str(TRAINER_VERSION),
        )
    for key in ("iteration", "config", "optimizer", "rng"):
        if key not in trainer:
            raise CheckpointError(
                "error.checkpoint.trainer-lacks", file=str(directory / TRAINER_FILE), key=repr(key)
            )
    weights = read_tensors(directory / WEIGHTS_FILE)
    optimizer = optimizer_from_files(read_tensors(directory / OPTIMIZER_FILE), trainer["optimizer"])
    extra = read_tensors(directory / TRAINER_TENSORS)
    return Checkpoint(
        path=directory,
        meta=meta,
        weights=weights,
        trainer=trainer,
        optimizer=optimizer,
        rng=_rng_from_files(extra, trainer["rng"]),
        carry=_carry_from_files(extra, trainer.get("carry", "none")),
    )


# --- optimizer state <-> safetensors + JSON ------------------------------------------------------


def optimizer_to_files(state_dict: dict) -> tuple[dict[str, torch.Tensor], dict]:
    """Split a torch optimizer state_dict into tensors and JSON-ready scalars."""
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict] = {}
    for index, per_param in state_dict["state"].items():
        for name, value in per_param.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{index}.{name}"] = value
            else:
                scalars.setdefault(str(index), {})[name] = value
    groups = [_plain(group) for group in state_dict["param_groups"]]
    return _cpu_tensors(tensors), {"param_groups": groups, "scalars": scalars}


def optimizer_from_files(tensors: dict[str, torch.Tensor], stored: dict) -> dict:
    try:
        state: dict[int, dict] = {}
        for key, tensor in tensors.items():
            index, name = key.split(".", 1)
            state.setdefault(int(index), {})[name] = tensor
        for index, values in stored.get("scalars", {}).items():
            state.setdefault(int(index), {}).update(values)
        groups = []
        for group in stored["param_groups"]:
            group = dict(group)
            if isinstance(group.get("betas"), list):
                group["betas"] = tuple(group["betas"])
            groups.append(group)
    except (KeyError, ValueError, TypeError, AttributeError) as err:
        raise CheckpointError("error.checkpoint.optimizer-damaged", why=str(err)) from None
    return {"state": state, "param_groups": groups}


def _plain(value):
    """Tuples to lists, recursively, so a param group fits JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- RNG state ----------------------------------------------------------------------------------


def capture_rng() -> dict:
    """The state of every random generator a training step may draw from."""
    # legacy=True, the default: the tuple, not the dict
    numpy_state = cast("tuple[str, np.ndarray, int, int, float]", np.random.get_state())
    bit_generator, key, pos, has_gauss, cached = numpy_state
    version, internal, gauss_next = random.getstate()
    state = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "bit_generator": bit_generator,
            "key": torch.from_numpy(key.astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
        "python": [version, list(internal), gauss_next],
        "cuda": [],
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = list(torch.cuda.get_rng_state_all())
    return state


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["bit_generator"],
            numpy_state["key"].numpy().astype(np.uint32),
            numpy_state["pos"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))
    cuda = state.get("cuda") or []
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)


def _rng_to_files(state: dict) -> tuple[dict[str, torch.Tensor], dict]:
    numpy_state = dict(state["numpy"])
    tensors = {"rng.torch": state["torch"], "rng.numpy_key": numpy_state.pop("key")}
    for i, cuda_state in enumerate(state.get("cuda") or []):
        tensors[f"rng.cuda.{i}"] = cuda_state
    scalars = {
        "numpy": numpy_state,
        "python": state["python"],
        "cuda_devices": len(state.get("cuda") or []),
    }
    return _cpu_tensors(tensors), scalars


def _rng_from_files(tensors: dict[str, torch.Tensor], scalars: dict) -> dict:
    try:
        numpy_state = {**scalars["numpy"], "key": tensors["rng.numpy_key"]}
        cuda = [tensors[f"rng.cuda.{i}"] for i in range(int(scalars.get("cuda_devices", 0)))]
        return {
            "torch": tensors["rng.torch"],
            "numpy": numpy_state,
            "python": scalars["python"],
            "cuda": cuda,
        }
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError("error.checkpoint.rng-damaged", missing=str(err)) from None


# --- the hidden state a stateful model carries between batches ----------------------------------


def _carry_to_files(carry) -> tuple[dict[str, torch.Tensor], str]:
    if carry is None:
        return {}, "none"
    if isinstance(carry, torch.Tensor):
        return _cpu_tensors({"carry.0": carry}), "tensor"
    if isinstance(carry, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in carry):
        return _cpu_tensors({f"carry.{i}": t for i, t in enumerate(carry)}), f"tuple:{len(carry)}"
    raise CheckpointError("error.checkpoint.carry-type", type=type(carry).__name__)


def _carry_from_files(tensors: dict[str, torch.Tensor], kind: str):
    try:
        if kind == "none":
            return None
        if kind == "tensor":
            return tensors["carry.0"]
        if kind.startswith("tuple:"):
            return tuple(tensors[f"carry.{i}"] for i in range(int(kind.split(":", 1)[1])))
    except (KeyError, ValueError) as err:
        raise CheckpointError("error.checkpoint.carry-damaged", missing=str(err)) from None
    raise CheckpointError("error.checkpoint.carry-kind", kind=repr(kind), file=TRAINER_FILE)
