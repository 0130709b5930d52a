"""Ollama's model store, read only: its manifests name the blobs, and the model layer's blob
is a GGUF file.

A store is the folder ``$OLLAMA_MODELS`` names, else ``~/.ollama/models`` and
``/usr/share/ollama/.ollama/models`` (the Linux service's home). It holds
``manifests/<registry>/<namespace>/<model>/<tag>`` (JSON: ``layers``, each with a
``mediaType`` and a ``digest``) and ``blobs/sha256-<hex>``. A name is written as Ollama writes
it: ``qwen3:0.6b`` is ``registry.ollama.ai/library/qwen3:0.6b``; no tag means ``latest``.
Nothing here writes to the store.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from lmscope.errors import CheckpointError, ModelNotFoundError
from lmscope.formats.stores.entry import StoredModel, gguf_model

ENV = "OLLAMA_MODELS"
REGISTRY, NAMESPACE, TAG = "registry.ollama.ai", "library", "latest"
MODEL_LAYER = "application/vnd.ollama.image.model"
PREFIX = "ollama:"


def store_roots() -> list[Path]:
    """The stores to look in: ``$OLLAMA_MODELS`` alone when it is set (as Ollama does), else
    the user's and the Linux service's, those that exist."""
    asked = os.environ.get(ENV, "").strip()
    if asked:
        roots = [Path(asked).expanduser()]
    else:
        roots = [Path.home() / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]
    return [root for root in roots if (root / "manifests").is_dir()]


def looked_in() -> str:
    """Where the stores are looked for, for a message."""
    asked = os.environ.get(ENV, "").strip()
    if asked:
        return asked
    return ", ".join((str(Path.home() / ".ollama" / "models"), "/usr/share/ollama/.ollama/models"))


@dataclass(frozen=True)
class OllamaName:
    registry: str
    namespace: str
    model: str
    tag: str

    @classmethod
    def parse(cls, text: str) -> OllamaName:
        """``[registry/][namespace/]model[:tag]``, Ollama's defaults filled in."""
        rest, tag = text, TAG
        last = rest.rsplit("/", 1)[-1]
        if ":" in last:
            rest, tag = rest.rsplit(":", 1)
        parts = rest.split("/")
        registry, namespace = REGISTRY, NAMESPACE
        if len(parts) >= 3:
            registry, namespace, model = parts[0], "/".join(parts[1:-1]), parts[-1]
        elif len(parts) == 2:
            namespace, model = parts
        else:
            model = parts[0]
        return cls(registry, namespace, model, tag or TAG)

    def short(self) -> str:
        """The name as ``ollama list`` shows it."""
        if self.registry == REGISTRY and self.namespace == NAMESPACE:
            return f"{self.model}:{self.tag}"
        if self.registry == REGISTRY:
            return f"{self.namespace}/{self.model}:{self.tag}"
        return f"{self.registry}/{self.namespace}/{self.model}:{self.tag}"

    def key(self) -> tuple[str, ...]:
        return tuple(part.lower() for part in (self.registry, self.namespace, self.model, self.tag))


@dataclass(frozen=True)
class Manifest:
    root: Path  # the store
    name: OllamaName
    file: Path


def manifests(roots: list[Path] | None = None) -> list[Manifest]:
    """Every manifest in the stores, in the order of the stores, then by name."""
    found = []
    for root in store_roots() if roots is None else roots:
        top = root / "manifests"
        try:
            files = sorted(p for p in top.glob("*/*/*/*") if p.is_file())
            deeper = sorted(p for p in top.glob("*/*/*/*/*") if p.is_file())
        except OSError:
            continue
        for file in files + deeper:
            registry, *namespace, model, tag = file.relative_to(top).parts
            name = OllamaName(registry, "/".join(namespace), model, tag)
            found.append(Manifest(root, name, file))
    return found


