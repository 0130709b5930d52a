"""Circuits a learner can see, at the top of the package: ``lmscope.circuits`` is
``lmscope.interpret.circuits`` (where the experiments live, among the other analyses).

    import lmscope
    model = lmscope.load()
    heads = lmscope.circuits.induction_scores(model)        # or: from lmscope.circuits import ...
    patched = lmscope.circuits.patch(model, clean, corrupt, " Paris", " Rome")
    split = lmscope.circuits.attribute(model, clean, " Paris", versus=" Rome")

``docs/circuits.md`` says what each experiment can and cannot show."""

from lmscope.interpret.circuits import (
    SITES,
    Attribution,
    Grid,
    InductionScores,
    PatchResult,
    Site,
    attribute,
    induction_scores,
    patch,
)

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
