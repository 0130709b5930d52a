"""The GPT-2 architecture, written to be read, with a named probe on every step.

Decoder-only Transformer: learned token and position embeddings, N pre-LayerNorm blocks
(causal multi-head self-attention, then a GELU MLP, each added back into the residual stream),
a final LayerNorm and an unembedding tied to the token embedding.

Every intermediate tensor passes through ``hook(name, tensor)`` when a hook is given. Names
follow TransformerLens's hook points (``blocks.3.attn.hook_pattern``), so a Trace can record
them and an intervention can replace them. Without a hook the model takes the fast path
(fused LayerNorm, PyTorch's scaled_dot_product_attention) and computes the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, cast

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.i18n import Message
from lmscope.models.common import (
    DecoderLM,
    Hook,
    KVCache,
    Linear,
    PreNormBlock,
    ProbedAttention,
    attend_rows,
    checked_logits,
    head_of_model,
)
from lmscope.models.fields import JsonConfig, check_field_types, require_mapping


@dataclass
class GPTConfig(JsonConfig):
    family: ClassVar[str] = "gpt2"  # what the explainer says this architecture does

    vocab_size: int = 50257
    n_ctx: int = 1024  # context length (Hugging Face: n_positions)
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    n_inner: int | None = None  # MLP width; None means 4 * n_embd
    layer_norm_eps: float = 1e-5
    activation: str = "gelu_new"  # GPT-2's tanh approximation of GELU
    dropout: float = 0.0  # one rate for embeddings, attention weights and residual branches

    def __post_init__(self):
        check_field_types(self, Message("error.config.part.named", model="GPT-2"))
        self.require_at_least(1, "vocab_size", "n_ctx", "n_embd", "n_layer", "n_head")
        if self.n_inner is not None and self.n_inner < 1:
            raise InvalidInputError(
                "error.value.at-least-or-null", name="n_inner", low=1, got=str(self.n_inner)
            )
        self.require_divisible("n_embd", "n_head")
        if self.activation not in ACTIVATIONS:
            raise InvalidInputError(
                "error.gpt2.unknown-activation",
                name=repr(self.activation),
                known=", ".join(ACTIVATIONS),
            )
        self.require_fraction("dropout")
        # LayerNorm divides by sqrt(var + eps): eps <= 0 can make every logit NaN.
        self.require_above("layer_norm_eps", 0)

    @property
    def d_head(self) -> int:
        return self.n_embd // self.n_head

    @property
    def d_mlp(self) -> int:
        return self.n_inner or 4 * self.n_embd

    @classmethod
    def from_hf(cls, hf: dict) -> GPTConfig:
        """Build from a Hugging Face GPT-2 ``config.json`` dict."""
        hf = require_mapping(hf, "config.json")
        if hf.get("scale_attn_by_inverse_layer_idx") or hf.get("reorder_and_upcast_attn"):
            raise CheckpointError("error.gpt2.attention-variant")
        if hf.get("scale_attn_weights") is False:
            raise CheckpointError("error.gpt2.no-scale-attn")
        try:
            return cls(
                vocab_size=hf["vocab_size"],
                n_ctx=hf.get("n_positions", hf.get("n_ctx", 1024)),
                n_embd=hf["n_embd"],
                n_layer=hf["n_layer"],
                n_head=hf["n_head"],
                n_inner=hf.get("n_inner"),
                layer_norm_eps=hf.get("layer_norm_epsilon", 1e-5),
                activation=hf.get("activation_function", "gelu_new"),
                dropout=hf.get("resid_pdrop", 0.0),  # HF's three rates are equal in GPT-2
            )
        except KeyError as missing:
            raise CheckpointError(
                "error.config.lacks-field", family="GPT-2", field=str(missing)
            ) from None
        except InvalidInputError as err:
            raise CheckpointError("error.config.in-config-json", why=err) from None

    def to_hf(self) -> dict:
        return {
            "model_type": "gpt2",
            "architectures": ["GPT2LMHeadModel"],
            "vocab_size": self.vocab_size,
            "n_positions": self.n_ctx,
            "n_embd": self.n_embd,
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_inner": self.n_inner,
            "layer_norm_epsilon": self.layer_norm_eps,
            "activation_function": self.activation,
            "resid_pdrop": self.dropout,
            "embd_pdrop": self.dropout,
            "attn_pdrop": self.dropout,
        }


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "gelu": F.gelu,
    "relu": F.relu,
}


class LayerNorm(nn.Module):
    """LayerNorm that can show its work: mean, scale (std), normalized, then gamma/beta."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor, hook: Hook | None, name: str) -> torch.Tensor:
        if hook is None:
            return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)
        if x.dtype != torch.float32:
            return self._probed_half(x, hook, name)
        centred = x - x.mean(dim=-1, keepdim=True)
        scale = hook(
            f"{name}.hook_scale", (centred.pow(2).mean(-1, keepdim=True) + self.eps).sqrt()
        )
        normalized = hook(f"{name}.hook_normalized", centred / scale)
        return hook(f"{name}.hook_out", normalized * self.weight + self.bias)

    def _probed_half(self, x: torch.Tensor, hook: Hook, name: str) -> torch.Tensor:
        # Statistics and the normalized vectors in float32, as F.layer_norm computes them (in
        # float16 the square of an activation past 256 overflows to inf), by PyTorch's fused
        # kernel: one pass over the activations instead of a chain of float32 copies.
        x32 = x.float()
        normalized, _, rstd = torch.native_layer_norm(x32, (x.shape[-1],), None, None, self.eps)
        hook(f"{name}.hook_scale", rstd.reciprocal())
        normalized = hook(f"{name}.hook_normalized", normalized)
        out = torch.addcmul(self.bias.float(), normalized, self.weight.float())
        return hook(f"{name}.hook_out", out.to(x.dtype))


