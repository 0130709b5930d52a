"""GGUF files (llama.cpp's format) read into Hugging Face names and float32 tensors.

``read_gguf`` turns a ``.gguf`` file into a ``GGUFModel``: a ``config.json``-style dict, the
tensors under Hugging Face names (``model.layers.0.self_attn.q_proj.weight``, ...) as float32
``[out, in]`` matrices, the raw tokenizer fields, and a summary of the quantization types.
``load_gguf`` does the same through a cache of the dequantized tensors, so that only the first
load of a file pays for parsing and dequantizing it.

Two things differ from a Hugging Face checkpoint:

* GGUF lists dimensions fastest-first (``[in, out]`` for a matrix); the reader reverses them.
* llama.cpp's converter reorders the rows of ``q_proj`` and ``k_proj`` (weights and biases) for
  the llama family, because llama.cpp rotates interleaved pairs (0, 1), (2, 3), ... of each head
  while Hugging Face's Llama rotates the two halves (i, i + d/2). Within every head of ``d`` rows
  the file holds, at row ``2 * i + j``, the Hugging Face row ``j * d/2 + i`` (``i < d/2``,
  ``j`` in 0, 1); ``unpermute_rows`` puts them back. Query heads count ``num_attention_heads``,
  key heads ``num_key_value_heads``. Qwen2 files are written with Hugging Face's half-split
  layout (llama.cpp runs them with NeoX-style RoPE) and are left as they are.

Every problem with the file itself is one ``CheckpointError`` line that names the file: the
header is walked with bounds checks before the ``gguf`` package reads it, so a truncated or
garbled file never reaches numpy as a shape error or an endless loop.
"""

from __future__ import annotations

import math
import mmap
import re
import struct
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lmscope import i18n
from lmscope.errors import CheckpointError, ModelNotFoundError
from lmscope.formats.layout import SUPPORTED_ARCHITECTURES
from lmscope.i18n import Message

# Architectures whose q/k rows llama.cpp's converter permutes (LlamaModel.permute).
PERMUTED_ARCHITECTURES = ("llama", "mistral")
CACHE_FORMAT = 1  # bump when the conversion changes, so old cache entries are rebuilt

_HF_ARCHITECTURES = {
    "llama": "LlamaForCausalLM",
    "mistral": "MistralForCausalLM",
    "qwen2": "Qwen2ForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "phi3": "Phi3ForCausalLM",
    "gemma3_text": "Gemma3ForCausalLM",
}
# model_type of a file whose blocks hold experts, by its general.architecture (llama.cpp writes
# Mixtral as 'llama' with an expert count)
_MOE_TYPES = {"llama": "mixtral", "qwen3moe": "qwen3_moe"}
_QK_NORM_TYPES = ("qwen3", "qwen3_moe", "gemma3_text")  # an RMSNorm on each head's q and k
_GLOBAL_TENSORS = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}
_BLOCK_TENSORS = {
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "attn_qkv": "self_attn.qkv_proj",  # Phi-3: q, k and v in one matrix
    "ffn_gate_inp": "mlp.gate",  # a mixture of experts' router
    # every expert's matrix of a block in one [expert, out, in] tensor (split by the model)
    "ffn_gate_exps": "mlp.experts.gate_proj",
    "ffn_up_exps": "mlp.experts.up_proj",
    "ffn_down_exps": "mlp.experts.down_proj",
}
# Phi-3's ffn_up holds the gate and up projections together (Hugging Face's gate_up_proj)
_ARCH_RENAMES = {"phi3": {".mlp.up_proj.": ".mlp.gate_up_proj."}}
# Gemma 3's four norms a block: ffn_norm is the one before the MLP, as in Llama, but Hugging
# Face calls it pre_feedforward_layernorm there (its post_attention_layernorm is the norm after
# attention). llama.cpp stores Gemma's norm gains as 1 + w; the reader takes the 1 away.
_ARCH_BLOCK_TENSORS = {
    "gemma3": {
        "ffn_norm": "pre_feedforward_layernorm",
        "post_attention_norm": "post_attention_layernorm",
        "post_ffw_norm": "post_feedforward_layernorm",
    }
}
_NORM_SHIFTED = ("gemma3",)
_BLOCK_NAME = re.compile(r"blk\.(\d+)\.([a-z_]+)\.(weight|bias)")
# Tensors that carry nothing a Hugging Face model needs: very old llama files stored the
# rotary inverse frequencies per block.
_IGNORED_TENSORS = re.compile(r"blk\.\d+\.attn_rot_embd\.weight")
_ROPE_FREQS = "rope_freqs.weight"
# LongRoPE's per-pair factors (Phi-3.5, Phi-4-mini): llama.cpp's converter stores the config's
# long_factor and short_factor lists as these two tensors
_LONGROPE_TENSORS = {
    "rope_factors_long.weight": "long_factor",
    "rope_factors_short.weight": "short_factor",
}
# Tokenizer fields kept out of ``metadata`` (they go to ``tokenizer`` whole).
_BIG_TOKENIZER_FIELDS = (
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.merges",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.scores",
)


