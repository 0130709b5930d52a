"""What a GGUF file is, from its header alone: architecture, name, file type, parameter count
and tensor types. No tensor is read, so listing a store of many gigabytes takes milliseconds.

The reader walks the key/values and the tensor table with every length checked against the
file's size; a long array (a vocabulary of 262,144 strings) is skipped in one tight loop. A
file that is not a GGUF, or whose header is cut short, is one ``CheckpointError`` line.
"""

from __future__ import annotations

import math
import mmap
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lmscope.errors import CheckpointError
from lmscope.i18n import Message

GGUF_MAGIC = b"GGUF"
# GGUF value types: their sizes (scalars) and struct formats
_FORMATS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")
# the few keys a listing shows; "{arch}." is filled in once general.architecture is read
_WANTED = ("general.architecture", "general.name", "general.file_type", "general.size_label")
_WANTED_PER_ARCH = ("expert_count", "expert_used_count", "block_count", "context_length")


@dataclass(frozen=True)
class GGUFSummary:
    """A GGUF file's header, summed up."""

    architecture: str | None  # general.architecture ("qwen3", "gemma3", "clip", ...)
    name: str | None  # general.name
    file_type: str  # general.file_type as llama.cpp names it ("Q4_K_M"), else the commonest type
    n_params: int  # elements of every tensor
    tensor_types: dict[str, int] = field(
        default_factory=dict
    )  # GGML type -> tensors, commonest first
    experts: int | None = None  # {arch}.expert_count: a mixture of experts
    layers: int | None = None


