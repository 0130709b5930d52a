"""The Hugging Face cache, read only: ``models--<owner>--<name>/snapshots/<revision>/``, each
snapshot a model folder (``config.json`` and safetensors) or a folder of ``.gguf`` files.

The cache is ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``,
else ``~/.cache/huggingface/hub``, as huggingface_hub finds it. A model folder opens by its
hub id (``owner/name``: loading reads the cache first, offline too); a GGUF file in a snapshot
by its path.
"""

from __future__ import annotations

import os
from pathlib import Path

from lmscope.formats.stores.entry import StoredModel, folder_model, gguf_model, shown_path

STORE = "hf-cache"


def cache_root() -> Path:
    """Where huggingface_hub keeps its cache (which may not exist)."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable, "").strip():
            return Path(os.environ[variable]).expanduser()
    if os.environ.get("HF_HOME", "").strip():
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def repo_id(folder: Path) -> str:
    """``models--owner--name`` -> ``owner/name``."""
    return folder.name.removeprefix("models--").replace("--", "/", 1)


def main_snapshot(repo: Path) -> Path | None:
    """The snapshot ``refs/main`` points at: the one the hub id opens."""
    try:
        main = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    found = repo / "snapshots" / main
    return found if main and found.is_dir() else None


def snapshots(repo: Path) -> list[Path]:
    """The snapshot ``refs/main`` points at, else every snapshot there is."""
    main = main_snapshot(repo)
    if main is not None:
        return [main]
    try:
        return sorted(p for p in (repo / "snapshots").iterdir() if p.is_dir())
    except OSError:
        return []


def listed() -> list[StoredModel]:
    """Every model in the cache, as a listing shows it."""
    root = cache_root()
    try:
        repos = sorted(p for p in root.glob("models--*") if p.is_dir())
    except OSError:
        return []
    found = []
    for repo in repos:
        hub_id = repo_id(repo)
        for snapshot in snapshots(repo):
            ggufs = sorted(p for p in snapshot.rglob("*.gguf") if p.is_file())
            for file in ggufs:
                if not file.name.lower().startswith("mmproj"):
                    found.append(gguf_model(STORE, shown_path(file), file))
            if (snapshot / "config.json").is_file():
                by_id = "/" in hub_id and main_snapshot(repo) == snapshot
                name = hub_id if by_id else shown_path(snapshot)
                found.append(folder_model(STORE, name, snapshot))
            elif not ggufs:
                entry = StoredModel(STORE, hub_id, snapshot, "folder")
                found.append(entry.refused("error.store.no-model-files"))
    return found
