"""What every unit of a char RNN/LSTM/GRU does on a text, one character at a time.

    run = neuron_activations(lmscope.load("my-lstm"), text)
    run.unit(1, 42, "c")      # layer 1, unit 42's cell state after each character, [T]
    run.predictions(10)       # the top-5 next characters after character 10, with probabilities
    run.view(1, 42, "c")      # coloured text (HTML in a notebook, .save_png for files)

Kinds of value per layer (the names of ``lmscope.models.rnn``'s stepwise cell):

    LSTM  h hidden state, c cell state, i input gate, f forget gate, g candidate, o output gate
    GRU   h hidden state, r reset gate, z update gate, n candidate
    RNN   h hidden state

Characters outside the model's vocabulary are skipped (the model never reads them) and listed
in ``run.skipped``; features and views still place them in the original text. The run reads
the text in chunks, carrying the state, so long texts do not hold every gate of every step in
torch at once.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from lmscope import i18n
from lmscope.engine import checks
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.i18n import Message
from lmscope.interpret.cell_views import CellText, shade
from lmscope.interpret.features import trained_on

KINDS = {"lstm": ("h", "c", "i", "f", "g", "o"), "gru": ("h", "r", "z", "n"), "rnn": ("h",)}
KIND_NAMES = {  # each kind's name: a catalog message
    "h": "report.neurons.kind.h",
    "c": "report.neurons.kind.c",
    "i": "report.neurons.kind.i",
    "f": "report.neurons.kind.f",
    "g": "report.neurons.kind.g",
    "o": "report.neurons.kind.o",
    "r": "report.neurons.kind.r",
    "z": "report.neurons.kind.z",
    "n": "report.neurons.kind.n",
}
GATE_KINDS = {"lstm": ("i", "f", "o"), "gru": ("r", "z"), "rnn": ()}  # what the page shows
TOP_K = 5
CHUNK = 2048  # characters per stepwise pass


def a_model(arch: str) -> Message:
    """'an LSTM', 'a GRU', 'an RNN': for messages."""
    return Message(
        {"lstm": "error.neurons.part.an-lstm", "gru": "error.neurons.part.a-gru"}.get(
            arch, "error.neurons.part.an-rnn"
        )
    )


def default_kind(arch: str) -> str:
    """The value Karpathy coloured text by: an LSTM's cell state, else the hidden state."""
    return "c" if arch == "lstm" else "h"


@dataclass
class NeuronRun:
    """Every requested value of every unit after each character the model read."""

    model_name: str
    arch: str  # rnn | lstm | gru
    layers: int
    hidden: int
    text: str  # the text as given, unknown characters included
    kept: np.ndarray  # [T] index in ``text`` of each character the model read
    ids: np.ndarray  # [T] their token ids
    values: dict[str, np.ndarray]  # kind -> float32 [layers, T, hidden]
    top_ids: np.ndarray  # [T, k] the most likely next characters after each one
    top_probs: np.ndarray  # [T, k]
    next_probs: np.ndarray  # [T] probability given to the character that came next (nan last)
    vocab: tuple[str, ...]  # id -> character
    skipped: list[int] = field(default_factory=list)  # indices in ``text`` the model skipped
    corpus: str | None = None  # the model's training corpus, when its metadata names one

    def __len__(self) -> int:
        return len(self.kept)

    def __repr__(self) -> str:
        # the dataclass repr printed the text and every array (11,000 characters for 1,300)
        text = self.text if len(self.text) <= 24 else self.text[:23] + "…"
        return (
            f"NeuronRun(model={self.model_name!r}, {self.arch} {self.layers} x {self.hidden}, "
            f"{len(self):,} characters {text!r}, values {', '.join(self.values)} "
            f"[layer, character, unit], top {self.top_ids.shape[-1]} next characters)"
        )

    @property
    def chars(self) -> list[str]:
        return [self.vocab[i] for i in self.ids]

    @property
    def skipped_chars(self) -> list[str]:
        return sorted({self.text[i] for i in self.skipped})

    def skipped_note(self) -> str | None:
        """One line saying which characters were not read, or None."""
        if not self.skipped:
            return None
        shown = ", ".join(repr(c) for c in self.skipped_chars[:8])
        shown += " ..." if len(self.skipped_chars) > 8 else ""
        return i18n.text(
            "report.neurons.skipped-character-s-outside", n=len(self.skipped), shown=shown
        )

    def check(self, layer: int, unit: int, kind: str) -> None:
        """One readable line for a layer, unit or kind that does not exist."""
        kinds = KINDS[self.arch]
        if kind not in kinds:
            raise InvalidInputError(
                "error.neurons.no-kind",
                model=a_model(self.arch),
                kind=repr(kind),
                known=", ".join(kinds),
            )
        if kind not in self.values:
            raise InvalidInputError("error.neurons.not-recorded-ask", kind=repr(kind))
        checks.index(layer, self.layers, "layer")
        checks.index(unit, self.hidden, "unit")

    @checked_keywords
    def unit(self, layer: int, unit: int, kind: str | None = None) -> np.ndarray:
        """One unit's value after each character read: float32 [T]."""
        kind = kind or default_kind(self.arch)
        self.check(layer, unit, kind)
        return self.values[kind][layer, :, unit]

    def predictions(self, t: int) -> list[tuple[str, float]]:
        """The top next characters after the t-th character read, most likely first."""
        t = checks.position(len(self), t)
        return [
            (self.vocab[i], float(p))
            for i, p in zip(self.top_ids[t], self.top_probs[t], strict=True)
        ]

    def matrix(self, kinds: tuple[str, ...] | None = None):
        """Every unit of every layer as columns: (float32 [T, N], labels [(kind, layer, unit)])."""
        kinds = kinds or tuple(k for k in ("c", "h") if k in self.values)
        blocks, labels = [], []
        for kind in kinds:
            if kind not in self.values:
                raise InvalidInputError("error.neurons.not-recorded", kind=repr(kind))
            for layer in range(self.layers):
                blocks.append(self.values[kind][layer])
                labels += [(kind, layer, u) for u in range(self.hidden)]
        return np.concatenate(blocks, axis=1), labels

    @checked_keywords
    def view(self, layer: int, unit: int, kind: str | None = None) -> CellText:
        """Coloured text for one unit (``_repr_html_``, ``to_html``, ``save_png``)."""
        kind = kind or default_kind(self.arch)
        values = self.unit(layer, unit, kind)
        slots: list[int | None] = [None] * len(self.text)
        for t, i in enumerate(self.kept):
            slots[int(i)] = t
        title = unit_title(self.model_name, layer, unit, kind)
        predictions = [self.predictions(t) for t in range(len(self))]
        shades = shade(kind, values)
        return CellText(title, kind, self.text, slots, values, shades, predictions, i18n.language())


