"""``lmscope --help`` stays light: building the parser imports no torch, numpy or matplotlib."""

from __future__ import annotations

import subprocess
import sys

import pytest

# The entry point in pyproject's [project.scripts] is lmscope.cli:main.
SCRIPT = """
import sys
import lmscope.cli
try:
    lmscope.cli.main(["--help"])
except SystemExit:
    pass
heavy = sorted(m for m in ("torch", "numpy", "matplotlib") if m in sys.modules)
print("HEAVY:" + ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.slow
def test_help_imports_no_heavy_module():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, check=True
    )
    assert "usage: lmscope" in done.stdout
    assert "HEAVY:\n" in done.stderr, done.stderr


@pytest.mark.slow
def test_explain_help_imports_no_torch():
    """A command's own --help too: explain's renderers (the step data, torch) load in run."""
    script = SCRIPT.replace('["--help"]', '["explain", "--help"]')
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert "HEAVY:\n" in done.stderr, done.stderr
