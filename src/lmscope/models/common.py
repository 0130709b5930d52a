"""What every Transformer in models/ shares: the hook type, the KV cache, the context check,
attention once q, k and v are made (``ProbedAttention``), the pre-norm block and the model's
last steps (final norm, unembedding, logits probe, loss)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from lmscope.errors import InvalidInputError

if TYPE_CHECKING:
    from typing_extensions import TypeIs

# A hook sees (probe name, tensor) and returns the tensor the model continues with. A hook with
# a ``wants(name)`` method (a Recorder, an Ablator) says which probes it keeps, and it reads the
# attention scores and pattern without replacing them: the model then runs attention fused and
# computes those probes beside it, only when wanted. Any other hook sees (and may replace)
# every probe, the attention pattern included.
Hook = Callable[[str, torch.Tensor], torch.Tensor]
# The attention probes of every layer such a hook sees only when it wants them.
SCORE_PROBES = (
    "hook_attn_scores_raw",
    "hook_attn_scores_scaled",
    "hook_attn_scores",
    "hook_pattern",
)


class ScoreReader(Protocol):
    """A hook with ``wants``: it reads the attention scores and pattern, never replaces them."""

    def __call__(self, name: str, tensor: torch.Tensor, /) -> torch.Tensor: ...

    def wants(self, name: str) -> bool: ...


class KVCache:
    """Keys and values of the positions seen so far, one (k, v) pair per layer.

    Tensors are [batch, head, position, d_head]. Each layer's keys and values live in a buffer
    with room for more positions: a step writes its new positions in place, and the buffer is
    reallocated only when full (doubling, up to ``capacity``, the model's context), so a
    generation loop feeds only the new token and copies nothing else. ``keys[layer]`` and
    ``values[layer]`` are the filled part.
    """

    MIN_POSITIONS = 256  # the first buffer holds at least this many (or up to capacity)

    def __init__(self, n_layer: int, capacity: int | None = None):
        self.capacity = capacity
        self._keys: list[torch.Tensor | None] = [None] * n_layer
        self._values: list[torch.Tensor | None] = [None] * n_layer
        self._filled = [0] * n_layer

    @property
    def length(self) -> int:
        return self._filled[0]

    @property
    def keys(self) -> list[torch.Tensor | None]:
        return _filled_parts(self._keys, self._filled)

    @property
    def values(self) -> list[torch.Tensor | None]:
        return _filled_parts(self._values, self._filled)

    def extend(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Append k and v ([batch, head, new, d_head]); return every position's keys and
        values so far (views of the buffers)."""
        start = self._filled[layer]
        end = start + k.shape[2]
        keys, values = self._keys[layer], self._values[layer]
        if keys is None or values is None or end > keys.shape[2]:  # both None, or neither
            keys, values = self._grow(layer, k, v, end)
        keys[:, :, start:end].copy_(k)
        values[:, :, start:end].copy_(v)
        self._filled[layer] = end
        return keys[:, :, :end], values[:, :, :end]

    def _grow(
        self, layer: int, k: torch.Tensor, v: torch.Tensor, needed: int
    ) -> list[torch.Tensor]:
        old = self._keys[layer]
        size = max(needed, self.MIN_POSITIONS, 2 * (0 if old is None else old.shape[2]))
        if self.capacity is not None:
            size = max(needed, min(size, self.capacity))
        buffers = []
        for new, kept in ((k, old), (v, self._values[layer])):
            buffer = new.new_empty(new.shape[0], new.shape[1], size, new.shape[3])
            if kept is not None:
                buffer[:, :, : self._filled[layer]].copy_(kept[:, :, : self._filled[layer]])
            buffers.append(buffer)
        self._keys[layer], self._values[layer] = buffers
        return buffers


def _filled_parts(buffers: list, filled: list[int]) -> list[torch.Tensor | None]:
    return [None if b is None else b[:, :, :n] for b, n in zip(buffers, filled, strict=True)]


def attend_rows(caches: list[KVCache], layer: int, q, k, v, attend) -> torch.Tensor:
    """One new position per row ([rows, head, 1, d_head] q, k, v), each row attending over its
    own single-row cache (``decode_rows``) with ``attend(q, keys, values)``: z, [rows, head, 1,
    d_head]."""
    z = []
    for row, cache in enumerate(caches):
        keys, values = cache.extend(layer, k[row : row + 1], v[row : row + 1])
        z.append(attend(q[row : row + 1], keys, values))
    return torch.cat(z)


def reads_scores_only(hook: Hook | None) -> TypeIs[ScoreReader | None]:
    """Whether attention may run fused under this hook (no hook, or one with ``wants``)."""
    return hook is None or hasattr(hook, "wants")


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None):
    """x @ weight^T + bias. One bfloat16 row (a generation step) goes through a matrix-vector
    product: PyTorch's bf16 GEMV streams the weights once, where the matrix-product path
    repacks them on every call and runs at about half the memory speed. Every other case is
    F.linear, so float32 numbers are exactly nn.Linear's."""
    if x.dtype == torch.bfloat16 and x.numel() == x.shape[-1]:
        row = x.reshape(-1)
        out = torch.mv(weight, row) if bias is None else torch.addmv(bias, weight, row)
        return out.view(*x.shape[:-1], weight.shape[0])
    return F.linear(x, weight, bias)


