"""The renderers of ``lmscope explain``: one per kind of step data -> a rich renderable.

Apart from ``explain.py`` so that ``lmscope --help`` (which imports every command module) does
not import the step data and, through it, torch: ``explain.run`` imports this module lazily.
"""

from __future__ import annotations

from contextvars import ContextVar

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import abbreviate, columns_that_fit, one_token, say, visible
from lmscope.engine.sampling import GREEDY_TEMPERATURE
from lmscope.explain import modern
from lmscope.explain import step_data as sd
from lmscope.explain.block import LayerNormView
from lmscope.explain.logits import PoolToken
from lmscope.explain.values import Vector

MAX_ATTN = 32  # attention matrix rows/columns shown, however wide the terminal
SNIPPET = 8  # leading vector entries shown
PANEL_EDGE = 4  # a step's panel takes "│ " and " │" of every line
TOKEN_CHARS = 12  # a token longer than this is abbreviated in narrow terminals
width: ContextVar[int] = ContextVar("explain_width", default=80)
FILTERS = (("top_k", "top-k"), ("top_p", "top-p"), ("min_p", "min-p"))  # as their options


# --- renderers: one per kind of step data (lmscope.explain.step_data) -> rich renderable ----
# Labels go through ``say`` (the words are in lmscope.explain.words): _kv and _Table do it for
# their keys, values and headers.
class _Table(Table):
    """A table whose column headers are said in the chosen language."""

    def add_column(self, header="", *args, **kwargs):
        super().add_column(say(header) if isinstance(header, str) else header, *args, **kwargs)


def _vec(v: Vector | None) -> str:
    if v is None:
        return say("none")
    return say(
        "shape [{n}]  [{values}, ...]  norm {norm}  mean {mean}  std {std}",
        n=len(v.values),
        values=", ".join(f"{x:+.3f}" for x in v.values[:SNIPPET]),
        norm=f"{v.norm:.3f}",
        mean=f"{v.mean:+.3f}",
        std=f"{v.std:.3f}",
    )


def _short(token: str) -> str:
    """A token as Python writes it, abbreviated when the terminal is narrow."""
    return abbreviate(token, TOKEN_CHARS if width.get() < 120 else 2 * TOKEN_CHARS)


def _group(*parts) -> Group:
    """The parts that are there (None: nothing to show), one under the other."""
    return Group(*(p for p in parts if p is not None))


def _fit(count: int, label: int, cell: int) -> int:
    """How many columns ``cell`` characters wide (plus one space) fit beside a label
    ``label`` wide in a step's panel, at most ``count``."""
    return columns_that_fit(width.get() - PANEL_EDGE, label, cell, count)


def _more(first: int, last: int, n: int, what: str = "positions") -> Text:
    """The note under a table that shows only part: which part, and how to see the rest."""
    return Text(
        say(
            f"({what} {{first}}–{{last}} of {{n}}; a wider terminal shows more, --json shows all)",
            first=first,
            last=last,
            n=n,
        ),
        style="dim",
    )


def _numbers(values: list[float] | None) -> str:
    if values is None:
        return say("none")
    return ", ".join(f"{x:+.3f}" for x in values[:SNIPPET])


def _kv(rows: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="cyan", no_wrap=True)
    table.add_column(overflow="fold")  # rich's "…" would cut a Chinese line a cell short
    for k, v in rows:
        table.add_row(say(k), say(v) if isinstance(v, str) else v)
    return table


def _number(x: float | None) -> str:
    """Four decimals; NaN where a broken model (--allow-nonfinite) gave no number."""
    return "NaN" if x is None else f"{x:.4f}"


