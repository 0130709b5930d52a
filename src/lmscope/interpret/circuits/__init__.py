"""Circuits a learner can see: which parts of a Transformer produce its answer.

- ``induction_scores``: induction and previous-token heads, on repeated random tokens;
- ``patch``: activation patching, a clean prompt's activations put into a corrupted run;
- ``attribute``: direct logit attribution, a logit split into what each part wrote.

``docs/circuits.md`` says what each can and cannot show, and the shape of each result's
``to_json()`` (what ``lmscope circuits ... --json`` prints)."""

from lmscope.interpret.circuits.attribution import Attribution, attribute
from lmscope.interpret.circuits.common import Grid
from lmscope.interpret.circuits.induction import InductionScores, induction_scores
from lmscope.interpret.circuits.patching import SITES, PatchResult, Site, patch

__all__ = [
    "SITES",
    "Attribution",
    "Grid",
    "InductionScores",
    "PatchResult",
    "Site",
    "attribute",
    "induction_scores",
    "patch",
]
