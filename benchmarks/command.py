"""The command line a benchmark module runs alone with (``python -m benchmarks.bench_x``):
``--repeats``, ``--threads`` and ``--json``, then its section printed as BENCHMARKS.md shows it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable


def run_alone(about: str, run: Callable[..., dict], markdown: Callable[[dict], str], repeats: int):
    """Parse the options, call ``run(repeats, threads)`` and print its figures (JSON) or its
    section (markdown); ``about`` is the module's docstring."""
    parser = argparse.ArgumentParser(description=about.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.repeats, args.threads)
    print(json.dumps(result, indent=1) if args.json else markdown(result))
