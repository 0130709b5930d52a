"""The renderers of what a family adds to a step in ``lmscope explain`` (``family_data``:
``explain.family_views``): one per kind of view -> a rich renderable, each opening with the
line that says what GPT-2 and Llama do and what this model does instead, with its numbers.
Imported lazily by ``explain_render``, as it is."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import say
from lmscope.explain import family_views as fv


def _kv(rows: list[tuple[str, str]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="cyan", no_wrap=True)
    table.add_column(overflow="fold")
    for k, v in rows:
        table.add_row(k, v)
    return table


def _note(text: str) -> Text:
    return Text(text, style="magenta")


def _values(values: list[float], n: int = 8) -> str:
    more = ", …" if len(values) > n else ""
    return ", ".join(f"{x:+.3f}" for x in values[:n]) + more


def _vec(v) -> str:
    return f"[{_values(v.values)}] (‖·‖ {v.norm:.3f})"


def _embed_scale(d: fv.EmbedScale):
    note = say(
        "report.family.embed-scale",
        d_model=d.d_model,
        scale=f"{d.scale:.4f}",
        before=f"{d.stored_rms:.4f}",
        after=f"{d.scaled_rms:.4f}",
    )
    return Group(
        _note(note),
        _kv(
            [
                (say("report.family.stored-row"), _vec(d.stored)),
                (say("report.family.scaled-row"), _vec(d.scaled)),
                (
                    say("report.explain.checks"),
                    f"|x·{d.scale:.4f} − resid_pre| ≤ {d.max_error:.1e}",
                ),
            ]
        ),
    )


WHERE = {  # each norm of a sandwich block: where it sits
    "ln1": "report.family.where.ln1",
    "ln1_post": "report.family.where.ln1_post",
    "ln2": "report.family.where.ln2",
    "ln2_post": "report.family.where.ln2_post",
}


def _sandwich(d: fv.SandwichNorms):
    table = Table(box=None, pad_edge=False)
    table.add_column(say("report.family.norm"))
    table.add_column(say("report.family.where"))
    for col in ("report.family.input-rms", "report.family.gain", "report.family.output-rms"):
        table.add_column(say(col), justify="right")
    for n in d.norms:
        table.add_row(
            n.which,
            say(WHERE[n.which]),
            f"{n.input_rms:.4f}",
            f"{n.gain_mean:.3f} [{n.gain_min:.3f}, {n.gain_max:.3f}]",
            f"{n.output_rms:.4f}",
        )
    worst = max(n.max_error for n in d.norms)
    return Group(
        _note(say("report.family.sandwich")),
        table,
        Text(f"{say('report.explain.checks')} |normalized × (1 + w) − out| ≤ {worst:.1e}"),
    )


def _qk_norm(d: fv.QKNorm):
    note = say(
        "report.family.qk-norm",
        gain=d.gain,
        q_before=f"{d.q.rms_before:.3f}",
        q_after=f"{d.q.rms_after:.3f}",
        k_before=f"{d.k.rms_before:.3f}",
        k_after=f"{d.k.rms_after:.3f}",
        dot_before=f"{d.dot_before:.3f}",
        dot_after=f"{d.dot_after:.3f}",
    )
    heads = say(
        "report.family.heads-rms",
        before=", ".join(f"{x:.2f}" for x in d.q_rms_by_head_before),
        after=", ".join(f"{x:.2f}" for x in d.q_rms_by_head_after),
    )
    worst = max(d.q.max_error, d.k.max_error)
    return Group(
        _note(note),
        _kv(
            [
                (say("report.family.q-before"), _vec(d.q.before)),
                (say("report.family.q-after"), _vec(d.q.after)),
                (say("report.family.k-before"), _vec(d.k.before)),
                (say("report.family.k-after"), _vec(d.k.after)),
                (say("report.explain.checks"), f"|q/rms × gain − q_norm.hook_out| ≤ {worst:.1e}"),
            ]
        ),
        Text(heads),
    )


def _geglu(d: fv.GeGLU):
    table = Table(box=None, pad_edge=False)
    for col in (
        say("report.explain.feature"),
        "gate",
        "GELU(gate)",
        "SiLU(gate)",
        "× up",
        "= post",
    ):
        table.add_column(col, justify="right")
    for f in d.strongest:
        table.add_row(
            str(f.index),
            f"{f.gate:+.3f}",
            f"{f.gelu_gate:+.3f}",
            f"{f.silu_gate:+.3f}",
            f"{f.up:+.3f}",
            f"{f.post:+.3f}",
        )
    return Group(
        _note(say("report.family.geglu", gap=f"{d.max_gelu_silu_gap:.3f}")),
        table,
        Text(f"{say('report.explain.checks')} |GELU(gate) × up − post| ≤ {d.max_error:.1e}"),
    )


def _layers(items: list[int]) -> str:
    return ", ".join(map(str, items)) or "—"


def _sliding_window(d: fv.SlidingWindow):
    if d.local:
        note = say(
            "report.family.window-local",
            layer=d.layer,
            query=d.query_position,
            window=d.window,
            first=d.first_key,
            hidden=d.hidden_by_window,
            outside=f"{d.outside_weight:.1g}",
        )
    else:
        note = say("report.family.window-global", layer=d.layer, query=d.query_position)
    layers = say(
        "report.family.layers",
        window=d.window,
        local_theta=f"{d.rope_local_theta:,.0f}",
        local=_layers(d.local_layers),
        global_theta=f"{d.rope_global_theta:,.0f}",
        **{"global": _layers(d.global_layers)},
    )
    width = len(str(d.window_start + len(d.allowed) - 1))
    rows = [
        f"{d.window_start + i:>{width}} " + " ".join("·" if ok else "×" for ok in row)
        for i, row in enumerate(d.allowed)
    ]
    return Group(
        _note(note),
        Text(layers),
        Text(say("report.family.mask", start=d.window_start), style="dim"),
        Text("\n".join(rows)),
    )


def _fused(d: fv.FusedProjection):
    lead = "report.family.fused-qkv" if d.matrix == "qkv_proj" else "report.family.fused-gate-up"
    lines = [
        say(
            "report.family.fused-part",
            name=p.name,
            start=p.rows[0],
            end=p.rows[1] - 1,
            probe=p.probe,
            error=f"{p.max_error:.1e}",
        )
        for p in d.parts
    ]
    return Group(_note(say(lead, shape=d.weight_shape)), Text("\n".join(lines)))


ROUTED_SHOWN = 12  # the router's table lists the prompt's last tokens


def _router(d: fv.Router):
    table = Table(box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column(say("report.explain.token"))
    table.add_column(say("report.family.experts"))
    table.add_column(say("report.family.probs"))
    for t in d.tokens[-ROUTED_SHOWN:]:
        chosen = ", ".join(f"{e} ({w:.2f})" for e, w in zip(t.chosen, t.weights, strict=True))
        probs = " ".join(f"{p:.2f}" for p in t.probs)
        table.add_row(str(t.position), repr(t.token), chosen, probs)
    counts = ", ".join(f"#{e}: {n}" for e, n in enumerate(d.tokens_per_expert))
    n_tokens = sum(d.tokens_per_expert) // max(d.top_k, 1)
    return Group(
        _note(say("report.family.router", layer=d.layer, n=d.n_expert, k=d.top_k)),
        table,
        Text(say("report.family.spread", n=n_tokens, counts=counts)),
    )


RENDER = {
    fv.EmbedScale: _embed_scale,
    fv.SandwichNorms: _sandwich,
    fv.QKNorm: _qk_norm,
    fv.GeGLU: _geglu,
    fv.SlidingWindow: _sliding_window,
    fv.FusedProjection: _fused,
    fv.Router: _router,
}


def render_family(views) -> list:
    """The renderables of a step's family views, in order (unknown ones as JSON)."""
    out = []
    for view in views:
        draw = RENDER.get(type(view))
        out.append(draw(view) if draw else Text(view.model_dump_json()[:2000]))
    return out