class Linear(nn.Linear):
    """nn.Linear (same parameters and state dict) whose forward is ``linear`` above."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)


def wants(hook: Hook, name: str) -> bool:
    """Costly optional probes (hook_result) run only for hooks whose ``wants(name)`` says yes."""
    wants = getattr(hook, "wants", None)
    return False if wants is None else wants(name)


def check_fits(past: int, new: int, n_ctx: int) -> None:
    if past + new > n_ctx:
        raise InvalidInputError("error.model.context", n=past + new, context=n_ctx)


def checked_logits(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """x @ weight^T, refusing float16 overflow: float16 tops out at 65504; say so, rather than
    hand inf and NaN to softmax."""
    logits = linear(x, weight)
    if logits.dtype == torch.float16 and not torch.isfinite(logits).all():
        raise InvalidInputError("error.model.float16-overflow")
    return logits


class ProbedAttention(nn.Module):
    """What every family's attention does once it has q, k and v ([batch, head, position,
    d_head]): PyTorch's fused kernel where the hook reads at most the scores (they are then
    rebuilt beside it, only when wanted), else the explicit product with every probe; then
    ``hook_z`` and each head's result. GPT-2's attention is this with its defaults: no scale of
    its own (1/sqrt(d_head)), no window, one key/value head per query head."""

    n_head: int
    d_head: int
    dropout: float
    attn_dropout: nn.Dropout
    n_kv_groups: int = 1  # query heads that share a key/value head
    window: int | None = None  # a sliding window: query i sees keys i - window + 1 .. i
    scale: float | None = None  # the scores' factor; None: 1 / sqrt(d_head)

    def out_weight(self) -> torch.Tensor:
        """W_O, [d_model, n_head * d_head]: the projection of the heads' outputs."""
        raise NotImplementedError

    def attend(self, q, k, v, past: int, hook: Hook | None, name: str) -> torch.Tensor:
        """z, [batch, position, head, d_head]; ``past`` keys came from the cache."""
        if reads_scores_only(hook):
            z = self._fast_attention(q, k, v, past)
            if hook is not None:
                self._show_scores(q, k, hook, name)
        else:
            k, v = self._per_query_head(k), self._per_query_head(v)
            z = self._explicit_attention(q, k, v, hook, name)
        z = z.transpose(1, 2)  # [batch, position, head, d_head]
        if hook is not None:
            z = hook(f"{name}.hook_z", z)
            if wants(hook, f"{name}.hook_result"):
                hook(f"{name}.hook_result", self.head_results(z))
        return z

    def scale_scores(self, raw: torch.Tensor) -> torch.Tensor:
        return raw / math.sqrt(self.d_head) if self.scale is None else raw * self.scale

    def masked_scores(self, raw: torch.Tensor) -> torch.Tensor:
        """Raw QK^T -> scaled and masked (causal, and the sliding window if any), exactly as
        the forward pass computes it."""
        return self._mask(self.scale_scores(raw))

    @torch.no_grad()
    def head_results(self, z: torch.Tensor) -> torch.Tensor:
        """Each head's own contribution to attn_out, z_h @ W_O[h] (any bias not included):
        [..., position, head, d_head] -> [..., position, head, d_model]."""
        w_o = self.out_weight().T.reshape(self.n_head, self.d_head, -1)
        return torch.einsum("...phd,hdm->...phm", z, w_o)

    def fused_options(self) -> dict[str, Any]:
        """F.scaled_dot_product_attention's options for this attention, dropout aside: its
        scale (absent: 1/sqrt(d_head)), and enable_gqa where query heads share a key/value
        head, which each then reads without copying the keys and values n_kv_groups times."""
        options: dict[str, Any] = {}
        if self.scale is not None:
            options["scale"] = self.scale
        if self.n_kv_groups > 1:
            options["enable_gqa"] = True
        return options

    def _fast_attention(self, q, k, v, past: int) -> torch.Tensor:
        """PyTorch's fused attention with this attention's options (``fused_options``)."""
        T, S = q.shape[2], k.shape[2]
        dropout = self.dropout if self.training else 0.0
        options: dict[str, Any] = dict(dropout_p=dropout, **self.fused_options())
        unwindowed = self.window is None or self.window >= S
        if unwindowed and (past == 0 or T == 1):
            # a single new token may attend to every cached position: no mask needed
            return F.scaled_dot_product_attention(q, k, v, is_causal=past == 0 and T > 1, **options)
        mask = _allowed(T, S, self.window, q.device)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **options)

    def attend_cached(self, q, keys, values) -> torch.Tensor:
        """New queries at the end of the cached keys and values (a generation step)."""
        return self._fast_attention(q, keys, values, keys.shape[2] - q.shape[2])

    def _per_query_head(self, t: torch.Tensor) -> torch.Tensor:
        """Keys or values [batch, n_kv_head, ...] -> [batch, n_head, ...]: each query head
        gets its group's key/value head."""
        return t if self.n_kv_groups == 1 else t.repeat_interleave(self.n_kv_groups, dim=1)

    def _show_scores(self, q, k, hook: ScoreReader, name: str) -> None:
        """The scores and pattern, for a hook that reads them, beside the fused attention that
        computed z: float32, from q and the shared k, exactly as the derived probes are."""
        names = [f"{name}.{probe}" for probe in SCORE_PROBES]
        if not any(hook.wants(n) for n in names):
            return
        raw = q.float() @ self._per_query_head(k).float().transpose(-2, -1)
        scaled = self.scale_scores(raw)
        scores = self._mask(scaled)
        pattern = torch.softmax(scores, dim=-1)
        for probe, tensor in zip(names, (raw, scaled, scores, pattern), strict=True):
            hook(probe, tensor)

    def _explicit_attention(self, q, k, v, hook: Hook, name: str) -> torch.Tensor:
        # Scores, softmax and the weighted sum in float32 for half-precision models, as the
        # fused kernel accumulates them: a float16 QK^T overflows where the kernel's does not.
        raw = hook(f"{name}.hook_attn_scores_raw", q.float() @ k.float().transpose(-2, -1))
        scaled = hook(f"{name}.hook_attn_scores_scaled", self.scale_scores(raw))
        scores = hook(f"{name}.hook_attn_scores", self._mask(scaled))  # as TransformerLens
        pattern = hook(f"{name}.hook_pattern", torch.softmax(scores, dim=-1))
        return (self.attn_dropout(pattern) @ v.float()).to(v.dtype)

    def _mask(self, scaled: torch.Tensor) -> torch.Tensor:
        """Keys a query may not see get -inf, so softmax gives them exactly zero weight."""
        T, S = scaled.shape[-2:]
        return scaled.masked_fill(~_allowed(T, S, self.window, scaled.device), float("-inf"))


