"""The widget: an anywidget whose front end is the page's own views (``bundle.py``), whose
numbers are the kernel's (``answers.py``), and which shows a static snapshot where no widget
runs (``snapshot.py``)."""

from __future__ import annotations

import anywidget
import traitlets

from lmscope.show import bundle

# the function of lmscope.show that makes a view, where its name is not the view's
CALLED = {"patch": "patching", "attribute": "attribution"}


class View(anywidget.AnyWidget):
    """One of the page's views over a trace the notebook holds."""

    _esm = bundle.esm()
    _css = bundle.document_css()
    setup = traitlets.Dict().tag(sync=True)
    styles = traitlets.Unicode().tag(sync=True)

    def __init__(self, answers, setup: dict, snapshot: str):
        super().__init__(setup=setup, styles=bundle.styles())
        self.answers = answers
        self.snapshot = snapshot
        self.on_msg(self._answer)

    def __repr__(self) -> str:
        setup = self.setup
        name = setup["model"]["name"] or "pattern"
        if setup["trace"] is None:  # an experiment's result (circuits, neurons, compare)
            return f"lmscope.show.{CALLED.get(setup['view'], setup['view'])}({name})"
        return f"lmscope.show.{setup['view']}({name}, {len(setup['trace']['tokens'])} tokens)"

    def _answer(self, _widget, content, _buffers) -> None:
        """A view's request (``{"id", "path", "body"}``), answered with the same id."""
        if not isinstance(content, dict) or "id" not in content:
            return
        reply = self.answers.answer(str(content.get("path")), content.get("body") or {})
        self.send({"id": content["id"], **reply})

    def _repr_mimebundle_(self, **kwargs):
        shown = super()._repr_mimebundle_(**kwargs)
        if shown is None:
            return {"text/html": self.snapshot}
        data, metadata = shown
        data["text/html"] = self.snapshot
        return data, metadata

    def _repr_html_(self) -> str:
        return self.snapshot
