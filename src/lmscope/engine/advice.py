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

# characters outside a character vocabulary: what tokenizers/chars.py ends its error with (the
# ground layer cannot import this module; a test keeps the two equal) ...
UNKNOWN_CHARS_TOKENIZER = "; rebuild it from text that has them, or use unknown='skip'"
# ... and what a model's encode says instead: unknown= is the tokenizer's constructor argument,
# which a loaded model's user no longer calls
UNKNOWN_CHARS = "; remove them from the text, or drop them with model.tokenizer.unknown = 'skip'"

# weights with NaN or infinity (models/state.py writes it, as above)
NONFINITE = ". Load it with allow_nonfinite=True to study a broken model anyway"

# a model without tokenizer files asked to read text (text_model.py): Python can pass ids
NO_TOKENIZER = "; pass token ids instead of text"
