"""The 20 explainer steps as plain data: real numbers from a Trace, summarised for display.

``explain(model, text, ...)`` returns a JSON-ready dict, one entry per step, that the CLI renders
with rich (``lmscope explain``) and prints as JSON (``--json``). Every number in it is read from
a probe of the traced forward pass or from the model's weights; nothing is illustrative.
"""

from __future__ import annotations

import math

import torch

from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.engine.steps import STEPS
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError

SNIPPET = 8  # how many leading vector entries to show
TOP = 10
WINDOW = 12  # attention rows/columns shown as a small matrix


def _snippet(v: torch.Tensor, n: int = SNIPPET) -> list[float]:
    return [round(float(x), 4) for x in v.flatten()[:n]]


def _vector(v: torch.Tensor) -> dict:
    v = v.float()
    return {
        "shape": list(v.shape),
        "values": _snippet(v),
        "norm": round(float(v.norm()), 4),
        "mean": round(float(v.mean()), 4),
        "std": round(float(v.std(unbiased=False)), 4),
    }


def _stats(t: torch.Tensor, bins: int = 20) -> dict:
    t = t.float().flatten()
    lo, hi = float(t.min()), float(t.max())
    counts = torch.histc(t, bins=bins, min=lo, max=hi if hi > lo else lo + 1e-6)
    return {
        "mean": round(float(t.mean()), 4),
        "std": round(float(t.std(unbiased=False)), 4),
        "min": round(lo, 4),
        "max": round(hi, 4),
        "fraction_positive": round(float((t > 0).float().mean()), 4),
        "histogram": {
            "edges": [round(lo + (hi - lo) * i / bins, 4) for i in range(bins + 1)],
            "counts": [int(c) for c in counts],
        },
    }


def _row(t: torch.Tensor) -> list[float | None]:
    """A row of scores for JSON: masked (-inf) entries become None."""
    return [None if math.isinf(float(x)) else round(float(x), 4) for x in t]


