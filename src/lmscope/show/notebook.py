"""A trace left as a notebook cell's value shows the explainer: the kernel's display formatter
is told, by the class's name, so registering it imports nothing (``import lmscope`` stays
light, torch unloaded until a model is asked for)."""

from __future__ import annotations

import importlib.util
import sys


def show_trace(trace):
    """The explainer's display data for a trace, or None (the trace's one-line repr) where it
    cannot be drawn: no anywidget, or a trace whose model is not known."""
    from lmscope.errors import LmscopeError
    from lmscope.show import explainer

    try:
        return explainer(trace)._repr_mimebundle_()
    except LmscopeError:
        return None


def register() -> bool:
    """In a running IPython kernel with anywidget installed: Trace values show the explainer."""
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None or importlib.util.find_spec("anywidget") is None:
        return False
    shell = ipython_module.get_ipython()
    if shell is None or not hasattr(shell, "kernel"):  # a terminal IPython has no widgets
        return False
    formatter = shell.display_formatter.mimebundle_formatter
    formatter.for_type_by_name("lmscope.engine.trace", "Trace", show_trace)
    return True
