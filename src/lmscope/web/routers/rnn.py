"""The char-RNN page (``/rnn``) and its API (``/api/rnn/...``): one unit's value on a text,
its gates, the top-5 next characters, the interpretable-cell finder, and sampling.

The server holds the char models it was started with (``lmscope serve --rnn MODEL``); a
request picks one by name. The stepwise run over a text keeps every gate of every unit, so
it stays on the server (in the server's one cache) and each answer carries only the unit the
page shows.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from lmscope.engine import checks
from lmscope.engine.generation import generate
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError
from lmscope.i18n import Message
from lmscope.interpret.cell_finder import find_cells
from lmscope.interpret.neurons import KINDS, NeuronRun, default_kind, neuron_activations
from lmscope.web.errors import ERRORS
from lmscope.web.generation import fresh_seed
from lmscope.web.limits import arrival
from lmscope.web.pages import page
from lmscope.web.rnn import (
    activations_view,
    corpus_sample,
    model_facts,
    model_timeline,
    run_bytes,
)
from lmscope.web.schemas import rnn as s
from lmscope.web.served import Served, ServingShared, pick
from lmscope.web.work import Costs

router = APIRouter(tags=["rnn"])
REPORT_BYTES = 64 * 1024  # what a finder report holds, about


@router.api_route("/rnn", methods=["GET", "HEAD"], include_in_schema=False)
def rnn_page(request: Request):
    return page("rnn.html", request)


# 'an LSTM', 'a GRU', 'an RNN': what a message calls a model of each cell
A_MODEL = {
    "lstm": "error.web.part.an-lstm",
    "gru": "error.web.part.a-gru",
    "rnn": "error.web.part.an-rnn",
}


def _model(served: Served, name: str | None):
    return pick(
        served.rnn,
        name,
        none="error.web.no-rnn-model",
        unknown="error.web.rnn-model-not-served",
    )


async def _on_queue(served: Served, key: tuple, model, chars: int, compute):
    """``compute`` (value, bytes) as one job on the char models' work queue, or cached."""
    units = Costs.whole(model, chars)
    return await served.store.obtain(
        key, units, compute, queue=served.rnn_work, lock=served.rnn_lock
    )


async def _run(served: Served, name: str, model, text: str) -> NeuronRun:
    def compute():
        run = neuron_activations(model, text)
        return run, run_bytes(run)

    return (await _on_queue(served, ("rnn-run", name, text), model, len(text), compute))[0]


@router.get("/api/rnn/models", response_model=s.RNNModels)
def rnn_models(served: ServingShared):
    """The char models this server was started with (``lmscope serve --rnn``)."""
    return s.RNNModels(models=[model_facts(n, m) for n, m in served.rnn.items()])


@router.post("/api/rnn/activations", response_model=s.ActivationsResponse, responses=ERRORS)
async def activations(req: s.ActivationsRequest, served: ServingShared):
    """One unit's value after each character of the text (h, c or a gate), the unit's
    gates (LSTM i f o, GRU r z), and the top-5 next characters after each character.
    Characters outside the vocabulary are skipped and listed."""
    name, model = _model(served, req.model)
    kind = req.kind or default_kind(model.arch)
    if kind not in KINDS[model.arch]:
        raise InvalidInputError(
            "error.web.rnn-no-such-values",
            arch=Message(A_MODEL[model.arch]),
            kind=repr(kind),
            known=", ".join(KINDS[model.arch]),
        )
    checks.index(req.layer, model.config.layers, "layer")
    checks.index(req.unit, model.config.hidden, "unit")
    run = await _run(served, name, model, req.text)
    return await served.view(activations_view, name, run, req.layer, req.unit, kind)


def _finder_text(name: str, model, text: str | None) -> tuple[str, str]:
    """(text, where it came from) for the finder: the request's, or the corpus sample."""
    if text is not None:
        if len(text) < s.MIN_FIND_TEXT:
            raise InvalidInputError(
                "error.web.finder-text-too-short", need=s.MIN_FIND_TEXT, n=len(text)
            )
        return text, "the text on the page"
    sample = corpus_sample(model)
    if sample is None:
        raise InvalidInputError("error.web.finder-no-corpus", name=name, need=s.MIN_FIND_TEXT)
    return sample


@router.post("/api/rnn/cells", response_model=s.CellsResponse, responses=ERRORS)
async def cells(req: s.CellsRequest, served: ServingShared):
    """The interpretable-cell finder: for each feature (inside quotes, position in line,
    bracket depth, URL, indentation, comment, word start), the best units, chosen on the
    first half of the text and scored on the held-out second half."""
    name, model = _model(served, req.model)
    text, source = await served.view(_finder_text, name, model, req.text)

    def compute():
        kinds = ("c", "h") if model.arch == "lstm" else ("h",)
        run = neuron_activations(model, text, kinds=kinds)
        return find_cells(run, top=10, source=source), REPORT_BYTES  # requests trim to top

    report, _ = await _on_queue(served, ("rnn-cells", name, text), model, 2 * len(text), compute)
    body = report.to_dict()
    for f in body["features"]:
        f["best"] = f["best"][: req.top]
    fields = {key: body[key] for key in s.CellsResponse.model_fields if key != "model"}
    return s.CellsResponse(model=name, **fields)


@router.post("/api/rnn/sample", response_model=s.SampleResponse, responses=ERRORS)
async def sample(req: s.SampleRequest, served: ServingShared):
    """Sample characters after the prompt at a temperature (0: greedy); the same seed
    and settings give the same text."""
    name, model = _model(served, req.model)
    seed = req.seed if req.seed is not None else fresh_seed(52)  # a whole JS number
    params = SamplingParams(temperature=req.temperature, greedy=req.temperature == 0)

    def draw() -> str:
        with served.rnn_lock:
            tokens = generate(model, req.prompt, req.n, params, seed=seed, skip_unknown=True)
            return "".join(t.text for t in tokens)

    units = Costs.whole(model, len(req.prompt) + req.n)
    text = await served.rnn_work.run(None, units, draw, arrival())
    return s.SampleResponse(
        model=name, prompt=req.prompt, sample=text, seed=seed, temperature=req.temperature
    )


@router.get("/api/rnn/timeline", response_model=s.TimelineResponse, responses=ERRORS)
def rnn_timeline(served: ServingShared, model: str | None = None):
    """The samples the model kept over training (its folder's ``timeline.json``): Karpathy's
    War and Peace LSTM going from noise to spaced "words" to sentences, one seed throughout."""
    name, found = _model(served, model)
    data = model_timeline(found)
    if data is None:
        raise InvalidInputError("error.web.no-timeline", name=name)
    fields = {k: data.get(k) for k in ("arch", "corpus", "prime", "seed", "length")}
    return s.TimelineResponse(model=name, **fields, samples=data["samples"])
