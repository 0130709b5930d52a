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
    "transformer": retold(*ALL),  # what the family is: the Llama recipe and its five changes
    "architecture": retold("text"),  # the sandwich block, GeGLU, the window
    "embedding": retold(*SUMMARY_TEXT),  # the rows times sqrt(d_model)
    "blocks": retold(*SUMMARY_TEXT),  # the sandwich: four norms
    "residual": retold(*SUMMARY_TEXT),  # each sublayer's output normalized before the sum
    "qkv": retold(*ALL),  # QK-norm
    "positional-encoding": retold("text"),  # two RoPE bases, local and global
    "masked-attention": retold(*ALL),  # the sliding window
    "mlp": retold(*ALL),  # GeGLU
    "layernorm": retold(*SUMMARY_TEXT),  # (1 + w) gains
}
QWEN3: dict[str, Variant] = {
    "transformer": retold(*ALL),  # the Llama recipe and QK-norm
    "qkv": retold(*ALL),  # QK-norm
}
PHI3: dict[str, Variant] = {
    "transformer": retold(*ALL),  # fused projections, LongRoPE
    "qkv": retold(*SUMMARY_TEXT),  # one qkv_proj
    "positional-encoding": retold("text"),  # LongRoPE and a partial rotary factor
    "mlp": retold(*SUMMARY_TEXT),  # one gate_up_proj
}
MOE: dict[str, Variant] = {
    "transformer": retold(*ALL),  # the router and the experts, as Mixtral
    "architecture": retold("text"),  # a block's MLP is the router and its experts
    "mlp": retold(*ALL),  # the router and the experts
}
# both: Qwen3's attention (QK-norm) and the experts; its other steps are "moe"'s and Qwen3's
QWEN3_MOE: dict[str, Variant] = {"transformer": retold(*ALL)}

# Mixtral tells nothing of its own: "moe" covers it
FAMILY_VARIANTS: dict[str, dict[str, Variant]] = {
    "gemma3": GEMMA3,
    "qwen3": QWEN3,
    "phi3": PHI3,
    "moe": MOE,
    "qwen3_moe": QWEN3_MOE,
}
