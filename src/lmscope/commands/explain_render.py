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

from lmscope import i18n
from lmscope.commands.common import abbreviate, columns_that_fit, current_lang, say, visible
from lmscope.engine.sampling import GREEDY_TEMPERATURE
from lmscope.explain import modern
from lmscope.explain import step_data as sd
from lmscope.explain.block import LayerNormView
from lmscope.explain.logits import PoolToken
from lmscope.explain.values import Vector

MAX_ATTN = 32  # attention matrix rows/columns shown, however wide the terminal
SNIPPET = 8  # leading vector entries shown
PANEL_EDGE = 4  # a step's panel takes "│ " and " │" of every line
TOKEN_CHARS = 12  # a token longer than this is abbreviated under ROOMY_FROM columns
ROOMY = 20  # ... and this from there ('<|im_start|>', '<0xEF><0xBC>' whole), or always in
# step 4's tables and step 8's wrapped list, which have room at any width
ROOMY_FROM = 72
width: ContextVar[int] = ContextVar("explain_width", default=80)
FILTERS = (("top_k", "top-k"), ("top_p", "top-p"), ("min_p", "min-p"))  # as their options


# --- renderers: one per kind of step data (lmscope.explain.step_data) -> rich renderable ----
# Labels, values and headers are catalog texts (report.explain.…), said where they are made.
def _vec(v: Vector | None) -> str:
    if v is None:
        return say("report.explain.none")
    return say(
        "report.explain.vector",
        n=len(v.values),
        values=", ".join(f"{x:+.3f}" for x in v.values[:SNIPPET]),
        norm=f"{v.norm:.3f}",
        mean=f"{v.mean:+.3f}",
        std=f"{v.std:.3f}",
    )


def _short(token: str, most: int | None = None) -> str:
    """A token as Python writes it, cut at ``most`` characters (by default as many as the
    terminal leaves room for) when the terminal is narrow; a wide one gives more."""
    if most is None:
        most = TOKEN_CHARS if width.get() < ROOMY_FROM else ROOMY
    return abbreviate(token, most if width.get() < 120 else max(most, 2 * TOKEN_CHARS))


def _group(*parts) -> Group:
    """The parts that are there (None: nothing to show), one under the other."""
    return Group(*(p for p in parts if p is not None))


def _fit(count: int, label: int, cell: int) -> int:
    """How many columns ``cell`` characters wide (plus one space) fit beside a label
    ``label`` wide in a step's panel, at most ``count``."""
    return columns_that_fit(width.get() - PANEL_EDGE, label, cell, count)


def _more(first: int, last: int, n: int, keys: bool = False) -> Text:
    """The note under a table that shows only part (positions, or keys): which part, and how
    to see the rest."""
    note = "report.explain.more-keys" if keys else "report.explain.more-positions"
    return Text(say(note, first=first, last=last, n=n), style="dim")


def _numbers(values: list[float] | None) -> str:
    if values is None:
        return say("report.explain.none")
    return ", ".join(f"{x:+.3f}" for x in values[:SNIPPET])


