"""Gemma 3 (text): the Llama recipe (``lmscope.models.llama``) with six changes.

- The token embedding is multiplied by sqrt(d_model) before the first block, so that its rows,
  stored small, enter the residual stream at the size the blocks expect.
- Every RMSNorm multiplies by (1 + w), not w: a gain stored as 0 leaves the normalized vector as
  it is.
- "Sandwich" blocks: four norms. Besides the norms before attention and before the MLP (ln1,
  ln2), each branch's output is normalized again before it is added to the residual stream
  (ln1_post, ln2_post):

      x = x + ln1_post(attn(ln1(x)))
      x = x + ln2_post(mlp(ln2(x)))

- QK-norm, as Qwen3 (``lmscope.models.qwen3``): each head's q and k pass through a (1 + w)
  RMSNorm before RoPE; scores are scaled by query_pre_attn_scalar^-1/2 (d_head^-1/2 in the small
  models, as in Llama).
- GeGLU: the MLP's gate goes through GELU (tanh approximation) instead of SiLU.
- Local and global layers: most layers see only the last ``sliding_window`` keys (512 in the
  270M and 1B models) and rotate with RoPE base 10,000; every sixth layer sees the whole context
  and rotates with base 1,000,000.

Probes are Llama's, plus ``blocks.L.ln1_post`` and ``ln2_post`` (TransformerLens's names for
Gemma's extra norms), ``attn.q_norm``/``k_norm`` as in Qwen3, and ``hook_embed`` before the
sqrt(d_model) scale (``blocks.0.hook_resid_pre`` is after it).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, cast

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.models.common import Hook, KVCache, attend_rows
from lmscope.models.kin import QKNormAttention, from_llama_fields, require_hf_type
from lmscope.models.llama import (
    MLP,
    Llama,
    LlamaConfig,
    RMSNorm,
    _rotate_row,
    _row_rope,
    rope_cos_sin,
)
from lmscope.models.step_plan import (
    Product,
    add_norm_row,
    kept_while_parameters_hold,
    norm_row,
    projection,
)

HF_MODEL_TYPES = ("gemma3_text",)
LOCAL, GLOBAL = "sliding_attention", "full_attention"  # Hugging Face's layer_types


@dataclass
class Gemma3Config(LlamaConfig):
    arch: ClassVar[str] = "gemma3"  # the "arch" of a saved model's lmscope.json
    family: ClassVar[str] = "gemma3"  # the explainer's texts; it falls back to Llama's
    model_types: ClassVar[tuple[str, ...]] = HF_MODEL_TYPES
    activations: ClassVar[tuple[str, ...]] = ("gelu_pytorch_tanh",)
    model_type: str = "gemma3_text"
    activation: str = "gelu_pytorch_tanh"
    tie_word_embeddings: bool = True
    rope_local_theta: float = 10000.0  # the local layers' RoPE base (rope_theta: the global's)
    query_pre_attn_scalar: float | None = None  # scores are scaled by its -1/2; None: d_head
    layer_types: list | None = None  # LOCAL or GLOBAL per layer; None: all GLOBAL

    def __post_init__(self):
        super().__post_init__()
        types = self.layer_types or [GLOBAL] * self.n_layer
        if len(types) != self.n_layer or set(types) - {LOCAL, GLOBAL}:
            raise InvalidInputError("error.gemma3.layer-types", n=str(self.n_layer))
        self.layer_types = list(types)
        if LOCAL in types and self.sliding_window is None:
            raise InvalidInputError("error.gemma3.no-window")
        self.require_above("rope_local_theta", 1)

    def is_local(self, layer: int) -> bool:
        """Whether layer ``layer`` sees only the last sliding_window keys."""
        return (self.layer_types or [])[layer] == LOCAL

    @classmethod
    def from_hf(cls, hf: dict) -> Gemma3Config:
        """From a Hugging Face ``config.json`` dict of a ``gemma3_text`` model (a
        Gemma3ForCausalLM): per-layer-type RoPE (transformers 5's ``rope_parameters``, or the
        older ``rope_theta`` and ``rope_local_base_freq``) and the layer pattern."""
        hf = require_hf_type(hf, cls.model_types, "Gemma 3")
        for capped in ("final_logit_softcapping", "attn_logit_softcapping"):
            if hf.get(capped) is not None:
                raise CheckpointError("error.gemma3.softcapping", field=capped)
        params = hf.get("rope_parameters") or {}
        local = params.get(LOCAL) or {"rope_theta": hf.get("rope_local_base_freq", 10000.0)}
        full = params.get(GLOBAL) or {
            "rope_theta": hf.get("rope_theta", 1000000.0),
            **(hf.get("rope_scaling") or {}),
        }
        for rope in (local, full):
            if rope.get("rope_type", "default") != "default":
                raise CheckpointError("error.gemma3.rope-scaling", kind=repr(rope["rope_type"]))
        n_layer = hf.get("num_hidden_layers", 0)
        pattern = hf.get("sliding_window_pattern") or hf.get("_sliding_window_pattern") or 6
        layer_types = hf.get("layer_types") or [
            GLOBAL if (i + 1) % pattern == 0 else LOCAL for i in range(n_layer)
        ]
        read_as_llama = {
            **hf,
            "hidden_act": "silu",  # read as Llama; the activation is set below
            "rope_parameters": {"rope_theta": full["rope_theta"]},
            "rope_scaling": None,
            "tie_word_embeddings": hf.get("tie_word_embeddings", True),
        }
        return from_llama_fields(
            cls,
            read_as_llama,
            "llama",
            "gemma3_text",
            131072,  # transformers' Gemma3TextConfig default
            activation=hf.get("hidden_activation") or hf.get("hidden_act") or "gelu_pytorch_tanh",
            sliding_window=hf.get("sliding_window") if LOCAL in layer_types else None,
            rope_local_theta=local["rope_theta"],
            query_pre_attn_scalar=hf.get("query_pre_attn_scalar"),
            layer_types=list(layer_types),
        )


class Gemma3RMSNorm(RMSNorm):
    """RMSNorm with a (1 + w) gain, computed in float32 (the gain too), as Gemma does."""

    def __init__(self, dim: int, eps: float):
        super().__init__(dim, eps)
        nn.init.zeros_(self.weight)  # a gain of 1

    @property
    def gain(self) -> torch.Tensor:
        return 1.0 + self.weight

    def gain_now(self) -> torch.Tensor:
        """1 + weight in float32, computed once and kept until the weight changes (a generation
        step reads every norm's gain; loading or an ablation edits the weight in place, which
        bumps its version, or replaces it, which changes its identity)."""
        weight, kept = self.weight, self.__dict__.get("_gain_kept")
        if kept is None or kept[0] is not weight or kept[1] != weight._version:
            kept = (weight, weight._version, 1.0 + weight.detach().float())
            self.__dict__["_gain_kept"] = kept
        return kept[2]

    def forward(self, x: torch.Tensor, hook: Hook | None, name: str) -> torch.Tensor:
        x32 = x.float()
        scale = (x32.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()
        gain = 1.0 + self.weight.float()
        if hook is None:
            return (x32 / scale * gain).to(x.dtype)
        scale = hook(f"{name}.hook_scale", scale)
        normalized = hook(f"{name}.hook_normalized", x32 / scale)
        return hook(f"{name}.hook_out", (normalized * gain).to(x.dtype))


class Gemma3Attention(QKNormAttention):
    """QK-norm attention; a local layer slides a window over the keys and uses the local RoPE."""

    norm_class = Gemma3RMSNorm
    q_norm: Gemma3RMSNorm
    k_norm: Gemma3RMSNorm

    def __init__(self, config: Gemma3Config, layer: int):
        super().__init__(config)
        self.local = config.is_local(layer)
        self.window = config.sliding_window if self.local else None
        self.scale = (config.query_pre_attn_scalar or config.d_head) ** -0.5

    def qk_gains(self) -> torch.Tensor:
        """Every query head's q-norm gain, then every key head's k-norm gain ([n_head +
        n_kv_head, 1, d_head], float32), to normalize all of a row's q and k at once; kept
        while both gains are."""
        q, k = self.q_norm.gain_now(), self.k_norm.gain_now()
        kept = self.__dict__.get("_qk_kept")
        if kept is None or kept[0] is not q or kept[1] is not k:
            d = q.shape[-1]
            both = torch.cat([q.expand(self.n_head, d), k.expand(self.n_kv_head, d)])
            kept = (q, k, both.view(self.n_head + self.n_kv_head, 1, d))
            self.__dict__["_qk_kept"] = kept
        return kept[2]

    def forward(self, x, hook: Hook | None, name: str, layer: int, cache: KVCache | None, ropes):
        local_rope, global_rope = ropes
        rope = local_rope if self.local else global_rope
        return super().forward(x, hook, name, layer, cache, rope)


class GeGLU(MLP):
    """Llama's gated MLP with a tanh-GELU gate: down(GELU(gate(x)) * up(x))."""

    activation = staticmethod(functools.partial(F.gelu, approximate="tanh"))


