"""Models from the Hugging Face Hub: the short names people type, and one download that fails
fast, in one line, when there is no network."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

from lmscope.errors import CheckpointError, ModelNotFoundError
from lmscope.formats.layout import WEIGHTS_FILE, WEIGHTS_INDEX, read_json, shard_names

# Short names people type, mapped to the hub's canonical repositories.
HUB_MODELS = {
    "gpt2": "openai-community/gpt2",
    "gpt2-medium": "openai-community/gpt2-medium",
    "gpt2-large": "openai-community/gpt2-large",
    "gpt2-xl": "openai-community/gpt2-xl",
    "distilgpt2": "distilbert/distilgpt2",
}


# What a model folder holds beside its config and weights, fetched when the repository has it:
# the tokenizer (GPT-2's ships with lmscope; every other family brings its own) and the chat
# template (in tokenizer_config.json, or in a file of its own in newer repositories).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")
SENTENCEPIECE_FILE = "tokenizer.model"  # asked for only when there is no tokenizer.json

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
    """The folder of a hub model: config, weights (safetensors preferred, shards too) and its
    tokenizer files, from the local hub cache when it has them, else downloaded; offline, one
    line at once."""
    repo = HUB_MODELS.get(name, name)
    cached = _fetch(repo, local_only=True)
    # A cache an older lmscope filled holds no tokenizer: fetch it when the hub is there,
    # else load what is cached (token ids still work, and text says what is missing).
    if cached is not None and (_has_tokenizer(cached) or not hub_reachable()):
        return cached
    if cached is None and not hub_reachable():
        raise ModelNotFoundError("error.hub.offline", name=repr(name))
    found = _fetch(repo, local_only=False)
    if found is None:
        raise ModelNotFoundError("error.hub.not-found", name=repr(name))
    return found


def _has_tokenizer(folder: Path) -> bool:
    """Whether a folder has the tokenizer its model needs: GPT-2's is lmscope's own."""
    try:
        gpt2 = read_json(folder / "config.json").get("model_type", "gpt2") == "gpt2"
    except CheckpointError:
        return False
    return gpt2 or any((folder / name).is_file() for name in ("tokenizer.json", SENTENCEPIECE_FILE))


def hf_hub_download(repo: str, filename: str, **options) -> str:
    """huggingface_hub's download, imported on first use: the import alone took 0.3 s of every
    start, and only hub ids need it."""
    from huggingface_hub import hf_hub_download as download

    return download(repo, filename, **options)


def _get(repo: str, filename: str, *, local_only: bool) -> Path | None:
    try:
        return Path(hf_hub_download(repo, filename, local_files_only=local_only))
    except Exception:  # the hub raises many types for offline/unknown; all mean "not here"
        return None


def _fetch(repo: str, *, local_only: bool) -> Path | None:
    """The folder holding config.json and the weights (and the tokenizer files the repository
    has), or None when the config or the weights cannot be had."""
    config = _get(repo, "config.json", local_only=local_only)
    if config is None or not _fetch_weights(repo, local_only=local_only):
        return None
    if not local_only:  # in the cache they are beside the config already, or not at all
        for name in TOKENIZER_FILES:
            _get(repo, name, local_only=False)
        if not (config.parent / "tokenizer.json").is_file():  # a slow-tokenizer-only upload
            _get(repo, SENTENCEPIECE_FILE, local_only=False)
    return config.parent


def _fetch_weights(repo: str, *, local_only: bool) -> bool:
    if _get(repo, WEIGHTS_FILE, local_only=local_only) is not None:
        return True
    index = _get(repo, WEIGHTS_INDEX, local_only=local_only)
    if index is not None:
        try:
            shards = shard_names(read_json(index), index)
        except CheckpointError:
            return True  # the folder has it: loading says what is wrong with it, in one line
        return all(_get(repo, shard, local_only=local_only) is not None for shard in shards)
    return _get(repo, "pytorch_model.bin", local_only=local_only) is not None