@dataclass
class GGUFModel:
    """What a GGUF file holds, in Hugging Face terms."""

    path: Path
    architecture: str  # general.architecture, as written in the file
    name: str | None  # general.name
    config: dict[str, Any]  # config.json-style: model_type, hidden_size, ...
    tensors: dict[str, torch.Tensor]  # Hugging Face names -> float32 tensors
    tokenizer: dict[str, Any]  # raw tokenizer fields: model, pre, tokens, merges, ...
    quant_types: dict[str, str]  # Hugging Face tensor name -> GGML type name ("Q4_1", "F32")
    file_type: str  # general.file_type as a name ("Q4_1", "Q4_K_M", "F16")
    metadata: dict[str, Any] = field(default_factory=dict)  # other key/values (general.*, ...)
    sha256: str | None = None  # of the GGUF file; set by load_gguf
    from_cache: bool = False  # True when load_gguf read the tensors from its cache

    @property
    def n_params(self) -> int:
        return sum(t.numel() for t in self.tensors.values())

    @property
    def quant_counts(self) -> dict[str, int]:
        """How many tensors each GGML type holds, most common first."""
        return dict(Counter(self.quant_types.values()).most_common())


# ---------------------------------------------------------------------------------------------
# Finding the shipped model


# ---------------------------------------------------------------------------------------------
# The header, walked with bounds checks before the gguf package sees it

_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY, _UINT32 = 8, 9, 4
_MAX_DIMS = 4  # GGML_MAX_DIMS


@dataclass
class _TensorInfo:
    name: str
    dims: tuple[int, ...]  # as in the file: fastest-varying first
    ggml_type: int
    offset: int  # from the start of the data section
    n_bytes: int


