"""Research views on a model's real activations: logit lens and ablations (GPTs); for char
RNN/LSTM/GRUs, neuron activations (``neurons``, coloured text in ``cell_views``) and the
interpretable-cell finder (``features``, ``cell_finder``); gradient flow through time
(``gradient_flow``)."""

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
