"""Models from the Hugging Face Hub: the short names people type, and one download that fails
fast, in one line, when there is no network."""

from __future__ import annotations

from pathlib import Path

from lmscope.errors import ModelNotFoundError
from lmscope.formats.weights import WEIGHTS_FILE

# Short names people type, mapped to the hub's canonical repositories.
HUB_MODELS = {
    "gpt2": "openai-community/gpt2",
    "gpt2-medium": "openai-community/gpt2-medium",
    "gpt2-large": "openai-community/gpt2-large",
    "gpt2-xl": "openai-community/gpt2-xl",
    "distilgpt2": "distilbert/distilgpt2",
}


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