def _allowed(T: int, S: int, window: int | None, device) -> torch.Tensor:
    """True where query i (the last T of S positions) may look at key j: j <= i, and with a
    sliding window also i - j < window."""
    mask = torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T)
    if window is not None:
        mask = mask.triu(diagonal=S - T - window + 1)
    return mask


class PreNormBlock(nn.Module):
    """One pre-norm block, x + attn(ln_1(x)) then + mlp(ln_2(x)), with the residual probes
    (TransformerLens names): GPT-2's and Llama's, each with its own norms, attention and MLP.
    ``extra`` is what the attention needs besides the cache (Llama: RoPE's cos/sin)."""

    def __init__(self, layer: int, ln_1, attn, ln_2, mlp, dropout: float):
        super().__init__()
        self.layer = layer
        self.ln_1 = ln_1
        self.attn = attn
        self.ln_2 = ln_2
        self.mlp = mlp
        self.resid_dropout = nn.Dropout(dropout)

    def _dropped(self, x: torch.Tensor) -> torch.Tensor:
        return self.resid_dropout(x) if self.training else x  # no call at all in eval

    def forward(self, x, hook: Hook | None, cache: KVCache | None, *extra):
        p = f"blocks.{self.layer}"
        if hook is None:
            attn_out = self.attn(self.ln_1(x, None, ""), None, "", self.layer, cache, *extra)
            x = x + self._dropped(attn_out)
            return x + self._dropped(self.mlp(self.ln_2(x, None, ""), None, ""))
        x = hook(f"{p}.hook_resid_pre", x)
        attn_out = self.attn(
            self.ln_1(x, hook, f"{p}.ln1"), hook, f"{p}.attn", self.layer, cache, *extra
        )
        attn_out = hook(f"{p}.hook_attn_out", self.resid_dropout(attn_out))
        x = hook(f"{p}.hook_resid_mid", x + attn_out)
        mlp_out = hook(
            f"{p}.hook_mlp_out",
            self.resid_dropout(self.mlp(self.ln_2(x, hook, f"{p}.ln2"), hook, f"{p}.mlp")),
        )
        return hook(f"{p}.hook_resid_post", x + mlp_out)