class _Explainer:
    def __init__(
        self, model, trace: Trace, layer: int, head: int, position: int, params: SamplingParams
    ):
        self.model, self.trace, self.params = model, trace, params
        self.layer, self.head, self.pos = layer, head, position
        self.p = f"blocks.{layer}"

    def token_label(self, token_id: int) -> str:
        tok = self.model.tokenizer
        return tok.piece(token_id).text if tok is not None else str(token_id)

    def tokens(self, probs: torch.Tensor, ids: torch.Tensor, n: int = TOP) -> list[dict]:
        return [
            {"id": int(i), "token": self.token_label(int(i)), "prob": round(float(p), 6)}
            for i, p in zip(ids[:n], probs[:n], strict=True)
        ]

    def position_logits(self) -> torch.Tensor:
        t = self.trace
        if "logits" in t:
            return t["logits"][self.pos]
        if self.pos == len(t) - 1:
            return t.last_logits
        return self.model.gpt.unembed(t["ln_final.hook_out"][self.pos]).float()

    # --- one method per step ---------------------------------------------------------
    def transformer(self):
        info = self.model.info().to_dict()
        top = self.tokens(*self.top_probs(1.0), n=5)
        return {"model": info, "prediction": top[0], "top5": top}

    def how_it_works(self):
        return {
            "loop": ["tokenize", "embed", "blocks", "logits", "softmax", "sample", "append"],
            "context_tokens": self.pos + 1,
            "next": self.tokens(*self.top_probs(1.0), n=5),
        }

    def architecture(self):
        c = self.model.config
        norms = [
            round(float(self.trace[f"blocks.{i}.hook_resid_post"][self.pos].norm()), 4)
            for i in range(c.n_layer)
        ]
        return {
            "flow": [
                f"tokens [{len(self.trace)}]",
                f"embedding [{len(self.trace)}, {c.n_embd}]",
                f"{c.n_layer} blocks",
                "final LayerNorm",
                f"logits [{len(self.trace)}, {c.vocab_size}]",
            ],
            "resid_norm_by_layer": norms,
        }

    def embedding(self):
        t = self.trace
        return {
            "token": _vector(t["hook_embed"][self.pos]),
            "position": _vector(t["hook_pos_embed"][self.pos]),
            "sum": _vector(t["blocks.0.hook_resid_pre"][self.pos]),
        }

    def token_embedding(self):
        tok = self.model.tokenizer
        pieces = self.trace.pieces or []
        rows = []
        for i, token_id in enumerate(self.trace.ids):
            row = {
                "position": i,
                "id": token_id,
                "token": pieces[i].text if pieces else str(token_id),
                "norm": round(float(self.trace["hook_embed"][i].norm()), 4),
            }
            rows.append(row)
        merges = []
        if tok is not None and hasattr(tok, "explain"):
            text = tok.decode(self.trace.ids)
            for ex in tok.explain(text):
                merges.append(
                    {
                        "id": ex.id,
                        "token": ex.piece.text,
                        "merges": [[_b(m.left), _b(m.right), m.rank] for m in ex.merges],
                    }
                )
        matrix = list(self.model.gpt.wte.weight.shape)
        return {
            "tokens": rows,
            "merges": merges,
            "embedding_matrix": matrix,
            "selected": _vector(self.trace["hook_embed"][self.pos]),
        }

    def positional_encoding(self):
        pos = self.trace["hook_pos_embed"]
        cos = (
            torch.nn.functional.cosine_similarity(pos[1:], pos[:-1], dim=-1) if len(pos) > 1 else []
        )
        return {
            "position": self.pos,
            "vector": _vector(pos[self.pos]),
            "norms": [round(float(n), 4) for n in pos.norm(dim=-1)],
            "cosine_with_previous": [round(float(c), 4) for c in cos],
        }

    def blocks(self):
        rows = []
        for i in range(self.model.config.n_layer):
            pre = self.trace[f"blocks.{i}.hook_resid_pre"][self.pos]
            post = self.trace[f"blocks.{i}.hook_resid_post"][self.pos]
            rows.append(
                {
                    "layer": i,
                    "in_norm": round(float(pre.norm()), 4),
                    "out_norm": round(float(post.norm()), 4),
                    "change_norm": round(float((post - pre).norm()), 4),
                }
            )
        return {"layers": rows}

    def self_attention(self):
        pattern = self.trace[f"{self.p}.attn.hook_pattern"][self.head]
        row = pattern[self.pos, : self.pos + 1]
        order = row.argsort(descending=True)[:5]
        return {
            "layer": self.layer,
            "head": self.head,
            "pattern": [_row(r) for r in pattern],
            "attends_most_to": [
                {
                    "position": int(j),
                    "token": self._piece(int(j)),
                    "weight": round(float(row[j]), 4),
                }
                for j in order
            ],
            "attn_out": _vector(self.trace[f"{self.p}.hook_attn_out"][self.pos]),
        }

    def _piece(self, i: int) -> str:
        return self.trace.pieces[i].text if self.trace.pieces else str(self.trace.ids[i])

    def qkv(self):
        a, h, i = f"{self.p}.attn", self.head, self.pos
        return {
            "input": _vector(self.trace[f"{self.p}.ln1.hook_out"][i]),
            "q": _vector(self.trace[f"{a}.hook_q"][i, h]),
            "k": _vector(self.trace[f"{a}.hook_k"][i, h]),
            "v": _vector(self.trace[f"{a}.hook_v"][i, h]),
            "W_qkv": list(self.model.gpt.h[self.layer].attn.c_attn.weight.T.shape),
        }

    def multi_head(self):
        c = self.model.config
        q = self.trace[f"{self.p}.attn.hook_q"][self.pos]
        return {
            "n_head": c.n_head,
            "d_head": c.d_head,
            "q_shape": list(self.trace[f"{self.p}.attn.hook_q"].shape),
            "q_norm_by_head": [round(float(n), 4) for n in q.norm(dim=-1)],
        }

    def masked_attention(self):
        a, h, i = f"{self.p}.attn", self.head, self.pos
        return {
            "d_head": self.model.config.d_head,
            "query_position": i,
            "raw": _row(self.trace[f"{a}.hook_attn_scores_raw"][h, i]),
            "scaled": _row(self.trace[f"{a}.hook_attn_scores_scaled"][h, i]),
            "masked": _row(self.trace[f"{a}.hook_attn_scores"][h, i]),
            "softmax": _row(self.trace[f"{a}.hook_pattern"][h, i]),
            # the last few rows and columns as a matrix, so the -inf triangle is visible
            "window_start": max(0, i + 1 - WINDOW),
            "masked_window": [
                _row(r[max(0, i + 1 - WINDOW) : i + 1])
                for r in self.trace[f"{a}.hook_attn_scores"][h, max(0, i + 1 - WINDOW) : i + 1]
            ],
        }

    def attention_output(self):
        a, i = f"{self.p}.attn", self.pos
        z = self.trace[f"{a}.hook_z"][i]
        result = self.trace[f"{a}.hook_result"][i]
        return {
            "z_by_head": [_vector(z[h]) for h in range(z.shape[0])],
            "concat_shape": [z.numel()],
            "head_result_norms": [round(float(n), 4) for n in result.norm(dim=-1)],
            "projected": _vector(self.trace[f"{self.p}.hook_attn_out"][i]),
        }

    def mlp(self):
        i = self.pos
        return {
            "input": _vector(self.trace[f"{self.p}.ln2.hook_out"][i]),
            "pre_gelu": _stats(self.trace[f"{self.p}.mlp.hook_pre"][i]),
            "post_gelu": _stats(self.trace[f"{self.p}.mlp.hook_post"][i]),
            "output": _vector(self.trace[f"{self.p}.hook_mlp_out"][i]),
            "d_mlp": self.model.config.d_mlp,
        }

    def logits(self):
        logits = self.position_logits()
        top = logits.topk(TOP)
        return {
            "final_ln": _vector(self.trace["ln_final.hook_out"][self.pos]),
            "vocab_size": int(logits.numel()),
            "top": [
                {"id": int(j), "token": self.token_label(int(j)), "logit": round(float(v), 4)}
                for v, j in zip(top.values, top.indices, strict=True)
            ],
            "stats": {k: v for k, v in _stats(logits).items() if k != "histogram"},
        }

    def top_probs(self, temperature: float):
        probs = torch.softmax(self.position_logits().double() / temperature, -1)
        top = probs.topk(TOP)
        return top.values, top.indices

    def probabilities(self):
        return {"top": self.tokens(*self.top_probs(1.0))}

    def temperature(self):
        t = self.params.temperature
        return {
            "temperature": t,
            "at_1": self.tokens(*self.top_probs(1.0)),
            "at_t": self.tokens(*self.top_probs(t)) if t > 0 else "greedy",
        }

    def sampling(self):
        pool = candidate_pool(self.position_logits(), self.params)
        return {
            "params": self.params.to_dict(),
            "stages": pool.stages,
            "pool": self.tokens(pool.probs, pool.token_ids, n=20),
            "pool_size": len(pool.token_ids),
        }

    def residual(self):
        t, p, i = self.trace, self.p, self.pos
        mid_error = (
            (t[f"{p}.hook_resid_pre"][i] + t[f"{p}.hook_attn_out"][i] - t[f"{p}.hook_resid_mid"][i])
            .abs()
            .max()
        )
        return {
            name: _vector(t[f"{p}.hook_{name}"][i])
            for name in ("resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post")
        } | {"identity_max_error": float(mid_error)}

    def layernorm(self):
        t, p, i = self.trace, self.p, self.pos
        ln = self.model.gpt.h[self.layer].ln_1
        return {
            "before": _vector(t[f"{p}.hook_resid_pre"][i]),
            "std": round(float(t[f"{p}.ln1.hook_scale"][i]), 4),
            "normalized": _vector(t[f"{p}.ln1.hook_normalized"][i]),
            "gamma": _snippet(ln.weight.detach()),
            "beta": _snippet(ln.bias.detach()),
            "after": _vector(t[f"{p}.ln1.hook_out"][i]),
            "eps": ln.eps,
        }

    def dropout(self):
        rate = self.model.config.dropout
        example_p = rate if rate > 0 else 0.1
        name = f"{self.p}.hook_attn_out"
        keep, out = self.trace.dropout_example(name, p=example_p, seed=0)
        return {
            "model_rate": rate,
            "inference": "identity (dropout is off)",
            "example_rate": example_p,
            "before": _snippet(self.trace[name][self.pos]),
            "after": _snippet(out[self.pos]),
            "zeroed": int((~keep[self.pos]).sum()),
            "of": int(keep[self.pos].numel()),
        }


