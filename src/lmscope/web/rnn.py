"""What the char-RNN page (``/rnn``, ``web.routers.rnn``) shows: one unit's value on a text,
its gates, the top-5 next characters, and the facts of each served char model.

Every number comes from ``lmscope.interpret.neurons`` and ``cell_finder``, the same functions
the CLI and the Python API use.
"""

from __future__ import annotations

from lmscope.i18n import text
from lmscope.interpret.features import (
    bundled_corpus_of,
    feature_set_for,
    trained_on,
    validation_text,
)
from lmscope.interpret.neurons import GATE_KINDS, KINDS, NeuronRun, default_kind
from lmscope.web.schemas import rnn as s

CORPUS_CHARS = 8000  # the finder's default text: this much of the training corpus


def corpus_sample(model, chars: int = CORPUS_CHARS) -> tuple[str, str] | None:
    """(text, label): the start of the validation split of the corpus the model was trained
    on, when that is a bundled corpus; else None."""
    name = bundled_corpus_of(model)
    if name is None:
        return None
    # from a line start (a code corpus: a file's start), so line positions are whole
    return validation_text(name, chars), text("report.neurons.validation-split", corpus=name)


def model_timeline(model) -> dict | None:
    """The sample timeline kept in the model's folder (a shipped model's or a trained one's)."""
    from lmscope.train import timeline

    folder = getattr(model, "folder", None)
    source = getattr(model, "source", "")
    if folder is None and isinstance(source, str) and source:  # a model made from a path
        folder = timeline.folder_of(source)
    return timeline.read(folder) if folder is not None else None


def model_facts(name: str, model) -> s.RNNModelFacts:
    c = model.config
    return s.RNNModelFacts(
        name=name,
        arch=c.cell,
        **{size: getattr(c, size) for size in ("layers", "hidden", "embed", "vocab_size")},
        n_params=model.net.num_params(),
        kinds=list(KINDS[c.cell]),
        gates=list(GATE_KINDS[c.cell]),
        default_kind=default_kind(c.cell),
        corpus=trained_on(model),
        features=feature_set_for(trained_on(model)),
    )


def run_bytes(run: NeuronRun) -> int:
    """What a stepwise run holds in memory: every value of every unit after each character."""
    arrays = [*run.values.values(), run.kept, run.ids, run.top_ids, run.top_probs, run.next_probs]
    return sum(a.nbytes for a in arrays) + 4 * len(run.text)


def activations_view(
    name: str, run: NeuronRun, layer: int, unit: int, kind: str
) -> s.ActivationsResponse:
    values = run.unit(layer, unit, kind)  # one readable line for a bad layer, unit or kind
    slots: list[int | None] = [None] * len(run.text)
    for t, i in enumerate(run.kept):
        slots[int(i)] = t
    gates = {g: run.unit(layer, unit, g) for g in GATE_KINDS[run.arch]}
    return s.ActivationsResponse(
        model=name,
        layer=layer,
        unit=unit,
        kind=kind,
        text=run.text,
        slots=slots,
        values=_rounded(values),
        gates={g: _rounded(v) for g, v in gates.items()},
        top=[
            [s.Prediction(char=c, prob=round(p, 5)) for c, p in run.predictions(t)]
            for t in range(len(run))
        ],
        next_prob=[None if p != p else round(float(p), 5) for p in run.next_probs],
        skipped=run.skipped_chars,
        note=run.skipped_note(),
    )


def _rounded(values) -> list[float]:
    return [round(float(v), 5) for v in values]
