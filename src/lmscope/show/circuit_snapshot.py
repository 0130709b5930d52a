"""The circuits views' static pictures (where no widget runs): the grids, the loss curve and the
bars of the Circuits page as inline SVG, each mark carrying the number it draws (``data-value``)
from the same answer the widget is sent. The words are the page's (``page.circuits.*``)."""

from __future__ import annotations

from html import escape

from lmscope.i18n import text
from lmscope.show.snapshot import frame

# the page's scales (web/static/js/draw.js colour): diverging blue-white-red, sequential to violet
NEG, MID, POS = (37, 99, 235), (247, 247, 245), (220, 68, 55)
SEQ_LO, SEQ_HI = (248, 250, 252), (76, 29, 149)
TITLE = "font-weight:600;margin:8px 0 4px"
NOTE = "font-size:13px;max-width:820px;margin:4px 0"


def mix(a: tuple, b: tuple, t: float) -> str:
    r, g, b_ = (round(a[i] + (b[i] - a[i]) * t) for i in range(3))
    return f"rgb({r},{g},{b_})"


def colour(v: float | None, scale: float, kind: str) -> str:
    if v is None:
        return "#e5e7eb"
    if kind == "sequential":
        t = min(1.0, max(0.0, v / scale)) if scale > 0 else 0.0
        return mix(SEQ_LO, SEQ_HI, t**0.5)
    t = max(-1.0, min(1.0, v / scale)) if scale > 0 else 0.0
    return mix(MID, NEG, -t) if t < 0 else mix(MID, POS, t)


def number(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def title(words: str) -> str:
    return f'<div style="{TITLE}">{escape(words)}</div>'


def note(words: str) -> str:
    return f'<p style="{NOTE}">{escape(words)}</p>'


def grid(testid: str, heading: str, matrix, rows, cols, *, kind: str, scale: float) -> str:
    """A grid of values (matrix[row][col]) with its row and column labels."""
    cw, ch, left, top = 18, 14, 40, 60
    n_rows, n_cols = len(matrix), len(matrix[0]) if matrix else 0
    w, h = left + n_cols * cw + 30, top + n_rows * ch + 2
    out = [
        f'<svg class="circuits-grid" data-testid="{testid}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{w}" height="{h}" font-size="10" font-family="sans-serif">'
    ]
    for j, label in enumerate(cols):
        x = left + (j + 0.5) * cw
        out.append(
            f'<text x="{x:.1f}" y="{top - 4}" transform="rotate(-55 {x:.1f} {top - 4})">'
            f"{escape(str(label))}</text>"
        )
    for i, label in enumerate(rows):
        y = top + (i + 0.5) * ch + 4
        out.append(f'<text x="{left - 4}" y="{y:.1f}" text-anchor="end">{escape(label)}</text>')
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            out.append(
                f'<rect x="{left + j * cw}" y="{top + i * ch}" width="{cw - 1}" height="{ch - 1}" '
                f'fill="{colour(v, scale, kind)}" data-row="{i}" data-col="{j}" '
                f'data-value="{"null" if v is None else v}"><title>{rows[i]} {cols[j]}: '
                f"{number(v, 4)}</title></rect>"
            )
    out.append("</svg>")
    return f"<figure style='margin:4px'>{title(heading)}{''.join(out)}</figure>"


def loss_curve(loss: list, start: int, length: int) -> str:
    """The loss at each position; the second copy's part shaded."""
    w, h, l_pad, r_pad, t_pad, b_pad = 560, 180, 40, 10, 10, 24
    finite = [v for v in loss if v is not None]
    top = max(finite, default=1.0) or 1.0
    n = len(loss)

    def x(i: int) -> float:
        return l_pad + (i / (n - 1) if n > 1 else 0) * (w - l_pad - r_pad)

    def y(v: float) -> float:
        return t_pad + (1 - v / top) * (h - t_pad - b_pad)

    split = start + length - 1
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(loss) if v is not None)
    dots = "".join(
        f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2" fill="#6d28d9" data-position="{i}" '
        f'data-value="{v}"><title>{i}: {v:.4f}</title></circle>'
        for i, v in enumerate(loss)
        if v is not None
    )
    first = text("page.circuits.induction.first-copy")
    second = text("page.circuits.induction.second-copy")
    return (
        f'<svg class="circuits-chart" data-testid="loss-curve" xmlns="http://www.w3.org/2000/svg" '
        f'width="{w}" height="{h}" font-size="10" font-family="sans-serif">'
        f'<rect x="{x(split):.1f}" y="{t_pad}" width="{max(0.0, x(n - 1) - x(split)):.1f}" '
        f'height="{h - t_pad - b_pad}" fill="#ede9fe"/>'
        f'<line x1="{l_pad}" x2="{w - r_pad}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#9ca3af"/>'
        f'<text x="{l_pad - 4}" y="{y(top) + 4:.1f}" text-anchor="end">{top:.3f}</text>'
        f'<text x="{l_pad - 4}" y="{y(0):.1f}" text-anchor="end">0</text>'
        f'<text x="{(l_pad + x(split)) / 2:.1f}" y="{h - 6}" text-anchor="middle">'
        f"{escape(first)}</text>"
        f'<text x="{(x(split) + w - r_pad) / 2:.1f}" y="{h - 6}" text-anchor="middle">'
        f"{escape(second)}</text>"
        f'<polyline points="{points}" fill="none" stroke="#6d28d9" stroke-width="1.5"/>{dots}'
        "</svg>"
    )