class _HeaderScan:
    """Walks a GGUF header, checking every length against the file size."""

    def __init__(self, buf: mmap.mmap, size: int, label: str):
        self.buf, self.size, self.label, self.pos = buf, size, label, 0

    def fail(self, message_id: str, **values: object) -> CheckpointError:
        return CheckpointError(message_id, file=self.label, **values)

    def take(self, n: int, what: object) -> int:
        if n > self.size - self.pos:
            raise self.fail("error.gguf.ends-inside", what=what, size=self.size)
        start = self.pos
        self.pos += n
        return start

    def u32(self, what: object) -> int:
        return struct.unpack_from("<I", self.buf, self.take(4, what))[0]

    def u64(self, what: object) -> int:
        return struct.unpack_from("<Q", self.buf, self.take(8, what))[0]

    def text(self, what: object) -> str:
        n = self.u64(Message("error.gguf.part.length", what=what))
        start = self.take(n, what)
        try:
            return self.buf[start : start + n].decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail("error.gguf.not-utf8", what=what) from None

    def skip_value(self, vtype: int, what: object, depth: int = 0) -> None:
        if vtype in _SCALAR_SIZES:
            self.take(_SCALAR_SIZES[vtype], what)
        elif vtype == _STRING:
            n = self.u64(Message("error.gguf.part.length", what=what))
            self.take(n, what)
        elif vtype == _ARRAY and depth < 4:
            itype = self.u32(Message("error.gguf.part.item-type", what=what))
            count = self.u64(Message("error.gguf.part.length", what=what))
            if itype in _SCALAR_SIZES:
                self.take(count * _SCALAR_SIZES[itype], what)
            elif itype in (_STRING, _ARRAY):
                smallest = 8 if itype == _STRING else 12
                if count > (self.size - self.pos) // smallest:
                    raise self.fail("error.gguf.too-many-items", what=what, count=count)
                for _ in range(count):
                    self.skip_value(itype, what, depth + 1)
            else:
                raise self.fail("error.gguf.unknown-item-type", what=what, type=str(itype))
        else:
            raise self.fail("error.gguf.unknown-value-type", what=what, type=str(vtype))

    def run(self) -> tuple[int, list[_TensorInfo]]:
        """(start of the data section, tensor infos); raises CheckpointError."""
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        magic = bytes(self.buf[:4])
        if magic != b"GGUF":
            raise self.fail("error.gguf.not-gguf", magic=repr(magic))
        self.pos = 4
        version = self.u32(Message("error.gguf.part.version"))
        if version & 0xFFFF == 0 and version:
            raise self.fail("error.gguf.big-endian")
        if version not in (2, 3):
            raise self.fail("error.gguf.version", version=str(version))
        n_tensors = self.u64(Message("error.gguf.part.tensor-count"))
        n_kv = self.u64(Message("error.gguf.part.metadata-count"))
        rest = self.size - self.pos
        if n_kv > rest // 13 or n_tensors > rest // 29:
            raise self.fail("error.gguf.header-too-big", entries=n_kv, tensors=n_tensors)
        alignment = 32
        for i in range(n_kv):
            key = self.text(Message("error.gguf.part.metadata-key", i=str(i)))
            vtype = self.u32(Message("error.gguf.part.metadata-type", key=key))
            if key == "general.alignment":
                if vtype != _UINT32:
                    raise self.fail("error.gguf.alignment-type")
                alignment = self.u32(Message("error.gguf.part.metadata", key=key))
                if alignment == 0 or alignment & (alignment - 1):
                    raise self.fail("error.gguf.alignment", alignment=str(alignment))
            else:
                self.skip_value(vtype, Message("error.gguf.part.metadata", key=key))
        infos = []
        for i in range(n_tensors):
            name = self.text(Message("error.gguf.part.tensor-name", i=str(i)))
            n_dims = self.u32(Message("error.gguf.part.tensor-rank", tensor=name))
            if not 1 <= n_dims <= _MAX_DIMS:
                raise self.fail("error.gguf.tensor-rank", tensor=name, dims=str(n_dims))
            shape_of = Message("error.gguf.part.tensor-shape", tensor=name)
            dims = tuple(self.u64(shape_of) for _ in range(n_dims))
            raw_type = self.u32(Message("error.gguf.part.tensor-type", tensor=name))
            try:
                ggml_type = GGMLQuantizationType(raw_type)
                block, type_size = GGML_QUANT_SIZES[ggml_type]
            except (ValueError, KeyError):
                raise self.fail(
                    "error.gguf.unknown-tensor-type", tensor=name, type=str(raw_type)
                ) from None
            if dims[0] % block:
                raise self.fail(
                    "error.gguf.block-size",
                    tensor=name,
                    n=str(dims[0]),
                    type=ggml_type.name,
                    block=str(block),
                )
            n_bytes = math.prod(dims) // block * type_size
            offset = self.u64(Message("error.gguf.part.tensor-offset", tensor=name))
            infos.append(_TensorInfo(name, dims, raw_type, offset, n_bytes))
        data_start = -(-self.pos // alignment) * alignment
        for info in infos:
            if info.offset % alignment:
                raise self.fail(
                    "error.gguf.misaligned",
                    tensor=info.name,
                    offset=str(info.offset),
                    alignment=str(alignment),
                )
            end = data_start + info.offset + info.n_bytes
            if end > self.size:
                raise CheckpointError(
                    "error.gguf.truncated-tensor",
                    file=self.label,
                    tensor=info.name,
                    needs=end,
                    size=self.size,
                )
        return data_start, infos


def _scan_header(path: Path, label: str) -> list[_TensorInfo]:
    try:
        size = path.stat().st_size
        if size < 4:
            raise CheckpointError("error.gguf.too-short", file=label, size=size)
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _HeaderScan(buf, size, label).run()[1]
    except OSError as err:
        raise CheckpointError("error.cannot-read", file=label, why=err.strerror or err) from None


# ---------------------------------------------------------------------------------------------
# Metadata


class _Fields:
    """Typed access to a GGUFReader's key/values; wrong or missing ones are CheckpointErrors."""

    def __init__(self, reader: Any, label: str):
        self.reader, self.label = reader, label

    def __contains__(self, key: str) -> bool:
        return key in self.reader.fields

    def raw(self, key: str) -> Any:
        from gguf.constants import GGUFValueType

        f = self.reader.fields[key]
        try:
            value = f.contents()
        except (UnicodeDecodeError, IndexError, ValueError) as err:
            raise CheckpointError(
                "error.gguf.metadata-unreadable", file=self.label, key=key, why=_first_line(err)
            ) from None
        if f.types and f.types[-1] == GGUFValueType.FLOAT32:  # 1e-05, not 9.99999974e-06
            if isinstance(value, list):
                return [float(str(np.float32(v))) for v in value]
            return float(str(np.float32(value)))
        return value

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        if key not in self.reader.fields:
            return default
        value = self.raw(key)
        if kind is int and isinstance(value, list) and value and len(set(value)) == 1:
            value = value[0]  # a per-layer list with one value for every layer
        ok = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            want: dict[type | tuple[type, ...], Message] = {
                int: Message("error.gguf.part.whole-number"),
                float: Message("error.gguf.part.number"),
                str: Message("error.gguf.part.text"),
                bool: Message("error.gguf.part.true-false"),
                list: Message("error.gguf.part.list"),
            }
            raise CheckpointError(
                "error.gguf.metadata-kind",
                file=self.label,
                key=key,
                kind=want.get(kind, kind),
                found=repr(str(value)[:60]),
            )
        return value

    def need(self, key: str, kind: type) -> Any:
        value = self.get(key, kind)
        if value is None:
            raise CheckpointError("error.gguf.metadata-missing", file=self.label, key=key)
        return value


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:200]


def _file_type_name(value: int | None, types: list[str]) -> str:
    from gguf.constants import LlamaFileType

    if value is not None:
        try:
            name = LlamaFileType(value).name
        except ValueError:
            return f"type {value}"
        return name.removeprefix("MOSTLY_").removeprefix("ALL_")
    return Counter(types).most_common(1)[0][0] if types else "unknown"


def _model_type(arch: str, name: str | None, experts: int | None) -> str:
    if experts and arch in _MOE_TYPES:
        return _MOE_TYPES[arch]
    if arch == "gemma3":
        return "gemma3_text"
    # llama.cpp writes Mistral models as 'llama'; transformers tells them apart by the name.
    if arch == "llama" and name and "mistral" in name.lower():
        return "mistral"
    return arch


