"""The circuits endpoints' work: the library's own experiments (``lmscope.interpret.circuits``)
on the served model, the page's bounds on them, and the ready-made prompt pairs.

Each answer is the library's ``to_json()``, so the page shows exactly what the Python API and
``lmscope circuits --json`` return. What can be refused is refused before the work is queued:
a prompt past the page's bounds, prompts of different token lengths, an answer that is not
one token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lmscope.engine import checks
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.interpret.circuits import Attribution, InductionScores, PatchResult
from lmscope.interpret.circuits.common import listed, pieces, token_id, transformer
from lmscope.interpret.circuits.patching import checked_pair
from lmscope.web.schemas import circuits as s
from lmscope.web.work import Costs


@dataclass(frozen=True)
class Example:
    """A clean/corrupted pair that shows something; its label is the catalog's
    ``page.circuits.example.<key>``. Checked on SmolLM2-135M-Instruct (logit difference
    right - wrong, clean and corrupted): capital +7.31/-6.02, opposite +11.42/-6.59, days
    +6.66/-4.87, eiffel +2.86/-8.70, ioi +5.03/-2.71."""

    key: str
    clean: str
    corrupt: str
    right: str
    wrong: str


EXAMPLES = (
    Example("capital", "The capital of France is", "The capital of Italy is", " Paris", " Rome"),
    Example("opposite", "The opposite of hot is", "The opposite of big is", " cold", " small"),
    Example(
        "days", "Monday, Tuesday, Wednesday,", "January, February, March,", " Thursday", " April"
    ),
    Example(
        "eiffel",
        "The Eiffel Tower is in the city of",
        "The Colosseum is in the city of",
        " Paris",
        " Rome",
    ),
    Example(
        "ioi",
        "When Mary and John went home, John gave a book to",
        "When Mary and John went home, Mary gave a book to",
        " Mary",
        " John",
    ),
)


def examples(model) -> s.CircuitExamples:
    """The examples that fit the served model: prompts of one token length within the page's
    bound, answers of one token each."""
    fitting = []
    tokenizer = getattr(model, "tokenizer", None)
    for e in EXAMPLES:
        if tokenizer is None:  # a model given ids only: no text to offer
            break
        try:
            clean, corrupt = model.encode(e.clean), model.encode(e.corrupt)
            answers = [tokenizer.encode(a) for a in (e.right, e.wrong)]
        except LmscopeError:  # characters a small vocabulary lacks: this one does not fit
            continue
        if len(clean) != len(corrupt) or len(clean) > s.MAX_PATCH_TOKENS:
            continue
        if any(len(a) != 1 for a in answers) or answers[0] == answers[1]:
            continue
        fitting.append(s.CircuitExample(**vars(e), tokens=len(clean)))
    return s.CircuitExamples(
        examples=fitting,
        max_patch_tokens=s.MAX_PATCH_TOKENS,
        max_attribute_tokens=s.MAX_ATTRIBUTE_TOKENS,
        max_induction_length=s.MAX_INDUCTION_LENGTH,
    )


# --- numbers as JSON carries them -------------------------------------------------------------


def finite(x):
    """A float, or None for NaN and the infinities (not JSON); lists and dicts element-wise."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, list):
        return [finite(v) for v in x]
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    return x


# --- induction ----------------------------------------------------------------------------


def induction_units(model, costs: Costs, length: int) -> float:
    bos = 1 if getattr(model.tokenizer, "add_bos", False) else 0
    n = 2 * length + bos
    return costs.forward(n) + costs.logits(n)


def induction_size(result: InductionScores) -> int:
    """Bytes the kept result holds (its attention patterns, mostly)."""
    return result.patterns.numel() * result.patterns.element_size() + 64 * len(result.ids)


def induction_view(
    result: InductionScores, layer: int | None, head: int | None
) -> s.InductionResponse:
    """The result and one head's pattern: the one asked for, else the top induction head."""
    n_layer, n_head = result.scores.shape
    if layer is None or head is None:
        best = int(result.scores.flatten().argmax())
        layer, head = (best // n_head, best % n_head) if layer is None else (layer, 0)
    pattern = result.pattern(layer, head)
    body = finite(result.to_json())
    body["pattern"] = [pattern[q, : q + 1].tolist() for q in range(pattern.shape[0])]
    return s.InductionResponse(**body, layer=layer, head=head)


def checked_head(model, layer: int | None, head: int | None) -> None:
    """A layer and a head the served model has (a head needs its layer)."""
    if layer is not None:
        checks.layer(model.config, layer)
    if head is not None:
        checks.head(model.config, head)


# --- activation patching ----------------------------------------------------------------------


@dataclass(frozen=True)
class PatchJob:
    clean: tuple[int, ...]
    corrupt: tuple[int, ...]
    right: int
    wrong: int


def patch_job(model, req: s.PatchRequest) -> PatchJob:
    """The request's prompts as ids and its answers as token ids, checked as ``patch`` checks
    them, and within the page's bound, before any model work is queued."""
    transformer(model)
    prompts = [model.encode(text) for text in (req.clean, req.corrupt)]
    longest = max(map(len, prompts))
    if longest > s.MAX_PATCH_TOKENS:
        raise InvalidInputError(
            "error.circuits.web.patch-too-long", n=longest, most=s.MAX_PATCH_TOKENS
        )
    clean, corrupt, right, wrong = checked_pair(model, *prompts, req.right, req.wrong)
    return PatchJob(tuple(clean), tuple(corrupt), right, wrong)


def patch_units(costs: Costs, n_head: int, t: int) -> float:
    """The two recorded runs, then every patched run from its layer on: T + n_head + 1 runs
    start at each layer, and a run from layer l runs n_layer - l blocks."""
    per_block = costs.forward(t) / costs.n_layer
    rows = t + n_head + 1
    blocks = rows * costs.n_layer * (costs.n_layer + 1) / 2
    return 2 * costs.forward(t) + blocks * per_block


def patch_view(result: PatchResult) -> s.PatchResponse:
    return s.PatchResponse(**finite(result.to_json()))


# --- direct logit attribution -----------------------------------------------------------------


@dataclass(frozen=True)
class AttributeJob:
    ids: tuple[int, ...]
    position: int
    token: int
    versus: int | None


def attribute_job(model, req: s.AttributeRequest) -> AttributeJob:
    transformer(model)
    ids = tuple(model.encode(req.text))
    if len(ids) > s.MAX_ATTRIBUTE_TOKENS:
        raise InvalidInputError(
            "error.circuits.web.attribute-too-long", n=len(ids), most=s.MAX_ATTRIBUTE_TOKENS
        )
    position = checks.position(len(ids), req.position)
    token = token_id(model, req.token, "token")
    versus = None if req.versus is None else token_id(model, req.versus, "versus")
    if versus == token:
        raise InvalidInputError("error.circuits.same-answer", token=listed(pieces(model, [token])))
    return AttributeJob(ids, position, token, versus)


def attribute_view(result: Attribution) -> s.AttributeResponse:
    return s.AttributeResponse(**finite(result.to_json()))