class SandwichBlock(nn.Module):
    """x + ln1_post(attn(ln1(x))), then x + ln2_post(mlp(ln2(x))), with the residual probes of
    a pre-norm block (hook_attn_out and hook_mlp_out: after the post-norms, what is added)."""

    def __init__(self, config: Gemma3Config, layer: int):
        super().__init__()
        self.layer = layer
        eps = config.rms_norm_eps
        self.ln_1, self.ln_1_post = (
            Gemma3RMSNorm(config.n_embd, eps),
            Gemma3RMSNorm(config.n_embd, eps),
        )
        self.ln_2, self.ln_2_post = (
            Gemma3RMSNorm(config.n_embd, eps),
            Gemma3RMSNorm(config.n_embd, eps),
        )
        self.attn = Gemma3Attention(config, layer)
        self.mlp = GeGLU(config)

    def forward(self, x, hook: Hook | None, cache: KVCache | None, ropes):
        if hook is None:
            attn = self.attn(self.ln_1(x, None, ""), None, "", self.layer, cache, ropes)
            x = x + self.ln_1_post(attn, None, "")
            return x + self.ln_2_post(self.mlp(self.ln_2(x, None, ""), None, ""), None, "")
        p = f"blocks.{self.layer}"
        x = hook(f"{p}.hook_resid_pre", x)
        attn = self.attn(
            self.ln_1(x, hook, f"{p}.ln1"), hook, f"{p}.attn", self.layer, cache, ropes
        )
        attn_out = hook(f"{p}.hook_attn_out", self.ln_1_post(attn, hook, f"{p}.ln1_post"))
        x = hook(f"{p}.hook_resid_mid", x + attn_out)
        mlp = self.mlp(self.ln_2(x, hook, f"{p}.ln2"), hook, f"{p}.mlp")
        mlp_out = hook(f"{p}.hook_mlp_out", self.ln_2_post(mlp, hook, f"{p}.ln2_post"))
        return hook(f"{p}.hook_resid_post", x + mlp_out)