def _tokens_table(rows, value: str = "prob", label: str = "probability") -> Table:
    """Rows of labelled tokens (TokenProb, TokenLogit or PoolToken) with one number each."""
    table = _Table(box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("token")
    table.add_column("id", justify="right")
    table.add_column(label, justify="right")
    table.add_column("")
    numbers = [getattr(r, value) for r in rows]
    top = max((x for x in numbers if x is not None), default=1) or 1
    for n, (r, number) in enumerate(zip(rows, numbers, strict=True), 1):
        shown = number is not None and value == "prob"
        bar = "█" * max(0, round(20 * number / top)) if shown else ""
        token = r.text if isinstance(r, PoolToken) else r.token
        table.add_row(str(n), _short(token), str(r.id), _number(number), bar)
    return table


def _render_transformer(d: sd.TransformerStep):
    m = d.model
    return _kv(
        [
            (
                "model",
                say(
                    "{name}: {n_layer} layers, {n_head} heads, d_model {d_model}, vocab "
                    "{vocab}, context {n_ctx}, {n_params} parameters",
                    name=m.name,
                    n_layer=m.n_layer,
                    n_head=m.n_head,
                    d_model=m.d_model,
                    vocab=f"{m.vocab_size:,}",
                    n_ctx=f"{m.n_ctx:,}",
                    n_params=f"{m.n_params:,}",
                ),
            ),
            ("next token", f"{d.prediction.token!r} (p = {_number(d.prediction.prob)})"),
        ]
    )


def _render_how(d: sd.HowItWorksStep):
    return Group(
        Text(" → ".join(say(w) for w in [*d.loop, "repeat"])),
        Text(
            one_token(
                say("after {n} tokens the model predicts:", n=d.context_tokens), d.context_tokens
            )
        ),
        _tokens_table(d.next),
    )


def _render_architecture(d: sd.ArchitectureStep):
    norms = ", ".join(f"{n:.1f}" for n in d.resid_norm_by_layer)
    return _kv([("flow", " → ".join(say(w) for w in d.flow)), ("residual norm by layer", norms)])


def _render_embedding(d: sd.EmbeddingStep):
    position = _vec(d.position) if d.position else "none: positions rotate q and k (step 6)"
    return _kv(
        [
            ("token embedding", _vec(d.token)),
            ("position embedding", position),
            ("sum (block 0 input)", _vec(d.sum)),
        ]
    )


def _char_marks(d: sd.TokenEmbeddingStep) -> dict[int, str]:
    """Position -> what the character column shows: the character a run of byte tokens forms
    on its first token, then a bracket down to its last (我 over <0xE6> <0x88> <0x91>)."""
    marks = {}
    for span in d.chars:
        # visible: a no-break space or U+FE0F printed as itself draws nothing (or shifts the
        # panel's border); named as the merges below and the page name them
        shown = visible(span.text)
        marks[span.start] = f"┐ {shown}" if span.complete else f"┐ {shown} …"
        for p in range(span.start + 1, span.end):
            marks[p] = "│"
        marks[span.end] = "┘"
    return marks


def _render_tokens(d: sd.TokenEmbeddingStep):
    table = _Table(box=None, pad_edge=False)
    marks = _char_marks(d)
    for col in ("pos", "token", "id", "embedding norm"):
        table.add_column(col, justify="right" if col != "token" else "left")
    if marks:
        table.add_column(say("character"))
    for r in d.tokens:
        cells = [str(r.position), _short(r.token), str(r.id), f"{r.norm:.3f}"]
        table.add_row(*cells, *([marks.get(r.position, "")] if marks else []))
    merges = _Table(box=None, pad_edge=False)
    merges.add_column("token")
    merges.add_column("BPE merges (left + right → rank)")
    for m in d.merges[:24]:
        # two spaces apart: a merge draws its own spaces as "·"
        steps = "  ".join(f"{visible(x.left)}+{visible(x.right)}#{x.rank}" for x in m.merges[-6:])
        more = "… " if len(m.merges) > 6 else ""
        alone = "(single byte)" if len(m.token.encode("utf-8")) == 1 else "(no merges)"
        merges.add_row(_short(m.token), more + (steps or say(alone)))
    if d.tokenizer == "chars":  # one token per character: there are no merges to list
        vocab = d.embedding_matrix[0]
        note = say(
            "one token per character; the vocabulary is the {n} characters seen in training, "
            "and a character outside it cannot be read",
            n=f"{vocab:,}",
        )
        merges = Text(note)
    return Group(
        table,
        Text(say("embedding matrix {shape}", shape=d.embedding_matrix)),
        merges if d.merges or d.tokenizer == "chars" else Text(""),
    )


def _render_positional(d: sd.PositionalEncodingStep):
    norms = ", ".join(f"{n:.2f}" for n in d.norms[:24])
    return _kv([("position vector", _vec(d.vector)), ("norm per position", norms)])


def _render_blocks(d: sd.BlocksStep):
    table = _Table(box=None, pad_edge=False)
    for col in ("layer", "input norm", "output norm", "change"):
        table.add_column(col, justify="right")
    for r in d.layers:
        table.add_row(str(r.layer), f"{r.in_norm:.3f}", f"{r.out_norm:.3f}", f"{r.change_norm:.3f}")
    return table


def _heat(v: float | None) -> Text:
    if v is None:
        return Text("·", style="dim")
    shade = int(232 + min(1.0, max(0.0, v)) * 23)
    return Text(f"{v:.2f}", style=f"on color({shade})" + (" black" if v > 0.5 else ""))


def _matrix(label: str, first: int, cells: list[list[Text | str]]) -> Table:
    """A square window of a [query][key] matrix from position ``first``, one space apart."""
    table = Table(box=None, pad_edge=False, padding=(0, 1), collapse_padding=True)
    table.add_column(label, justify="right")
    for j in range(len(cells)):
        table.add_column(str(first + j), justify="right")
    for i, row in enumerate(cells):
        table.add_row(str(first + i), *row)
    return table


def _render_attention(d: sd.SelfAttentionStep):
    pattern = d.pattern
    n = len(pattern)
    # "0.21" per cell, or the position when it is longer; the rows are numbered the same
    cell = max(4, len(str(n - 1)))
    shown = min(MAX_ATTN, _fit(n, max(3, len(str(n - 1))), cell))
    start = n - shown
    cells = [[_heat(pattern[i][j]) for j in range(start, n)] for i in range(start, n)]
    labels = ("attends most to", "attention output")
    items = [f"{_short(a.token)}@{a.position} ({a.weight:.2f})" for a in d.attends_most_to]
    most = _whole_items(items, width.get() - PANEL_EDGE - 2 - max(cell_len(say(k)) for k in labels))
    return _group(
        Text(say("layer {layer} head {head} attention pattern", layer=d.layer, head=d.head)),
        _matrix("q\\k", start, cells),
        _more(start, n - 1, n) if start else None,
        _kv([(labels[0], most), (labels[1], _vec(d.attn_out))]),
    )


def _whole_items(items: list[str], room: int) -> str:
    """``items`` joined by ", " in lines of at most ``room`` cells, broken only between items:
    rich breaks at any space, and a token such as ' mind' has one inside its quotes."""
    lines = [""]
    for item in items:
        joined = f"{lines[-1]}, {item}" if lines[-1] else item
        if lines[-1] and cell_len(joined) + 1 > room:  # + 1: the "," left at the line's end
            lines[-1] += ","
            lines.append(item)
        else:
            lines[-1] = joined
    return "\n".join(lines)


def _render_qkv(d: sd.QKVStep):
    shared = f" (kv head {d.kv_head} of {d.n_kv_head})"
    return _kv(
        [
            ("norm output", _vec(d.input)),
            ("W_qkv", str(d.W_qkv)),
            ("query", _vec(d.q)),
            ("key" + shared, _vec(d.k)),
            ("value" + shared, _vec(d.v)),
        ]
    )


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} B" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""


