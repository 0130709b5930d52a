"""The picture a widget shows first, as one self-contained piece of HTML and SVG: what a
notebook shows where no widget runs (nbconvert's HTML, GitHub's preview, a docs page). Its
numbers are the ones the widget is sent, from the same answers (``answers.py``)."""

from __future__ import annotations

import math
from html import escape

from lmscope.i18n import text

BOX = (
    "font-family:system-ui,sans-serif;color:#111827;background:#f6f7f9;padding:10px;"
    "border-radius:8px;border:1px solid #e5e7eb;max-width:900px"
)
CHIP = (
    "display:inline-block;margin:2px;padding:2px 6px;border:1px solid #d1d5db;border-radius:6px;"
    "background:#fff;font-family:monospace;font-size:12px"
)
SELECTED = "border-color:#6d28d9;background:#ede9fe"


def shown(piece: str) -> str:
    """A token's text readable in HTML: spaces and newlines made visible, as the page does."""
    return escape(piece.replace(" ", "·").replace("\n", "↵"))


def percent(p: float) -> str:
    return f"{100 * p:.2f}%"


def frame(view: str, setup: dict, *parts: str) -> str:
    m = setup["model"]
    facts = (
        f"<b>{escape(str(m['name']))}</b> · {m['n_layer']} {escape(text('page.layers'))} · "
        f"{m['n_head']} {escape(text('page.heads'))}"
    )
    body = "".join(parts)
    return (
        f'<div class="lmscope-snapshot" data-view="{view}" style="{BOX}">'
        f'<div style="color:#6b7280;font-size:13px">{facts}</div>{body}</div>'
    )


def chips(setup: dict) -> str:
    tokens = setup["trace"]["tokens"]
    out = []
    for tok in tokens:
        style = CHIP + (";" + SELECTED if tok["position"] == setup["position"] else "")
        out.append(
            f'<span class="chip" data-position="{tok["position"]}" data-id="{tok["id"]}" '
            f'style="{style}">{shown(tok["text"])}'
            f'<sub style="color:#6b7280;margin-left:3px">{tok["id"]}</sub></span>'
        )
    return f'<div class="tokens" style="margin:8px 0">{"".join(out)}</div>'


def bars(title: str, rows: list[tuple[str, float]], where: list[int] | None = None) -> str:
    """Labelled horizontal bars, one per (label, probability); ``where``: each label's
    position, written before it (a token may come twice)."""
    top = max((p for _, p in rows), default=1.0) or 1.0
    lines = [f'<div style="font-weight:600;margin:6px 0">{escape(title)}</div>']
    for i, (label, p) in enumerate(rows):
        at = f'<span style="color:#6b7280">{where[i]}:</span> ' if where else ""
        width = 100 * p / top
        lines.append(
            '<div class="bar" style="display:flex;gap:8px;align-items:center;font-size:12px">'
            f'<span style="width:120px;font-family:monospace">{at}{shown(label)}</span>'
            '<span style="flex:1;background:#e5e7eb;height:10px;border-radius:3px">'
            f'<span style="display:block;height:10px;width:{width:.1f}%;background:#7c3aed;'
            f'border-radius:3px"></span></span><span style="width:70px">{percent(p)}</span></div>'
        )
    return "".join(lines)


def next_tokens(setup: dict, view: dict, n: int = 10) -> str:
    """The top next tokens of a LogitsView (the trace's), with their probabilities."""
    vocab = setup["trace"]["vocab"]
    rows = [
        (vocab.get(str(i), f"#{i}"), math.exp(logit - view["lse"]))
        for i, logit in zip(view["ids"][:n], view["logits"][:n], strict=False)
    ]
    title = text("page.sampling") + " · " + text("page.position-n", p=view["position"])
    return bars(title, rows)


