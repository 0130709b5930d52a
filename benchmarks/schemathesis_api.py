"""Schemathesis against ``lmscope serve`` on loopback: every check, positive and negative data,
the examples, coverage, fuzzing and stateful phases, within a time budget.

    python -m benchmarks.schemathesis_api [--budget 60] [--json]

The served model is a small random GPT-2 (2 layers, 4 heads, d_model 64, GPT-2's vocabulary,
128 positions), also offered for comparison; a small char-LSTM (with a corpus name, so the
cell finder reads a corpus sample) serves the /rnn routes. ``tests/web/test_schemathesis.py``
runs it for a minute in CI; ``bench_fuzz`` runs it longer for BENCHMARKS.md. The run itself
is ``lmscope.testing.schemathesis_api``; this is its command line.

What the schema cannot say is answered 400 (it depends on the model, or on two fields at
once: ``lmscope.testing.schemathesis_api.MODEL_DEPENDENT`` lists it), so
``positive_data_acceptance`` expects 200, 400 or 404.
"""

from __future__ import annotations

import argparse
import json
import sys

from lmscope.testing.schemathesis_api import run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=60, help="seconds for schemathesis")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.budget, args.seed)
    print(json.dumps(result, indent=2) if args.json else result)
    return 0 if result["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
