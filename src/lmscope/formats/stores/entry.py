"""One model found on this machine: where it lies, the name that opens it, and what it is."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from lmscope.errors import LmscopeError
from lmscope.formats.stores.folder_header import files_in, folder_summary, size_on_disk
from lmscope.formats.stores.gguf_header import read_summary
from lmscope.i18n import Message

GGUF, FOLDER = "gguf", "folder"
LISTED = ("name", "store", "format", "family", "quantization", "experts")


@dataclass(frozen=True)
class StoredModel:
    """A model on disk. ``problem`` says why lmscope cannot open it (None: it can, as far as
    its header tells)."""

    store: str  # "shipped", "package", "hf-cache", "ollama", "lmstudio"
    name: str  # what --model and lmscope.load take
    path: Path  # the GGUF file (an Ollama blob) or the model folder
    format: str  # GGUF or FOLDER
    family: str | None = None  # general.architecture, or config.json's model_type
    n_params: int | None = None
    quantization: str | None = None  # a GGUF's file type (Q4_K_M); a folder's commonest dtype
    tensor_types: dict[str, int] = field(default_factory=dict)
    size: int = 0  # bytes on disk
    experts: int | None = None
    problem: Message | None = None

    def listed(self) -> dict:
        """What every listing says of it under the same names (``lmscope models --json`` and
        the page's model menu add their own)."""
        return {key: getattr(self, key) for key in LISTED}

    def refused(self, message_id: str, **values: object) -> StoredModel:
        return replace(self, problem=Message(message_id, **values))


def shown_path(path: Path) -> str:
    """A path as a name to type: under the home folder as ``~/...`` (``load`` expands it)."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def gguf_model(store: str, name: str, path: Path) -> StoredModel:
    """A GGUF file as a listing shows it: its header read, or the line saying why it cannot be."""
    found = StoredModel(store, name, path, GGUF)
    try:
        size = path.stat().st_size
        summary = read_summary(path)
    except (LmscopeError, OSError) as err:
        return found.refused("error.store.unreadable", why=_said(err))
    return replace(
        found,
        family=summary.architecture,
        n_params=summary.n_params,
        quantization=summary.file_type,
        tensor_types=summary.tensor_types,
        size=size,
        experts=summary.experts,
    )


def folder_model(store: str, name: str, folder: Path) -> StoredModel:
    """A model folder as a listing shows it (config, safetensors headers, size)."""
    found = StoredModel(store, name, folder, FOLDER, size=size_on_disk(files_in(folder)))
    try:
        summary = folder_summary(folder)
    except LmscopeError as err:
        return found.refused("error.store.unreadable", why=_said(err))
    found = replace(
        found,
        family=summary.family,
        n_params=summary.n_params,
        quantization=next(iter(summary.tensor_types), None),
        tensor_types=summary.tensor_types,
    )
    if not summary.weights:
        return found.refused("error.store.no-weights")
    if summary.quantized:
        return found.refused("error.store.quantized-folder", method=summary.quantized)
    return found


def _said(err: BaseException) -> Message | str:
    """An error as a value of another message: its catalog message when it has one."""
    if isinstance(err, LmscopeError) and err.message is not None:
        return err.message
    if isinstance(err, OSError):
        return err.strerror or type(err).__name__
    return str(err)
