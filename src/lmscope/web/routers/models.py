"""The models of this server and of this machine (``GET /api/models``), for the page's model
menu: those it explains, switched between with ``?model=``, and the others found on disk
(shipped, registry packages, the Hugging Face cache, Ollama, LM Studio), each with the command
that serves it or the reason lmscope cannot open it. The disk is read once, in the background
(``web.on_disk``): until then the answer says ``ready: false`` at once."""

from __future__ import annotations

from fastapi import APIRouter, Request

from lmscope.errors import LmscopeError
from lmscope.i18n import Message
from lmscope.models.rnn import CELLS
from lmscope.web.error_codes import request_language
from lmscope.web.on_disk import same_model, serve_command
from lmscope.web.schemas import models as s
from lmscope.web.served import ServingShared

router = APIRouter(tags=["model"])


def _problem(message: Message, lang: str) -> s.Problem:
    return s.Problem(id=message.id, said=message.render(lang))


def _said(error, lang: str) -> str:
    if isinstance(error, LmscopeError):
        return error.render(lang)
    return Message("error.web.stores-unreadable", why=str(error)).render(lang)


@router.get("/api/models", response_model=s.ModelsResponse)
def models(served: ServingShared, request: Request, lang: str | None = None):
    """The served models (the first is the default), and the other models on this machine:
    family, parameters, quantization, size, and the command that serves each beside these
    (or why it cannot open). ``lang`` (en, zh, pseudo; else ``Accept-Language``): the
    language of the reasons."""
    said_in = request_language(request.scope)
    shown = []
    for name, one in served.models.items():
        info = one.model.info()
        shown.append(
            s.ServedModel(
                name=name,
                model=info.name,
                family=info.family,
                n_params=info.n_params,
                n_layer=info.n_layer,
                default=one is served,
            )
        )
    found = served.on_disk.wait(0)
    if found is None:
        return s.ModelsResponse(served=shown, ready=False, error=None)
    specs = [one.spec for one in served.models.values()]
    rest = []
    for m in found:
        if m.problem is None and same_model(m, specs):
            continue
        char = m.family in CELLS  # a char model: the /rnn page shows it (--rnn)
        on_page = char and m.problem is None and m.name in served.rnn
        command = None
        if m.problem is None and not on_page:
            command = serve_command(specs, m.name, char=char)
        rest.append(
            s.DiskModel(
                **m.listed(),
                n_params=m.n_params,
                size_bytes=m.size,
                command=command,
                page="/rnn" if char else "/",
                on_page=on_page,
                problem=None if m.problem is None else _problem(m.problem, said_in),
            )
        )
    error, failed = served.on_disk.error, None
    if error is not None:  # a store that could not be read at all (each model's own is above)
        code = getattr(error, "code", None) or "error.web.stores-unreadable"
        failed = s.Problem(id=code, said=_said(error, said_in))
    return s.ModelsResponse(served=shown, ready=True, on_disk=rest, error=failed)
