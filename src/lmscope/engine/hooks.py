"""Hooks: what sees every probe of a forward pass. ``Recorder`` keeps the tensors a Trace holds;
``Ablator`` switches parts of the model off (and hands every tensor on to a recorder).

An ablation is a probe-level intervention, not a modified copy of the model: the hook replaces
a head's z (before the output projection), a whole attention output or a whole MLP output with
zeros or with its mean over the prompt's positions, and the forward pass carries on from there.

Specs people type: ``L5H3`` or ``5.3`` (head 3 of layer 5), ``L5H*`` (every head of layer 5),
``attn5`` / ``L5.attn`` (the whole attention output of layer 5), ``mlp5`` / ``L5.mlp``,
``attn*`` / ``mlp*`` / ``L*H*`` (every layer).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from lmscope.errors import InvalidInputError

_LAYER_RE = re.compile(r"^blocks\.(\d+)\.")
# Probes that cost real compute or memory and can be rebuilt exactly from others; recorded only
# when asked for by name, otherwise derived on first access (see Trace.derived). The attention
# scores and pattern are [head, position, position] per layer: on a 2,048-token prompt of
# SmolLM2 they would be 9 GB of a trace, and are rebuilt from q and k (about 1/60 of that).
ON_REQUEST = (
    "hook_result",
    "hook_attn_scores_raw",
    "hook_attn_scores_scaled",
    "hook_attn_scores",
    "hook_pattern",
)


class Recorder:
    """The hook that fills a Trace: keeps the probes asked for, passes every tensor through."""

    def __init__(
        self,
        names: Iterable[str] | None = None,
        layers: Iterable[int] | None = None,
        keep_logits: str = "last",
    ):
        if keep_logits not in ("all", "last", "none"):
            raise InvalidInputError("error.hooks.keep-logits", got=repr(keep_logits))
        self.names = probe_patterns(names)
        self.patterns = [_compile(n) for n in self.names] if self.names is not None else None
        self.layers = set(layers) if layers is not None else None
        self.seen: set[str] = set()  # every probe the pass offered, recorded or not
        self.keep_logits = keep_logits
        self.tensors: dict[str, torch.Tensor] = {}
        self.last_logits: torch.Tensor | None = None
        self.all_logits: torch.Tensor | None = None  # only when keep_logits == "all"
        self.final_normalized: torch.Tensor | None = None  # ln_final output, for predictions

    def wants(self, name: str) -> bool:
        self.seen.add(name)
        if self.layers is not None:
            match = _LAYER_RE.match(name)
            if match and int(match.group(1)) not in self.layers:
                return False
        if name.endswith(ON_REQUEST):
            return self.patterns is not None and any(
                p.fullmatch(name) and name.rsplit(".", 1)[-1] in p.pattern for p in self.patterns
            )
        return self.patterns is None or any(p.fullmatch(name) for p in self.patterns)

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        self.seen.add(name)
        if name == "logits":
            self._record_logits(tensor[0].detach())
        else:
            if name == "ln_final.hook_out":
                self.final_normalized = tensor[0].detach()
            if self.wants(name):
                self.tensors[name] = tensor[0].detach()
        return tensor

    def check_names(self) -> None:
        """After the pass: refuse names of which not one matched a probe of the model (a trace
        holding nothing that was asked for), suggesting the closest probe names."""
        if not self.names or self.patterns is None:
            return
        if any(p.fullmatch(seen) for p in self.patterns for seen in self.seen):
            return
        name = self.names[0]
        close = difflib.get_close_matches(name, sorted(self.seen), n=3)
        if close:
            raise InvalidInputError(
                "error.hooks.no-probe-close", name=repr(name), close=", ".join(close)
            )
        raise InvalidInputError("error.hooks.no-probe", name=repr(name))

    def _record_logits(self, logits: torch.Tensor):
        self.last_logits = logits[-1].float().clone()
        if self.keep_logits == "all":
            self.all_logits = logits
            if self.wants("logits"):
                self.tensors["logits"] = logits


class BatchRecorder(Recorder):
    """A Recorder for a pass over several prompts at once: keeps each probe with its batch
    dimension (``tensors`` and ``logits``, every position's), for the caller to split by row."""

    def __init__(self, names: Iterable[str] | None = None):
        super().__init__(names, None, keep_logits="all")
        self.logits: torch.Tensor | None = None

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        self.seen.add(name)
        if name == "logits":
            self.logits = tensor.detach()
        elif self.wants(name):
            self.tensors[name] = tensor.detach()
        return tensor


def probe_patterns(names) -> list[str] | None:
    """Probe names as given to a trace: None (every probe), one name, or several."""
    if names is None:
        return None
    if isinstance(names, str):
        return [names]
    if not isinstance(names, Iterable):
        raise InvalidInputError("error.hooks.names-type", got=f"{names!r:.40}")
    names = list(names)
    for name in names:
        if not isinstance(name, str):
            raise InvalidInputError("error.hooks.name-type", got=f"{name!r:.40}")
    return names


def _compile(pattern: str) -> re.Pattern:
    """Probe filters accept exact names or shell-style '*' wildcards (``blocks.*.hook_z``)."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")))


MODES = ("zero", "mean")
_HEAD = re.compile(r"^(?:L(\d+|\*)H(\d+|\*)|(\d+)\.(\d+|\*))$", re.IGNORECASE)
_PART = re.compile(r"^(?:(attn|mlp)(\d+|\*)|L(\d+|\*)\.(attn|mlp))$", re.IGNORECASE)


@dataclass(frozen=True)
class Ablation:
    kind: str  # "head", "attn" or "mlp"
    layer: int
    head: int | None = None

    def __str__(self) -> str:
        return f"L{self.layer}H{self.head}" if self.kind == "head" else f"{self.kind}{self.layer}"

    @property
    def probe(self) -> str:
        return {
            "head": f"blocks.{self.layer}.attn.hook_z",
            "attn": f"blocks.{self.layer}.hook_attn_out",
            "mlp": f"blocks.{self.layer}.hook_mlp_out",
        }[self.kind]


def _expand(value: str, count: int, missing: str, spec: str) -> list[int]:
    """Every index for "*", else the one ``value`` names; ``missing`` is the message for an
    index that does not exist."""
    if value == "*":
        return list(range(count))
    index = int(value)
    if not 0 <= index < count:
        raise InvalidInputError(missing, spec=repr(spec), value=str(index), last=str(count - 1))
    return [index]


def parse_ablations(specs, config) -> list[Ablation]:
    """Turn specs (strings or Ablation objects) into validated Ablations for ``config``."""
    if isinstance(specs, str | Ablation):
        specs = [specs]
    if not isinstance(specs, Iterable):
        raise InvalidInputError("error.ablation.specs-type", got=f"{specs!r:.40}")
    out: list[Ablation] = []
    for spec in specs:
        if isinstance(spec, Ablation):
            spec = str(spec)
        text = str(spec).strip()
        if m := _HEAD.match(text):
            layer_s, head_s = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            for layer in _expand(layer_s, config.n_layer, "error.ablation.no-layer", text):
                for head in _expand(head_s, config.n_head, "error.ablation.no-head", text):
                    out.append(Ablation("head", layer, head))
        elif m := _PART.match(text):
            kind, layer_s = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            for layer in _expand(layer_s, config.n_layer, "error.ablation.no-layer", text):
                out.append(Ablation(kind.lower(), layer))
        else:
            raise InvalidInputError("error.ablation.unreadable", spec=repr(text))
    return list(dict.fromkeys(out))  # drop repeats, keep order


class Ablator:
    """A hook that applies ablations, then hands every tensor on to ``inner`` (a recorder)."""

    def __init__(self, ablations: list[Ablation], mode: str = "zero", inner=None):
        if mode not in MODES:
            raise InvalidInputError("error.ablation.mode", got=repr(mode))
        self.mode, self.inner = mode, inner
        self.targets: dict[str, list[int | None]] = {}
        for a in ablations:
            self.targets.setdefault(a.probe, []).append(a.head)

    def wants(self, name: str) -> bool:
        return self.inner is not None and getattr(self.inner, "wants", lambda n: True)(name)

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        heads = self.targets.get(name)
        if heads is not None:
            tensor = self._ablate(tensor, heads)
        return self.inner(name, tensor) if self.inner is not None else tensor

    def _ablate(self, t: torch.Tensor, heads: list[int | None]) -> torch.Tensor:
        t = t.clone()
        # heads index dim 2 of hook_z [batch, pos, head, d_head]; a sublayer output goes whole
        index = (slice(None), slice(None), heads) if heads[0] is not None else (slice(None),)
        if self.mode == "zero":
            t[index] = 0.0
        else:
            t[index] = t[index].mean(dim=1, keepdim=True)  # broadcast over positions
        return t
