"""The 20 steps of the Transformer Explainer, and which probes show each one.

Probe names with ``{L}`` are per layer. Steps about sampling (temperature, strategies) read the
final logits; the dropout step has no probe at inference (dropout is the identity then) and is
shown by applying a train-mode mask to a real activation (see ``Trace.dropout_example``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    number: int
    key: str
    title: str
    summary: str
    probes: tuple[str, ...] = ()

    def probe_names(self, layer: int) -> list[str]:
        return [p.format(L=layer) for p in self.probes]


STEPS: tuple[Step, ...] = (
    Step(
        1,
        "transformer",
        "What is a Transformer",
        "A decoder-only Transformer reads tokens and predicts the next one.",
        ("logits",),
    ),
    Step(
        2,
        "how-it-works",
        "How Transformers work",
        "Generation repeats one step: predict a distribution over the next token, pick one, "
        "append it, predict again.",
        ("logits",),
    ),
    Step(
        3,
        "architecture",
        "Architecture",
        "Embedding, then N identical blocks, then the output probabilities.",
        ("hook_embed", "blocks.{L}.hook_resid_post", "ln_final.hook_out", "logits"),
    ),
    Step(
        4,
        "embedding",
        "Embedding",
        "Each token becomes a d_model-dimensional vector: token embedding plus position embedding.",
        ("hook_embed", "hook_pos_embed", "blocks.0.hook_resid_pre"),
    ),
    Step(
        5,
        "token-embedding",
        "Tokenization and token embedding",
        "Text is split into subword tokens; each token id selects a row of the embedding matrix.",
        ("hook_embed",),
    ),
    Step(
        6,
        "positional-encoding",
        "Positional encoding",
        "GPT-2 learns one vector per position and adds it to the token embedding.",
        ("hook_pos_embed", "blocks.0.hook_resid_pre"),
    ),
    Step(
        7,
        "blocks",
        "Repeated Transformer blocks",
        "Each block refines every position's vector: attention mixes positions, the MLP "
        "transforms each one.",
        ("blocks.{L}.hook_resid_pre", "blocks.{L}.hook_resid_mid", "blocks.{L}.hook_resid_post"),
    ),
    Step(
        8,
        "self-attention",
        "Multi-head self-attention",
        "Every position gathers information from earlier positions, weighted by relevance.",
        ("blocks.{L}.attn.hook_pattern", "blocks.{L}.hook_attn_out"),
    ),
    Step(
        9,
        "qkv",
        "Query, key, value",
        "A linear map of the LayerNorm output gives each position a query, a key and a value.",
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
        "Splitting into heads",
        "Q, K and V are cut into n_head slices of d_head = d_model / n_head; each head attends "
        "on its own.",
        ("blocks.{L}.attn.hook_q", "blocks.{L}.attn.hook_k", "blocks.{L}.attn.hook_v"),
    ),
    Step(
        11,
        "masked-attention",
        "Masked self-attention",
        "Scores QK^T are scaled by 1/sqrt(d_head), future positions are masked to -inf, and "
        "softmax turns each row into weights.",
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
        "Attention output and concatenation",
        "Each head's weighted sum of values is concatenated and projected back to d_model.",
        ("blocks.{L}.attn.hook_z", "blocks.{L}.attn.hook_result", "blocks.{L}.hook_attn_out"),
    ),
    Step(
        13,
        "mlp",
        "MLP",
        "Per position: expand to 4 x d_model, apply GELU, project back. No mixing across "
        "positions.",
        (
            "blocks.{L}.ln2.hook_out",
            "blocks.{L}.mlp.hook_pre",
            "blocks.{L}.mlp.hook_post",
            "blocks.{L}.hook_mlp_out",
        ),
    ),
    Step(
        14,
        "logits",
        "Output logits",
        "The final LayerNorm output is multiplied by the (tied) embedding matrix: one score per "
        "vocabulary token.",
        ("ln_final.hook_out", "logits"),
    ),
    Step(
        15,
        "probabilities",
        "Probabilities",
        "Softmax turns logits into a probability distribution over the vocabulary.",
        ("logits",),
    ),
    Step(
        16,
        "temperature",
        "Temperature",
        "Dividing logits by T before softmax sharpens (T < 1) or flattens (T > 1) the "
        "distribution.",
        ("logits",),
    ),
    Step(
        17,
        "sampling",
        "Sampling strategies",
        "Greedy takes the top token; top-k keeps the k best; top-p keeps the smallest set "
        "whose probability reaches p; min-p drops tokens far below the best.",
        ("logits",),
    ),
    Step(
        18,
        "residual",
        "Residual connections",
        "Attention and MLP outputs are added to their input: x + F(x), so information and "
        "gradients flow straight through.",
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
        "Layer normalization",
        "Before attention and before the MLP (pre-LN), each vector is centred, divided by its "
        "standard deviation, then scaled by gamma and shifted by beta.",
        (
            "blocks.{L}.hook_resid_pre",
            "blocks.{L}.ln1.hook_scale",
            "blocks.{L}.ln1.hook_normalized",
            "blocks.{L}.ln1.hook_out",
        ),
    ),
    Step(
        20,
        "dropout",
        "Dropout",
        "During training a random share of activations is zeroed and the rest scaled by "
        "1/(1-p); at inference dropout is the identity.",
        ("blocks.{L}.hook_attn_out",),
    ),
)

STEPS_BY_KEY = {step.key: step for step in STEPS}


def find_step(step: int | str) -> Step:
    if isinstance(step, int) and 1 <= step <= len(STEPS):
        return STEPS[step - 1]
    if isinstance(step, str) and step in STEPS_BY_KEY:
        return STEPS_BY_KEY[step]
    raise KeyError(f"unknown step {step!r}: use 1-{len(STEPS)} or one of {', '.join(STEPS_BY_KEY)}")
