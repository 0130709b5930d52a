"""Two models on one text in a notebook, as the page's compare view shows them: each unit (token,
or character where their tokenizers differ) coloured by each model's loss, and B − A. The
numbers are ``lmscope.compare``'s, sent as /api/compare sends them
(``lmscope.web.interpret.comparison_view``) and drawn with the page's own ``compare.js``; the
static snapshot is the library's own coloured rows (``Comparison``'s HTML)."""

from __future__ import annotations

from lmscope.errors import InvalidInputError
from lmscope.i18n import text as say
from lmscope.interpret.compare import Comparison, compare, html_fragment
from lmscope.show.answers import NoAnswers
from lmscope.show.views import result_setup
from lmscope.web.interpret import comparison_view


def comparison_of(a, b, text) -> Comparison:
    """The comparison given, or the two models' on ``text``."""
    if isinstance(a, Comparison):
        return a
    if b is None or text is None:
        raise InvalidInputError("error.show.compare-needs")
    return compare(a, b, text)


def compare_models(a, b=None, text=None):
    c = comparison_of(a, b, text)
    body = comparison_view(c).model_dump(mode="json")
    setup = result_setup("compare", {"name": " / ".join(c.names)}, body)
    html = html_fragment(c, lambda message_id, **values: say(message_id, **values))
    return setup, NoAnswers(), f'<div class="lmscope-snapshot" data-view="compare">{html}</div>'
