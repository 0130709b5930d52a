"""Finding and reading GPT-2-family weights: Hugging Face hub ids, local HF folders, lmscope
checkpoints. Weights are read from safetensors; a legacy ``pytorch_model.bin`` is opened with
``torch.load(weights_only=True)`` so nothing is ever unpickled.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from lmscope.errors import CheckpointError, ModelNotFoundError
from lmscope.formats.atomic import write_folder
from lmscope.models.gpt2 import GPT, GPTConfig

# Short names people type, mapped to the hub's canonical repositories.
HUB_MODELS = {
    "gpt2": "openai-community/gpt2",
    "gpt2-medium": "openai-community/gpt2-medium",
    "gpt2-large": "openai-community/gpt2-large",
    "gpt2-xl": "openai-community/gpt2-xl",
    "distilgpt2": "distilbert/distilgpt2",
}
LMSCOPE_CONFIG = "lmscope.json"  # marks a folder written by lmscope
WEIGHTS_FILE = "model.safetensors"
# HF GPT-2 stores these projections as Conv1D, i.e. [in, out]; nn.Linear wants [out, in].
_CONV1D_SUFFIXES = (
    "attn.c_attn.weight",
    "attn.c_proj.weight",
    "mlp.c_fc.weight",
    "mlp.c_proj.weight",
)


def is_lmscope_dir(path: Path) -> bool:
    return (path / LMSCOPE_CONFIG).is_file()


def is_hf_dir(path: Path) -> bool:
    return (path / "config.json").is_file()


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} is missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path} is not valid JSON ({err}); the file is corrupt") from None


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Read a safetensors file, or a legacy .bin/.pt without unpickling arbitrary objects."""
    try:
        if path.suffix == ".safetensors":
            state = load_file(str(path))
        else:
            state = torch.load(str(path), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"cannot read weights from {path}: it holds objects other than tensors, "
            "which lmscope refuses to unpickle"
        ) from None
    except (SafetensorError, OSError, RuntimeError, EOFError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError(f"cannot read weights from {path}: {first[:200]}") from None
    if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
        raise CheckpointError(f"cannot read weights from {path}: not a mapping of names to tensors")
    return state


def _weights_file(directory: Path) -> Path:
    for name in (WEIGHTS_FILE, "pytorch_model.bin"):
        if (directory / name).is_file():
            return directory / name
    if any(directory.glob("model-*.safetensors")):
        raise CheckpointError(f"{directory} holds sharded weights; lmscope reads a single file")
    raise CheckpointError(f"{directory} has no weights file ({WEIGHTS_FILE} or pytorch_model.bin)")


def hf_to_lmscope_state(state: dict[str, torch.Tensor], config: GPTConfig) -> dict:
    """Rename HF GPT-2 keys to ours and turn Conv1D weights into Linear layout."""
    out = {}
    for key, tensor in state.items():
        key = key.removeprefix("transformer.")
        if key.endswith((".attn.bias", ".attn.masked_bias")):
            continue  # HF's precomputed causal-mask buffers, not parameters
        if key == "lm_head.weight":
            continue  # tied to wte; checked below
        if key.endswith(_CONV1D_SUFFIXES):
            tensor = tensor.t()
        out[key] = tensor.contiguous()
    lm_head = state.get("lm_head.weight")
    if lm_head is not None and "wte.weight" in out and not torch.equal(lm_head, out["wte.weight"]):
        raise CheckpointError("lm_head.weight differs from wte.weight: GPT-2 ties them")
    return out


def lmscope_to_hf_state(model: GPT) -> dict[str, torch.Tensor]:
    """Our weights under HF GPT2LMHeadModel names (for export and reference comparisons)."""
    out = {}
    for key, tensor in model.state_dict().items():
        if key.endswith(_CONV1D_SUFFIXES):
            tensor = tensor.t()
        out[f"transformer.{key}"] = tensor.contiguous()
    return out


def build_model(config: GPTConfig, state: dict[str, torch.Tensor], source: str) -> GPT:
    model = GPT(config)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        detail = f"missing {missing[:3]}" if missing else f"unexpected {unexpected[:3]}"
        raise CheckpointError(f"weights in {source} do not fit a GPT-2 model: {detail}")
    for key, tensor in state.items():
        if tensor.shape != expected[key].shape:
            raise CheckpointError(
                f"weights in {source}: {key} has shape {tuple(tensor.shape)}, "
                f"the config implies {tuple(expected[key].shape)}"
            )
    model.load_state_dict({k: v.float() for k, v in state.items()})
    return model.eval()


def load_hf_dir(directory: Path) -> GPT:
    hf_config = read_json(directory / "config.json")
    if hf_config.get("model_type", "gpt2") != "gpt2":
        raise CheckpointError(
            f"{directory} holds a {hf_config.get('model_type')!r} model; lmscope runs GPT-2 models"
        )
    config = GPTConfig.from_hf(hf_config)
    state = read_tensors(_weights_file(directory))
    return build_model(config, hf_to_lmscope_state(state, config), str(directory))


def load_lmscope_dir(directory: Path) -> tuple[GPT, dict]:
    meta = read_json(directory / LMSCOPE_CONFIG)
    if meta.get("arch", "gpt") != "gpt":
        raise CheckpointError(f"{directory} holds a {meta.get('arch')!r} model, not a GPT")
    try:
        config = GPTConfig.from_dict(meta["model"])
    except (KeyError, TypeError) as err:
        raise CheckpointError(f"{directory / LMSCOPE_CONFIG} lacks a valid 'model' entry") from err
    state = read_tensors(_weights_file(directory))
    return build_model(config, state, str(directory)), meta


def save_model_dir(
    model: GPT,
    directory: str | os.PathLike,
    meta: dict | None = None,
    dtype: torch.dtype = torch.float32,
    extra_files: dict[str, bytes] | None = None,
) -> Path:
    """Write an lmscope model folder atomically (``lmscope.formats.atomic``): a crash never leaves a
    half-written model, and the previous folder survives any failure."""

    def fill(tmp: Path):
        # wte and the unembedding are one tensor; safetensors stores it once.
        state = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
        save_file(state, str(tmp / WEIGHTS_FILE))
        full_meta = {
            "format": "lmscope",
            "arch": "gpt",
            "model": model.config.to_dict(),
            **(meta or {}),
        }
        (tmp / LMSCOPE_CONFIG).write_text(json.dumps(full_meta, indent=2), encoding="utf-8")
        for name, data in (extra_files or {}).items():
            (tmp / name).write_bytes(data)

    return write_folder(directory, fill)


def download_from_hub(name: str) -> Path:
    """Fetch config + weights of a hub model (safetensors preferred) and return the local folder."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        raise ModelNotFoundError(
            "huggingface_hub is not installed; pip install huggingface_hub"
        ) from None
    repo = HUB_MODELS.get(name, name)
    hint = (
        f"could not get {name!r} from the Hugging Face Hub (offline or unknown id?). "
        "Download it once with network access, or pass a local folder holding config.json "
        "and model.safetensors (--model ./path)"
    )
    try:
        config_path = Path(hf_hub_download(repo, "config.json"))
    except Exception:  # the hub raises many types for offline/unknown; all mean the same here
        raise ModelNotFoundError(hint) from None
    for weights in (WEIGHTS_FILE, "pytorch_model.bin"):
        try:
            hf_hub_download(repo, weights)
            return config_path.parent
        except Exception:
            continue
    raise ModelNotFoundError(hint)