def _render_heads(d: sd.MultiHeadStep):
    g, cache = d.grouping, d.grouping.kv_cache
    norms = ", ".join(f"{n:.2f}" for n in d.q_norm_by_head)
    groups = " · ".join(
        f"q{','.join(map(str, x.query_heads))} → kv{x.kv_head}" for x in g.groups[:12]
    )
    rows = [
        ("heads", f"{d.n_head} query heads × d_head {d.d_head}; {g.n_kv_head} key/value heads"),
        ("Q, K shapes [pos, head, d_head]", f"{d.q_shape}, {d.k_shape}"),
        ("|q| per head", norms),
    ]
    if g.n_kv_head != g.n_head:
        rows.append((f"groups of {g.group_size}", groups))
    rows += [
        (
            f"KV cache per token ({cache.dtype})",
            f"{_bytes(cache.per_token)}; with one kv head per query head "
            f"{_bytes(cache.per_token_full)}",
        ),
        (
            f"KV cache at {cache.tokens} tokens",
            f"{_bytes(cache.at_prompt)} vs {_bytes(cache.at_prompt_full)}; at the context "
            f"of {cache.context:,}: {_bytes(cache.at_context)} vs "
            f"{_bytes(cache.at_context_full)} ({cache.saved_fraction:.0%} saved)",
        ),
    ]
    return _kv(rows)


