"""The char-RNN page (``/rnn``) and its API (``/api/rnn/...``): one unit's value on a text,
its gates, the top-5 next characters, the interpretable-cell finder, and sampling.

The server holds the char models it was started with (``lmscope serve --rnn MODEL``); a
request picks one by name. The stepwise run over a text keeps every gate of every unit, so
it stays on the server (a small LRU of recent texts) and each answer carries only the unit
the page shows. Every number comes from ``lmscope.interpret.neurons`` and ``cell_finder``,
the same functions the CLI and the Python API use.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse

from lmscope.errors import InvalidInputError
from lmscope.interpret.cell_finder import find_cells
from lmscope.interpret.neurons import (
    GATE_KINDS,
    KINDS,
    NeuronRun,
    a_model,
    default_kind,
    neuron_activations,
)
from lmscope.web import rnn_schemas as s

RUNS_KEPT = 3  # recent texts whose full activations stay in memory
REPORTS_KEPT = 8
CORPUS_CHARS = 8000  # the finder's default text: this much of the training corpus


def named_models(models: Sequence) -> dict[str, object]:
    """Name -> char model; a repeated name gets " (2)", " (3)"..."""
    named: dict[str, object] = {}
    for m in models:
        label, n = m.name, 1
        while label in named:
            n += 1
            label = f"{m.name} ({n})"
        named[label] = m
    return named


class _LRU:
    def __init__(self, size: int):
        self.size, self.items = size, OrderedDict()

    def get(self, key, make: Callable):
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


def corpus_sample(model, chars: int = CORPUS_CHARS) -> tuple[str, str] | None:
    """(text, label): the start of the validation split of the corpus the model was trained
    on, when that is a bundled corpus; else None."""
    from lmscope.data import known_corpora, load_corpus

    name = (model.meta.get("training") or {}).get("corpus")
    if name not in known_corpora():
        return None
    val = load_corpus(name).split(0.1)[1]
    start = val.find("\n") + 1  # from a line start, so line positions are whole
    return val[start : start + chars], f"{name} (validation split, {chars:,} characters)"


def model_facts(name: str, model) -> dict:
    c = model.config
    sample = (model.meta.get("training") or {}).get("corpus")
    return {
        "name": name,
        "arch": c.cell,
        "layers": c.layers,
        "hidden": c.hidden,
        "embed": c.embed,
        "vocab_size": c.vocab_size,
        "n_params": model.net.num_params(),
        "kinds": list(KINDS[c.cell]),
        "gates": list(GATE_KINDS[c.cell]),
        "default_kind": default_kind(c.cell),
        "corpus": sample,
    }


def activations_view(run: NeuronRun, layer: int, unit: int, kind: str) -> dict:
    values = run.unit(layer, unit, kind)  # one readable line for a bad layer, unit or kind
    slots: list[int | None] = [None] * len(run.text)
    for t, i in enumerate(run.kept):
        slots[int(i)] = t
    gates = {g: run.unit(layer, unit, g) for g in GATE_KINDS[run.arch]}
    return {
        "layer": layer,
        "unit": unit,
        "kind": kind,
        "text": run.text,
        "slots": slots,
        "values": _rounded(values),
        "gates": {g: _rounded(v) for g, v in gates.items()},
        "top": [
            [{"char": c, "prob": round(p, 5)} for c, p in run.predictions(t)]
            for t in range(len(run))
        ],
        "next_prob": [None if p != p else round(float(p), 5) for p in run.next_probs],
        "skipped": run.skipped_chars,
        "note": run.skipped_note(),
    }


def _rounded(values) -> list[float]:
    return [round(float(v), 5) for v in values]


def register(app: FastAPI, models: Sequence, errors: dict) -> None:
    """Add the /rnn page and the /api/rnn endpoints for ``models`` (char RNN/LSTM/GRUs)."""
    from lmscope.web.app import STATIC

    served = named_models(models)
    app.state.rnn = served
    lock = threading.Lock()  # one stepwise run at a time: they are CPU-bound
    runs, reports = _LRU(RUNS_KEPT), _LRU(REPORTS_KEPT)
    router = APIRouter(prefix="/api/rnn", tags=["rnn"])

    def pick(name: str | None):
        if not served:
            raise InvalidInputError(
                "this server has no char-RNN/LSTM/GRU; start it with lmscope serve --rnn MODEL"
            )
        if name is None:
            name = next(iter(served))
        model = served.get(name)
        if model is None:
            offered = ", ".join(repr(n) for n in served)
            raise InvalidInputError(f"model {name!r} is not served here; choose one of {offered}")
        return name, model

    def run_of(name: str, model, text: str) -> NeuronRun:
        def make():
            with lock:
                return neuron_activations(model, text)

        return runs.get((name, text), make)

    @router.get("/models", response_model=s.RNNModels)
    def rnn_models():
        """The char models this server was started with (``lmscope serve --rnn``)."""
        return {"models": [model_facts(n, m) for n, m in served.items()]}

    @router.post("/activations", response_model=s.ActivationsResponse, responses=errors)
    def activations(req: s.ActivationsRequest):
        """One unit's value after each character of the text (h, c or a gate), the unit's
        gates (LSTM i f o, GRU r z), and the top-5 next characters after each character.
        Characters outside the vocabulary are skipped and listed."""
        name, model = pick(req.model)
        kind = req.kind or default_kind(model.arch)
        if kind not in KINDS[model.arch]:
            raise InvalidInputError(
                f"{a_model(model.arch)} has no {kind!r} values; use one of "
                f"{', '.join(KINDS[model.arch])}"
            )
        c = model.config
        if req.layer >= c.layers:
            raise InvalidInputError(
                f"layer {req.layer} does not exist; this model has layers 0..{c.layers - 1}"
            )
        if req.unit >= c.hidden:
            raise InvalidInputError(
                f"unit {req.unit} does not exist; each layer has units 0..{c.hidden - 1}"
            )
        run = run_of(name, model, req.text)
        return {"model": name, **activations_view(run, req.layer, req.unit, kind)}

    @router.post("/cells", response_model=s.CellsResponse, responses=errors)
    def cells(req: s.CellsRequest):
        """The interpretable-cell finder: for each feature (inside quotes, position in line,
        bracket depth, URL, indentation, comment, word start), the best units, chosen on the
        first half of the text and scored on the held-out second half."""
        name, model = pick(req.model)
        if req.text is not None:
            if len(req.text) < s.MIN_FIND_TEXT:
                raise InvalidInputError(
                    f"the finder needs at least {s.MIN_FIND_TEXT} characters of text, got "
                    f"{len(req.text)}; paste more, or search the model's corpus sample"
                )
            text, source = req.text, "the text on the page"
        else:
            sample = corpus_sample(model)
            if sample is None:
                raise InvalidInputError(
                    f"{name} does not name a bundled training corpus; send a text of at least "
                    f"{s.MIN_FIND_TEXT} characters to search"
                )
            text, source = sample

        def make():
            kinds = ("c", "h") if model.arch == "lstm" else ("h",)
            with lock:
                run = neuron_activations(model, text, kinds=kinds)
            return find_cells(run, top=10, source=source)  # requests trim to their top

        report = reports.get((name, text), make).to_dict()
        for f in report["features"]:
            f["best"] = f["best"][: req.top]
        return {key: report[key] for key in s.CellsResponse.model_fields if key != "model"} | {
            "model": name
        }

    @router.post("/sample", response_model=s.SampleResponse, responses=errors)
    def sample(req: s.SampleRequest):
        """Sample characters after the prompt at a temperature (0: greedy); the same seed
        and settings give the same text."""
        import secrets

        from lmscope.engine.sampling import SamplingParams

        name, model = pick(req.model)
        seed = req.seed if req.seed is not None else secrets.randbits(52)
        params = SamplingParams(temperature=req.temperature, greedy=req.temperature == 0)
        with lock:
            pieces = [
                t.text
                for t in model.generate(req.prompt, req.n, params, seed=seed, skip_unknown=True)
            ]
        return {
            "model": name,
            "prompt": req.prompt,
            "sample": "".join(pieces),
            "seed": seed,
            "temperature": req.temperature,
        }

    app.include_router(router)

    @app.api_route("/rnn", methods=["GET", "HEAD"], include_in_schema=False)
    def rnn_page():
        return FileResponse(STATIC / "rnn.html")
