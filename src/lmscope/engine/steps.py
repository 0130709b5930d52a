"""The 20 steps of the Transformer Explainer, in order, and which probes show each one: the one
list of the steps (their titles and texts, in English and Chinese, are ``lmscope.explain``'s).

Probe names with ``{L}`` are per layer. Steps about sampling (temperature, strategies) read the
final logits; the dropout step has no probe at inference (dropout is the identity then) and is
shown by applying a train-mode mask to a real activation (see ``Trace.dropout_example``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lmscope.engine.families import lineage
from lmscope.errors import InvalidInputError


@dataclass(frozen=True)
class Step:
    number: int
    key: str
    probes: tuple[str, ...] = ()

    def probes_for(self, family: str | None = None) -> tuple[str, ...]:
        """The probes this step reads in an architecture ``family`` ("llama"; None: GPT-2's):
        those of the nearest family of its lineage (``engine.families``) that reads others."""
        for name in lineage(family):
            if self.key in FAMILY_PROBES.get(name, {}):
                return FAMILY_PROBES[name][self.key]
        return self.probes

    def probe_names(self, layer: int, family: str | None = None) -> list[str]:
        return [p.format(L=layer) for p in self.probes_for(family)]


_QK_NORM = (
    "blocks.{L}.ln1.hook_out",
    "blocks.{L}.attn.hook_q",
    "blocks.{L}.attn.q_norm.hook_out",
    "blocks.{L}.attn.hook_k",
    "blocks.{L}.attn.k_norm.hook_out",
    "blocks.{L}.attn.hook_v",
)

# What an architecture reads instead where its step differs: a Llama adds no position vector
# (RoPE rotates q and k inside attention), and its MLP has a gate beside the up projection.
FAMILY_PROBES: dict[str, dict[str, tuple[str, ...]]] = {
    # QK-norm (Qwen3, Gemma 3; Qwen3-MoE through Qwen3): q and k before and after their norms
    "qwen3": {"qkv": _QK_NORM},
    "gemma3": {"qkv": _QK_NORM},
    "llama": {
        "embedding": ("hook_embed", "blocks.0.hook_resid_pre"),
        "positional-encoding": (
            "blocks.{L}.attn.hook_q",
            "blocks.{L}.attn.hook_rot_q",
            "blocks.{L}.attn.hook_k",
            "blocks.{L}.attn.hook_rot_k",
            "blocks.{L}.attn.hook_attn_scores_raw",
        ),
        "mlp": (
            "blocks.{L}.ln2.hook_out",
            "blocks.{L}.mlp.hook_pre",
            "blocks.{L}.mlp.hook_pre_linear",
            "blocks.{L}.mlp.hook_post",
            "blocks.{L}.hook_mlp_out",
        ),
    },
}

STEPS: tuple[Step, ...] = (
    Step(1, "transformer", ("logits",)),
    Step(2, "how-it-works", ("logits",)),
    Step(
        3,
        "architecture",
        ("hook_embed", "blocks.{L}.hook_resid_post", "ln_final.hook_out", "logits"),
    ),
    # tokenization before embedding (issue 38): the text is cut into tokens, then each becomes
    # a vector
    Step(4, "token-embedding", ("hook_embed",)),
    Step(5, "embedding", ("hook_embed", "hook_pos_embed", "blocks.0.hook_resid_pre")),
    Step(6, "positional-encoding", ("hook_pos_embed", "blocks.0.hook_resid_pre")),
    Step(
        7,
        "blocks",
        ("blocks.{L}.hook_resid_pre", "blocks.{L}.hook_resid_mid", "blocks.{L}.hook_resid_post"),
    ),
    Step(8, "self-attention", ("blocks.{L}.attn.hook_pattern", "blocks.{L}.hook_attn_out")),
    Step(
        9,
        "qkv",
        (
            "blocks.{L}.ln1.hook_out",
            "blocks.{L}.attn.hook_q",
            "blocks.{L}.attn.hook_k",
            "blocks.{L}.attn.hook_v",
        ),
    ),
    Step(
        10,
        "multi-head",
        ("blocks.{L}.attn.hook_q", "blocks.{L}.attn.hook_k", "blocks.{L}.attn.hook_v"),
    ),
    Step(
        11,
        "masked-attention",
        (
            "blocks.{L}.attn.hook_attn_scores_raw",
            "blocks.{L}.attn.hook_attn_scores_scaled",
            "blocks.{L}.attn.hook_attn_scores",
            "blocks.{L}.attn.hook_pattern",
        ),
    ),
    Step(
        12,
        "attention-output",
        ("blocks.{L}.attn.hook_z", "blocks.{L}.attn.hook_result", "blocks.{L}.hook_attn_out"),
    ),
    Step(
        13,
        "mlp",
        (
            "blocks.{L}.ln2.hook_out",
            "blocks.{L}.mlp.hook_pre",
            "blocks.{L}.mlp.hook_post",
            "blocks.{L}.hook_mlp_out",
        ),
    ),
    Step(14, "logits", ("ln_final.hook_out", "logits")),
    Step(15, "probabilities", ("logits",)),
    Step(16, "temperature", ("logits",)),
    Step(17, "sampling", ("logits",)),
    Step(
        18,
        "residual",
        (
            "blocks.{L}.hook_resid_pre",
            "blocks.{L}.hook_attn_out",
            "blocks.{L}.hook_resid_mid",
            "blocks.{L}.hook_mlp_out",
            "blocks.{L}.hook_resid_post",
        ),
    ),
    Step(
        19,
        "layernorm",
        (
            "blocks.{L}.hook_resid_pre",
            "blocks.{L}.ln1.hook_scale",
            "blocks.{L}.ln1.hook_normalized",
            "blocks.{L}.ln1.hook_out",
        ),
    ),
    Step(20, "dropout", ("blocks.{L}.hook_attn_out",)),
)

STEPS_BY_KEY = {step.key: step for step in STEPS}


def _joined(text: str) -> str:
    """A key's words run together: "Self Attention", "self_attention" and "self-attention"
    alike (no two keys are the same this way)."""
    return "".join(ch for ch in text.lower() if ch not in " _-")


STEPS_BY_WORDS = {_joined(step.key): step for step in STEPS}


class UnknownStepError(InvalidInputError, KeyError):
    """A step that is neither a number 1-20 nor a step's key (also a KeyError: a failed lookup)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return self.render()


def find_step(step: int | str) -> Step:
    """The step ``step`` names: its number (1-20, or "8" as text) or its key, in any case,
    its words joined by hyphens, underscores, spaces or nothing."""
    if isinstance(step, str):
        text = step.strip()
        found = STEPS_BY_WORDS.get(_joined(text))
        if found is not None:
            return found
        step = int(text) if text.isdigit() else step
    if isinstance(step, int) and not isinstance(step, bool) and 1 <= step <= len(STEPS):
        return STEPS[step - 1]
    raise UnknownStepError(
        "error.steps.unknown",
        step=f"{step!r:.40}",
        last=str(len(STEPS)),
        keys=", ".join(STEPS_BY_KEY),
    )
