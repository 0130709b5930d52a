"""Models from the Hugging Face Hub: the short names people type, and one download that fails
fast, in one line, when there is no network."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

from huggingface_hub import hf_hub_download

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


HUB_HOST = ("huggingface.co", 443)
PROBE_SECONDS = 1.5


def hub_reachable(timeout: float = PROBE_SECONDS) -> bool:
    """One quick look for the hub, in a thread so a slow name lookup cannot stall us: offline,
    the hub client would otherwise retry for tens of seconds before failing."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    answer: list[bool] = []

    def probe():
        try:
            socket.create_connection(HUB_HOST, timeout=timeout).close()
            answer.append(True)
        except OSError:
            answer.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(answer and answer[0])


def download_from_hub(name: str) -> Path:
    """Config + weights of a hub model (safetensors preferred): from the local hub cache when it
    has them, else downloaded; offline, one line at once."""
    repo = HUB_MODELS.get(name, name)
    cached = _fetch(repo, local_only=True)
    if cached is not None:
        return cached
    if not hub_reachable():
        raise ModelNotFoundError(
            f"cannot get {name!r}: the Hugging Face Hub is not reachable (offline?) and it is not "
            "in the local hub cache. Download it once with network access, or pass a local "
            "folder holding config.json and model.safetensors (--model ./path)"
        )
    found = _fetch(repo, local_only=False)
    if found is None:
        raise ModelNotFoundError(
            f"could not get {name!r} from the Hugging Face Hub (unknown id, or no config.json "
            "and model.safetensors there); pass a local folder instead (--model ./path)"
        )
    return found


def _fetch(repo: str, *, local_only: bool) -> Path | None:
    """The folder holding config.json and the weights, or None when either cannot be had."""
    try:
        config = Path(hf_hub_download(repo, "config.json", local_files_only=local_only))
    except Exception:  # the hub raises many types for offline/unknown; all mean "not here"
        return None
    for weights in (WEIGHTS_FILE, "pytorch_model.bin"):
        try:
            hf_hub_download(repo, weights, local_files_only=local_only)
            return config.parent
        except Exception:
            continue
    return None
