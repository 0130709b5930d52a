"""Deprecated alias of ``lmscope.engine.sampling`` (kept for one release; see CHANGELOG.md)."""

from lmscope.engine.sampling import *  # noqa: F403
from lmscope.engine.sampling import __all__  # noqa: F401