def _rope_scaling(fields: _Fields, arch: str, label: str) -> dict[str, Any] | None:
    kind = fields.get(f"{arch}.rope.scaling.type", str)
    factor = fields.get(f"{arch}.rope.scaling.factor", float)
    if kind is None and fields.get(f"{arch}.rope.scale_linear", float) is not None:
        kind, factor = "linear", fields.get(f"{arch}.rope.scale_linear", float)
    if kind in (None, "none") or (kind == "linear" and factor in (None, 1.0)):
        return None
    if factor is None:
        raise CheckpointError("error.gguf.rope-no-factor", file=label, kind=kind)
    if kind == "linear":
        return {"rope_type": "linear", "factor": factor}
    if kind == "yarn":
        scaling: dict[str, Any] = {"rope_type": "yarn", "factor": factor}
        original = fields.get(f"{arch}.rope.scaling.original_context_length", int)
        if original is not None:
            scaling["original_max_position_embeddings"] = original
        return scaling
    raise CheckpointError("error.gguf.rope-unsupported", file=label, kind=kind)


def _llama3_rope_scaling(factors: np.ndarray, theta: float, dim: int, label: str) -> dict:
    """Recognise the Llama 3 RoPE factors llama.cpp stores as ``rope_freqs.weight``: they are
    a function of factor, low/high frequency factors and the original context; the Llama 3.x
    releases all use low 1, high 4, original 8192, which are checked against every value."""
    factors = factors.astype(np.float64).reshape(-1)
    factor = float(factors.max())
    low, high, original = 1.0, 4.0, 8192
    inv_freq = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    wavelen = 2 * math.pi / inv_freq
    smooth = (original / wavelen - low) / (high - low)
    expected = np.where(
        wavelen < original / high,
        1.0,
        np.where(wavelen > original / low, factor, 1 / ((1 - smooth) / factor + smooth)),
    )
    if factors.shape != expected.shape or not np.allclose(factors, expected, rtol=1e-4):
        raise CheckpointError("error.gguf.llama3-rope", file=label)
    return {
        "rope_type": "llama3",
        "factor": float(str(np.float32(factor))),
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": original,
    }


def _longrope_scaling(
    fields: _Fields, arch: str, tensors: dict[str, Any], config: dict[str, Any], label: str
) -> dict[str, Any]:
    """LongRoPE as llama.cpp's converter stores it: the two factor lists as tensors, the
    original context and the attention factor as keys (transformers' formula when absent)."""
    if len(tensors) != 2:
        missing = (
            "rope_factors_short.weight" if "long_factor" in tensors else "rope_factors_long.weight"
        )
        raise CheckpointError("error.gguf.tensor-missing", file=label, tensor=missing)
    p = f"{arch}.rope.scaling."
    original = fields.need(p + "original_context_length", int)
    attention = fields.get(p + "attn_factor", float)
    if attention is None:
        scale = config["max_position_embeddings"] / original
        attention = 1.0
        if scale > 1 and original > 1:
            attention = math.sqrt(1 + math.log(scale) / math.log(original))
    scaling: dict[str, Any] = {
        "rope_type": "longrope",
        "original_max_position_embeddings": original,
        "attention_factor": attention,
    }
    for key, tensor in tensors.items():
        scaling[key] = [float(v) for v in _dequantize(tensor, label).reshape(-1)]
    return scaling


