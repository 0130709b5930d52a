"""Two models on one text: where each is surprised, and where they differ.

Each model's loss (negative log-likelihood, nats) is computed for every token it predicts. When
both models tokenize the text identically the comparison is per token; otherwise (a BPE GPT
against a character model, say) each token's loss is spread evenly over the characters it
covers, so both become per-character losses over the same decoded text and still sum to each
model's total.

A model is any ``lmscope.load`` model (``lmscope.engine.protocol.Model``): its ``tokenizer``,
``logits(ids) -> [T, V]``, ``name``, and ``capabilities.context`` (the context window; texts
longer than it are scored with a sliding window).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import torch

from lmscope import i18n
from lmscope.engine.probs import log_probs
from lmscope.errors import InvalidInputError, checked_keywords


@dataclass
class TokenLosses:
    model: str
    pieces: list[str]  # decoded text of each token
    losses: list[float | None]  # nats; None where nothing predicts the token (the very first)

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def mean(self) -> float:
        scored = [x for x in self.losses if x is not None]
        return sum(scored) / len(scored) if scored else float("nan")

    def per_char(self) -> list[float | None]:
        """Each token's loss shared equally among its characters."""
        out: list[float | None] = []
        for piece, loss in zip(self.pieces, self.losses, strict=True):
            share = None if loss is None else loss / max(1, len(piece))
            out.extend([share] * len(piece))
        return out


@checked_keywords
@torch.no_grad()
def token_losses(model, text: str) -> TokenLosses:
    if not hasattr(model, "tokenizer") or not hasattr(model, "logits"):
        raise InvalidInputError(
            "error.compare.model-type", type=type(model).__name__, got=f"{model!r:.40}"
        )
    if not isinstance(text, str):
        raise InvalidInputError("error.compare.text-type", type=type(text).__name__)
    if not text:
        raise InvalidInputError("error.compare.empty-text")
    tok = model.tokenizer
    if tok is None:
        raise InvalidInputError("error.compare.no-tokenizer", name=str(model.name))
    ids = tok.encode(text, allow_special=False)  # a literal "<|endoftext|>" is just text here
    # A model whose tokenizer puts a BOS first (Llama 2's <s>, Llama 3's <|begin_of_text|>)
    # sees that before a document; GPT-2 models see <|endoftext|>. Either way even the first
    # token gets a loss.
    bos = tok.bos_id if getattr(tok, "add_bos", False) else getattr(tok, "eot_id", None)
    seq = ([bos] if bos is not None else []) + list(ids)
    offset = 1 if bos is not None else 0
    losses: list[float | None] = [None] * len(ids)
    n_ctx = model.capabilities.context or len(seq)
    stride = max(1, n_ctx // 2)
    scored_until = 0  # positions in seq whose prediction is already taken
    start = 0
    while True:
        window = seq[start : start + n_ctx]
        logp = log_probs(model.logits(window))
        for j in range(1, len(window)):
            pos = start + j
            if pos > scored_until:
                losses[pos - offset] = -float(logp[j - 1, window[j]])
        scored_until = start + len(window) - 1
        if start + n_ctx >= len(seq):
            break
        start += stride
    pieces = [tok.decode([i]) for i in ids]
    if "".join(pieces) != text:  # multi-token characters: fall back to byte-exact pieces
        pieces = _split_pieces(tok, ids)
    return TokenLosses(model.name, pieces, losses)


def _split_pieces(tok, ids) -> list[str]:
    """Pieces whose concatenation is the decoded text: a character split across tokens is
    given to the token that completes it."""
    pieces, shown = [], ""
    for n in range(1, len(ids) + 1):
        text = tok.decode(ids[:n]).rstrip("\ufffd")
        pieces.append(text[len(shown) :])
        shown = text
    pieces[-1] += tok.decode(ids)[len(shown) :]
    return pieces


@dataclass
class Comparison:
    unit: str  # "token" or "character"
    names: tuple[str, str]
    pieces: list[str]  # the units, in order (tokens or single characters)
    loss_a: list[float | None]
    loss_b: list[float | None]
    mean_a: float
    mean_b: float
    note: str = ""

    @property
    def diff(self) -> list[float | None]:
        """loss_b - loss_a: positive where model B is more surprised than A."""
        return [
            None if a is None or b is None else b - a
            for a, b in zip(self.loss_a, self.loss_b, strict=True)
        ]

    def _repr_html_(self) -> str:  # a notebook shows the coloured text
        return html_fragment(self)

    def __repr__(self) -> str:  # the dataclass repr listed every piece and both losses
        a, b = self.names
        return (
            f"Comparison({a!r} vs {b!r} on {len(self.pieces):,} {self.unit}s: mean loss "
            f"{self.mean_a:.3f} vs {self.mean_b:.3f} nats; pieces, loss_a, loss_b, diff)"
        )

    def to_dict(self) -> dict:
        return {
            "unit": self.unit,
            "names": list(self.names),
            "pieces": self.pieces,
            "loss_a": self.loss_a,
            "loss_b": self.loss_b,
            "diff": self.diff,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "note": self.note,
        }


@checked_keywords
def compare(model_a, model_b, text: str) -> Comparison:
    a, b = token_losses(model_a, text), token_losses(model_b, text)
    if a.pieces == b.pieces:
        return Comparison(
            "token", (a.model, b.model), a.pieces, a.losses, b.losses, a.mean(), b.mean()
        )
    if a.text != b.text:
        raise InvalidInputError("error.compare.unaligned")
    chars_a, chars_b = a.per_char(), b.per_char()
    note = i18n.text("report.compare.models-split-text", "en")  # the CLI says it in --lang
    mean_a = _mean(chars_a, chars_b)
    mean_b = _mean(chars_b, chars_a)
    return Comparison(
        "character", (a.model, b.model), list(a.text), chars_a, chars_b, mean_a, mean_b, note
    )


def _mean(values, other) -> float:
    """Mean over the characters both models scored, so the two means are comparable."""
    both = [v for v, w in zip(values, other, strict=True) if v is not None and w is not None]
    return sum(both) / len(both) if both else float("nan")


# --- views ---------------------------------------------------------------------------------
RGB = tuple[int, int, int]
UNSCORED: RGB = (238, 238, 238)


def _loss_colour(loss: float | None, top: float) -> RGB:
    if loss is None:
        return UNSCORED
    fade = round(255 - 200 * (min(1.0, loss / top) if top > 0 else 0.0))
    return (255, fade, fade)  # white -> red


def _diff_colour(diff: float | None, top: float) -> RGB:
    if diff is None:
        return UNSCORED
    t = max(-1.0, min(1.0, diff / top)) if top > 0 else 0.0
    fade = round(255 - 200 * abs(t))
    return (255, fade, fade) if t > 0 else (fade, fade, 255)  # red: B worse, blue: A worse


def _english(message_id: str, **values) -> str:
    return i18n.text(message_id, "en", **values)


# what a comparison is per, as its words say it
UNIT_IDS = {"token": "report.compare.token", "character": "report.compare.character"}


def to_html(c: Comparison, say=_english, lang: str = "en") -> str:
    """The comparison as one HTML page, its words from ``say(message_id, **values)`` (a
    catalog text in the CLI's language; English by default) and ``lang`` its language tag;
    ``c.note`` is shown as it is (the caller says it in that language)."""
    return (
        f"<!doctype html><html lang={lang}><meta charset=utf-8><title>lmscope compare</title>"
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}</style>"
        + html_fragment(c, say)
    )


