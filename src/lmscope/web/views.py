"""What each API endpoint returns, read from a Trace (or the model's weights) and made JSON-ready.

No model math happens here beyond reading probes: every vector is a recorded tensor or a weight,
summaries (norm, mean, histograms) describe those numbers, and logits for an earlier position
are the tied unembedding applied to that position's recorded final-LayerNorm output, exactly as
the model computes the last position's.
"""

from __future__ import annotations

import base64
import math

import numpy as np
import torch

from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.engine.steps import STEPS
from lmscope.engine.trace import Trace
from lmscope.explain.report import _stats as activation_stats
from lmscope.web.numbers import number, rounded

TOP_N = 300  # top logits sent per position; the rest travel as log-sum-exps
TEMPERATURES = [round(0.05 * i, 2) for i in range(1, 41)]  # the page's slider: 0.05 .. 2.0
ATTENTION_WINDOW = 64  # rows and columns of the detailed attention matrices
POOL_TOP = 20


# --- small pieces -------------------------------------------------------------------------


def token_text(model, token_id: int) -> str:
    tok = model.tokenizer
    return tok.piece(int(token_id)).text if tok is not None else f"#{int(token_id)}"


def vocab_texts(model, ids) -> dict[str, str]:
    return {str(int(i)): token_text(model, int(i)) for i in set(int(i) for i in ids)}


def tokens(model, trace: Trace) -> list[dict]:
    pieces = trace.pieces
    return [
        {"position": i, "id": t, "text": pieces[i].text if pieces else f"#{t}"}
        for i, t in enumerate(trace.ids)
    ]


def vector(t: torch.Tensor) -> dict:
    t = t.detach().float()
    return {
        "values": rounded(t),
        "norm": number(t.norm()),
        "mean": number(t.mean()),
        "std": number(t.std(unbiased=False)),
    }


def stats(t: torch.Tensor) -> dict:
    return activation_stats(t.detach(), bins=24)


def model_facts(model) -> dict:
    info = model.info().to_dict()
    c = model.config
    return {
        "name": info["name"],
        "source": info["source"] or "",
        "n_layer": c.n_layer,
        "n_head": c.n_head,
        "d_model": c.n_embd,
        "d_head": c.d_head,
        "d_mlp": c.d_mlp,
        "vocab_size": c.vocab_size,
        "n_ctx": c.n_ctx,
        "n_params": info["n_params"],
        "tokenizer": info["tokenizer"],
        "activation": c.activation,
        "dropout": c.dropout,
        "layer_norm_eps": c.layer_norm_eps,
        "steps": [
            {
                "number": s.number,
                "key": s.key,
                "title": s.title,
                "summary": s.summary,
                "probes": list(s.probes),
            }
            for s in STEPS
        ],
        "temperatures": TEMPERATURES,
        "top_n": TOP_N,
    }


# --- logits -------------------------------------------------------------------------------


def position_logits(model, trace: Trace, position: int) -> torch.Tensor:
    """Full-vocabulary logits after ``position`` (the last one is kept by every trace)."""
    if position == len(trace) - 1:
        return trace.last_logits
    final = trace["ln_final.hook_out"][position]
    return model.gpt.unembed(final).float()


def logits_view(logits: torch.Tensor, position: int) -> dict:
    """Top logits plus, per temperature, the log-sum-exp of the others: with these the browser
    computes exactly the probabilities lmscope.engine.sampling would for the top tokens."""
    x = logits.detach().float().cpu()
    n = min(TOP_N, x.numel())
    values, ids = torch.topk(x, n)
    order = np.lexsort((ids.numpy(), -values.numpy()))  # by logit, ties to the lowest id
    values, ids = values[order], ids[order]
    rest = torch.ones(x.numel(), dtype=torch.bool)
    rest[ids] = False
    tail = x[rest].numpy().astype(np.float64)
    if tail.size:
        # numpy, single-threaded: steadier than torch's thread pool on a busy CPU
        top = tail.max()
        temps = np.asarray(TEMPERATURES)[:, None]
        sums = np.exp((tail[None, :] - top) / temps).sum(axis=1)
        tail_lse = rounded(top / temps[:, 0] + np.log(sums), 12)
    else:
        tail_lse = [None] * len(TEMPERATURES)
    return {
        "position": position,
        "ids": ids.tolist(),
        "logits": rounded(values, 9),  # float32 needs 9 digits to round-trip exactly
        "tail_count": int(tail.size),
        "tail_lse": tail_lse,
        "temperatures": TEMPERATURES,
        "lse": number(torch.logsumexp(x.double(), 0), 12),
    }