def signed_bars(items: list[tuple[str, float]]) -> str:
    """Signed horizontal bars, right of the zero line for a positive value."""
    row, label_w, value_w, w = 18, 64, 60, 420
    top = max((abs(v) for _, v in items), default=1.0) or 1.0
    half = (w - label_w - value_w) / 2
    mid = label_w + half
    h = len(items) * row + 8
    out = [
        f'<svg class="circuits-bars" data-testid="attribute-bars" '
        f'xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-size="11" '
        f'font-family="sans-serif"><line x1="{mid}" x2="{mid}" y1="0" y2="{h}" stroke="#9ca3af"/>'
    ]
    for i, (name, v) in enumerate(items):
        y = 4 + i * row
        size = abs(v) / top * (half - 2)
        x = mid if v >= 0 else mid - size
        fill = "#dc4437" if v >= 0 else "#2563eb"
        out.append(
            f'<text x="{label_w - 6}" y="{y + row - 5}" text-anchor="end">{escape(name)}</text>'
            f'<rect x="{x:.1f}" y="{y + 2}" width="{max(size, 0.5):.1f}" height="{row - 5}" '
            f'fill="{fill}" data-name="{escape(name)}" data-value="{v}"><title>{escape(name)}: '
            f'{v:.4f}</title></rect><text x="{w - 2}" y="{y + row - 5}" text-anchor="end">'
            f"{v:.3f}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def row(*parts: str) -> str:
    style = "display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start"
    return f'<div style="{style}">{"".join(parts)}</div>'


def layer_labels(rows) -> list[str]:
    return [f"L{layer}" for layer in rows]


def heads(n: int) -> list[str]:
    return [f"H{h}" for h in range(n)]


def quoted(token: str) -> str:
    return "“" + token.replace("\n", "↵") + "”"


# --- the three views ----------------------------------------------------------------------------


def induction(setup: dict, r: dict) -> str:
    n_layer, n_head = len(r["scores"]), len(r["scores"][0])
    layers = layer_labels(range(n_layer))
    top = ", ".join(f"{e['head']} {e['score']:.2f}" for e in r["top_induction"])
    top_prev = ", ".join(f"{e['head']} {e['score']:.2f}" for e in r["top_previous_token"])
    summary = text(
        "page.circuits.induction.summary",
        n=len(r["ids"]),
        length=r["length"],
        first=number(r["loss_first_copy"]),
        second=number(r["loss_second_copy"]),
    )
    bos = text("page.circuits.induction.bos" if r["bos"] else "page.circuits.induction.no-bos")
    return frame(
        "induction",
        setup,
        title(text("page.circuits.induction.title")),
        *map(note, (summary, bos, f"{text('page.circuits.induction.top')} {top}")),
        note(f"{text('page.circuits.induction.top-previous')} {top_prev}"),
        row(
            *(
                grid(
                    testid, text(words), r[key], layers, heads(n_head), kind="sequential", scale=1.0
                )
                for testid, words, key in (
                    ("induction-grid", "page.circuits.induction.grid", "scores"),
                    ("previous-grid", "page.circuits.induction.grid-previous", "previous_token"),
                )
            )
        ),
        title(text("page.circuits.induction.loss-title")),
        loss_curve(r["loss"], 1 if r["bos"] else 0, r["length"]),
        note(text("page.circuits.induction.cannot")),
    )


def patching(setup: dict, r: dict) -> str:
    right, wrong = quoted(r["right"]["token"]), quoted(r["wrong"]["token"])
    sites = r["sites"]
    scale = max(
        1.0, *(abs(v or 0.0) for site in sites.values() for line in site["values"] for v in line)
    )
    resid, heads_site, mlp = sites["resid_pre"], sites["attn_head"], sites["mlp_out"]
    tokens = [f"{p} {r['clean_tokens'][p]}" for p in resid["cols"]]
    return frame(
        "patch",
        setup,
        title(text("page.circuits.patch.title")),
        *(
            note(text(words, right=right, wrong=wrong, diff=number(r[key], 4)))
            for words, key in (
                ("page.circuits.patch.clean-diff", "clean_diff"),
                ("page.circuits.patch.corrupt-diff", "corrupt_diff"),
            )
        ),
        note(text("page.circuits.patch.reading")),
        row(
            *(
                grid(
                    testid,
                    text(words),
                    site["values"],
                    layer_labels(site["rows"]),
                    cols,
                    kind="diverging",
                    scale=scale,
                )
                for testid, words, site, cols in (
                    ("patch-resid", "page.circuits.patch.resid-title", resid, tokens),
                    (
                        "patch-heads",
                        "page.circuits.patch.head-title",
                        heads_site,
                        heads(len(heads_site["cols"])),
                    ),
                    ("patch-mlp", "page.circuits.patch.mlp-title", mlp, ["MLP"]),
                )
            )
        ),
        note(text("page.circuits.patch.cannot")),
    )


def attribution(setup: dict, r: dict) -> str:
    token, after = quoted(r["token"]["text"]), quoted(r["tokens"][r["position"]])
    if r["versus"]:
        logit = text(
            "page.circuits.attribute.logit-versus",
            token=token,
            versus=quoted(r["versus"]["text"]),
            position=r["position"],
            after=after,
            logit=number(r["logit"], 4),
        )
    else:
        logit = text(
            "page.circuits.attribute.logit",
            token=token,
            position=r["position"],
            after=after,
            logit=number(r["logit"], 4),
        )
    largest = sorted(r["contributions"].items(), key=lambda kv: -abs(kv[1]))[:16]
    parts = [abs(v or 0.0) for line in r["heads"] for v in line] + [
        abs(v or 0.0) for v in r["mlps"]
    ]
    scale = max(parts, default=1.0) or 1.0
    layers = layer_labels(range(len(r["heads"])))
    total = text(
        "page.circuits.attribute.total",
        total=number(r["total"], 6),
        logit=number(r["logit"], 6),
        n=len(r["contributions"]),
    )
    return frame(
        "attribute",
        setup,
        title(text("page.circuits.attribute.title")),
        *map(note, (logit, total, text("page.circuits.attribute.frozen"))),
        row(
            "<figure style='margin:4px'>"
            + title(text("page.circuits.attribute.bars-title", n=len(largest)))
            + signed_bars(largest)
            + "</figure>",
            grid(
                "attribute-heads",
                text("page.circuits.attribute.grid-title"),
                r["heads"],
                layers,
                heads(len(r["heads"][0])),
                kind="diverging",
                scale=scale,
            ),
            grid(
                "attribute-mlps",
                text("page.circuits.attribute.mlp-title"),
                [[v] for v in r["mlps"]],
                layers,
                ["MLP"],
                kind="diverging",
                scale=scale,
            ),
        ),
    )