def unit_title(model_name: str, layer: int, unit: int, kind: str, lang: str | None = None) -> str:
    """ "model: layer 1, unit 3, cell state (c)" in ``lang`` (default: the current language)."""
    kind_name = i18n.text(KIND_NAMES[kind], lang)
    return i18n.text(
        "report.neurons.layer-unit",
        lang,
        model=model_name,
        layer=layer,
        unit=unit,
        kind_name=kind_name,
        kind=kind,
    )


def char_vocab(model) -> tuple[str, ...]:
    """The characters a char model reads (one token each), or a readable refusal."""
    if not model.capabilities.activations:
        raise InvalidInputError("error.load.not-char-model", name=str(model.name))
    chars = getattr(model.tokenizer, "chars", None)
    if chars is None:
        raise InvalidInputError("error.neurons.no-chars", name=str(model.name))
    return tuple(chars)


@checked_keywords
def neuron_activations(
    model,
    text: str,
    *,
    kinds: tuple[str, ...] | None = None,
    top_k: int = TOP_K,
    chunk: int = CHUNK,
) -> NeuronRun:
    """Run ``model`` (an ``RNNLanguageModel``) over ``text`` through its stepwise cell and keep
    ``kinds`` (default: all of the architecture's) for every unit of every layer, plus the
    top-k next characters after each character."""
    vocab = char_vocab(model)
    arch, cfg = model.capabilities.family, model.config
    kinds = KINDS[arch] if kinds is None else tuple(dict.fromkeys(kinds))
    bad = [k for k in kinds if k not in KINDS[arch]]
    if bad:
        raise InvalidInputError(
            "error.neurons.no-kind",
            model=a_model(arch),
            kind=repr(bad[0]),
            known=", ".join(KINDS[arch]),
        )
    if not isinstance(text, str):
        raise InvalidInputError("error.neurons.text-type", type=type(text).__name__)
    if not text:
        raise InvalidInputError("error.neurons.empty-text")
    index = {ch: i for i, ch in enumerate(vocab)}
    kept = [t for t, ch in enumerate(text) if ch in index]
    if not kept:
        raise InvalidInputError("error.neurons.no-known-char")
    skipped = [t for t, ch in enumerate(text) if ch not in index]
    ids = np.array([index[text[t]] for t in kept], dtype=np.int64)
    k = max(1, min(top_k, len(vocab)))

    parts: dict[str, list[np.ndarray]] = {kind: [] for kind in kinds}
    tops, top_p, logps = [], [], []
    state = None
    for start in range(0, len(ids), chunk):
        with one_thread():
            logits, records, state = model.net.trace(ids[start : start + chunk].tolist(), state)
        for kind in kinds:
            parts[kind].append(np.stack([_value(r, kind) for r in records]))
        logp = torch.log_softmax(logits.float(), dim=-1)
        p, i = logp.exp().topk(k, dim=-1)
        tops.append(i.numpy())
        top_p.append(p.numpy())
        logps.append(logp.numpy())

    logp = np.concatenate(logps)
    next_probs = np.full(len(ids), np.nan, dtype=np.float32)
    next_probs[:-1] = np.exp(logp[np.arange(len(ids) - 1), ids[1:]])
    return NeuronRun(
        model_name=model.name,
        arch=arch,
        layers=cfg.layers,
        hidden=cfg.hidden,
        text=text,
        kept=np.array(kept, dtype=np.int64),
        ids=ids,
        values={kind: np.concatenate(v, axis=1) for kind, v in parts.items()},
        top_ids=np.concatenate(tops),
        top_probs=np.concatenate(top_p).astype(np.float32),
        next_probs=next_probs,
        vocab=vocab,
        skipped=skipped,
        corpus=trained_on(model),
    )


@contextmanager
def one_thread():
    """The stepwise cell runs thousands of tiny matrix products: waking a thread pool for
    each costs more than the product (30x slower on a busy 2-core machine), so use one."""
    before = torch.get_num_threads()
    if before > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before > 1:
            torch.set_num_threads(before)


def _value(record, kind: str) -> np.ndarray:
    tensor = record.h if kind == "h" else record.c if kind == "c" else record.gates[kind]
    return tensor.float().numpy().astype(np.float32, copy=False)


def parse_cell(spec: str) -> tuple[int, int]:
    """'1:42' -> (layer 1, unit 42)."""
    layer, sep, unit = str(spec).partition(":")
    if not sep or not layer.strip().isdigit() or not unit.strip().isdigit():
        raise InvalidInputError("error.neurons.cell-spec", spec=f"{spec!r:.40}")
    return int(layer), int(unit)