def predictions(trace: Trace) -> list[dict]:
    p = trace.predictions
    top_ids, top_probs = p.top_ids.tolist(), rounded(p.top_probs)
    next_prob, entropy = rounded(p.next_token_prob), rounded(p.entropy)
    return [
        {
            "top_ids": top_ids[i],
            "top_probs": top_probs[i],
            "next_prob": next_prob[i],
            "entropy": entropy[i],
        }
        for i in range(len(trace))
    ]


def resid_norms(trace: Trace) -> list[list[float]]:
    rows = [trace["blocks.0.hook_resid_pre"].norm(dim=-1)]
    rows += [trace[f"blocks.{i}.hook_resid_post"].norm(dim=-1) for i in range(trace.config.n_layer)]
    return rounded(torch.stack(rows))


def trace_response(model, trace: Trace, cached: bool) -> dict:
    preds = predictions(trace)
    nxt = logits_view(trace.last_logits, len(trace) - 1)
    mentioned = list(trace.ids) + nxt["ids"][:POOL_TOP]
    for p in preds:
        mentioned += p["top_ids"]
    return {
        "model": model.name,
        "n_ctx": model.config.n_ctx,
        "tokens": tokens(model, trace),
        "predictions": preds,
        "next": nxt,
        "resid_norms": resid_norms(trace),
        "vocab": vocab_texts(model, mentioned),
        "cached": cached,
    }


# --- per-step views -----------------------------------------------------------------------


def layernorm_view(ln, x: torch.Tensor, scale, normalized, out) -> dict:
    return {
        "input": vector(x),
        "mean": number(x.float().mean()),
        "std": number(scale),
        "normalized": vector(normalized),
        "gamma": rounded(ln.weight),
        "beta": rounded(ln.bias),
        "output": vector(out),
        "eps": ln.eps,
    }


def embedding_view(model, trace: Trace, position: int) -> dict:
    pos = trace["hook_pos_embed"]
    cos = torch.nn.functional.cosine_similarity(pos[1:], pos[:-1], dim=-1)
    return {
        "position": position,
        "token": tokens(model, trace)[position],
        "token_embedding": vector(trace["hook_embed"][position]),
        "position_embedding": vector(pos[position]),
        "sum": vector(trace["blocks.0.hook_resid_pre"][position]),
        "embedding_matrix": list(model.gpt.wte.weight.shape),
        "position_matrix": list(model.gpt.wpe.weight.shape),
        "position_cosine_previous": rounded(cos),
    }


