"""The kernel's answers to what a widget asks: the page's views post ``/api/flow``,
``/api/step``, ``/api/attention/lines``... and in a notebook the same requests come here, over
the widget's messages, instead of to a server. Each is checked with the web API's own request
model and answered by the same explain function from the trace the notebook holds, so a widget
shows exactly what the page and ``lmscope explain --json`` show for it: no server, no second
model in memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from lmscope.engine import checks
from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS_BY_KEY, find_step
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.explain.attention import attention_view, window
from lmscope.explain.block import layer_view
from lmscope.explain.catalogue import probe_names
from lmscope.explain.embedding import embedding_view
from lmscope.explain.logits import final_view, pool_view, position_logits
from lmscope.explain.neighbours import neighbours_view
from lmscope.explain.pictures import attention_lines, flow_view
from lmscope.explain.step_data import StepContext, build
from lmscope.explain.tokens import explain_ids, tokenizer_view
from lmscope.web import schemas
from lmscope.web.interpret import LENS_LEAD, ablation_view, canonical, heads_view, lens_view
from lmscope.web.schemas import interpret as interpret_schemas
from lmscope.web.schemas import pictures as picture_schemas
from lmscope.web.schemas.steps import StepRequest, StepResponse

# a request path, the web API's model of its body, and what answers it
Routes = dict[str, tuple[type[BaseModel], Callable[[Any], BaseModel]]]


class Answers:
    """One model and the traces a widget reads (the notebook's own first), answering the
    page's requests by path."""

    def __init__(self, model, trace: Trace):
        self.model = model
        self.traces: dict[tuple[int, ...], Trace] = {tuple(trace.ids): trace}
        self.routes: Routes = {
            "/api/flow": (picture_schemas.FlowRequest, self.flow),
            "/api/attention/lines": (picture_schemas.LinesRequest, self.lines),
            "/api/neighbours": (picture_schemas.NeighboursRequest, self.neighbours),
            "/api/step": (StepRequest, self.step),
            "/api/tokenizer": (schemas.PositionRequest, self.tokenizer),
            "/api/embedding": (schemas.PositionRequest, self.embedding),
            "/api/layer": (schemas.LayerRequest, self.layer),
            "/api/attention": (schemas.AttentionRequest, self.attention),
            "/api/final": (schemas.PositionRequest, self.final),
            "/api/pool": (schemas.PoolRequest, self.pool),
            "/api/lens": (interpret_schemas.LensRequest, self.lens),
            "/api/heads": (interpret_schemas.HeadsRequest, self.heads),
            "/api/ablate": (interpret_schemas.AblateRequest, self.ablate),
        }

    # -- the one entry -----------------------------------------------------------------------

    def answer(self, path: str, body: dict) -> dict:
        return answered(self.routes, path, body)

    # -- what each request reads ---------------------------------------------------------------

    def trace(self, ids) -> Trace:
        """The trace of ``ids``: the notebook's, or (other ids: a position's generated tokens)
        one traced now and kept."""
        key = tuple(self.model.check_ids(list(ids)))
        if key not in self.traces:
            self.traces[key] = self.model.trace(list(key))
        return self.traces[key]

    def at(self, req) -> tuple[Trace, int]:
        trace = self.trace(req.ids)
        return trace, checks.position(len(trace), getattr(req, "position", None))

    def layer_of(self, req) -> int:
        return checks.layer(self.model.config, req.layer)

    def head_of(self, req) -> int:
        return checks.head(self.model.config, req.head)

    # -- the routes ----------------------------------------------------------------------------

    def flow(self, req):
        trace, position = self.at(req)
        logits = position_logits(self.model, trace, position)
        return flow_view(self.model, trace, position, logits)

    def lines(self, req):
        trace, position = self.at(req)
        return attention_lines(self.model, trace, self.layer_of(req), position, req.start)

    def neighbours(self, req):
        trace, position = self.at(req)
        return neighbours_view(self.model, trace.ids[position], position, req.k)

    def step(self, req):
        try:
            key = find_step(req.key).key
        except KeyError:
            raise InvalidInputError("error.web.no-such-step", key=repr(req.key)) from None
        trace, position = self.at(req)
        layer, head = self.layer_of(req), self.head_of(req)
        family = self.model.capabilities.family
        params = SamplingParams(**req.sampling.model_dump())
        context = StepContext(self.model, trace, layer, head, position, params, req.norm)
        return StepResponse(
            number=STEPS_BY_KEY[key].number,
            key=key,
            family=family,
            probes=probe_names(key, family, layer),
            data=cast(Any, build(key, context)),  # the step's own model, as /api/step
        )

    def tokenizer(self, req):
        trace, position = self.at(req)
        return tokenizer_view(self.model, trace, position, explain_ids(self.model, trace.ids))

    def embedding(self, req):
        trace, position = self.at(req)
        return embedding_view(self.model, trace, position)

    def layer(self, req):
        trace, position = self.at(req)
        return layer_view(self.model, trace, self.layer_of(req), position)

    def attention(self, req):
        trace, position = self.at(req)
        return attention_view(trace, self.layer_of(req), self.head_of(req), position, req.start)

    def final(self, req):
        trace, position = self.at(req)
        return final_view(self.model, trace, position, position_logits(self.model, trace, position))

    def pool(self, req):
        trace, position = self.at(req)
        params = SamplingParams(**req.sampling.model_dump())
        logits = position_logits(self.model, trace, position)
        return pool_view(self.model, logits, position, params)

    def lens(self, req):
        trace, position = self.at(req)
        start, size = window(len(trace), position, req.start, req.size, LENS_LEAD)
        return lens_view(self.model, trace, start, size, req.k)

    def heads(self, req):
        trace, position = self.at(req)
        return heads_view([trace] * self.model.config.n_layer, position, req.size)

    def ablate(self, req):
        trace, position = self.at(req)
        specs = canonical(req.ablate, self.model.config)
        return ablation_view(self.model, trace.ids, specs, req.mode, position, req.k)


def answered(routes: Routes, path: str, body: dict) -> dict:
    """A request answered by its route: ``{"ok": true, "data": ...}`` (the API's JSON body) or
    ``{"ok": false, "code", "params", "error"}`` (its error body: the catalog id, its values
    and the line)."""
    route = routes.get(path)
    if route is None:
        return _error(InvalidInputError("error.show.no-such-request", path=repr(path)))
    request_model, fn = route
    try:
        request = request_model.model_validate(body)
        return {"ok": True, "data": fn(request).model_dump(mode="json")}
    except LmscopeError as err:
        return _error(err)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return _error(InvalidInputError("error.show.bad-request", where=where, why=first["msg"]))


class NoAnswers:
    """A view that asks nothing after it is drawn (patching, attribution, compare)."""

    def answer(self, path: str, body: dict) -> dict:
        return answered({}, path, body)


def _error(err: LmscopeError) -> dict:
    return {"ok": False, "code": err.code, "params": _plain(err.values), "error": str(err)}


def _plain(values: dict) -> dict:
    """An error's values as JSON: a nested message said in the current language."""
    return {k: v if isinstance(v, (int, float, str, bool)) else str(v) for k, v in values.items()}
