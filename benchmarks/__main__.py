"""Rerun every benchmark and rewrite BENCHMARKS.md.

    python -m benchmarks                  # everything (tens of minutes on 2 cores)
    python -m benchmarks --quick          # a smoke run of everything, a few minutes
    python -m benchmarks --only load      # one benchmark (repeatable); the page is rebuilt
    python -m benchmarks --render         # rebuild the page from saved figures only
    python -m benchmarks --list

Figures go to ``benchmarks/results/NAME.json`` (``benchmarks/results/quick/`` with
``--quick``, whose page is ``benchmarks/results/quick/BENCHMARKS.md``, so a smoke run never
replaces the real figures). Exits 1 when a benchmark failed; the others' figures are kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # benchmarks never reach the hub
    from benchmarks import suite

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="short smoke versions")
    parser.add_argument(
        "--only",
        action="append",
        choices=[b.name for b in suite.BENCHMARKS],
        metavar="NAME",
        help="run only this benchmark (repeatable); see --list",
    )
    parser.add_argument("--render", action="store_true", help="only rebuild the page")
    parser.add_argument("--list", action="store_true", help="list the benchmarks")
    parser.add_argument("--results", type=Path, help="where figures are saved and read")
    parser.add_argument("--page", type=Path, help="the markdown page to write")
    args = parser.parse_args(argv)

    if args.list:
        for bench in suite.BENCHMARKS:
            print(f"{bench.name:<10} benchmarks/{bench.module}.py")
        return 0
    results = args.results or (suite.QUICK_RESULTS if args.quick else suite.RESULTS)
    page = args.page or (results / "BENCHMARKS.md" if args.quick else suite.PAGE)
    failed = {}
    if not args.render:
        names = args.only or [b.name for b in suite.BENCHMARKS]
        failed = suite.run_all(names, quick=args.quick, results=results, log=print)
    suite.write_page(results, page)
    print(f"wrote {page} from {results}")
    for name, error in failed.items():
        print(f"{name} failed: {error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