def tokenizer_view(model, trace: Trace, position: int, explained: list | None) -> dict:
    """How BPE built the token at ``position``. ``explained`` is the tokenizer's explanation of
    the decoded text when it re-tokenizes to exactly these ids (the usual case for a prompt)."""
    token = tokens(model, trace)[position]
    tok = model.tokenizer
    note = None
    entry = explained[position] if explained is not None else None
    if entry is None and tok is not None:
        # Generated tokens need not be how the tokenizer would split the text: explain the
        # token's own bytes instead, when they spell it on their own.
        raw = tok.token_bytes(token["id"])
        try:
            alone = tok.explain(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            alone = []
        if len(alone) == 1 and alone[0].id == token["id"]:
            entry = alone[0]
            note = "explained on its own: the full text would split differently here"
        else:
            note = "this token's bytes do not re-tokenize to it alone, so no merge list"
    if tok is None:
        note = "this model has no tokenizer"
    merges = []
    if entry is not None:
        from lmscope.tokenizers import readable_bytes

        merges = [
            {
                "left": readable_bytes(m.left),
                "right": readable_bytes(m.right),
                "rank": m.rank,
                "result": readable_bytes(m.result),
            }
            for m in entry.merges
        ]
    return {
        "position": position,
        "token": token,
        "pretoken": entry.pretoken if entry is not None else None,
        "merges": merges,
        "note": note,
    }


def layer_view(model, trace: Trace, layer: int, position: int) -> dict:
    p, i = f"blocks.{layer}", position
    block = model.gpt.h[layer]
    attn_out_name = f"{p}.hook_attn_out"
    rate = model.config.dropout
    example = rate if rate > 0 else 0.1
    keep, dropped = trace.dropout_example(attn_out_name, p=example, seed=0)
    results = trace[f"{p}.attn.hook_result"][i]
    return {
        "layer": layer,
        "position": i,
        "resid_pre": vector(trace[f"{p}.hook_resid_pre"][i]),
        "ln1": layernorm_view(
            block.ln_1,
            trace[f"{p}.hook_resid_pre"][i],
            trace[f"{p}.ln1.hook_scale"][i],
            trace[f"{p}.ln1.hook_normalized"][i],
            trace[f"{p}.ln1.hook_out"][i],
        ),
        "q": rounded(trace[f"{p}.attn.hook_q"][i]),
        "k": rounded(trace[f"{p}.attn.hook_k"][i]),
        "v": rounded(trace[f"{p}.attn.hook_v"][i]),
        "z": rounded(trace[f"{p}.attn.hook_z"][i]),
        "head_results": [vector(r) for r in results],
        "attn_bias": rounded(block.attn.c_proj.bias),
        "attn_out": vector(trace[attn_out_name][i]),
        "resid_mid": vector(trace[f"{p}.hook_resid_mid"][i]),
        "ln2": layernorm_view(
            block.ln_2,
            trace[f"{p}.hook_resid_mid"][i],
            trace[f"{p}.ln2.hook_scale"][i],
            trace[f"{p}.ln2.hook_normalized"][i],
            trace[f"{p}.ln2.hook_out"][i],
        ),
        "mlp_pre": vector(trace[f"{p}.mlp.hook_pre"][i]),
        "mlp_post": vector(trace[f"{p}.mlp.hook_post"][i]),
        "mlp_pre_stats": stats(trace[f"{p}.mlp.hook_pre"][i]),
        "mlp_post_stats": stats(trace[f"{p}.mlp.hook_post"][i]),
        "mlp_out": vector(trace[f"{p}.hook_mlp_out"][i]),
        "resid_post": vector(trace[f"{p}.hook_resid_post"][i]),
        "activation": model.config.activation,
        "dropout": {
            "model_rate": rate,
            "example_rate": example,
            "probe": attn_out_name,
            "zeroed": (~keep[i]).nonzero().flatten().tolist(),
            "after": rounded(dropped[i]),
        },
    }


def window_start(n_tokens: int, position: int, start: int | None) -> tuple[int, int]:
    size = min(n_tokens, ATTENTION_WINDOW)
    if start is None:
        start = position - size // 2  # centre the query so both the past and the mask show
    return max(0, min(start, n_tokens - size)), size


def attention_view(
    trace: Trace, layer: int, head: int, position: int, start: int | None = None
) -> dict:
    a = f"blocks.{layer}.attn"
    d_head = trace.config.d_head
    w0, size = window_start(len(trace), position, start)
    w = slice(w0, w0 + size)
    stages = {
        "raw": trace[f"{a}.hook_attn_scores_raw"][head],
        "scaled": trace[f"{a}.hook_attn_scores_scaled"][head],
        "masked": trace[f"{a}.hook_attn_scores"][head],
        "pattern": trace[f"{a}.hook_pattern"][head],
    }
    pattern_all = trace[f"{a}.hook_pattern"][:, w, w]
    thumbs = (pattern_all.clamp(0, 1) * 255).round().to(torch.uint8).numpy()
    return {
        "layer": layer,
        "head": head,
        "position": position,
        "d_head": d_head,
        "scale": 1 / math.sqrt(d_head),
        "start": w0,
        "size": size,
        **{name: rounded(t[w, w], 5) for name, t in stages.items()},
        "row": {name: rounded(t[position, : position + 1], 6) for name, t in stages.items()},
        "q": rounded(trace[f"{a}.hook_q"][w, head], 5),
        "k": rounded(trace[f"{a}.hook_k"][w, head], 5),
        "v": rounded(trace[f"{a}.hook_v"][w, head], 5),
        "heads": [base64.b64encode(t.tobytes()).decode("ascii") for t in thumbs],
    }


def final_view(model, trace: Trace, position: int, logits: torch.Tensor) -> dict:
    last = model.config.n_layer - 1
    view = logits_view(logits, position)
    return {
        "position": position,
        "ln_final": layernorm_view(
            model.gpt.ln_f,
            trace[f"blocks.{last}.hook_resid_post"][position],
            trace["ln_final.hook_scale"][position],
            trace["ln_final.hook_normalized"][position],
            trace["ln_final.hook_out"][position],
        ),
        "logits": view,
        "logit_stats": stats(logits),
        "vocab": vocab_texts(model, view["ids"]),
    }


def pool_view(model, logits: torch.Tensor, position: int, params: SamplingParams) -> dict:
    pool = candidate_pool(logits, params)
    n = min(POOL_TOP, len(pool))
    ids = pool.token_ids[:n].tolist()
    probs, tempered, original = (
        rounded(t[:n], 8) for t in (pool.probs, pool.tempered_probs, pool.original_probs)
    )
    return {
        "position": position,
        "stages": pool.stages,
        "size": len(pool),
        "top": [
            {
                "id": token_id,
                "text": token_text(model, token_id),
                "prob": probs[j],
                "tempered_prob": tempered[j],
                "model_prob": original[j],
            }
            for j, token_id in enumerate(ids)
        ],
    }
