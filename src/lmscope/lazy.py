"""Names a package imports on first use (PEP 562), so that importing it stays light: ``import
lmscope`` and ``lmscope --help`` load no torch until a model is asked for."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_names(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: each name in ``where`` is imported
    from the module it maps to when first asked for, then kept among the package's globals,
    so later lookups find it there."""
    names = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        names[name] = value
        return value

    def __dir__() -> list[str]:
        # what tab completion offers: the public names (``__all__`` where the package lists
        # them) and Python's own dunders, not the package's imports (lazy_names, annotations)
        public = names.get("__all__") or [n for n in names if not n.startswith("_")]
        return sorted({*public, *where, *(n for n in names if n.startswith("__"))})

    return __getattr__, __dir__
