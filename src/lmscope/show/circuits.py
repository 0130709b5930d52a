"""The circuits views (issue 37) in a notebook: induction heads, activation patching and direct
logit attribution, run by ``lmscope.circuits`` in the kernel and answered as the web API answers
``/api/circuits/...`` (the same ``lmscope.web.circuits`` views of the same results), so the widget
draws them with the Circuits page's own ``circuits_views.js``."""

from __future__ import annotations

from lmscope.circuits import attribute, induction_scores, patch
from lmscope.explain.facts import model_facts
from lmscope.interpret.circuits.common import transformer
from lmscope.show import circuit_snapshot as snap
from lmscope.show.answers import NoAnswers, Routes, answered
from lmscope.show.views import result_setup
from lmscope.web import circuits as c
from lmscope.web.schemas import circuits as s


class InductionAnswers:
    """A head's pattern asked for by a click on the grid (``/api/circuits/induction`` with a
    layer and a head): read from the kept result of the same length and seed, as the server
    reads its cached one; another length or seed is run now."""

    def __init__(self, model, result):
        self.model = model
        self.results = {(result.length, result.seed): result}

    def induction(self, req: s.InductionRequest) -> s.InductionResponse:
        c.checked_head(self.model, req.layer, req.head)
        key = (req.length, req.seed)
        if key not in self.results:
            self.results[key] = induction_scores(self.model, length=req.length, seed=req.seed)
        return c.induction_view(self.results[key], req.layer, req.head)

    def answer(self, path: str, body: dict) -> dict:
        routes: Routes = {"/api/circuits/induction": (s.InductionRequest, self.induction)}
        return answered(routes, path, body)


def setup_of(view: str, model, result: dict) -> dict:
    facts = model_facts(model).model_dump(mode="json")
    return result_setup(view, facts, result, model.config.n_layer)


def induction(model, *, length: int = 50, seed: int = 0, layer=None, head=None):
    transformer(model)
    c.checked_head(model, layer, head)
    result = induction_scores(model, length=length, seed=seed)
    body = c.induction_view(result, layer, head).model_dump(mode="json")
    setup = setup_of("induction", model, body)
    return setup, InductionAnswers(model, result), snap.induction(setup, body)


def patching(model, clean, corrupt, right, wrong):
    result = patch(model, clean, corrupt, right, wrong)
    body = c.patch_view(result).model_dump(mode="json")
    setup = setup_of("patch", model, body)
    return setup, NoAnswers(), snap.patching(setup, body)


def attribution(model, text, token, versus=None, *, position: int = -1):
    result = attribute(model, text, token, versus, position=position)
    body = c.attribute_view(result).model_dump(mode="json")
    setup = setup_of("attribute", model, body)
    return setup, NoAnswers(), snap.attribution(setup, body)
