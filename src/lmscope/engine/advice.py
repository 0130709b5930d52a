"""The advice that ends some of the engine's errors, named here so that a front door without
the Python argument it mentions (the CLI, the JSON API) can put its own words in its place.

No torch: the CLI reads this while it reports an error.
"""

from __future__ import annotations

import re

# a prompt longer than the context: ``truncate=True`` keeps its last ``limit`` tokens
TRUNCATE = ". Shorten it or use truncate to keep the last {limit:,}"
TRUNCATE_PATTERN = re.compile(r"\. Shorten it or use truncate to keep the last ([\d,]+)$")

# a full trace over the token limit (LMSCOPE_MAX_TRACE_TOKENS)
TRACE_LIMIT = (
    "Trace fewer layers or probes (layers=, names=), or raise the limit with "
    "LMSCOPE_MAX_TRACE_TOKENS"
)