class _DecoderConfig(Protocol):
    n_ctx: int
    n_layer: int

    def to_dict(self) -> dict: ...


class DecoderLM(nn.Module):
    """What GPT and Llama share: the forward pass around each one's own ``embed`` (which also
    returns what its blocks need besides the hidden state), and the KV cache's shape."""

    # What each architecture sets or defines (declared here for the type checker only).
    config: _DecoderConfig
    h: nn.ModuleList
    ln_f: nn.Module
    embed: Callable[[torch.Tensor, int, Hook | None], tuple[torch.Tensor, tuple]]
    unembed: Callable[[torch.Tensor], torch.Tensor]
    num_params: Callable[[], int]

    def forward(
        self,
        idx: torch.Tensor,
        targets: torch.Tensor | None = None,
        *,
        hook: Hook | None = None,
        cache: KVCache | None = None,
        last_only: bool = False,
    ):
        """Return (logits, loss). ``idx`` is [batch, T] token ids.

        ``cache`` continues from the positions it holds; ``last_only`` computes logits for the
        final position alone (what generation needs). ``loss`` is the mean cross-entropy against
        ``targets`` ([batch, T]; -1 entries ignored), else None.
        """
        past = cache.length if cache is not None else 0
        check_fits(past, idx.shape[1], self.config.n_ctx)
        if (
            idx.shape[1] == 1
            and cache is not None
            and past > 0
            and hook is None
            and targets is None
            and not self.training
        ):
            return self.decode_step(idx, cache), None
        x, extra = self.embed(idx, past, hook)
        for block in self.h:
            x = block(x, hook, cache, *extra)
        return head_of_model(self, x, hook, targets, last_only)

    def run_block(
        self, layer: int, idx: torch.Tensor, resid_pre: torch.Tensor, hook: Hook | None = None
    ) -> torch.Tensor:
        """Block ``layer`` alone on its input ``resid_pre`` ([batch, T, d_model], the residual
        stream a pass over ``idx`` carried into it): its output, the same numbers the whole
        pass computes there. A block needs only that input and the positions (Llama's RoPE),
        so a view of one layer need not run the layers before it again."""
        _, extra = self.embed(idx, 0, None)
        return self.h[layer](resid_pre, hook, None, *extra)

    def decode_step(self, idx: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Logits [batch, 1, vocab] for one new token per row ([batch, 1] ids) after the
        cached positions, no hook: a generation step. This is the general path; a model may
        override it with fewer operations, for the same numbers."""
        x, extra = self.embed(idx, cache.length, None)
        for block in self.h:
            x = block(x, None, cache, *extra)
        return head_of_model(self, x, None, None, True)[0]

    def decode_rows(self, idx: torch.Tensor, caches: list[KVCache]) -> torch.Tensor:
        """One step for each of several sequences: [rows, 1] ids, one single-row cache each
        (of any lengths) -> logits [rows, 1, vocab]. Here one row at a time; a model that can
        read its weights once for all rows overrides it."""
        return torch.cat([self.decode_step(idx[i : i + 1], c) for i, c in enumerate(caches)])

    def new_cache(self) -> KVCache:
        return KVCache(self.config.n_layer, self.config.n_ctx)

    def cache_stale(self, past: int, new: int) -> bool:
        """Whether ``new`` positions must not continue a cache of ``past``: the sequence must
        run again from its start (Llama's LongRoPE changes every position's rotation once the
        sequence passes a length). Never here."""
        return False


def head_of_model(model, x, hook: Hook | None, targets, last_only: bool):
    """Final norm, (the last position only, for generation), unembedding and the loss: the
    end of every forward pass. Returns (logits, loss)."""
    x = model.ln_f(x, hook, "ln_final")
    if last_only:
        x = x[:, -1:, :]
    logits = model.unembed(x)
    if hook is not None:
        logits = hook("logits", logits)
    loss = None
    if targets is not None:
        loss = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), ignore_index=-1
        )
    return logits, loss
