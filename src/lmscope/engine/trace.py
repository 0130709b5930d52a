"""A Trace: the real tensors of one forward pass, by probe name, plus per-position predictions.

Tensors are stored without the batch dimension: ``trace["blocks.0.attn.hook_pattern"]`` is
[head, query_pos, key_pos]. Full-vocabulary logits for every position are the one thing that
can dominate memory and time on long prompts, so by default only the last position's are
computed and kept; every position's top-k predictions come from the recorded final LayerNorm
output through the same unembedding, on first access.
"""

from __future__ import annotations

import difflib
import numbers
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from lmscope.engine import checks
from lmscope.engine.lens import logit_lens
from lmscope.engine.probs import log_probs
from lmscope.engine.steps import find_step
from lmscope.errors import InvalidInputError, ProbeNotFoundError, checked_keywords
from lmscope.i18n import Message


@dataclass
class Predictions:
    """What the model predicts after each position: its top-k next tokens, and how likely the
    token that actually comes next was (NaN after the last position)."""

    top_ids: torch.Tensor  # [pos, k]
    top_probs: torch.Tensor  # [pos, k]
    top_logits: torch.Tensor  # [pos, k]
    next_token_prob: torch.Tensor  # [pos]
    entropy: torch.Tensor  # [pos], in nats

    @classmethod
    def from_logits(cls, logits: torch.Tensor, ids: torch.Tensor, k: int) -> Predictions:
        logp = log_probs(logits)
        top_logp, top_ids = logp.topk(min(k, logp.shape[-1]), dim=-1)
        next_prob = torch.full((logits.shape[0],), float("nan"))
        if len(ids) > 1:
            next_prob[:-1] = logp[:-1].gather(-1, ids[1:, None]).squeeze(-1).exp()
        probs = logp.exp()
        entropy = -(probs * logp.nan_to_num(neginf=0.0)).sum(-1)
        return cls(top_ids, top_logp.exp(), logits.float().gather(-1, top_ids), next_prob, entropy)

    def __repr__(self) -> str:  # the dataclass repr printed five tensors in full
        T, k = self.top_ids.shape
        return (
            f"Predictions({T} positions, top {k}: top_ids, top_probs, top_logits {[T, k]}; "
            f"next_token_prob, entropy {[T]})"
        )


class StepTensors(dict):
    """The tensors of one explainer step, by probe name: a dict that prints as one line."""

    def __init__(self, step: str, layer: int, tensors: dict[str, torch.Tensor]):
        super().__init__(tensors)
        self.step, self.layer = step, layer

    def __repr__(self) -> str:  # a dict of tensors printed every number
        shown = 6
        listed = [f"{name} {list(t.shape)}" for name, t in list(self.items())[:shown]]
        more = f", … ({len(self)} tensors)" if len(self) > shown else ""
        return f"StepTensors({self.step!r}, layer {self.layer}: {', '.join(listed)}{more})"