def is_gguf(path: Path) -> bool:
    """Whether ``path`` is a file that starts as a GGUF does (an Ollama blob has no suffix)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


def read_summary(path: Path) -> GGUFSummary:
    """The summary of the GGUF file at ``path``, read from its header only."""
    label = str(path)
    try:
        size = path.stat().st_size
        if size < 24:
            raise CheckpointError("error.gguf.too-short", file=label, size=size)
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _Header(buf, size, label).summary()
    except OSError as err:
        raise CheckpointError("error.cannot-read", file=label, why=err.strerror or err) from None


class _Header:
    def __init__(self, buf: mmap.mmap, size: int, label: str):
        self.buf, self.size, self.label, self.pos = buf, size, label, 0

    def take(self, n: int, what: object) -> int:
        if n < 0 or n > self.size - self.pos:
            raise CheckpointError(
                "error.gguf.ends-inside", file=self.label, what=what, size=self.size
            )
        start = self.pos
        self.pos += n
        return start

    def scalar(self, vtype: int, what: object):
        fmt = _FORMATS[vtype]
        return struct.unpack_from(fmt, self.buf, self.take(struct.calcsize(fmt), what))[0]

    def u64(self, what: object) -> int:
        return _U64.unpack_from(self.buf, self.take(8, what))[0]

    def text(self, what: object) -> str:
        n = self.u64(what)
        start = self.take(n, what)
        return bytes(self.buf[start : start + n]).decode("utf-8", errors="replace")

    def value(self, vtype: int, what: object, keep: bool):
        """The value (when ``keep``) or None after skipping it."""
        if vtype in _FORMATS:
            if keep:
                return self.scalar(vtype, what)
            self.take(struct.calcsize(_FORMATS[vtype]), what)
            return None
        if vtype == _STRING:
            if keep:
                return self.text(what)
            self.take(self.u64(what), what)
            return None
        if vtype == _ARRAY:
            self._skip_array(what)
            return None
        raise CheckpointError(
            "error.gguf.unknown-value-type", file=self.label, what=what, type=str(vtype)
        )

    def _skip_array(self, what: object, depth: int = 0) -> None:
        itype = self.scalar(4, what)
        count = self.u64(what)
        if itype in _FORMATS:
            self.take(count * struct.calcsize(_FORMATS[itype]), what)
        elif itype == _STRING:
            if count > (self.size - self.pos) // 8:
                raise CheckpointError(
                    "error.gguf.too-many-items", file=self.label, what=what, count=count
                )
            pos, buf, unpack = self.pos, self.buf, _U64.unpack_from
            end = self.size
            for _ in range(count):  # each string: its length, then its bytes
                if pos + 8 > end:
                    pos = end + 1
                    break
                pos += 8 + unpack(buf, pos)[0]
            if pos > end:
                self.pos = end
                raise CheckpointError(
                    "error.gguf.ends-inside", file=self.label, what=what, size=self.size
                )
            self.pos = pos
        elif itype == _ARRAY and depth < 4:
            for _ in range(count):
                self._skip_array(what, depth + 1)
        else:
            raise CheckpointError(
                "error.gguf.unknown-item-type", file=self.label, what=what, type=str(itype)
            )

    def summary(self) -> GGUFSummary:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        magic = bytes(self.buf[:4])
        if magic != GGUF_MAGIC:
            raise CheckpointError("error.gguf.not-gguf", file=self.label, magic=repr(magic))
        self.pos = 4
        version = self.scalar(4, Message("error.gguf.part.version"))
        if version not in (2, 3):
            raise CheckpointError("error.gguf.version", file=self.label, version=str(version))
        n_tensors = self.u64(Message("error.gguf.part.tensor-count"))
        n_kv = self.u64(Message("error.gguf.part.metadata-count"))
        if n_kv > self.size // 13 or n_tensors > self.size // 29:
            raise CheckpointError(
                "error.gguf.header-too-big", file=self.label, entries=n_kv, tensors=n_tensors
            )
        found: dict[str, object] = {}
        for i in range(n_kv):
            key = self.text(Message("error.gguf.part.metadata-key", i=str(i)))
            vtype = self.scalar(4, Message("error.gguf.part.metadata-type", key=key))
            keep = key in _WANTED or key.rsplit(".", 1)[-1] in _WANTED_PER_ARCH
            value = self.value(vtype, Message("error.gguf.part.metadata", key=key), keep)
            if keep:
                found[key] = value
        n_params, types = 0, Counter[str]()
        for i in range(n_tensors):
            name = self.text(Message("error.gguf.part.tensor-name", i=str(i)))
            n_dims = self.scalar(4, Message("error.gguf.part.tensor-rank", tensor=name))
            if not 1 <= n_dims <= 4:
                raise CheckpointError(
                    "error.gguf.tensor-rank", file=self.label, tensor=name, dims=str(n_dims)
                )
            shape_of = Message("error.gguf.part.tensor-shape", tensor=name)
            dims = [self.u64(shape_of) for _ in range(n_dims)]
            raw_type = self.scalar(4, Message("error.gguf.part.tensor-type", tensor=name))
            self.u64(Message("error.gguf.part.tensor-offset", tensor=name))
            try:
                qtype = GGMLQuantizationType(raw_type)
                GGML_QUANT_SIZES[qtype]
            except (ValueError, KeyError):
                raise CheckpointError(
                    "error.gguf.unknown-tensor-type",
                    file=self.label,
                    tensor=name,
                    type=str(raw_type),
                ) from None
            n_params += math.prod(dims)
            types[qtype.name] += 1
        named = found.get("general.architecture")
        arch = named if isinstance(named, str) else None

        def per_arch(key: str) -> int | None:
            value = found.get(f"{arch}.{key}")
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        title = found.get("general.name")
        return GGUFSummary(
            architecture=arch,
            name=title if isinstance(title, str) else None,
            file_type=_file_type(found.get("general.file_type"), types),
            n_params=n_params,
            tensor_types=dict(types.most_common()),
            experts=per_arch("expert_count"),
            layers=per_arch("block_count"),
        )


def _file_type(value: object, types: Counter[str]) -> str:
    """general.file_type as llama.cpp names it (MOSTLY_Q4_K_M -> Q4_K_M), else the type most
    matrices have."""
    from gguf.constants import LlamaFileType

    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return LlamaFileType(value).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    return types.most_common(1)[0][0] if types else "?"