def _config(
    fields: _Fields, arch: str, name: str | None, shapes: dict[str, tuple[int, ...]], label: str
) -> dict[str, Any]:
    p = f"{arch}."
    hidden = fields.need(p + "embedding_length", int)
    heads = fields.need(p + "attention.head_count", int)
    kv_heads = fields.get(p + "attention.head_count_kv", int, heads)
    key_length = fields.get(p + "attention.key_length", int)
    if "model.embed_tokens.weight" not in shapes:
        raise CheckpointError("error.gguf.tensor-missing", file=label, tensor="token_embd.weight")
    vocab = shapes["model.embed_tokens.weight"][0]
    declared_vocab = fields.get(p + "vocab_size", int)
    if declared_vocab is not None and declared_vocab != vocab:
        raise CheckpointError(
            "error.gguf.vocab-mismatch", file=label, declared=str(declared_vocab), rows=str(vocab)
        )
    experts = fields.get(p + "expert_count", int)
    model_type = _model_type(arch, name, experts)
    config: dict[str, Any] = {
        "architectures": [_HF_ARCHITECTURES[model_type]],
        "model_type": model_type,
        "vocab_size": vocab,
        "hidden_size": hidden,
        "num_hidden_layers": fields.need(p + "block_count", int),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "intermediate_size": fields.need(p + "feed_forward_length", int),
        "rms_norm_eps": fields.need(p + "attention.layer_norm_rms_epsilon", float),
        "rope_theta": fields.get(p + "rope.freq_base", float, 10000.0),
        "max_position_embeddings": fields.need(p + "context_length", int),
        "tie_word_embeddings": "lm_head.weight" not in shapes,
        "hidden_act": "silu",
        "torch_dtype": "float32",
    }
    if min(hidden, heads, kv_heads, config["num_hidden_layers"]) <= 0 or heads % kv_heads:
        raise CheckpointError(
            "error.gguf.bad-heads",
            file=label,
            heads=str(heads),
            kv_heads=str(kv_heads),
            hidden=str(hidden),
        )
    if key_length is not None:
        config["head_dim"] = key_length
    head_dim = key_length or hidden // heads
    value_length = fields.get(p + "attention.value_length", int)
    if value_length is not None and value_length != head_dim:
        raise CheckpointError("error.gguf.kv-sizes", file=label)
    rope_dim = fields.get(p + "rope.dimension_count", int)
    if rope_dim is not None and rope_dim != head_dim:
        # Phi-4-mini rotates the first 96 of 128 dims (transformers: partial_rotary_factor)
        partial = rope_dim / head_dim
        if (
            model_type != "phi3"
            or not 0 < rope_dim < head_dim
            or int(head_dim * partial) != rope_dim
        ):
            raise CheckpointError(
                "error.gguf.partial-rope", file=label, rope=str(rope_dim), head=str(head_dim)
            )
        config["partial_rotary_factor"] = partial
    if head_dim % 2 or (key_length is None and hidden % heads):
        raise CheckpointError(
            "error.gguf.heads-split", file=label, hidden=str(hidden), heads=str(heads)
        )
    if model_type in ("llama", "mistral", "qwen3", "qwen3_moe"):
        config["attention_bias"] = "model.layers.0.self_attn.q_proj.bias" in shapes
        config["mlp_bias"] = False
    if model_type == "mistral":
        config["sliding_window"] = fields.get(p + "attention.sliding_window", int)
    if model_type in ("qwen2", "qwen3", "qwen3_moe"):
        config["use_sliding_window"] = False
        config["sliding_window"] = None
    if model_type == "phi3":  # llama.cpp writes 0 for none (Phi-4-mini)
        config["sliding_window"] = fields.get(p + "attention.sliding_window", int) or None
    if model_type in ("mixtral", "qwen3_moe"):
        config["num_local_experts"] = experts
        config["num_experts_per_tok"] = fields.need(p + "expert_used_count", int)
    if model_type == "qwen3_moe":  # llama.cpp divides the chosen experts' weights by their sum
        config["moe_intermediate_size"] = fields.need(p + "expert_feed_forward_length", int)
        config["norm_topk_prob"] = fields.get(p + "expert_weights_norm", bool, True)
    scaling = _rope_scaling(fields, arch, label)
    if scaling is not None:
        config["rope_scaling"] = scaling
    if model_type == "gemma3_text":
        _gemma3_config(fields, p, config)
    for key, hf_key in (("bos_token_id", "bos_token_id"), ("eos_token_id", "eos_token_id")):
        value = fields.get(f"tokenizer.ggml.{key}", int)
        if value is not None:
            config[hf_key] = value
    return config


def _gemma3_config(fields: _Fields, p: str, config: dict[str, Any]) -> None:
    """Gemma 3's fields as llama.cpp runs them: every sixth layer global (the others slide a
    window), RoPE base freq_base_swa (default 10,000) on local layers, scores scaled by
    d_head^-1/2 (llama.cpp's 27B divides by d_model / n_head instead: not read here)."""
    n_layer = config["num_hidden_layers"]
    pattern = fields.get(p + "attention.sliding_window_pattern", int, 6)
    config["layer_types"] = [
        "full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(n_layer)
    ]
    config["sliding_window"] = fields.need(p + "attention.sliding_window", int)
    config["query_pre_attn_scalar"] = config.get("head_dim") or (
        config["hidden_size"] // config["num_attention_heads"]
    )
    config["hidden_activation"] = "gelu_pytorch_tanh"
    config["attention_bias"] = False
    full = {"rope_type": "default", "rope_theta": config["rope_theta"]}
    full.update(config.pop("rope_scaling", None) or {})  # the larger models' linear scaling
    local = fields.get(p + "rope.freq_base_swa", float, 10000.0)
    config["rope_parameters"] = {
        "full_attention": full,
        "sliding_attention": {"rope_type": "default", "rope_theta": local},
    }


