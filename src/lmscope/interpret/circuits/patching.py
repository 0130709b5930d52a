"""Activation patching: which activations carry the right answer.

Two prompts of the same token length: a clean one the model answers right (``The Eiffel Tower
is in the city of`` -> `` Paris``) and a corrupted one that changes what matters (another
landmark). At the last position the logit difference right - wrong is high on the clean run
and low on the corrupted one. Run the corrupted prompt again, but replace one activation by
its value in the clean run: the fraction of the difference that comes back,

    (patched - corrupt) / (clean - corrupt),

says how much of what separates the two runs passes through that activation. Three kinds of
site, each a grid:

- ``resid_pre``: the residual stream entering each layer, at each position (one position
  replaced at a time);
- ``attn_head``: each attention head's output (its z, before the output projection) in each
  layer, at every position at once;
- ``mlp_out``: each layer's MLP output, at every position at once.

A patched run changes nothing before the layer it patches, so it starts there, from the
corrupted run's recorded residual stream, and runs the layers after it only. Every patched run
that starts at a layer is a row of one batch, and the batch runs layer by layer: at each
layer the rows that start there join those still on their way, so each block runs once per
group of rows however many sites there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import torch

from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.interpret.circuits.common import (
    Grid,
    answer_ids,
    checked_layers,
    floats,
    listed,
    pieces,
    transformer,
    unembedding,
)

SITES = ("resid_pre", "attn_head", "mlp_out")
# Rows x positions x width of the widest activation (the MLP's) one batch may hold: about a
# gigabyte in float32.
BATCH_ELEMENTS = 1 << 28


@dataclass
class Site:
    """One kind of site's grid: the logit differences of the patched runs (``diffs``), the
    fraction of the clean-corrupt difference each restores (``values``), and each run's logits
    of the right and the wrong answer."""

    rows: list  # layers
    cols: list  # positions (resid_pre), heads (attn_head), or ["all"] (mlp_out)
    values: torch.Tensor
    diffs: torch.Tensor
    right_logits: torch.Tensor = field(repr=False)
    wrong_logits: torch.Tensor = field(repr=False)
    kind: str = ""  # resid_pre, attn_head or mlp_out

    def to_json(self) -> dict:
        grid = Grid(self.rows, self.cols, floats(self.values)).to_json()
        grid["diffs"] = floats(self.diffs)
        return grid

    def best(self) -> str:
        """The site that restores the most: ``L{layer}/{column} {fraction}``; "" when empty."""
        if not self.values.numel():
            return ""
        row, col = divmod(int(self.values.argmax()), self.values.shape[1])
        return f"L{self.rows[row]}/{self.cols[col]} {self.values.max():.2f}"

    def __repr__(self) -> str:  # the dataclass repr printed the two grids in full
        shape = [len(self.rows), len(self.cols)]
        return f"Site({self.kind!r}: values, diffs {shape}; best {self.best() or 'none'})"


@dataclass
class PatchResult:
    clean_ids: list[int]
    corrupt_ids: list[int]
    right: int
    wrong: int
    clean_diff: float  # logit(right) - logit(wrong) after the clean prompt's last token
    corrupt_diff: float  # the same after the corrupted prompt
    sites: dict[str, Site]
    clean_tokens: list[str] = field(default_factory=list, repr=False)
    corrupt_tokens: list[str] = field(default_factory=list, repr=False)
    right_token: str = ""
    wrong_token: str = ""

    def to_json(self) -> dict:
        return {
            "clean_ids": list(self.clean_ids),
            "corrupt_ids": list(self.corrupt_ids),
            "clean_tokens": list(self.clean_tokens),
            "corrupt_tokens": list(self.corrupt_tokens),
            "right": {"id": self.right, "token": self.right_token},
            "wrong": {"id": self.wrong, "token": self.wrong_token},
            "clean_diff": self.clean_diff,
            "corrupt_diff": self.corrupt_diff,
            "sites": {name: site.to_json() for name, site in self.sites.items()},
        }

    def __repr__(self) -> str:
        best = [f"{name} best {site.best()}" for name, site in self.sites.items() if site.best()]
        return (
            f"PatchResult({len(self.clean_ids)} tokens, {self.right_token!r} vs "
            f"{self.wrong_token!r}: clean {self.clean_diff:.3f}, corrupt {self.corrupt_diff:.3f}; "
            f"{'; '.join(best)})"
        )


@dataclass(frozen=True)
class _Run:
    """One patched run: from ``layer`` on, with ``kind`` replaced at ``index`` (a position, a
    head; 0 for the MLP's output, replaced whole)."""

    layer: int
    kind: str
    index: int


class _Replacer:
    """The hook of one block in the batch: puts the clean head outputs (hook_z) and MLP output
    into the rows that patch them. It reads no attention pattern (``wants`` is false), so
    attention runs fused, as in the recorded runs."""

    def __init__(self, layer: int, heads: list[tuple[int, int]], mlps: list[int], clean: dict):
        self.z_name = f"blocks.{layer}.attn.hook_z"
        self.mlp_name = f"blocks.{layer}.hook_mlp_out"
        self.heads, self.mlps = heads, mlps
        self.clean_z, self.clean_mlp = clean[self.z_name], clean[self.mlp_name]

    def wants(self, name: str) -> bool:
        return False

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        if name == self.z_name and self.heads:
            rows, heads = (torch.tensor(part) for part in zip(*self.heads, strict=True))
            tensor = tensor.clone()  # [row, position, head, d_head]
            tensor[rows, :, heads] = self.clean_z[:, heads].transpose(0, 1)
        elif name == self.mlp_name and self.mlps:
            tensor = tensor.clone()  # [row, position, d_model]
            tensor[self.mlps] = self.clean_mlp
        return tensor


def _probes(n_layer: int) -> list[str]:
    return [
        *(f"blocks.{layer}.hook_resid_pre" for layer in range(n_layer)),
        *(f"blocks.{layer}.attn.hook_z" for layer in range(n_layer)),
        *(f"blocks.{layer}.hook_mlp_out" for layer in range(n_layer)),
        f"blocks.{n_layer - 1}.hook_resid_post",
    ]


def _answer_logits(model, resid: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """The logits of ``answers`` from final residual vectors [..., d_model]: the final norm,
    then the answers' rows of the unembedding only."""
    net = model.net
    normalized = net.ln_f(resid, None, "")
    return normalized.float() @ unembedding(net)[answers].float().T


@torch.no_grad()
def _patched_runs(
    model, runs: list[_Run], idx, answers: torch.Tensor, clean: dict, corrupt: dict
) -> torch.Tensor:
    """The right and wrong logits after the last position of every run, [run, 2]: in groups
    that fit BATCH_ELEMENTS, each a batch that starts at its first run's layer and takes in
    the other runs as it reaches their layers."""
    net, config = model.net, model.config
    T = idx.shape[1]
    width = max(config.n_embd, config.d_mlp, config.n_head * config.d_head)
    group = max(1, BATCH_ELEMENTS // (T * width))
    _, extra = net.embed(idx, 0, None)  # what every block needs besides x (Llama: RoPE)
    out = []
    for first in range(0, len(runs), group):
        chunk = runs[first : first + group]
        x = None
        for layer in range(chunk[0].layer, config.n_layer):
            starting = [run for run in chunk if run.layer == layer]
            rows = corrupt[f"blocks.{layer}.hook_resid_pre"].expand(len(starting), -1, -1).clone()
            for row, run in enumerate(starting):
                if run.kind == "resid_pre":
                    rows[row, run.index] = clean[f"blocks.{layer}.hook_resid_pre"][run.index]
            base = 0 if x is None else x.shape[0]
            heads = [
                (base + r, run.index) for r, run in enumerate(starting) if run.kind == "attn_head"
            ]
            mlps = [base + r for r, run in enumerate(starting) if run.kind == "mlp_out"]
            x = rows if x is None else torch.cat([x, rows])
            hook = _Replacer(layer, heads, mlps, clean) if heads or mlps else None
            x = net.h[layer](x, hook, None, *extra)
        assert x is not None
        out.append(_answer_logits(model, x[:, -1], answers))
    return torch.cat(out)


def checked_pair(model, clean, corrupt, right, wrong) -> tuple[list[int], list[int], int, int]:
    """The clean and corrupted prompts as ids and the two answers as token ids, refused in one
    line where patching cannot compare them: prompts of different token lengths, an answer
    that is not one token, or the same answer twice."""
    transformer(model)
    clean_ids, corrupt_ids = model.to_ids(clean), model.to_ids(corrupt)
    if len(clean_ids) != len(corrupt_ids):
        raise InvalidInputError(
            "error.circuits.lengths-differ",
            clean=len(clean_ids),
            corrupt=len(corrupt_ids),
            clean_tokens=listed(pieces(model, clean_ids)),
            corrupt_tokens=listed(pieces(model, corrupt_ids)),
        )
    right_id, wrong_id = answer_ids(model, right, wrong, ("right", "wrong"))
    return clean_ids, corrupt_ids, right_id, cast(int, wrong_id)


@checked_keywords
@torch.no_grad()
def patch(
    model,
    clean: str | Sequence[int],
    corrupt: str | Sequence[int],
    right: int | str,
    wrong: int | str,
    *,
    layers=None,
) -> PatchResult:
    """Activation patching of the corrupted prompt with the clean one's activations (see the
    module's text): the logit difference ``right`` - ``wrong`` after the last token of each
    prompt, and the fraction of it each patched activation restores, for every site of
    ``layers`` (default: every layer). ``right`` and ``wrong`` are token ids or texts of one
    token each (`` Paris``, with its space)."""
    clean_ids, corrupt_ids, right_id, wrong_id = checked_pair(model, clean, corrupt, right, wrong)
    chosen = checked_layers(model.config.n_layer, layers)
    config = model.config
    names = _probes(config.n_layer)
    answers = torch.tensor([right_id, wrong_id], device=model.device)
    recorded, diffs = [], []
    for ids in (clean_ids, corrupt_ids):
        trace = model.trace(ids, names=names)
        tensors = {name: trace.tensors[name] for name in names}
        last = _answer_logits(model, tensors[names[-1]][-1], answers)
        diffs.append(float(last[0] - last[1]))
        recorded.append(tensors)
    clean_diff, corrupt_diff = diffs
    if clean_diff == corrupt_diff:
        raise InvalidInputError("error.circuits.no-difference", diff=f"{clean_diff:.4f}")
    T = len(clean_ids)
    runs = [
        _Run(layer, kind, index)
        for layer in chosen
        for kind, indexes in (
            ("resid_pre", range(T)),
            ("attn_head", range(config.n_head)),
            ("mlp_out", [0]),
        )
        for index in indexes
    ]
    idx = torch.tensor([clean_ids], device=model.device)
    logits = _patched_runs(model, runs, idx, answers, *recorded)
    sites = {}
    for kind, cols in (
        ("resid_pre", list(range(T))),
        ("attn_head", list(range(config.n_head))),
        ("mlp_out", ["all"]),
    ):
        mask = torch.tensor([run.kind == kind for run in runs])
        pair = logits[mask].view(len(chosen), len(cols), 2)
        diff = pair[..., 0] - pair[..., 1]
        sites[kind] = Site(
            list(chosen),
            cols,
            (diff - corrupt_diff) / (clean_diff - corrupt_diff),
            diff,
            pair[..., 0],
            pair[..., 1],
            kind,
        )
    return PatchResult(
        clean_ids,
        corrupt_ids,
        right_id,
        wrong_id,
        clean_diff,
        corrupt_diff,
        sites,
        pieces(model, clean_ids),
        pieces(model, corrupt_ids),
        pieces(model, [right_id])[0],
        pieces(model, [wrong_id])[0],
    )
