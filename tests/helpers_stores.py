"""Fake model stores for tests, built in a temporary folder the way each program lays its
store out: Ollama's (manifests and sha256-named blobs), LM Studio's (publisher/repo/*.gguf) and
the Hugging Face cache (models--owner--name with blobs, snapshots linking to them, refs/main).
The GGUF files are tiny models written with gguf's writer (``helpers_gguf``); the Hugging Face
folder is a tiny random Llama saved by transformers (``helpers_hf``). ``use_stores`` points
every store's environment variable (and $HOME) at them, so no test reads the real home."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q

from helpers_gguf import TINY, random_weights, write_model

MODEL = "application/vnd.ollama.image.model"
TEMPLATE = "application/vnd.ollama.image.template"


@dataclass
class Stores:
    root: Path
    ollama: Path
    lmstudio: Path
    hf_cache: Path
    home: Path
    files: dict[str, Path] = field(default_factory=dict)  # the GGUF files as first written


def write_gemma2_header(path: Path, *, cut: bool = True) -> Path:
    """A GGUF of a family lmscope does not run ('gemma2'), cut off after its header when
    ``cut``: a listing that read any tensor would fail on it."""
    w = gguf.GGUFWriter(str(path), "gemma2")
    w.add_name("Not Runnable")
    w.add_block_count(1)
    w.add_file_type(7)
    w.add_tensor("token_embd.weight", np.zeros((8, 32), np.float32))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((32, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) - 4000])
    return path


def _blob(store: Path, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    blob = store / "blobs" / f"sha256-{digest}"
    blob.parent.mkdir(parents=True, exist_ok=True)
    if not blob.exists():
        blob.write_bytes(data)
    return f"sha256:{digest}"


def _manifest(store: Path, name: str, layers: list[tuple[str, str]]) -> None:
    """``name`` as registry/namespace/model/tag; ``layers`` (mediaType, digest)."""
    file = store / "manifests" / name
    file.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json"},
        "layers": [{"mediaType": m, "digest": d, "size": 0} for m, d in layers],
    }
    file.write_text(json.dumps(body))


def build_stores(
    root: Path, hf_llama_folder: Path | None = None, qwen3_gguf: Path | None = None
) -> Stores:
    """Every fake store under ``root``. ``hf_llama_folder``: a saved random Llama to put in the
    Hugging Face cache as tiny-org/tiny-llama; ``qwen3_gguf``: a GGUF file to put in Ollama's
    store as qwen3:0.6b."""
    s = Stores(root, root / "ollama", root / "lmstudio", root / "hf", root / "home")
    src = root / "files"
    src.mkdir(parents=True)
    s.home.mkdir()
    s.files["f32"] = src / "tiny-f32.gguf"
    write_model(s.files["f32"], random_weights(TINY, seed=1), TINY, name="Tiny F32")
    s.files["q8"] = src / "tiny-q8.gguf"
    write_model(s.files["q8"], random_weights(TINY, seed=2), TINY, qtype=Q.Q8_0, name="Tiny Q8")
    s.files["gemma2"] = write_gemma2_header(src / "gemma2.gguf")

    # Ollama: library names, a namespaced and another registry's name, and three broken ones
    f32, q8 = (
        _blob(s.ollama, s.files["f32"].read_bytes()),
        _blob(s.ollama, s.files["q8"].read_bytes()),
    )
    gemma2 = _blob(s.ollama, s.files["gemma2"].read_bytes())
    template = _blob(s.ollama, b"{{ .Prompt }}")
    _manifest(
        s.ollama, "registry.ollama.ai/library/tiny/0.1b", [(MODEL, f32), (TEMPLATE, template)]
    )
    _manifest(s.ollama, "registry.ollama.ai/library/tiny/q8", [(MODEL, q8)])
    _manifest(s.ollama, "hf.co/someone/Tiny-GGUF/Q8_0", [(MODEL, q8)])
    _manifest(s.ollama, "registry.ollama.ai/bob/mini/latest", [(MODEL, f32)])
    _manifest(s.ollama, "hf.co/carol/mini/latest", [(MODEL, q8)])
    _manifest(s.ollama, "registry.ollama.ai/library/gemma2/2b", [(MODEL, gemma2)])
    _manifest(s.ollama, "registry.ollama.ai/library/notes/latest", [(TEMPLATE, template)])
    _manifest(s.ollama, "registry.ollama.ai/library/gone/latest", [(MODEL, "sha256:" + "0" * 64)])
    if qwen3_gguf is not None:
        s.files["qwen3"] = qwen3_gguf
        qwen3 = _blob(s.ollama, qwen3_gguf.read_bytes())
        _manifest(s.ollama, "registry.ollama.ai/library/qwen3/0.6b", [(MODEL, qwen3)])

    # LM Studio: a repo with one model file, one with two (and a vision projector)
    one = s.lmstudio / "lmstudio-community" / "Tiny-GGUF"
    one.mkdir(parents=True)
    shutil.copy(s.files["q8"], one / "Tiny-Q8_0.gguf")
    two = s.lmstudio / "someone" / "Two-GGUF"
    two.mkdir(parents=True)
    shutil.copy(s.files["f32"], two / "two-F32.gguf")
    shutil.copy(s.files["q8"], two / "two-Q8_0.gguf")
    write_gemma2_header(two / "mmproj-two-F16.gguf")

    # the Hugging Face cache: a Llama folder, a family lmscope does not run, a config alone
    if hf_llama_folder is not None:
        _cache_repo(s.hf_cache, "tiny-org/tiny-llama", hf_llama_folder)
    bert = root / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    from safetensors.numpy import save_file

    save_file({"embeddings.weight": np.zeros((4, 8), np.float32)}, str(bert / "model.safetensors"))
    _cache_repo(s.hf_cache, "bert-org/tiny-bert", bert)
    only = root / "only-config"
    only.mkdir()
    (only / "config.json").write_text(json.dumps({"model_type": "llama"}))
    _cache_repo(s.hf_cache, "org/only-config", only)
    return s


def _cache_repo(cache: Path, repo_id: str, folder: Path, revision: str = "a" * 40) -> None:
    """``folder``'s files in the cache as huggingface_hub lays them out: each file a blob named
    by its hash, the snapshot's entries links to the blobs, refs/main naming the snapshot."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for file in sorted(folder.iterdir()):
        if not file.is_file():
            continue
        data = file.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        os.symlink(os.path.relpath(blob, snapshot), snapshot / file.name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)


def use_stores(monkeypatch, s: Stores) -> None:
    """Point every store's variable, $HOME and lmscope's cache at the fake stores."""
    monkeypatch.setenv("OLLAMA_MODELS", str(s.ollama))
    monkeypatch.setenv("LMSTUDIO_MODELS", str(s.lmstudio))
    monkeypatch.setenv("HF_HUB_CACHE", str(s.hf_cache))
    monkeypatch.setenv("HOME", str(s.home))
    monkeypatch.setenv("LMSCOPE_CACHE", str(s.root / "lmscope-cache"))
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(s.hf_cache))
    # the registry packages this machine has installed (the Gemma 3 one is a test extra) are
    # not the fake stores' models: test_stores checks them with a fake installation
    from lmscope.formats.stores import packages

    monkeypatch.setattr(packages, "installed", lambda name: False)


def fingerprint(*folders: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the folders: its bytes and its modification time (ns)."""
    found = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found