@dataclass
class Trace:
    ids: list[int]
    config: Any  # the model's config: n_layer, n_head, d_head, vocab_size, ...
    tensors: dict[str, torch.Tensor]
    last_logits: torch.Tensor  # full-vocabulary logits after the last position
    pieces: list | None = None  # TokenPiece per id, when the model has a tokenizer
    meta: dict = field(default_factory=dict)
    # name -> function computing a probe from recorded ones, run on first access and kept
    derived: dict[str, Callable[[], torch.Tensor]] = field(default_factory=dict, repr=False)
    # residual vector(s) -> logits through the model's final LayerNorm and unembedding
    readout: Callable[[torch.Tensor], torch.Tensor] | None = field(default=None, repr=False)
    # computes the per-position predictions; they cost a [pos, vocab] product, so only on demand
    predict: Callable[[], Predictions] | None = field(default=None, repr=False)
    _predictions: Predictions | None = field(default=None, repr=False)
    # A served trace is read by several requests at once; a probe derived on first read must be
    # computed once, not popped by one reader while another looks for it.
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def predictions(self) -> Predictions:
        """Top-k next tokens after every position (computed on first access, then kept)."""
        with self._lock:
            if self._predictions is None:
                if self.predict is None:
                    raise InvalidInputError("error.trace.no-predictions")
                self._predictions = self.predict()
        return self._predictions

    def __getitem__(self, name: str | tuple[str, int]) -> torch.Tensor:
        if isinstance(name, tuple) and len(name) == 2 and isinstance(name[0], str):
            name = self._full_name(*name)
        if not isinstance(name, str):
            raise InvalidInputError("error.trace.name-type", got=f"{name!r:.40}")
        with self._lock:
            if name not in self.tensors and name in self.derived:
                self.tensors[name] = self.derived[name]()
                del self.derived[name]
        try:
            return self.tensors[name]
        except KeyError:
            close = difflib.get_close_matches(name, self.names(), n=3)
            layer = re.match(r"blocks\.(\d+)\.", name)
            n_layer = getattr(self.config, "n_layer", None)
            if layer and isinstance(n_layer, int) and int(layer[1]) >= n_layer:
                # blocks.99 is closest in spelling to blocks.9: say what layers there are
                hint = Message("error.trace.hint.layers", n=n_layer, last=str(n_layer - 1))
            elif close:
                hint = Message("error.trace.hint.close", names=", ".join(close))
            elif self.meta.get("every_probe"):  # nothing was left out: the model has none
                hint = Message("error.trace.hint.no-such-probe", n=len(self.names()))
            else:
                hint = Message("error.trace.hint.not-recorded")
            raise ProbeNotFoundError("error.trace.no-probe", name=repr(name), hint=hint) from None

    def _full_name(self, short: str, layer: int) -> str:
        """``trace["pattern", 0]``, as a TransformerLens cache is read: the one probe of block
        ``layer`` whose name ends in ``hook_{short}``."""
        layer = checks.layer(self.config, layer)
        ending = "hook_" + short.removeprefix("hook_")
        found = [
            n
            for n in self.names()
            if n.startswith(f"blocks.{layer}.") and n.rsplit(".", 1)[-1] == ending
        ]
        if len(found) == 1:
            return found[0]
        if found:
            raise ProbeNotFoundError(
                "error.trace.ambiguous",
                short=repr(short),
                layer=str(layer),
                n=len(found),
                names=", ".join(found),
            )
        return f"blocks.{layer}.{ending}"  # not there: the lookup says what is close

    def __contains__(self, name: str) -> bool:
        return name in self.tensors or name in self.derived

    def __repr__(self) -> str:
        # one line: the default dataclass repr printed every tensor (116,000 characters for
        # 5 tokens of a small model)
        shown = 8
        tokens = [p.text for p in self.pieces[:shown]] if self.pieces else self.ids[:shown]
        listed = ", ".join(repr(t if len(str(t)) <= 16 else str(t)[:15] + "…") for t in tokens)
        more = ", …" if len(self.ids) > shown else ""
        return (
            f"Trace(model={self.meta.get('model')!r}, {len(self.ids)} tokens [{listed}{more}], "
            f"{len(self.names())} probes, logits {list(self.last_logits.shape)})"
        )

    def names(self) -> list[str]:
        return list(self.tensors) + list(self.derived)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    def nbytes(self) -> int:
        tensors = list(self.tensors.values()) + [self.last_logits]
        if (p := self._predictions) is not None:
            tensors += [p.top_ids, p.top_probs, p.top_logits, p.next_token_prob, p.entropy]
        return sum(t.numel() * t.element_size() for t in tensors)

    @checked_keywords
    def step(self, step: int | str, layer: int = 0) -> StepTensors:
        """The recorded tensors that show one of the 20 explainer steps, for one layer."""
        checks.layer(self.config, layer)
        found = find_step(step)  # an UnknownStepError names the steps
        out = {}
        for name in found.probe_names(layer, getattr(self.config, "family", None)):
            if name == "logits":
                out[name] = self.tensors.get("logits", self.last_logits)
            elif name in self:
                out[name] = self[name]
        return StepTensors(found.key, layer, out)

    @checked_keywords
    def logit_lens(self, k: int = 5, positions=None):
        """Top-k predictions from the residual stream after every layer (``engine.lens``)."""
        return logit_lens(self, k=k, positions=positions)

    @checked_keywords
    def head_result_sum(self, layer: int) -> torch.Tensor:
        """Sum of per-head results; plus the projection bias this equals hook_attn_out."""
        layer = checks.layer(self.config, layer)
        return self[f"blocks.{layer}.attn.hook_result"].sum(dim=1)

    @checked_keywords
    def dropout_example(self, name: str, p: float = 0.1, seed: int = 0):
        """What a train-mode dropout of rate ``p`` would do to a recorded activation: returns
        (keep mask, output). Kept entries are scaled by 1/(1-p) so the expectation is unchanged."""
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p < 1.0:
            raise InvalidInputError("error.trace.dropout-rate", got=repr(p))
        x = self[name]
        gen = torch.Generator().manual_seed(seed)
        keep = torch.rand(x.shape, generator=gen) >= p
        return keep, torch.where(keep, x / (1.0 - p), torch.zeros_like(x))