class CausalSelfAttention(ProbedAttention):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.d_head = config.n_head, config.d_head
        self.c_attn = Linear(config.n_embd, 3 * config.n_embd)  # Q, K, V for all heads
        self.c_proj = Linear(config.n_embd, config.n_embd)  # W_O: concat(heads) -> d_model
        self.attn_dropout = nn.Dropout(config.dropout)
        self.dropout = config.dropout

    def forward(self, x, hook: Hook | None, name: str, layer: int, cache: KVCache | None):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        # [batch, position, head, d_head]: TransformerLens's layout for hook_q/k/v and hook_z
        q, k, v = (t.view(B, T, self.n_head, self.d_head) for t in (q, k, v))
        if hook is not None:
            q = hook(f"{name}.hook_q", q)
            k = hook(f"{name}.hook_k", k)
            v = hook(f"{name}.hook_v", v)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [batch, head, position, d_head]
        if cache is not None:
            k, v = cache.extend(layer, k, v)
        z = self.attend(q, k, v, k.shape[2] - T, hook, name)  # past: positions from the cache
        return self.c_proj(z.reshape(B, T, C))

    # the recorded probes QK^T is computed from (see raw_scores)
    score_inputs = ("hook_q", "hook_k")

    def raw_scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """QK^T from recorded q and k ([position, head, d_head]) -> [head, query, key], as the
        forward pass computes it (in float32)."""
        return q.transpose(0, 1).float() @ k.transpose(0, 1).float().transpose(-2, -1)

    def out_weight(self) -> torch.Tensor:
        return self.c_proj.weight


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = Linear(config.n_embd, config.d_mlp)
        self.c_proj = Linear(config.d_mlp, config.n_embd)
        self.act = ACTIVATIONS[config.activation]

    def forward(self, x, hook: Hook | None, name: str):
        pre = self.c_fc(x)
        if hook is not None:
            pre = hook(f"{name}.hook_pre", pre)
        post = self.act(pre)
        if hook is not None:
            post = hook(f"{name}.hook_post", post)
        return self.c_proj(post)


class Block(PreNormBlock):
    def __init__(self, config: GPTConfig, layer: int):
        super().__init__(
            layer,
            LayerNorm(config.n_embd, config.layer_norm_eps),
            CausalSelfAttention(config),
            LayerNorm(config.n_embd, config.layer_norm_eps),
            MLP(config),
            config.dropout,
        )


