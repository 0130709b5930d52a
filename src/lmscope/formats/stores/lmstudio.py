"""LM Studio's model folders, read only: ``<root>/<publisher>/<repo>/`` holding ``.gguf`` files
(or a Hugging Face folder of safetensors).

The root is ``$LMSTUDIO_MODELS`` when set (lmscope's own variable: LM Studio itself moves its
folder in its My Models tab), else ``~/.lmstudio/models`` and the older
``~/.cache/lm-studio/models``. A model is named ``lmstudio:<publisher>/<repo>`` when its folder
holds one model file, else ``lmstudio:<publisher>/<repo>/<file>``. Vision projectors
(``mmproj-*.gguf``) sit beside the model they serve and are not models of their own.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from lmscope.errors import ModelNotFoundError
from lmscope.formats.stores.entry import StoredModel, folder_model, gguf_model

ENV = "LMSTUDIO_MODELS"
PREFIX = "lmstudio:"


def roots() -> list[Path]:
    """The model folders to look in, those that exist."""
    asked = os.environ.get(ENV, "").strip()
    if asked:
        candidates = [Path(asked).expanduser()]
    else:
        home = Path.home()
        candidates = [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    return [root for root in candidates if root.is_dir()]


def looked_in() -> str:
    asked = os.environ.get(ENV, "").strip()
    if asked:
        return asked
    home = Path.home()
    return f"{home / '.lmstudio' / 'models'}, {home / '.cache' / 'lm-studio' / 'models'}"


def _repos(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.glob("*/*") if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def model_files(repo: Path) -> list[Path]:
    """A repo folder's GGUF model files (projectors left out)."""
    try:
        return sorted(
            p
            for p in repo.iterdir()
            if p.suffix.lower() == ".gguf"
            and p.is_file()
            and not p.name.lower().startswith("mmproj")
        )
    except OSError:
        return []


def _is_folder_model(repo: Path) -> bool:
    return (repo / "config.json").is_file()


def _named() -> list[tuple[str, Path]]:
    """Every model's name (without ``lmstudio:``) and its file or folder, no header read."""
    found = []
    for root in roots():
        for repo in _repos(root):
            short = f"{repo.parent.name}/{repo.name}"
            files = model_files(repo)
            if _is_folder_model(repo) and not files:
                found.append((short, repo))
            found.extend((short if len(files) == 1 else f"{short}/{f.name}", f) for f in files)
    return found


def listed() -> list[StoredModel]:
    """Every model in LM Studio's folders, as a listing shows it."""
    return [
        folder_model("lmstudio", PREFIX + name, path)
        if path.is_dir()
        else gguf_model("lmstudio", PREFIX + name, path)
        for name, path in _named()
    ]


def find(text: str) -> Path:
    """The file or folder ``<publisher>/<repo>[/<file>]`` names (the text after ``lmstudio:``);
    one line when there is none, or several files and none named."""
    parts = [p for p in text.strip("/").split("/") if p]
    every = roots()
    if len(parts) in (2, 3):
        for root in every:
            repo = root / parts[0] / parts[1]
            if not repo.is_dir():
                continue
            files = model_files(repo)
            if len(parts) == 3:
                chosen = [f for f in files if f.name.lower() == parts[2].lower()]
                if chosen:
                    return chosen[0]
                continue
            if len(files) == 1:
                return files[0]
            if not files and _is_folder_model(repo):
                return repo
            if files:
                raise ModelNotFoundError(
                    "error.store.lmstudio-several",
                    name=PREFIX + "/".join(parts),
                    files=", ".join(f.name for f in files),
                )
    names = [name for name, _ in _named()]
    close = difflib.get_close_matches("/".join(parts), names, n=5, cutoff=0.4)
    if close:
        raise ModelNotFoundError(
            "error.store.lmstudio-missing",
            name=PREFIX + text,
            close=", ".join(PREFIX + n for n in close),
        )
    raise ModelNotFoundError(
        "error.store.lmstudio-missing-none", name=PREFIX + text, places=looked_in(), env=ENV
    )
