"""The char-RNN neuron view in a notebook: one unit's value after each character of a text, its
gates and the next characters predicted, answered as the web API answers
``/api/rnn/activations`` (``lmscope.web.rnn.activations_view`` of the kernel's run) and drawn
with /rnn's own ``rnn_view.js``. Another layer, unit or kind is read from the same run."""

from __future__ import annotations

from lmscope.errors import InvalidInputError
from lmscope.interpret.neurons import GATE_KINDS, KINDS, NeuronRun, default_kind, neuron_activations
from lmscope.show.answers import Routes, answered
from lmscope.show.views import result_setup
from lmscope.web.rnn import activations_view
from lmscope.web.schemas import rnn as s


class NeuronAnswers:
    """``/api/rnn/activations`` for the run the widget shows (its text; any layer, unit, kind)."""

    def __init__(self, run: NeuronRun):
        self.run = run

    def activations(self, req: s.ActivationsRequest) -> s.ActivationsResponse:
        if req.text != self.run.text:
            raise InvalidInputError("error.show.neurons-other-text")
        kind = req.kind or default_kind(self.run.arch)
        return activations_view(self.run.model_name, self.run, req.layer, req.unit, kind)

    def answer(self, path: str, body: dict) -> dict:
        routes: Routes = {"/api/rnn/activations": (s.ActivationsRequest, self.activations)}
        return answered(routes, path, body)


def run_of(run_or_model, text: str | None) -> NeuronRun:
    """The run given, or the model's run over ``text``."""
    if isinstance(run_or_model, NeuronRun):
        return run_or_model
    if text is None:
        raise InvalidInputError("error.show.neurons-no-text")
    return neuron_activations(run_or_model, text)


def neurons(run_or_model, text=None, *, layer=0, unit=0, kind=None):
    run = run_of(run_or_model, text)
    kind = kind or default_kind(run.arch)
    body = activations_view(run.model_name, run, layer, unit, kind).model_dump(mode="json")
    # what the controls offer (the page's /api/rnn/models facts of the run's model)
    facts = {
        "name": run.model_name,
        "arch": run.arch,
        "layers": run.layers,
        "hidden": run.hidden,
        "kinds": list(KINDS[run.arch]),
        "gates": list(GATE_KINDS[run.arch]),
    }
    setup = result_setup("neurons", facts, body, run.layers)
    html = run.view(layer, unit, kind).to_html()
    return (
        setup,
        NeuronAnswers(run),
        f'<div class="lmscope-snapshot" data-view="neurons">{html}</div>',
    )
