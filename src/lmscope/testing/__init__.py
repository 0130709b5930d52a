"""Tools to check a served lmscope, as ``numpy.testing`` and ``torch.testing`` are for theirs:
the harnesses that the tests run with small budgets and ``benchmarks/`` with large ones.

- ``lmscope.testing.fuzz``: the API fuzzer (requests generated from ``/openapi.json`` with
  hypothesis, and the contract every answer must keep);
- ``lmscope.testing.load``: a class of simulated learners against ``lmscope serve``;
- ``lmscope.testing.burst``: bursts of heavy requests at one server, cheap ones during them;
- ``lmscope.testing.schemathesis_api``: schemathesis against ``lmscope serve``;
- ``lmscope.testing.llama_cpp``: llama.cpp's tokenizer test files, and lmscope's ids on them.

The top layer of the package: nothing in lmscope imports it. Importing this package imports
nothing; the test extras each module needs (hypothesis, httpx, schemathesis) are imported by
that module only, so ``import lmscope`` never needs them.
"""
