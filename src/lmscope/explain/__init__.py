"""The explanation layer: a Trace -> typed data of the 20 steps, for the CLI and the web alike.

- ``catalogue``: the steps' titles and texts (English, Chinese), per architecture;
- ``step_data``: one pydantic model and builder per step; ``report``: a prompt's steps;
- views the web serves and the steps are built from: ``values`` (vectors, histograms),
  ``tokens``, ``embedding``, ``block`` (LayerNorms, Q/K/V, MLP, dropout), ``attention``,
  ``logits`` (exact client-side sampling, the candidate pool), ``summary`` (a whole prompt),
  ``facts`` (the model);
- ``numbers``: JSON-ready rounding. (The one check of a layer, head or position is
  ``lmscope.engine.checks``.)

The list of steps itself (keys, numbers, probes) is ``lmscope.engine.steps``.
"""
