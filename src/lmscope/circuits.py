"""Circuits a learner can see, at the top of the package: ``lmscope.circuits`` is
``lmscope.interpret.circuits`` (where the experiments live, among the other analyses).

    import lmscope
    model = lmscope.load()
    heads = lmscope.circuits.induction_scores(model)        # or: from lmscope.circuits import ...
    patched = lmscope.circuits.patch(model, clean, corrupt, " Paris", " Rome")
    split = lmscope.circuits.attribute(model, clean, " Paris", versus=" Rome")

``docs/circuits.md`` says what each experiment can and cannot show."""

# the same names as lmscope.interpret.circuits, listed once there
from lmscope.interpret.circuits import *  # noqa: F403
from lmscope.interpret.circuits import __all__ as __all__