class GPT(DecoderLM):
    config: GPTConfig
    config_class: ClassVar[type[GPTConfig]] = GPTConfig

    @staticmethod
    def state_from_hf(state: dict[str, torch.Tensor], config: GPTConfig) -> dict:
        """A Hugging Face GPT2LMHeadModel state dict in this module's names."""
        return gpt2_state_from_hf(state)

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_ctx, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.h = nn.ModuleList(Block(config, i) for i in range(config.n_layer))
        self.ln_f = LayerNorm(config.n_embd, config.layer_norm_eps)
        self.apply(self._init_weights)
        # GPT-2's residual projections start smaller so the stream's variance stays put in depth
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self, include_position_embedding: bool = True) -> int:
        n = sum(p.numel() for p in self.parameters())
        return n if include_position_embedding else n - self.wpe.weight.numel()

    def embed(self, idx: torch.Tensor, past: int, hook: Hook | None):
        """Token plus learned position embeddings; blocks need nothing more."""
        B, T = idx.shape
        pos = torch.arange(past, past + T, device=idx.device)
        tok_emb, pos_emb = self.wte(idx), self.wpe(pos).unsqueeze(0)
        if hook is not None:
            tok_emb = hook("hook_embed", tok_emb)
            pos_emb = hook("hook_pos_embed", pos_emb.expand(B, T, -1))
        return self.drop(tok_emb + pos_emb), ()

    def unembed(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from final-LayerNorm outputs: the unembedding, tied to the token embedding."""
        return checked_logits(x, self.wte.weight)

    def decode_rows(self, idx: torch.Tensor, caches: list[KVCache]) -> torch.Tensor:
        """One step for each of several sequences ([rows, 1] ids, one single-row cache each,
        of any lengths): the weights are read once for all rows; attention runs row by row over
        each row's own cache."""
        B, c = idx.shape[0], self.config
        positions = torch.tensor([cache.length for cache in caches], device=idx.device)
        x = self.wte(idx) + self.wpe(positions).unsqueeze(1)  # [rows, 1, d_model]
        for layer, block in enumerate(cast("Iterable[Block]", self.h)):
            attn = block.attn
            q, k, v = attn.c_attn(block.ln_1(x, None, "")).split(c.n_embd, dim=2)
            q, k, v = (t.view(B, c.n_head, 1, c.d_head) for t in (q, k, v))  # one position
            z = attend_rows(caches, layer, q, k, v, attn.attend_cached)
            x = x + attn.c_proj(z.reshape(B, 1, c.n_embd))
            x = x + block.mlp(block.ln_2(x, None, ""), None, "")
        return head_of_model(self, x, None, None, True)[0]


# --- Hugging Face GPT2LMHeadModel weights ---------------------------------------------------

# HF GPT-2 stores these projections as Conv1D, i.e. [in, out]; nn.Linear wants [out, in].
_CONV1D_SUFFIXES = (
    "attn.c_attn.weight",
    "attn.c_proj.weight",
    "mlp.c_fc.weight",
    "mlp.c_proj.weight",
)


def gpt2_state_from_hf(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Rename HF GPT-2 keys to ours and turn Conv1D weights into Linear layout."""
    out = {}
    for key, tensor in state.items():
        key = key.removeprefix("transformer.")
        if key.endswith((".attn.bias", ".attn.masked_bias")):
            continue  # HF's precomputed causal-mask buffers, not parameters
        if key == "lm_head.weight":
            continue  # tied to wte; checked below
        if key.endswith(_CONV1D_SUFFIXES):
            tensor = tensor.t()
        out[key] = tensor.contiguous()
    lm_head = state.get("lm_head.weight")
    if lm_head is not None and "wte.weight" in out and not torch.equal(lm_head, out["wte.weight"]):
        raise CheckpointError("error.gpt2.untied-head")
    return out


def gpt2_state_to_hf(model: GPT) -> dict[str, torch.Tensor]:
    """Our weights under HF GPT2LMHeadModel names (for export and reference comparisons)."""
    out = {}
    for key, tensor in model.state_dict().items():
        if key.endswith(_CONV1D_SUFFIXES):
            tensor = tensor.t()
        out[f"transformer.{key}"] = tensor.contiguous()
    return out
