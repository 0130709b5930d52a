"""The web package stays readable: routes are small functions (no handler, closure or view over
80 lines), and every route module gets the served model from the one dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import lmscope.web

WEB = Path(lmscope.web.__file__).parent
LIMIT = 80


def test_no_function_in_the_web_package_is_over_80_lines():
    long = []
    for path in sorted(WEB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > LIMIT:
                    long.append(f"{path.relative_to(WEB)}:{node.lineno} {node.name} ({lines})")
    assert not long, long


def test_route_modules_use_the_one_dependency():
    for path in sorted((WEB / "routers").glob("*.py")):
        text = path.read_text("utf-8")
        if "@router." in text and path.name != "pages.py":
            assert "Serving" in text and "app.state" not in text, path.name
