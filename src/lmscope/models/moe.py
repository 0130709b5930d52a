"""A mixture of experts: Mixtral and Qwen3-MoE, the Llama recipe with many MLPs per block.

Each sparse block holds ``n_expert`` SwiGLU MLPs (the experts) and a router, one linear map from
the residual stream to a score per expert. For every token:

    probs   = softmax(router(x))               one probability per expert
    chosen  = the top ``n_expert_used`` experts by probability
    weights = their probabilities, divided by their sum (Mixtral always; Qwen3-MoE when
              ``norm_topk_prob``)
    out     = sum over the chosen e of weights[e] * expert_e(x)

so a token pays for ``n_expert_used`` experts while the model holds ``n_expert`` of them. The
attention is Mistral's (Mixtral: an optional sliding window) or Qwen3's (QK-norm, see
``lmscope.models.qwen3``). Qwen3-MoE may keep dense MLPs in some layers (``dense_layers``,
Hugging Face's ``mlp_only_layers``, and every layer but each ``sparse_step``-th).

Probes of a sparse block's MLP, ``blocks.L.mlp.``: ``hook_router_logits`` and ``hook_router_probs``
([position, n_expert]), and TransformerLens's ``hook_expert_indices`` (the chosen experts, best
first) and ``hook_expert_weights`` (their weights), both [position, n_expert_used]. Dense layers
keep Llama's MLP probes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.models.common import Hook, Linear, PreNormBlock
from lmscope.models.kin import from_llama_fields, require_hf_type
from lmscope.models.llama import (
    MLP,
    CausalSelfAttention,
    Llama,
    LlamaConfig,
    RMSNorm,
)
from lmscope.models.qwen3 import Qwen3Attention

HF_MODEL_TYPES = ("mixtral", "qwen3_moe")
_HF_DEFAULT_CTX = {"mixtral": 131072, "qwen3_moe": 32768}  # transformers' defaults


@dataclass
class MoEConfig(LlamaConfig):
    arch: ClassVar[str] = "moe"  # the "arch" of a saved model's lmscope.json
    model_types: ClassVar[tuple[str, ...]] = HF_MODEL_TYPES
    model_type: str = "mixtral"
    n_expert: int = 8  # experts per sparse block (num_local_experts, num_experts)
    n_expert_used: int = 2  # experts each token goes through (num_experts_per_tok)
    d_expert: int | None = None  # an expert's MLP width; None means n_inner
    norm_topk_prob: bool = True  # divide the chosen experts' probabilities by their sum
    qk_norm: bool = False  # Qwen3's RMSNorm on each head's q and k
    sparse_step: int = 1  # every sparse_step-th layer is sparse (decoder_sparse_step)
    dense_layers: list | None = None  # layers with a dense MLP of width n_inner

    def __post_init__(self):
        super().__post_init__()
        if self.d_expert is None:
            self.d_expert = self.n_inner
        self.require_at_least(1, "n_expert", "n_expert_used", "d_expert", "sparse_step")
        if self.n_expert_used > self.n_expert:
            raise InvalidInputError(
                "error.moe.too-many-used", used=str(self.n_expert_used), n=str(self.n_expert)
            )
        dense = self.dense_layers or []
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in dense):
            raise InvalidInputError("error.moe.dense-layers", got=f"{dense!r:.60}")
        self.dense_layers = sorted(set(dense))

    @property
    def family(self) -> str:  # type: ignore[override]  # LlamaConfig's is a class constant
        """What the explainer calls it: Qwen3-MoE (Qwen3's QK-norm attention) or Mixtral."""
        return "qwen3_moe" if self.qk_norm else "mixtral"

    def is_sparse(self, layer: int) -> bool:
        """Whether block ``layer`` routes tokens to experts (else it has one dense MLP)."""
        return layer not in (self.dense_layers or []) and (layer + 1) % self.sparse_step == 0

    @classmethod
    def from_hf(cls, hf: dict) -> MoEConfig:
        """From a Hugging Face ``config.json`` dict of a ``mixtral`` or ``qwen3_moe`` model."""
        hf = require_hf_type(hf, HF_MODEL_TYPES, "mixture-of-experts")
        model_type = hf["model_type"]
        n_expert = hf.get("num_local_experts", hf.get("num_experts"))
        if n_expert is None or "num_experts_per_tok" not in hf:
            field = "num_experts_per_tok" if n_expert is not None else "num_local_experts"
            raise CheckpointError("error.config.lacks-field", family=model_type, field=field)
        more = dict(n_expert=n_expert, n_expert_used=hf["num_experts_per_tok"])
        if model_type == "mixtral":  # Mistral's attention; every layer sparse, weights normalized
            more.update(norm_topk_prob=True, qk_norm=False)
            read_as = "mistral"
        else:  # Qwen3's attention (QK-norm); experts of their own width
            if hf.get("use_sliding_window"):
                raise CheckpointError("error.qwen3.sliding-window", type=model_type)
            more.update(
                d_expert=hf.get("moe_intermediate_size"),
                norm_topk_prob=bool(hf.get("norm_topk_prob", False)),
                qk_norm=True,
                sparse_step=hf.get("decoder_sparse_step", 1),
                dense_layers=list(hf.get("mlp_only_layers") or []),
            )
            read_as = "llama"
        return from_llama_fields(cls, hf, read_as, model_type, _HF_DEFAULT_CTX[model_type], **more)


class Expert(MLP):
    """One expert: a SwiGLU MLP of width d_expert."""

    def __init__(self, config: MoEConfig):
        nn.Module.__init__(self)
        assert config.d_expert is not None  # __post_init__ sets it
        self.gate_proj = Linear(config.n_embd, config.d_expert, bias=False)
        self.up_proj = Linear(config.n_embd, config.d_expert, bias=False)
        self.down_proj = Linear(config.d_expert, config.n_embd, bias=False)


class SparseMoE(nn.Module):
    """The router and the experts: each token goes through its top n_expert_used experts, their
    outputs mixed by the router's (renormalized) probabilities."""

    def __init__(self, config: MoEConfig):
        super().__init__()
        self.top_k, self.norm_topk_prob = config.n_expert_used, config.norm_topk_prob
        self.gate = Linear(config.n_embd, config.n_expert, bias=False)  # the router
        self.experts = nn.ModuleList(Expert(config) for _ in range(config.n_expert))

    def route(self, x: torch.Tensor, hook: Hook | None = None, name: str = ""):
        """(chosen experts, their weights) for every position of x: [..., n_expert_used] each,
        the best expert first. Softmax and top-k in float32, as transformers computes them."""
        logits = self.gate(x)
        if hook is not None:
            logits = hook(f"{name}.hook_router_logits", logits)
        probs = torch.softmax(logits.float(), dim=-1)
        if hook is not None:
            probs = hook(f"{name}.hook_router_probs", probs)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        if self.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        weights = weights.to(x.dtype)
        if hook is not None:
            chosen = hook(f"{name}.hook_expert_indices", chosen)
            weights = hook(f"{name}.hook_expert_weights", weights)
        return chosen, weights

    def forward(self, x: torch.Tensor, hook: Hook | None, name: str) -> torch.Tensor:
        chosen, weights = self.route(x, hook, name)
        flat = x.reshape(-1, x.shape[-1])
        chosen, weights = chosen.reshape(-1, self.top_k), weights.reshape(-1, self.top_k)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            rows, slot = (chosen == e).nonzero(as_tuple=True)  # the tokens routed to expert e
            if rows.numel():
                y = expert(flat[rows], None, "") * weights[rows, slot, None]
                out.index_add_(0, rows, y)
        return out.view_as(x)


class MoEBlock(PreNormBlock):
    def __init__(self, config: MoEConfig, layer: int):
        attention = Qwen3Attention(config) if config.qk_norm else CausalSelfAttention(config)
        super().__init__(
            layer,
            RMSNorm(config.n_embd, config.rms_norm_eps),
            attention,
            RMSNorm(config.n_embd, config.rms_norm_eps),
            SparseMoE(config) if config.is_sparse(layer) else MLP(config),
            config.dropout,
        )


# Mixtral's names for the experts' matrices (transformers' MixtralBlockSparseTop2MLP): w1 is the
# gate, w3 up, w2 down; its MLP is "block_sparse_moe". Qwen3-MoE's are already ours.
_MIXTRAL_PARTS = {".w1.": ".gate_proj.", ".w3.": ".up_proj.", ".w2.": ".down_proj."}
_STACKED = tuple(f".mlp.experts.{part}.weight" for part in ("gate_proj", "up_proj", "down_proj"))


class MoE(Llama):
    config: MoEConfig
    config_class = MoEConfig
    block_class = MoEBlock

    @classmethod
    def state_from_hf(cls, state: dict[str, torch.Tensor], config: LlamaConfig) -> dict:
        """Mixtral's or Qwen3-MoE's names to ours, then Llama's renaming: Mixtral's
        ``block_sparse_moe.experts.E.w1`` becomes ``mlp.experts.E.gate_proj``, and experts stored
        as one 3-D tensor for all of them (transformers' in-memory ``mlp.experts.gate_up_proj``, or
        the GGUF reader's ``mlp.experts.gate_proj.weight``) are split into one matrix per expert."""
        renamed: dict[str, torch.Tensor] = {}
        for key, tensor in state.items():
            if ".block_sparse_moe." in key:
                key = key.replace(".block_sparse_moe.", ".mlp.")
                for theirs, ours in _MIXTRAL_PARTS.items():
                    key = key.replace(theirs, ours)
            if key.endswith(".mlp.experts.gate_up_proj"):
                prefix = key.removesuffix("gate_up_proj")
                for e, fused in enumerate(tensor):
                    gate, up = fused.chunk(2, dim=0)
                    renamed[f"{prefix}{e}.gate_proj.weight"] = gate
                    renamed[f"{prefix}{e}.up_proj.weight"] = up
            elif key.endswith(".mlp.experts.down_proj"):
                for e, down in enumerate(tensor):
                    renamed[f"{key.removesuffix('down_proj')}{e}.down_proj.weight"] = down
            elif tensor.dim() == 3 and key.endswith(_STACKED):  # GGUF: [expert, out, in]
                prefix, part, _ = key.rsplit(".", 2)
                for e, matrix in enumerate(tensor):
                    renamed[f"{prefix}.{e}.{part}.weight"] = matrix
            else:
                renamed[key] = tensor
        return super().state_from_hf(renamed, config)
