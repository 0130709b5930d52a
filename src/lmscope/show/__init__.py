"""The page's views as notebook widgets, over a trace the notebook holds.

    import lmscope, lmscope.show
    model = lmscope.load()
    trace = model.trace("Data visualization empowers users to")
    trace                                   # a cell's value: the explainer (tokens, flow, steps)
    lmscope.show.attention(trace, layer=3, head=2)
    lmscope.show.step(trace, "mlp", layer=3)
    lmscope.show.induction(model)           # circuits: induction heads, patching, attribution

Each view is an anywidget whose JavaScript is the page's own modules and whose numbers the
kernel answers (no server). Where no widget runs, a static HTML snapshot of what it shows
first is shown instead. Needs the ``notebook`` extra (``pip install lmscope[notebook]``)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ablation",
    "attention",
    "attribution",
    "compare",
    "explainer",
    "flow",
    "induction",
    "lens",
    "neurons",
    "patching",
    "sampling",
    "step",
]


def __dir__() -> list[str]:  # tab completion: the views, not this module's imports
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})


def _widget(made: tuple[dict, Any, str]):
    from lmscope.show.widget import View  # anywidget: imported only when a view is made

    setup, answers, html = made
    return View(answers, setup, html)


def explainer(trace, model=None, *, position=None, layer=0, head=0, step="transformer"):
    """The explainer for a trace: its tokens, the flow view, the 20 steps (with layer, head and
    position controls), the logit lens, ablation and the sampling panel. ``model``: the
    trace's own by default."""
    from lmscope.show import views

    return _widget(
        views.explainer(trace, model, position=position, layer=layer, head=head, step=step)
    )


def flow(trace, model=None, *, position=None):
    """The flow view: one position's way through the model, from its token to the next one."""
    from lmscope.show import views

    return _widget(views.flow(trace, model, position=position))


def attention(trace_or_tokens, layer=0, head=0, pattern=None, *, model=None, position=None):
    """Attention as connections from a query to the keys it reads, for one layer's heads.

    ``attention(trace, layer, head)`` draws the trace's; ``attention(tokens, head=h,
    pattern=p)`` draws a ``[head, query, key]`` pattern from anywhere (a tensor or an array)
    over a list of token texts."""
    from lmscope.show import views

    if pattern is not None:
        return _widget(views.pattern_setup(list(trace_or_tokens), pattern, head, position))
    return _widget(views.attention(trace_or_tokens, layer, head, model, position=position))


def step(trace, key, *, layer=0, head=0, position=None, model=None):
    """One of the 20 steps (by key or number: ``"mlp"``, 13) at a layer, head and position."""
    from lmscope.show import views

    return _widget(views.step(trace, key, model, layer=layer, head=head, position=position))


def sampling(trace, model=None, *, position=None):
    """The next-token distribution with temperature, top-k, top-p and min-p to move."""
    from lmscope.show import views

    return _widget(views.sampling(trace, model, position=position))


def lens(trace, model=None, *, position=None):
    """The logit lens: every block's residual stream read out as next-token guesses."""
    from lmscope.show import views

    return _widget(views.lens(trace, model, position=position))


def ablation(trace, model=None, *, position=None):
    """Ablation: switch heads, attention or MLP outputs off (set to zero or to their mean) and
    see the next-token distribution move; every head's pattern on the grid."""
    from lmscope.show import views

    return _widget(views.ablation(trace, model, position=position))


# -- circuits (issue 37): run by lmscope.circuits in the kernel, drawn as the Circuits page draws


def induction(model, *, length=50, seed=0, layer=None, head=None):
    """Induction and previous-token heads on ``length`` random tokens repeated once: the two
    layers x heads grids, the loss at each position, and one head's attention pattern (the top
    induction head, or ``layer``/``head``; a click on the grid shows another)."""
    from lmscope.show import circuits

    return _widget(circuits.induction(model, length=length, seed=seed, layer=layer, head=head))


def patching(model, clean, corrupt, right, wrong):
    """Activation patching: the fraction of the logit difference ``right`` - ``wrong`` each
    clean activation restores in the corrupted run (residual stream, heads, MLPs)."""
    from lmscope.show import circuits

    return _widget(circuits.patching(model, clean, corrupt, right, wrong))


def attribution(model, text, token, versus=None, *, position=-1):
    """Direct logit attribution: the logit of ``token`` (minus ``versus``'s) after
    ``position`` split into what the embedding, every head and every MLP wrote."""
    from lmscope.show import circuits

    return _widget(circuits.attribution(model, text, token, versus, position=position))


# -- char-RNN neurons: /rnn's view of one unit over a text


def neurons(run_or_model, text=None, *, layer=0, unit=0, kind=None):
    """A char-RNN unit's value after each character of a text (the text coloured by it), its
    gates over time and, at a character, the next characters predicted; the layer, unit and
    kind can be changed in the widget. ``run_or_model``: a run from
    ``lmscope.neuron_activations`` or a char-RNN with ``text``."""
    from lmscope.show import neuron_view

    return _widget(neuron_view.neurons(run_or_model, text, layer=layer, unit=unit, kind=kind))


# -- two models on one text


def compare(model_a, model_b=None, text=None):
    """Two models on one text, as the page's compare view: each token (or character, where
    their tokenizers differ) coloured by A's loss, B's loss and B − A. ``model_a`` may also be
    a ``Comparison`` from ``lmscope.interpret.compare.compare``."""
    from lmscope.show import compare_view

    return _widget(compare_view.compare_models(model_a, model_b, text))