def _expected_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    head_dim = config.get("head_dim") or hidden // config["num_attention_heads"]
    q_rows = config["num_attention_heads"] * head_dim
    kv_rows = config["num_key_value_heads"] * head_dim
    inter = config["intermediate_size"]
    shapes: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (vocab, hidden),
        "model.norm.weight": (hidden,),
    }
    if not config["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (vocab, hidden)
    model_type = config["model_type"]
    qkv_bias = model_type == "qwen2" or config.get("attention_bias", False)
    for i in range(config["num_hidden_layers"]):
        b = f"model.layers.{i}."
        shapes[b + "input_layernorm.weight"] = (hidden,)
        shapes[b + "post_attention_layernorm.weight"] = (hidden,)
        shapes[b + "self_attn.o_proj.weight"] = (hidden, q_rows)
        if model_type in _QK_NORM_TYPES:
            shapes[b + "self_attn.q_norm.weight"] = (head_dim,)
            shapes[b + "self_attn.k_norm.weight"] = (head_dim,)
        if model_type == "gemma3_text":  # the sandwich's other two norms
            shapes[b + "pre_feedforward_layernorm.weight"] = (hidden,)
            shapes[b + "post_feedforward_layernorm.weight"] = (hidden,)
        if model_type == "phi3":  # fused projections, no biases
            shapes[b + "self_attn.qkv_proj.weight"] = (q_rows + 2 * kv_rows, hidden)
            shapes[b + "mlp.gate_up_proj.weight"] = (2 * inter, hidden)
            shapes[b + "mlp.down_proj.weight"] = (hidden, inter)
            continue
        shapes[b + "self_attn.q_proj.weight"] = (q_rows, hidden)
        shapes[b + "self_attn.k_proj.weight"] = (kv_rows, hidden)
        shapes[b + "self_attn.v_proj.weight"] = (kv_rows, hidden)
        if qkv_bias:
            shapes[b + "self_attn.q_proj.bias"] = (q_rows,)
            shapes[b + "self_attn.k_proj.bias"] = (kv_rows,)
            shapes[b + "self_attn.v_proj.bias"] = (kv_rows,)
        if config.get("attention_bias", False):
            shapes[b + "self_attn.o_proj.bias"] = (hidden,)
        if "num_local_experts" in config:  # a router and every expert's three matrices
            n, width = config["num_local_experts"], config.get("moe_intermediate_size", inter)
            shapes[b + "mlp.gate.weight"] = (n, hidden)
            shapes[b + "mlp.experts.gate_proj.weight"] = (n, width, hidden)
            shapes[b + "mlp.experts.up_proj.weight"] = (n, width, hidden)
            shapes[b + "mlp.experts.down_proj.weight"] = (n, hidden, width)
            continue
        shapes[b + "mlp.gate_proj.weight"] = (inter, hidden)
        shapes[b + "mlp.up_proj.weight"] = (inter, hidden)
        shapes[b + "mlp.down_proj.weight"] = (hidden, inter)
    return shapes


def _hf_name(gguf_name: str, arch: str = "llama") -> str | None:
    if gguf_name in _GLOBAL_TENSORS:
        return _GLOBAL_TENSORS[gguf_name]
    m = _BLOCK_NAME.fullmatch(gguf_name)
    names = {**_BLOCK_TENSORS, **_ARCH_BLOCK_TENSORS.get(arch, {})}
    if m is None or m.group(2) not in names:
        return None
    return f"model.layers.{int(m.group(1))}.{names[m.group(2)]}.{m.group(3)}"


def _tokenizer(fields: _Fields) -> dict[str, Any]:
    t = "tokenizer.ggml."
    out: dict[str, Any] = {
        "model": fields.get(t + "model", str),
        "pre": fields.get(t + "pre", str),
        "tokens": fields.get(t + "tokens", list, []),
        "merges": fields.get(t + "merges", list, []),
        "token_type": fields.get(t + "token_type", list, []),
    }
    if t + "scores" in fields:
        out["scores"] = fields.get(t + "scores", list)
    for key in ("bos_token_id", "eos_token_id", "padding_token_id", "unknown_token_id"):
        value = fields.get(t + key, int)
        if value is not None:
            out[key] = value
    for key in ("add_bos_token", "add_eos_token", "add_space_prefix"):
        value = fields.get(t + key, bool)
        if value is not None:
            out[key] = value
    template = fields.get("tokenizer.chat_template", str)
    if template is not None:
        out["chat_template"] = template
    return out


def _metadata(fields: _Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in fields.reader.fields:
        if key.startswith("GGUF.") or key in _BIG_TOKENIZER_FIELDS:
            continue
        if key == "tokenizer.chat_template":
            continue  # in the tokenizer dict
        value = fields.raw(key)
        if isinstance(value, list) and len(value) > 64:
            value = f"[{len(value)} values]"
        out[key] = value
    return out


# ---------------------------------------------------------------------------------------------
# Tensors


def unpermute_rows(weight: torch.Tensor, n_head: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation (``LlamaModel.permute`` in convert_hf_to_gguf.py).

    Per head of ``d`` rows the converter turned Hugging Face row ``j * d/2 + i`` into row
    ``2 * i + j``; viewing the rows as ``[head, i, j]`` and swapping ``i`` and ``j`` reverses
    it. Works on weights ``[rows, in]`` and biases ``[rows]``.
    """
    rows = weight.shape[0]
    if rows % (2 * n_head):
        raise ValueError(f"{rows} rows do not split into {n_head} heads of pairs")
    d = rows // n_head
    rest = tuple(weight.shape[1:])
    return weight.reshape(n_head, d // 2, 2, *rest).transpose(1, 2).reshape(rows, *rest)


def _dequantize(tensor: Any, label: str) -> np.ndarray:
    """A GGUFReader tensor as a float32 array in Hugging Face order (dims reversed)."""
    from gguf.constants import GGMLQuantizationType as T
    from gguf.quants import dequantize

    qtype = tensor.tensor_type
    shape = tuple(int(d) for d in reversed(tensor.shape.tolist()))
    try:
        if qtype == T.F32:
            array = np.array(tensor.data, dtype=np.float32)  # a copy, out of the memory map
        elif qtype in (T.F16, T.F64):
            array = np.asarray(tensor.data).astype(np.float32)
        elif qtype in (T.I8, T.I16, T.I32, T.I64):
            raise NotImplementedError
        else:
            array = dequantize(tensor.data, qtype)
    except NotImplementedError:
        raise CheckpointError(
            "error.gguf.cannot-dequantize", file=label, tensor=tensor.name, type=qtype.name
        ) from None
    except (ValueError, TypeError) as err:
        raise CheckpointError(
            "error.gguf.dequantize-failed",
            file=label,
            tensor=tensor.name,
            type=qtype.name,
            why=_first_line(err),
        ) from None
    return np.ascontiguousarray(array, dtype=np.float32).reshape(shape)


def _open_reader(path: Path, label: str) -> Any:
    from gguf import GGUFReader

    try:
        return GGUFReader(path)
    except (ValueError, KeyError, IndexError, TypeError, OverflowError, struct.error) as err:
        why = _first_line(err)
        raise CheckpointError("error.gguf.reader-rejects", file=label, why=why) from None
    except OSError as err:
        raise CheckpointError("error.cannot-read", file=label, why=err.strerror or err) from None


def read_gguf(path: str | Path) -> GGUFModel:
    """Read a GGUF file: config, float32 tensors under Hugging Face names, tokenizer fields.

    Every tensor is dequantized (F32, F16 and F64 here; BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, the
    K-quants and the other types ``gguf.quants.dequantize`` knows through it) and checked to be
    finite. Raises ``ModelNotFoundError`` when the file does not exist and ``CheckpointError``
    (one line) for anything wrong inside it.
    """
    label = str(path)
    path = Path(path)
    if not path.is_file():
        raise ModelNotFoundError("error.gguf.no-file", file=label)
    _scan_header(path, label)
    reader = _open_reader(path, label)
    fields = _Fields(reader, label)

    arch = fields.get("general.architecture", str)
    if arch is None:
        raise CheckpointError("error.gguf.metadata-missing", file=label, key="general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise CheckpointError("error.gguf.arch-unsupported", file=label, arch=arch)
    name = fields.get("general.name", str)

    # Name and shape every tensor before dequantizing any, so a mismatch fails fast.
    placed: dict[str, Any] = {}
    shapes: dict[str, tuple[int, ...]] = {}
    rope_freqs = None
    longrope: dict[str, Any] = {}
    for tensor in reader.tensors:
        if _IGNORED_TENSORS.fullmatch(tensor.name):
            continue
        if tensor.name == _ROPE_FREQS and arch in PERMUTED_ARCHITECTURES:
            rope_freqs = tensor
            continue
        if tensor.name in _LONGROPE_TENSORS and arch == "phi3":
            longrope[_LONGROPE_TENSORS[tensor.name]] = tensor
            continue
        hf = _hf_name(tensor.name, arch)
        for theirs, ours in _ARCH_RENAMES.get(arch, {}).items():
            hf = hf and hf.replace(theirs, ours)
        if hf is None:
            raise CheckpointError(
                "error.gguf.tensor-unknown", file=label, tensor=tensor.name, arch=arch
            )
        placed[hf] = tensor
        shapes[hf] = tuple(int(d) for d in reversed(tensor.shape.tolist()))

    config = _config(fields, arch, name, shapes, label)
    expected = _expected_shapes(config)
    by_hf = {hf: t.name for hf, t in placed.items()}
    for hf, shape in expected.items():
        if hf not in shapes:
            gguf_name = _gguf_name(hf)
            raise CheckpointError("error.gguf.tensor-missing", file=label, tensor=gguf_name)
        if shapes[hf] != shape:
            raise CheckpointError(
                "error.gguf.tensor-shape",
                file=label,
                tensor=by_hf[hf],
                shape=str(list(shapes[hf])),
                implied=str(list(shape)),
            )
    for hf in shapes:
        if hf not in expected:
            raise CheckpointError(
                "error.gguf.tensor-extra",
                file=label,
                tensor=by_hf[hf],
                layers=str(config["num_hidden_layers"]),
                arch=arch,
            )
    if rope_freqs is not None:
        head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        factors = _dequantize(rope_freqs, label)
        config["rope_scaling"] = _llama3_rope_scaling(
            factors, config["rope_theta"], head_dim, label
        )

    if longrope:
        config["rope_scaling"] = _longrope_scaling(fields, arch, longrope, config, label)
        # where transformers' Phi3Config reads it
        config["original_max_position_embeddings"] = config["rope_scaling"][
            "original_max_position_embeddings"
        ]

    permute = arch in PERMUTED_ARCHITECTURES
    heads = {"q_proj": config["num_attention_heads"], "k_proj": config["num_key_value_heads"]}
    tensors: dict[str, torch.Tensor] = {}
    quant_types: dict[str, str] = {}
    for hf in expected:
        source = placed[hf]
        array = _dequantize(source, label)
        if not np.isfinite(array).all():
            raise CheckpointError("error.gguf.nonfinite", file=label, tensor=source.name, hf=hf)
        weight = torch.from_numpy(array)
        proj = hf.split(".")[-2]
        if permute and proj in heads:
            weight = unpermute_rows(weight, heads[proj])
        if arch in _NORM_SHIFTED and hf.endswith("norm.weight"):
            weight = weight - 1.0  # stored as the gain 1 + w
        tensors[hf] = weight.contiguous()
        quant_types[hf] = source.tensor_type.name

    file_type = _file_type_name(
        fields.get("general.file_type", int),
        [quant_types[hf] for hf in expected if len(expected[hf]) == 2],
    )
    model = GGUFModel(
        path=path,
        architecture=arch,
        name=name,
        config=config,
        tensors=tensors,
        tokenizer=_tokenizer(fields),
        quant_types=quant_types,
        file_type=file_type,
        metadata=_metadata(fields),
    )
    del reader, fields  # release the memory map
    return model


def _gguf_name(hf: str) -> str:
    for gguf_name, hf_name in _GLOBAL_TENSORS.items():
        if hf_name == hf:
            return gguf_name
    parts = hf.split(".")  # model.layers.N.<module>.<proj>.<weight|bias>
    module = ".".join(parts[3:-1])
    short = next((k for k, v in _BLOCK_TENSORS.items() if v == module), module)
    return f"blk.{parts[2]}.{short}.{parts[-1]}"


# ---------------------------------------------------------------------------------------------
# Cached loading


def load_gguf(
    path: str | Path,
    *,
    cache_dir: str | Path | None = None,
    on_tokenizer: Callable[[dict[str, Any]], object] | None = None,
    verify: bool = False,
) -> GGUFModel:
    """``read_gguf`` through a cache of the dequantized tensors.

    The cache entry lives in ``cache_dir`` (default: ``weight_cache.cache_root()``) under
    ``gguf/<sha256 of the file>``; the first load writes it atomically, later loads read it
    after checking its own checksum. A broken entry is rebuilt; a cache folder that cannot be
    written means loading without a cache (one warning line on stderr). Both checksums (the
    file's and the entry's) are read in full only when the file they were computed from has
    changed since (``weight_cache.file_stamp``), or with ``verify`` (or
    ``$LMSCOPE_VERIFY_CACHE=1``).

    ``on_tokenizer(fields)`` is told a cache entry's tokenizer fields before its tensors are
    checked, to build the tokenizer meanwhile; they are the result's ``tokenizer`` unless the
    entry then proves broken (the caller compares).
    """
    from lmscope.formats import weight_cache

    label = str(path)
    path = Path(path)
    if not path.is_file():
        raise ModelNotFoundError("error.gguf.no-file", file=label)
    root = Path(cache_dir) if cache_dir is not None else weight_cache.cache_root()
    try:
        digest = weight_cache.source_sha256(path, root, verify=verify)
    except OSError as err:
        raise CheckpointError("error.cannot-read", file=label, why=err.strerror or err) from None
    entry = root / "gguf" / digest

    def early(meta: dict[str, Any]) -> None:
        fields, ours = meta.get("tokenizer"), meta.get("source_sha256") == digest
        if on_tokenizer is not None and ours and isinstance(fields, dict):
            on_tokenizer(dict(fields))

    cached = weight_cache.read_entry(entry, early, verify=verify)
    if cached is not None:
        meta, tensors = cached
        model = _from_cache(path, digest, meta, tensors)
        if model is not None:
            return model

    model = read_gguf(path)
    model.sha256 = digest
    meta = {
        "kind": "gguf",
        "cache_format": CACHE_FORMAT,
        "source_sha256": digest,
        "source_name": path.name,
        "architecture": model.architecture,
        "name": model.name,
        "config": model.config,
        "tokenizer": model.tokenizer,
        "quant_types": model.quant_types,
        "file_type": model.file_type,
        "metadata": model.metadata,
    }
    problem = weight_cache.write_entry(entry, meta, model.tensors)
    if problem is not None:
        print(
            i18n.text(
                "report.gguf.cache-not-written", folder=str(root), why=problem, file=path.name
            ),
            file=sys.stderr,
        )
    return model


def _from_cache(
    path: Path, digest: str, meta: dict[str, Any], tensors: dict[str, torch.Tensor]
) -> GGUFModel | None:
    """A GGUFModel from a cache entry, or None when the entry does not fit this file."""
    try:
        if (
            meta.get("kind") != "gguf"
            or meta.get("cache_format") != CACHE_FORMAT
            or meta.get("source_sha256") != digest
            or set(meta["quant_types"]) != set(tensors)
        ):
            return None
        return GGUFModel(
            path=path,
            architecture=str(meta["architecture"]),
            name=meta["name"],
            config=dict(meta["config"]),
            tensors=tensors,
            tokenizer=dict(meta["tokenizer"]),
            quant_types=dict(meta["quant_types"]),
            file_type=str(meta["file_type"]),
            metadata=dict(meta.get("metadata") or {}),
            sha256=digest,
            from_cache=True,
        )
    except (KeyError, TypeError, ValueError):
        return None