def _kv(rows: list[tuple[str, str]]) -> Table:
    """Labelled values, both said already."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="cyan", no_wrap=True)
    table.add_column(overflow="fold")  # rich's "…" would cut a Chinese line a cell short
    for k, v in rows:
        table.add_row(k, v)
    return table


# the engine's words for the generation loop (step_data.LOOP) and the sampling stages
WORDS = {
    "tokenize": "report.explain.tokenize",
    "embed": "report.explain.embed",
    "blocks": "report.explain.blocks",
    "logits": "report.explain.logits",
    "softmax": "report.explain.softmax",
    "sample": "report.explain.sample",
    "append": "report.explain.append",
    "vocab": "report.explain.vocab",
    "nonzero": "report.explain.nonzero",
}


def _word(word: str) -> str:
    """An engine word said in the chosen language (a filter such as top_k is its own name)."""
    return say(WORDS[word]) if word in WORDS else word


def _number(x: float | None) -> str:
    """Four decimals; NaN where a broken model (--allow-nonfinite) gave no number."""
    return "NaN" if x is None else f"{x:.4f}"


def _tokens_table(rows, value: str = "prob") -> Table:
    """Rows of labelled tokens (TokenProb, TokenLogit or PoolToken) with one number each: a
    probability, or a logit."""
    label = say("report.explain.probability") if value == "prob" else say("report.explain.logit")
    table = Table(box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column(say("report.explain.token"))
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
                say("report.explain.model"),
                say(
                    "report.explain.model-line",
                    name=m.name,
                    n_layer=m.n_layer,
                    n_head=m.n_head,
                    d_model=m.d_model,
                    vocab=f"{m.vocab_size:,}",
                    n_ctx=f"{m.n_ctx:,}",
                    n_params=f"{m.n_params:,}",
                ),
            ),
            (
                say("report.explain.next-token"),
                f"{d.prediction.token!r} (p = {_number(d.prediction.prob)})",
            ),
        ]
    )


def _render_how(d: sd.HowItWorksStep):
    return Group(
        Text(" → ".join([*map(_word, d.loop), say("report.explain.repeat")])),
        Text(i18n.text("report.explain.after-tokens-predicts", current_lang(), n=d.context_tokens)),
        _tokens_table(d.next),
    )


def _render_architecture(d: sd.ArchitectureStep):
    norms = ", ".join(f"{n:.1f}" for n in d.resid_norm_by_layer)
    tokens, embedding, blocks, final, logits = d.flow  # step_data.architecture's five
    flow = " → ".join(
        [
            say("report.explain.flow-tokens", n=tokens.removeprefix("tokens [").removesuffix("]")),
            say(
                "report.explain.flow-embedding",
                shape=embedding.removeprefix("embedding [").removesuffix("]"),
            ),
            say("report.explain.flow-blocks", n=blocks.split()[0]),
            say("report.explain.final-norm", norm=final.removeprefix("final ")),
            logits,
        ]
    )
    return _kv(
        [(say("report.explain.flow"), flow), (say("report.explain.residual-norm-by-layer"), norms)]
    )


def _render_embedding(d: sd.EmbeddingStep):
    position = _vec(d.position) if d.position else say("report.explain.no-position-vector")
    return _kv(
        [
            (say("report.explain.token-embedding"), _vec(d.token)),
            (say("report.explain.position-embedding"), position),
            (say("report.explain.sum-block-0-input"), _vec(d.sum)),
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
    table = Table(box=None, pad_edge=False)
    marks = _char_marks(d)
    table.add_column(say("report.explain.pos"), justify="right")
    table.add_column(say("report.explain.token"), justify="left")
    table.add_column("id", justify="right")
    table.add_column(say("report.explain.embedding-norm"), justify="right")
    if marks:
        table.add_column(say("report.explain.character"))
    for r in d.tokens:
        cells = [str(r.position), _short(r.token, ROOMY), str(r.id), f"{r.norm:.3f}"]
        table.add_row(*cells, *([marks.get(r.position, "")] if marks else []))
    merges = Table(box=None, pad_edge=False)
    merges.add_column(say("report.explain.token"))
    merges.add_column(say("report.explain.bpe-merges"))
    for m in d.merges[:24]:
        # two spaces apart: a merge draws its own spaces as "·"
        steps = "  ".join(f"{visible(x.left)}+{visible(x.right)}#{x.rank}" for x in m.merges[-6:])
        more = "… " if len(m.merges) > 6 else ""
        one = len(m.token.encode("utf-8")) == 1
        alone = say("report.explain.single-byte") if one else say("report.explain.no-merges")
        merges.add_row(_short(m.token, ROOMY), more + (steps or alone))
    if d.tokenizer == "chars":  # one token per character: there are no merges to list
        vocab = d.embedding_matrix[0]
        note = say(
            "report.explain.one-token-per-character",
            n=f"{vocab:,}",
        )
        merges = Text(note)
    return Group(
        table,
        Text(say("report.explain.embedding-matrix", shape=d.embedding_matrix)),
        merges if d.merges or d.tokenizer == "chars" else Text(""),
    )


def _render_positional(d: sd.PositionalEncodingStep):
    norms = ", ".join(f"{n:.2f}" for n in d.norms[:24])
    return _kv(
        [
            (say("report.explain.position-vector"), _vec(d.vector)),
            (say("report.explain.norm-per-position"), norms),
        ]
    )


def _render_blocks(d: sd.BlocksStep):
    table = Table(box=None, pad_edge=False)
    for col in (
        say("report.explain.layer"),
        say("report.explain.input-norm"),
        say("report.explain.output-norm"),
        say("report.explain.change"),
    ):
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
    labels = (say("report.explain.attends-most-to"), say("report.explain.attention-output"))
    items = [f"{_short(a.token, ROOMY)}@{a.position} ({a.weight:.2f})" for a in d.attends_most_to]
    most = _whole_items(items, width.get() - PANEL_EDGE - 2 - max(map(cell_len, labels)))
    return _group(
        Text(say("report.explain.attention-pattern", layer=d.layer, head=d.head)),
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
    shared = {"kv": d.kv_head, "n": d.n_kv_head}
    return _kv(
        [
            (say("report.explain.norm-output"), _vec(d.input)),
            ("W_qkv", str(d.W_qkv)),
            (say("report.explain.query"), _vec(d.q)),
            (say("report.explain.key-of-kv-head", **shared), _vec(d.k)),
            (say("report.explain.value-of-kv-head", **shared), _vec(d.v)),
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
    heads = say(
        "report.explain.query-heads",
        n=d.n_head,
        d_head=d.d_head,
        kv=g.n_kv_head,
    )
    rows = [
        (say("report.explain.heads"), heads),
        (say("report.explain.q-k-shapes"), f"{d.q_shape}, {d.k_shape}"),
        (say("report.explain.q-per-head"), norms),
    ]
    if g.n_kv_head != g.n_head:
        rows.append((say("report.explain.groups-of", n=g.group_size), groups))
    rows += [
        (
            say("report.explain.kv-cache-per-token", dtype=cache.dtype),
            say(
                "report.explain.kv-cache-per-token-size",
                size=_bytes(cache.per_token),
                full=_bytes(cache.per_token_full),
            ),
        ),
        (
            say("report.explain.kv-cache-at-tokens", n=cache.tokens),
            say(
                "report.explain.kv-cache-at-tokens-size",
                size=_bytes(cache.at_prompt),
                full=_bytes(cache.at_prompt_full),
                context=f"{cache.context:,}",
                at=_bytes(cache.at_context),
                at_full=_bytes(cache.at_context_full),
                saved=f"{cache.saved_fraction:.0%}",
            ),
        ),
    ]
    return _kv(rows)


def _render_rope(d: modern.RopeStep):
    f, c = d.frequencies, d.check
    n = len(f.inv_freq)
    picks = sorted({0, 1, 2, n // 4, n // 2, 3 * n // 4, n - 1})
    every = say("report.explain.every")
    freqs = ", ".join(f"#{i} {f.inv_freq[i]:.3g} ({every} {f.wavelength[i]:,.3g})" for i in picks)
    table = Table(box=None, pad_edge=False)
    for col in (
        "",
        say("report.explain.query-at"),
        say("report.explain.key-at"),
        say("report.explain.distance"),
        say("report.explain.q-k-rotated"),
    ):
        table.add_column(col, justify="right")
    same, moved = say("report.explain.same-distance"), say("report.explain.query-moved")
    for label, rows in ((same, c.same_distance), (moved, c.other_distance)):
        for n_row, r in enumerate(rows):
            table.add_row(
                label if n_row == 0 else "",
                str(r.query_at),
                str(r.key_at),
                str(r.distance),
                f"{r.score:.7f}",
            )
    return Group(
        *[Text(note) for note in _rope_notes(f)],
        _kv(
            [
                (say("report.explain.positions"), say("report.explain.no-vector-added")),
                (
                    say("report.explain.rotation-per-position", n=n),
                    say(
                        "report.explain.rope-frequencies",
                        theta=f"{f.theta:g}",
                        freqs=freqs,
                    ),
                ),
                (say("report.explain.q-head-before", h=d.head), _vec(d.q.before)),
                (say("report.explain.q-after-rotating", p=d.position), _vec(d.q.after)),
                (say("report.explain.k-kv-head-before", h=d.kv_head), _vec(d.k.before)),
                (say("report.explain.k-after-rotating", p=d.position), _vec(d.k.after)),
                (
                    "rotate(hook_q) vs hook_rot_q",
                    say("report.explain.max-difference", e=f"{d.rotation_max_error:.1e}"),
                ),
            ]
        ),
        Text(
            say(
                "report.explain.q-k-rotated-to-other-positions",
                q=c.query_position,
                k=c.key_position,
                score=f"{c.recorded_score:.7f}",
            )
        ),
        table,
        Text(
            say(
                "report.explain.same-distance-same-score",
                e=f"{c.max_abs_difference:.1e}",
                r=f"{c.relative_difference:.1e}",
            )
        ),
    )


def _rope_notes(f: modern.RotationFrequencies) -> list[str]:
    """Where the model's RoPE is not the plain one: which dims rotate (a partial rotary factor)
    and LongRoPE's factors for this prompt's length (the page says the same, modern.js)."""
    notes = []
    if f.rotary_dims < f.d_head:
        rest = f.d_head - f.rotary_dims
        notes.append(say("page.modern.rope-partial", r=f.rotary_dims, d=f.d_head, rest=rest))
    if f.factors is not None:
        a, a2 = f"{f.attention_factor:.4g}", f"{f.attention_factor**2:.4g}"
        values = dict(n=f.length, L=f.original_context or 0, a=a, a2=a2)
        if f.factors == "long":
            notes.append(say("page.modern.rope-longrope-long", **values))
        else:
            notes.append(say("page.modern.rope-longrope-short", **values))
    return notes


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
    labels = (
        say("report.explain.qk-raw"),
        f"÷ √{d.d_head}",
        say("report.explain.plus-causal-mask"),
        say("report.explain.softmax"),
    )
    label = max(len(x) + sum(1 for c in x if ord(c) > 0x2E80) for x in labels)
    keys = _fit(end, label + 2, 6)
    rows = [d.raw, d.scaled, d.masked, d.softmax]
    values = [" ".join(f"{_score(v):>6}" for v in row[end - keys : end]) for row in rows]
    return _group(
        Text(say("report.explain.scaled-scores-causal-mask")),
        _matrix("q\\k", first, [row[size - keep :] for row in texts[size - keep :]]),
        _more(first, d.window_start + size - 1, d.window_start + size) if keep < size else None,
        _kv(
            [
                (say("report.explain.query-position"), str(d.query_position)),
                *zip(labels, values, strict=True),
            ]
        ),
        _more(end - keys, end - 1, end, keys=True) if keys < end else None,
    )


def _render_attn_out(d: sd.AttentionOutputStep):
    rows = [(say("report.explain.head-z", h=h), _vec(v)) for h, v in enumerate(d.z_by_head[:12])]
    rows += [
        (say("report.explain.concat"), say("report.explain.n-values", n=d.concat_shape[0])),
        (say("report.explain.head-result"), ", ".join(f"{n:.2f}" for n in d.head_result_norms)),
        (say("report.explain.projected"), _vec(d.projected)),
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
            (say("report.explain.input"), _vec(d.input)),
            (say("report.explain.w1", d_mlp=d.d_mlp), _stats(pre)),
            (
                act,
                say(
                    "report.explain.stats-positive",
                    mean=f"{post.mean:+.3f}",
                    std=f"{post.std:.3f}",
                    share=f"{post.fraction_positive:.0%}",
                    hist=_hist(post.histogram),
                ),
            ),
            (say("report.explain.w2"), _vec(d.output)),
        ]
    )


def _stats(s) -> str:
    return say(
        "report.explain.stats",
        mean=f"{s.mean:+.3f}",
        std=f"{s.std:.3f}",
        min=f"{s.min:+.2f}",
        max=f"{s.max:+.2f}",
        hist=_hist(s.histogram),
    )


def _render_swiglu(d: modern.SwiGLUStep):
    act = "GELU" if d.curve is not None and d.curve.name.startswith("GELU") else "SiLU"
    table = Table(box=None, pad_edge=False)
    for col in (say("report.explain.feature"), "gate", f"{act}(gate)", "× up", "= post"):
        table.add_column(col, justify="right")
    for f in d.strongest[:8]:
        table.add_row(
            str(f.index), f"{f.gate:+.3f}", f"{f.silu_gate:+.3f}", f"{f.up:+.3f}", f"{f.post:+.3f}"
        )
    return Group(
        _kv(
            [
                (say("report.explain.input-rmsnorm-2"), _vec(d.input)),
                (f"gate = x·W_gate {d.W_gate}", _stats(d.gate_stats)),
                (f"up = x·W_up {d.W_up}", _stats(d.up_stats)),
                (f"{act}(gate)", _vec(d.silu_gate)),
                (f"post = {act}(gate) × up", _stats(d.post_stats)),
                (say("report.explain.output-post-w-down", shape=d.W_down), _vec(d.output)),
                (
                    say("report.explain.checks"),
                    f"|{act}(gate)×up − post| ≤ {d.product_max_error:.1e}, "
                    f"|post·W_down − mlp_out| ≤ {d.down_max_error:.1e}",
                ),
            ]
        ),
        Text(say("report.explain.strongest-features", n=len(d.strongest[:8]), d=d.d_mlp)),
        table,
    )


def _render_logits(d: sd.LogitsStep):
    s = d.stats
    unembed = say("report.explain.tied-unembedding") if d.tied else "lm_head"
    return Group(
        _kv(
            [
                (say("report.explain.final-norm", norm=d.norm), _vec(d.final_ln)),
                (say("report.explain.unembedding"), unembed),
                (
                    say("report.explain.logits"),
                    say(
                        "report.explain.scores",
                        n=f"{d.vocab_size:,}",
                        mean=f"{s.mean:+.2f}",
                        std=f"{s.std:.2f}",
                        max=f"{s.max:+.2f}",
                    ),
                ),
            ]
        ),
        _tokens_table(d.top, "logit"),
    )


def _render_probs(d: sd.ProbabilitiesStep):
    return _tokens_table(d.top)


def _render_temperature(d: sd.TemperatureStep):
    if d.at_t == "greedy":
        return Group(Text(say("report.explain.t-0-greedy")), _tokens_table(d.at_1))
    table = Table(box=None, pad_edge=False)
    same = d.temperature == 1  # one column: at T = 1 the distribution is unchanged
    table.add_column(say("report.explain.token"), justify="left")
    table.add_column(say("report.explain.p-at-t", t="1"), justify="right")
    if not same:
        table.add_column(say("report.explain.p-at-t", t=f"{d.temperature:g}"), justify="right")
    at_t = {r.id: r.prob for r in d.at_t}
    for r in d.at_1:
        scaled = [] if same else [_number(at_t[r.id]) if r.id in at_t else "-"]
        table.add_row(_short(r.token), _number(r.prob), *scaled)
    return table


def _sampling_params(p: dict) -> str:
    """The sampling parameters in effect, in words: "temperature 0 (greedy), top-k 5"."""
    if p["greedy"]:
        said = [say("report.explain.greedy")]
    elif p["temperature"] < GREEDY_TEMPERATURE:
        said = [say("report.explain.temperature-greedy", t=f"{p['temperature']:g}")]
    else:
        said = [say("report.explain.temperature", t=f"{p['temperature']:g}")]
    # 0 and None are off (a top-k of 0 too)
    said += [f"{name} {p[key]:g}" for key, name in FILTERS if p[key]]
    return ", ".join(said)


def _render_sampling(d: sd.SamplingStep):
    stages = " → ".join(f"{_word(k)} {v:,}" for k, v in d.stages.items())
    return Group(
        _kv(
            [
                (say("report.explain.params"), _sampling_params(d.params)),
                (say("report.explain.survivors"), stages),
            ]
        ),
        _tokens_table(d.pool),
    )


def _render_residual(d: sd.ResidualStep):
    names = ("resid_pre", "attn_out", "resid_mid", "mlp_out", "resid_post")
    rows = [(name, _vec(getattr(d, name))) for name in names]
    error = f"{d.identity_max_error:.1e}"
    rows.append((say("report.explain.check"), say("report.explain.residual-check", error=error)))
    return _kv(rows)


def _render_layernorm(d: LayerNormView):
    return _kv(
        [
            (say("report.explain.before"), _vec(d.input)),
            (say("report.explain.std-with-eps"), f"{d.std:.4f}"),
            (say("report.explain.normalized"), _vec(d.normalized)),
            (say("report.explain.gamma"), _numbers(d.gamma)),
            (say("report.explain.beta"), _numbers(d.beta)),
            (say("report.explain.after"), _vec(d.output)),
        ]
    )


def _render_rmsnorm(d: modern.RMSNormView):
    return _kv(
        [
            (say("report.explain.before"), _vec(d.input)),
            (say("report.explain.mean-kept"), f"{d.input_mean:+.4f}"),
            ("rms = √(mean(x²) + eps)", f"√({d.mean_square:.4f} + {d.eps:g}) = {d.rms:.4f}"),
            (say("report.explain.normalized-rms"), _vec(d.normalized)),
            (say("report.explain.gain"), _numbers(d.gain)),
            (say("report.explain.bias"), say("report.explain.no-bias")),
            (say("report.explain.after-gain"), _vec(d.output)),
            (
                say("report.explain.check"),
                say("report.explain.rmsnorm-check", e=f"{d.recompose_max_error:.1e}"),
            ),
        ]
    )


def _render_dropout(d: sd.DropoutStep):
    return _kv(
        [
            (say("report.explain.at-inference"), say("report.explain.dropout-identity")),
            (say("report.explain.training-rate"), f"{d.model_rate:g}"),
            (
                say("report.explain.example-rate", p=f"{d.example_rate:g}"),
                say(
                    "report.explain.zeroed",
                    n=len(d.zeroed),
                    total=len(d.after),
                    scale=f"{1 / (1 - d.example_rate):.3f}",
                ),
            ),
            (say("report.explain.before"), _numbers(d.before)),
            (say("report.explain.after"), _numbers(d.after)),
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


def render_step(step):
    """A step of a report (``explain.report.StepReport``): its data, then what the model's
    family adds to it (``family_data``: explain_family_render)."""
    from lmscope.commands.explain_family_render import render_family

    family = render_family(getattr(step, "family_data", []))
    body = render(step.data)
    return Group(body, *family) if family else body