def model_blob(manifest: Manifest) -> Path:
    """The GGUF blob of a manifest's model layer; one line when the manifest has none or the
    blob is not there."""
    shown = PREFIX + manifest.name.short()
    try:
        data = json.loads(manifest.file.read_text(encoding="utf-8"))
    except OSError as err:
        raise CheckpointError(
            "error.cannot-read", file=str(manifest.file), why=err.strerror or err
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise CheckpointError("error.store.ollama-bad-manifest", file=str(manifest.file)) from None
    layers = data.get("layers") if isinstance(data, dict) else None
    digests = [
        layer.get("digest")
        for layer in (layers if isinstance(layers, list) else [])
        if isinstance(layer, dict) and layer.get("mediaType") == MODEL_LAYER
    ]
    if not digests or not isinstance(digests[0], str) or not digests[0].startswith("sha256:"):
        raise CheckpointError(
            "error.store.ollama-no-model-layer", name=shown, file=str(manifest.file)
        )
    blob = manifest.root / "blobs" / digests[0].replace(":", "-", 1)
    if not blob.is_file():
        raise CheckpointError(
            "error.store.ollama-blob-missing",
            name=shown,
            blob=str(blob),
            pull=f"ollama pull {manifest.name.short()}",
        )
    return blob


def listed() -> list[StoredModel]:
    """Every model in the Ollama stores, as a listing shows it."""
    found = []
    for manifest in sorted(manifests(), key=lambda m: m.name.short().lower()):
        name = PREFIX + manifest.name.short()
        try:
            blob = model_blob(manifest)
        except CheckpointError as err:
            broken = StoredModel("ollama", name, manifest.file, "gguf")
            found.append(replace(broken, problem=err.message))
            continue
        found.append(gguf_model("ollama", name, blob))
    return found


def find(text: str, *, bare: bool = False) -> Path | None:
    """The GGUF blob an Ollama name stands for (``qwen3:0.6b``, ``hf.co/org/repo:Q4_K_M``).

    ``bare`` (a name typed without ``ollama:``): None when no store has it and it has no tag,
    so other kinds of names get their turn; a name also matching models in other namespaces
    (no namespace typed) is refused as ambiguous. One line for a name no store has (with the
    closest names), a manifest without a model layer and a missing blob."""
    wanted = OllamaName.parse(text)
    every = manifests()
    exact = _distinct([m for m in every if m.name.key() == wanted.key()])
    typed_namespace = "/" in text
    if bare and not typed_namespace:
        # a bare name may stand for a model of any namespace, as long as only one has it
        exact = exact or _distinct([m for m in every if m.name.key()[2:] == wanted.key()[2:]])
    if len(exact) > 1:
        raise ModelNotFoundError(
            "error.store.ambiguous",
            name=text,
            choices=", ".join(_place(m) for m in exact),
        )
    if exact:
        return model_blob(exact[0])
    if (
        bare
        and ":" not in text
        and not any(m.name.model.lower() == wanted.model.lower() for m in every)
    ):
        return None  # not Ollama's: other kinds of names get their turn
    if not store_roots():
        raise ModelNotFoundError(
            "error.store.ollama-no-store", name=text, places=looked_in(), env=ENV
        )
    close = _close(wanted, every)
    if close:
        raise ModelNotFoundError(
            "error.store.ollama-missing", name=wanted.short(), close=", ".join(close)
        )
    raise ModelNotFoundError(
        "error.store.ollama-missing-none",
        name=wanted.short(),
        places=", ".join(str(r) for r in store_roots()),
    )


def _distinct(found: list[Manifest]) -> list[Manifest]:
    """Manifests naming different models: the same name in two stores with the same blob is
    one model."""
    seen: dict[tuple, Manifest] = {}
    for manifest in found:
        try:
            key: tuple = (manifest.name.key(), model_blob(manifest).name)
        except CheckpointError:
            key = (manifest.name.key(), str(manifest.file))
        seen.setdefault(key, manifest)
    return list(seen.values())


def _place(manifest: Manifest) -> str:
    return f"{PREFIX}{manifest.name.short()} ({manifest.root})"


def _close(wanted: OllamaName, every: list[Manifest], most: int = 5) -> list[str]:
    """The stores' names nearest to ``wanted``: its model's other tags first, then the tags of
    models spelled alike."""
    names = sorted({m.name.short() for m in every})
    models = sorted({OllamaName.parse(n).model.lower() for n in names})
    alike = difflib.get_close_matches(wanted.model.lower(), models, n=most, cutoff=0.6)
    ordered = [n for model in alike for n in names if OllamaName.parse(n).model.lower() == model]
    return [PREFIX + n for n in ordered[:most]]
