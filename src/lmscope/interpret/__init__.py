"""Analyses of a loaded model's real activations; loading lives in ``lmscope.engine``,
training in ``lmscope.train``, experiments in ``lmscope.lab``.

Transformers: logit lens and ablations (``ablation``), two models' losses side by side
(``compare``). Char RNN/LSTM/GRUs: neuron activations (``neurons``, coloured text in
``cell_views``), the interpretable-cell finder (``features``, ``cell_finder``) and a quote cell
wired by hand to check it against (``planted``)."""

from lmscope.engine.lens import LogitLens, logit_lens
from lmscope.interpret.ablation import Ablation, AblationEffect, ablation_effect, parse_ablations

__all__ = [
    "Ablation",
    "AblationEffect",
    "LogitLens",
    "ablation_effect",
    "logit_lens",
    "parse_ablations",
]
