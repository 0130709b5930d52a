"""Every model on this machine that lmscope can open, and those it cannot with the reason: the
shipped models, the files registry packages installed (SmolLM2, the Gemma 3 package), the
Hugging Face cache, Ollama's store and LM Studio's folders (``lmscope.formats.stores``, which
reads headers only). Whether a family runs is decided here, where the builders are known."""

from __future__ import annotations

from dataclasses import replace

from lmscope.engine.model_names import ASSET_MODELS, HF_FAMILIES, SMOLLM2, shipped_models
from lmscope.formats.layout import SUPPORTED_ARCHITECTURES, find_smollm2_gguf
from lmscope.formats.stores import hf_cache, lmstudio, ollama, packages
from lmscope.formats.stores.entry import GGUF, StoredModel, folder_model, gguf_model
from lmscope.i18n import Message

FOLDER_FAMILIES = (*HF_FAMILIES, "gpt2")  # config.json model_types lmscope builds
STORES = ("shipped", "package", "hf-cache", "ollama", "lmstudio")


def models_on_disk() -> list[StoredModel]:
    """Every model found, in the order of ``STORES``, each with ``problem`` set when lmscope
    cannot open it."""
    found = [folder_model("shipped", name, ASSET_MODELS / name) for name in shipped_models()]
    smollm2 = find_smollm2_gguf()
    if smollm2 is not None:
        found.append(gguf_model("package", SMOLLM2, smollm2))
    gemma3 = packages.gemma3()
    if gemma3 is not None:
        found.append(gemma3)
    for store in (hf_cache, ollama, lmstudio):
        found.extend(store.listed())
    return [judged(model) for model in found]


def judged(model: StoredModel) -> StoredModel:
    """The model, refused when its family is not one lmscope runs."""
    if model.problem is not None or model.store == "shipped":
        return model
    runs = SUPPORTED_ARCHITECTURES if model.format == GGUF else FOLDER_FAMILIES
    if model.family in runs:
        return model
    return replace(
        model,
        problem=Message(
            "error.store.family-cannot-run",
            family=repr(model.family) if model.family else "?",
            families=", ".join(runs),
        ),
    )
