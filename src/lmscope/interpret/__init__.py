"""Research views on a model's real activations: logit lens and ablations (more to come:
neuron activations, the interpretable-cell finder, gradient flow)."""

from lmscope.interpret.ablation import Ablation, AblationEffect, ablation_effect, parse_ablations
from lmscope.interpret.lens import LogitLens, logit_lens

__all__ = [
    "Ablation",
    "AblationEffect",
    "LogitLens",
    "ablation_effect",
    "logit_lens",
    "parse_ablations",
]