def _render_rope(d: modern.RopeStep):
    f, c = d.frequencies, d.check
    n = len(f.inv_freq)
    picks = sorted({0, 1, 2, n // 4, n // 2, 3 * n // 4, n - 1})
    every = say("every")
    freqs = ", ".join(f"#{i} {f.inv_freq[i]:.3g} ({every} {f.wavelength[i]:,.3g})" for i in picks)
    table = _Table(box=None, pad_edge=False)
    for col in ("", "query at", "key at", "distance", "q·k (rotated)"):
        table.add_column(col, justify="right")
    for label, rows in (("same distance", c.same_distance), ("query moved", c.other_distance)):
        for n_row, r in enumerate(rows):
            table.add_row(
                say(label) if n_row == 0 else "",
                str(r.query_at),
                str(r.key_at),
                str(r.distance),
                f"{r.score:.7f}",
            )
    return Group(
        _kv(
            [
                ("positions", "no vector is added; q and k are rotated inside attention"),
                (
                    f"rotation per position, {n} pairs",
                    # filled in by say: a filled line with several "1.99e+03" matches no entry
                    say(
                        "θ = {theta}: rad/position (and positions per turn) {freqs}",
                        theta=f"{f.theta:g}",
                        freqs=freqs,
                    ),
                ),
                (f"q, head {d.head}, before", _vec(d.q.before)),
                (f"q after rotating to {d.position}", _vec(d.q.after)),
                (f"k, kv head {d.kv_head}, before", _vec(d.k.before)),
                (f"k after rotating to {d.position}", _vec(d.k.after)),
                ("rotate(hook_q) vs hook_rot_q", f"max |difference| {d.rotation_max_error:.1e}"),
            ]
        ),
        Text(
            say(
                f"q of position {c.query_position} and k of position {c.key_position} "
                f"(recorded QKᵀ {c.recorded_score:.7f}), rotated to other positions:"
            )
        ),
        table,
        Text(
            say(
                f"same distance → same score: max |difference| {c.max_abs_difference:.1e} "
                f"(relative {c.relative_difference:.1e}, float32 precision)"
            )
        ),
    )


def _score(v: float | None) -> str:
    return "-inf" if v is None else f"{v:+.2f}"


def _render_masked(d: sd.MaskedAttentionStep):
    size = len(d.masked_window)
    texts = [[_score(v) for v in row] for row in d.masked_window]
    cell = max([len(str(d.window_start + size - 1))] + [len(t) for row in texts for t in row])
    keep = _fit(size, max(3, len(str(d.window_start + size - 1))), cell)
    first = d.window_start + size - keep
    # The query's row at every stage, over the keys it may see, ending at itself
    end = min(len(d.raw), d.query_position + 1)
    labels = ("QKᵀ (raw)", f"÷ √{d.d_head}", "+ causal mask", "softmax")
    label = max(len(say(x)) + sum(1 for c in say(x) if ord(c) > 0x2E80) for x in labels)
    keys = _fit(end, label + 2, 6)
    rows = [d.raw, d.scaled, d.masked, d.softmax]
    values = [" ".join(f"{_score(v):>6}" for v in row[end - keys : end]) for row in rows]
    return _group(
        Text(say("scaled scores with the causal mask (future keys are -inf):")),
        _matrix("q\\k", first, [row[size - keep :] for row in texts[size - keep :]]),
        _more(first, d.window_start + size - 1, d.window_start + size) if keep < size else None,
        _kv([("query position", str(d.query_position)), *zip(labels, values, strict=True)]),
        _more(end - keys, end - 1, end, "keys") if keys < end else None,
    )


def _render_attn_out(d: sd.AttentionOutputStep):
    rows = [(f"head {h} z", _vec(v)) for h, v in enumerate(d.z_by_head[:12])]
    rows += [
        ("concat", f"{d.concat_shape[0]} values"),
        ("|head result|", ", ".join(f"{n:.2f}" for n in d.head_result_norms)),
        ("projected (attn_out)", _vec(d.projected)),
    ]
    return _kv(rows)


def _hist(h) -> str:
    counts = h.counts
    top = max(counts) or 1
    bars = "▁▂▃▄▅▆▇█"
    return "".join(bars[min(7, int(7 * c / top))] for c in counts)


def _render_mlp(d: sd.MLPStep):
    pre, post = d.pre_gelu, d.post_gelu
    act = d.curve.name if d.curve else d.activation
    return _kv(
        [
            ("input", _vec(d.input)),
            (
                f"W1 → {d.d_mlp}",
                f"mean {pre.mean:+.3f} std {pre.std:.3f} min {pre.min:+.2f} max {pre.max:+.2f} "
                f"{_hist(pre.histogram)}",
            ),
            (
                act,
                f"mean {post.mean:+.3f} std {post.std:.3f} "
                f"positive {post.fraction_positive:.0%} {_hist(post.histogram)}",
            ),
            ("W2 → output", _vec(d.output)),
        ]
    )


def _stats(s) -> str:
    return (
        f"mean {s.mean:+.3f} std {s.std:.3f} min {s.min:+.2f} max {s.max:+.2f} {_hist(s.histogram)}"
    )


def _render_swiglu(d: modern.SwiGLUStep):
    table = _Table(box=None, pad_edge=False)
    for col in ("feature", "gate", "SiLU(gate)", "× up", "= post"):
        table.add_column(col, justify="right")
    for f in d.strongest[:8]:
        table.add_row(
            str(f.index), f"{f.gate:+.3f}", f"{f.silu_gate:+.3f}", f"{f.up:+.3f}", f"{f.post:+.3f}"
        )
    return Group(
        _kv(
            [
                ("input (RMSNorm 2)", _vec(d.input)),
                (f"gate = x·W_gate {d.W_gate}", _stats(d.gate_stats)),
                (f"up = x·W_up {d.W_up}", _stats(d.up_stats)),
                ("SiLU(gate)", _vec(d.silu_gate)),
                ("post = SiLU(gate) × up", _stats(d.post_stats)),
                (f"output = post·W_down {d.W_down}", _vec(d.output)),
                (
                    "checks",
                    f"|SiLU(gate)×up − post| ≤ {d.product_max_error:.1e}, "
                    f"|post·W_down − mlp_out| ≤ {d.down_max_error:.1e}",
                ),
            ]
        ),
        Text(say(f"the {len(d.strongest[:8])} features with the largest |post| (of {d.d_mlp}):")),
        table,
    )


def _render_logits(d: sd.LogitsStep):
    s = d.stats
    unembed = "W_Eᵀ (tied to the embedding)" if d.tied else "lm_head"
    return Group(
        _kv(
            [
                (f"final {d.norm}", _vec(d.final_ln)),
                ("unembedding", unembed),
                (
                    "logits",
                    f"{d.vocab_size:,} scores, mean {s.mean:+.2f} std {s.std:.2f} max {s.max:+.2f}",
                ),
            ]
        ),
        _tokens_table(d.top, "logit", "logit"),
    )


def _render_probs(d: sd.ProbabilitiesStep):
    return _tokens_table(d.top)


def _render_temperature(d: sd.TemperatureStep):
    if d.at_t == "greedy":
        return Group(Text(say("T = 0: greedy")), _tokens_table(d.at_1))
    table = _Table(box=None, pad_edge=False)
    same = d.temperature == 1  # one column: at T = 1 the distribution is unchanged
    for col in ("token", "p at T=1", *([] if same else [f"p at T={d.temperature:g}"])):
        table.add_column(col, justify="right" if col != "token" else "left")
    at_t = {r.id: r.prob for r in d.at_t}
    for r in d.at_1:
        scaled = [] if same else [_number(at_t[r.id]) if r.id in at_t else "-"]
        table.add_row(_short(r.token), _number(r.prob), *scaled)
    return table


def _sampling_params(p: dict) -> str:
    """The sampling parameters in effect, in words: "temperature 0 (greedy), top-k 5"."""
    if p["greedy"]:
        said = [say("greedy")]
    elif p["temperature"] < GREEDY_TEMPERATURE:
        said = [say("temperature {t} (greedy)", t=f"{p['temperature']:g}")]
    else:
        said = [say("temperature {t}", t=f"{p['temperature']:g}")]
    # 0 and None are off (a top-k of 0 too)
    said += [f"{name} {p[key]:g}" for key, name in FILTERS if p[key]]
    return ", ".join(said)


def _render_sampling(d: sd.SamplingStep):
    stages = " → ".join(f"{say(k)} {v:,}" for k, v in d.stages.items())
    return Group(
        _kv([("params", _sampling_params(d.params)), ("survivors", stages)]),
        _tokens_table(d.pool),
    )


def _render_residual(d: sd.ResidualStep):
    names = ("resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post")
    rows = [(name, _vec(getattr(d, name))) for name in names]
    rows.append(("check", f"resid_pre + attn_out − resid_mid = {d.identity_max_error:.1e}"))
    return _kv(rows)


def _render_layernorm(d: LayerNormView):
    return _kv(
        [
            ("before", _vec(d.input)),
            ("std (with eps)", f"{d.std:.4f}"),
            ("normalized", _vec(d.normalized)),
            ("gamma", _numbers(d.gamma)),
            ("beta", _numbers(d.beta)),
            ("after", _vec(d.output)),
        ]
    )


def _render_rmsnorm(d: modern.RMSNormView):
    return _kv(
        [
            ("before", _vec(d.input)),
            ("mean (kept)", f"{d.input_mean:+.4f}"),
            ("rms = √(mean(x²) + eps)", f"√({d.mean_square:.4f} + {d.eps:g}) = {d.rms:.4f}"),
            ("normalized = x / rms", _vec(d.normalized)),
            ("gain", _numbers(d.gain)),
            ("bias", "none (RMSNorm has no β)"),
            ("after = normalized × gain", _vec(d.output)),
            ("check", f"|normalized × gain − after| ≤ {d.recompose_max_error:.1e}"),
        ]
    )


def _render_dropout(d: sd.DropoutStep):
    return _kv(
        [
            ("at inference", d.inference),
            ("model's training rate", f"{d.model_rate:g}"),
            (
                f"example, p={d.example_rate:g}",
                f"{len(d.zeroed)} of {len(d.after)} values zeroed, "
                f"the rest × {1 / (1 - d.example_rate):.3f}",
            ),
            ("before", _numbers(d.before)),
            ("after", _numbers(d.after)),
        ]
    )


RENDER = {
    sd.TransformerStep: _render_transformer,
    sd.HowItWorksStep: _render_how,
    sd.ArchitectureStep: _render_architecture,
    sd.EmbeddingStep: _render_embedding,
    sd.TokenEmbeddingStep: _render_tokens,
    sd.PositionalEncodingStep: _render_positional,
    sd.BlocksStep: _render_blocks,
    sd.SelfAttentionStep: _render_attention,
    sd.QKVStep: _render_qkv,
    sd.MultiHeadStep: _render_heads,
    sd.MaskedAttentionStep: _render_masked,
    sd.AttentionOutputStep: _render_attn_out,
    sd.MLPStep: _render_mlp,
    sd.LogitsStep: _render_logits,
    sd.ProbabilitiesStep: _render_probs,
    sd.TemperatureStep: _render_temperature,
    sd.SamplingStep: _render_sampling,
    sd.ResidualStep: _render_residual,
    LayerNormView: _render_layernorm,
    sd.DropoutStep: _render_dropout,
    modern.RopeStep: _render_rope,
    modern.RMSNormView: _render_rmsnorm,
    modern.SwiGLUStep: _render_swiglu,
}


def render(data):
    """The rich renderable of one step's data; any other data as JSON."""
    draw = RENDER.get(type(data))
    if draw is None:
        return Text(data.model_dump_json()[:2000])
    return draw(data)
