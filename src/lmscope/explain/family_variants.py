"""How the families built on the Llama recipe (``engine.families``) tell the steps they do
differently: Gemma 3, Qwen3, Phi-3 and the mixtures of experts. A step a family does not name
here is told as Llama tells it (``explain.variants.LLAMA``), then as GPT-2 does.

Each text says what GPT-2 and the Llama recipe do and what this model does instead; its
numbers are in the step's ``family_data`` (``explain.family_views``). The texts are in the
catalog as ``step.<key>.<field>.<family>``.
"""

from __future__ import annotations

from lmscope.explain.variants import ALL, SUMMARY_TEXT, Variant, retold

GEMMA3: dict[str, Variant] = {
    "embedding": retold(*SUMMARY_TEXT),  # the rows times sqrt(d_model)
    "blocks": retold(*SUMMARY_TEXT),  # the sandwich: four norms
    "qkv": retold(*ALL),  # QK-norm
    "positional-encoding": retold("text"),  # two RoPE bases, local and global
    "masked-attention": retold(*ALL),  # the sliding window
    "mlp": retold(*ALL),  # GeGLU
    "layernorm": retold(*SUMMARY_TEXT),  # (1 + w) gains
}
QWEN3: dict[str, Variant] = {"qkv": retold(*ALL)}  # QK-norm
PHI3: dict[str, Variant] = {
    "qkv": retold(*SUMMARY_TEXT),  # one qkv_proj
    "positional-encoding": retold("text"),  # LongRoPE and a partial rotary factor
    "mlp": retold(*SUMMARY_TEXT),  # one gate_up_proj
}
MOE: dict[str, Variant] = {"mlp": retold(*ALL)}  # the router and the experts

# Mixtral and Qwen3-MoE tell nothing of their own: "moe" (and Qwen3's QK-norm) covers them
FAMILY_VARIANTS: dict[str, dict[str, Variant]] = {
    "gemma3": GEMMA3,
    "qwen3": QWEN3,
    "phi3": PHI3,
    "moe": MOE,
}