# Gemma's norms in a block, by their Hugging Face names -> ours
_HF_NORMS = {
    ".post_attention_layernorm.": ".ln_1_post.",
    ".pre_feedforward_layernorm.": ".ln_2.",
    ".post_feedforward_layernorm.": ".ln_2_post.",
}


class Gemma3(Llama):
    config: Gemma3Config
    config_class = Gemma3Config
    block_class = SandwichBlock

    def __init__(self, config: Gemma3Config):
        super().__init__(config)
        self.ln_f = Gemma3RMSNorm(config.n_embd, config.rms_norm_eps)
        # the local layers' RoPE speeds (inv_freq, Llama's, are the global layers')
        d = config.d_head
        pairs = torch.arange(0, d, 2, dtype=torch.float32, device="cpu")
        self.inv_freq_local = 1.0 / config.rope_local_theta ** (pairs / d)

    def inv_freq_of(self, layer: int) -> torch.Tensor:
        return self.inv_freq_local if self.config.is_local(layer) else self.inv_freq

    def rope_theta_of(self, layer: int) -> float:
        c = self.config
        return c.rope_local_theta if c.is_local(layer) else c.rope_theta

    def embed(self, idx: torch.Tensor, past: int, hook: Hook | None):
        """The token rows times sqrt(d_model), and both RoPEs' cos/sin (local, global)."""
        positions = torch.arange(past, past + idx.shape[1], device=idx.device)
        ropes = tuple(
            tuple(t.to(self.wte.weight.dtype) for t in rope_cos_sin(positions, inv_freq))
            for inv_freq in (self.inv_freq_local, self.inv_freq)
        )
        x = self.wte(idx)
        if hook is not None:
            x = hook("hook_embed", x)
        scale = torch.tensor(math.sqrt(self.config.n_embd)).to(x.dtype)  # as transformers rounds
        return x * scale, (ropes,)

    def decode_step(self, idx: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """One generation step ([batch, 1] new ids after the cache): the forward pass's numbers
        in fewer operations, as Llama's (``Llama.decode_step``), with the sandwich block's four
        norms, QK-norm, GeGLU and each layer's own RoPE; a local layer's attention reads only
        the last ``sliding_window`` cached keys (a view, no mask, no copy)."""

        def attend(step: _StepLayer, q, k, v):
            k, v = cache.extend(step.layer, k, v)
            return _attend_window(step, q, k, v)

        return self._decode_sandwich(idx, [cache.length], attend)

    def decode_rows(self, idx: torch.Tensor, caches: list[KVCache]) -> torch.Tensor:
        """``decode_step`` for several sequences at once (``DecoderLM.decode_rows``): the
        weights are read once for all rows, attention runs over each row's own cache."""

        def attend(step: _StepLayer, q, k, v):
            return attend_rows(caches, step.layer, q, k, v, functools.partial(_attend_window, step))

        return self._decode_sandwich(idx, [cache.length for cache in caches], attend)

    def sandwich_plan(self) -> list[_StepLayer]:
        """What a generation step reads from each block, gathered once and kept while the
        parameters stay as they are (``kept_while_parameters_hold``): looking it up through the
        modules on every step cost about 3 ms of the 11 a step adds to its products."""
        return kept_while_parameters_hold(self, "_sandwich_plan", self._gather_sandwich_plan)

    def _gather_sandwich_plan(self) -> list[_StepLayer]:
        plan = []
        for block in cast("Iterable[SandwichBlock]", self.h):
            attn, mlp = block.attn, block.mlp
            plan.append(
                _StepLayer(
                    layer=block.layer,
                    local=attn.local,
                    window=attn.window,
                    attention=attn.fused_options(),
                    ln_1=block.ln_1.gain_now(),
                    qkv=projection(attn.q_proj, attn.k_proj, attn.v_proj),
                    qk_gains=attn.qk_gains(),
                    o=projection(attn.o_proj),
                    ln_1_post=block.ln_1_post.gain_now(),
                    ln_2=block.ln_2.gain_now(),
                    gate_up=projection(mlp.gate_proj, mlp.up_proj),
                    down=projection(mlp.down_proj),
                    ln_2_post=block.ln_2_post.gain_now(),
                )
            )
        return plan

    def _decode_sandwich(self, idx: torch.Tensor, positions: list[int], attend) -> torch.Tensor:
        """The step itself. At one row per sequence a step is bound by reading the weights, and
        what it adds is the number of small operations (each costs several microseconds after
        a product has streamed megabytes through the caches): the weights and gains come from
        ``sandwich_plan``, norms are plain tensor operations with their kept gains, q and k of
        every head are normalized and rotated together, and projections whose weights lie one
        after another in memory (q, k, v; gate, up: ``pack_weights`` puts them so) are one
        product."""
        B, c = idx.shape[0], self.config
        nq, d, mlp_width = c.n_head, c.d_head, c.d_mlp
        eps = torch.tensor(c.rms_norm_eps, dtype=torch.float32, device=idx.device)
        nkv = cast("SandwichBlock", self.h[0]).attn.n_kv_head
        x = self.wte(idx).view(B, c.n_embd)
        x = x * torch.tensor(math.sqrt(c.n_embd)).to(x.dtype)
        at = torch.tensor(positions)
        # each RoPE's cos and signed sin (see Llama._decode): [rows or 1, 1, 1, d]
        local_rope, global_rope = (
            _row_rope(at, inv_freq, d, x.dtype) for inv_freq in (self.inv_freq_local, self.inv_freq)
        )
        for step in self.sandwich_plan():
            cos, sin = local_rope if step.local else global_rope
            qkv = step.qkv(norm_row(x, step.ln_1, eps))
            qk = qkv[:, : (nq + nkv) * d].view(B, nq + nkv, 1, d)
            qk = _rotate_row(norm_row(qk, step.qk_gains, eps), cos, sin)
            v = qkv[:, (nq + nkv) * d :].view(B, nkv, 1, d)
            z = attend(step, qk[:, :nq], qk[:, nq:], v)
            x = add_norm_row(x, step.o(z.reshape(B, nq * d)), step.ln_1_post, eps)
            gate_up = step.gate_up(norm_row(x, step.ln_2, eps))
            m = F.gelu(gate_up[:, :mlp_width], approximate="tanh").mul_(gate_up[:, mlp_width:])
            x = add_norm_row(x, step.down(m), step.ln_2_post, eps)
        x = norm_row(x, cast("Gemma3RMSNorm", self.ln_f).gain_now(), eps)
        return self.unembed(x).view(B, 1, -1)

    @classmethod
    def state_from_hf(cls, state: dict[str, torch.Tensor], config: LlamaConfig) -> dict:
        """Gemma's names for its norms to ours, then Llama's renaming (Gemma's
        post_attention_layernorm is the attention's post-norm, not the MLP's pre-norm as in
        Llama)."""
        renamed = {}
        for key, tensor in state.items():
            for theirs, ours in _HF_NORMS.items():
                key = key.replace(theirs, ours)
            renamed[key] = tensor
        return super().state_from_hf(renamed, config)


class _StepLayer(NamedTuple):
    """One block as a generation step reads it (``Gemma3.sandwich_plan``)."""

    layer: int
    local: bool
    window: int | None  # a local layer's keys, None: all
    attention: dict  # F.scaled_dot_product_attention's options (scale, enable_gqa)
    ln_1: torch.Tensor  # each norm's (1 + w) gain, float32
    qkv: Product  # x -> q, k, v side by side
    qk_gains: torch.Tensor  # every q head's gain, then every k head's (qk_gains)
    o: Product
    ln_1_post: torch.Tensor
    ln_2: torch.Tensor
    gate_up: Product  # x -> gate, up side by side
    down: Product
    ln_2_post: torch.Tensor


def _attend_window(step: _StepLayer, q, k, v) -> torch.Tensor:
    """One new query over its cached keys and values: a local layer's over the last
    ``window`` of them only (a view of the cache), which is what its mask would keep."""
    if step.window is not None and k.shape[2] > step.window:
        k, v = k[:, :, -step.window :], v[:, :, -step.window :]
    return F.scaled_dot_product_attention(q, k, v, **step.attention)