def pattern_svg(lines: dict, head: int) -> str:
    """One head's weights in the window as a matrix: query rows, key columns, each cell as
    dark as its weight, the weight in its tooltip."""
    tokens = lines["tokens"]
    weights = lines["patterns"][head]
    n = len(tokens)
    cell = max(8, min(26, 420 // max(n, 1)))
    pad = 90
    size = pad + n * cell
    parts = [
        f'<svg class="pattern" xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" font-size="10" font-family="monospace">'
    ]
    for i, tok in enumerate(tokens):
        label = shown(tok["text"])[:10]
        y = pad + i * cell + cell * 0.7
        parts.append(f'<text x="{pad - 4}" y="{y:.1f}" text-anchor="end">{label}</text>')
        x = pad + i * cell + cell * 0.7
        parts.append(f'<text transform="translate({x:.1f},{pad - 4}) rotate(-60)">{label}</text>')
    for q, row in enumerate(weights):
        for k, w in enumerate(row):
            if k > q and w == 0:  # masked: the query cannot read a later key
                continue
            parts.append(
                f'<rect x="{pad + k * cell}" y="{pad + q * cell}" width="{cell - 1}" '
                f'height="{cell - 1}" fill="#6d28d9" fill-opacity="{min(1.0, w):.4f}" '
                f'data-q="{lines["start"] + q}" data-k="{lines["start"] + k}" data-w="{w}">'
                f"<title>{w}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def attention(setup: dict, lines: dict) -> str:
    head = setup["head"]
    title = f"{text('page.attention')} · {text('page.layer')} {lines['layer']} · " + text(
        "page.head-n", h=head
    )
    q = lines["position"] - lines["start"]
    row = lines["patterns"][head][q]
    tokens = lines["tokens"]
    ranked = sorted(range(len(row)), key=lambda k: -row[k])[:8]
    reads = bars(
        text("page.position-n", p=lines["position"]),
        [(tokens[k]["text"], row[k]) for k in ranked],
        [lines["start"] + k for k in ranked],
    )
    return (
        f'<div style="font-weight:600;margin:6px 0">{escape(title)}</div>'
        f'<div style="display:flex;gap:16px;flex-wrap:wrap">{pattern_svg(lines, head)}'
        f'<div style="min-width:260px;flex:1">{reads}</div></div>'
    )


def flow(setup: dict, data: dict) -> str:
    """The flow's ends: the residual stream's size after each block, and the next tokens."""
    norms = data["norms"]
    top = max(norms) or 1.0
    w, h = 12, 80
    rects = "".join(
        f'<rect x="{i * w}" y="{h - h * v / top:.1f}" width="{w - 2}" height="{h * v / top:.1f}" '
        f'fill="#2563eb" data-norm="{v}"><title>{v}</title></rect>'
        for i, v in enumerate(norms)
    )
    svg = (
        f'<svg class="norms" xmlns="http://www.w3.org/2000/svg" width="{len(norms) * w}" '
        f'height="{h}">{rects}</svg>'
    )
    rows = [(c["text"], c["prob"]) for c in data["top"]]
    title = text("page.sampling") + " · " + text("page.position-n", p=data["position"])
    return f'<div style="margin:6px 0">{svg}</div>{bars(title, rows)}'


def lens(setup: dict, data: dict) -> str:
    """The lens grid: each stage's top token at each position, with its probability."""
    head = "".join(
        f'<th style="padding:2px 4px;font-family:monospace">{shown(t["text"])}</th>'
        for t in data["tokens"]
    )
    rows = []
    for stage, cells in zip(data["stages"], data["cells"], strict=False):
        tds = "".join(
            f'<td style="padding:2px 4px;font-family:monospace;'
            f'background:rgba(109,40,217,{c["top"][0]["prob"] or 0:.3f})" '
            f'title="{percent(c["top"][0]["prob"] or 0)}">{shown(c["top"][0]["token"])}</td>'
            for c in cells
        )
        rows.append(f'<tr><th style="text-align:right;padding:2px 6px">{stage}</th>{tds}</tr>')
    return (
        f'<div style="font-weight:600;margin:6px 0">{escape(text("page.interpret.view-lens"))}'
        f'</div><div style="overflow-x:auto"><table class="lens" style="border-collapse:collapse;'
        f'font-size:11px"><tr><th></th>{head}</tr>{"".join(rows)}</table></div>'
    )


def step(setup: dict, title: str, body: str) -> str:
    return (
        f'<div style="font-weight:600;margin:6px 0">{escape(title)}</div>'
        f'<p style="font-size:13px;max-width:760px">{escape(body)}</p>'
    )