def html_fragment(c: Comparison, say=_english) -> str:
    """The comparison's headings and coloured rows, styled inline: what ``to_html`` puts on its
    page, and what a notebook shows (``Comparison._repr_html_``) without restyling its own."""
    finite = [abs(x) for x in c.loss_a + c.loss_b if x is not None]
    top = max(finite, default=1.0)
    diffs = [abs(x) for x in c.diff if x is not None]
    top_diff = max(diffs, default=1.0)

    def row(values, colour, scale, title):
        spans = []
        for piece, value in zip(c.pieces, values, strict=True):
            tip = "n/a" if value is None else f"{value:.3f} nats"
            text = html.escape(piece).replace("\n", "↵<br>")
            spans.append(
                f'<span style="background:rgb{colour(value, scale)}" '
                f'title="{html.escape(repr(piece))}: {tip}">{text}</span>'
            )
        return f"<h3>{html.escape(title)}</h3><div style={_TEXT_STYLE}>{''.join(spans)}</div>"

    a, b = c.names
    mean = say("report.compare.mean-loss-nats", a=a, loss_a=f"{c.mean_a:.3f}",
               b=b, loss_b=f"{c.mean_b:.3f}")  # fmt: skip
    return (
        f"<div><h2>{html.escape(say('report.compare.per-loss', unit=say(UNIT_IDS[c.unit])))}</h2>"
        f"<p>{html.escape(c.note)}</p><p>{html.escape(mean)}</p>"
        + row(c.loss_a, _loss_colour, top, say("report.compare.a-red-surprised", name=a))
        + row(c.loss_b, _loss_colour, top, say("report.compare.b-name", name=b))
        + row(c.diff, _diff_colour, top_diff, say("report.compare.b-a-red-b"))
        + "</div>"
    )


_TEXT_STYLE = '"font-family:monospace;white-space:pre-wrap;line-height:1.6"'


def to_png(c: Comparison, path: str | Path, columns: int = 80, max_units: int = 1200, say=_english):
    """Three panels of coloured text (A, B, B − A) with their colour scales (matplotlib), their
    words from ``say`` as in ``to_html``."""
    from lmscope.interpret.compare_png import draw

    finite = [abs(x) for x in c.loss_a + c.loss_b if x is not None]
    top = max(finite, default=1.0)
    top_diff = max((abs(x) for x in c.diff if x is not None), default=1.0)
    a, b = c.names
    panels = [
        (
            c.loss_a,
            _loss_colour,
            (0.0, top),
            say("report.compare.a-mean", name=a, loss=f"{c.mean_a:.3f}"),
            say("report.compare.loss-nats"),
        ),
        (
            c.loss_b,
            _loss_colour,
            (0.0, top),
            say("report.compare.b-mean", name=b, loss=f"{c.mean_b:.3f}"),
            say("report.compare.loss-nats"),
        ),
        (
            c.diff,
            _diff_colour,
            (-top_diff, top_diff),
            "B − A",
            say("report.compare.blue-a-more-surprised"),
        ),
    ]
    draw(path, c.pieces[:max_units], panels, columns)