def _b(raw: bytes) -> str:
    from lmscope.tokenizers import readable_bytes

    return readable_bytes(raw)


@torch.no_grad()
def explain(
    model,
    text_or_ids,
    *,
    layer: int = 0,
    head: int = 0,
    position: int | None = None,
    params: SamplingParams | None = None,
    steps=None,
    ablate=None,
) -> dict:
    """Trace ``text_or_ids`` and summarise each of the 20 steps for ``layer``/``head`` at
    ``position`` (default: the last token, whose output predicts the next token)."""
    c = model.config
    if not 0 <= layer < c.n_layer:
        raise InvalidInputError(f"layer must be in 0..{c.n_layer - 1}, got {layer}")
    if not 0 <= head < c.n_head:
        raise InvalidInputError(f"head must be in 0..{c.n_head - 1}, got {head}")
    trace = model.trace(text_or_ids, ablate=ablate)
    if position is None:
        position = len(trace) - 1
    if not -len(trace) <= position < len(trace):
        raise InvalidInputError(f"position must be in 0..{len(trace) - 1}, got {position}")
    explainer = _Explainer(
        model, trace, layer, head, position % len(trace), params or SamplingParams()
    )
    chosen = STEPS if steps is None else [s for s in STEPS if s.number in steps or s.key in steps]
    return {
        "model": model.name,
        "text": model.decode(trace.ids) if model.tokenizer is not None else None,
        "ablated": [str(a) for a in ablate] if ablate else [],
        "n_tokens": len(trace),
        "layer": layer,
        "head": head,
        "position": explainer.pos,
        "steps": [
            {
                "number": s.number,
                "key": s.key,
                "title": s.title,
                "summary": s.summary,
                "probes": s.probe_names(layer),
                "data": getattr(explainer, s.key.replace("-", "_"))(),
            }
            for s in chosen
        ],
    }
