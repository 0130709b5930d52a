"""The linear recurrence h_t = a*h_{t-1} + x_t in PyTorch, three ways.

- ``recurrence_loop``: one Python step per position, as an RNN must run.
- ``associative_scan``: Hillis-Steele over (a, x) pairs with whole-tensor operations,
  log2(N) rounds. Only products of a's appear, which shrink towards 0 smoothly, so it is
  stable for any a (and for a different a_t at every step, as in selective SSMs).
- ``chunked_scan``: the closed form h_t = a^t * cumsum(x_s / a^s) is a cumsum, but a^-s
  overflows (0.9^-1000 ~ 1e45) long before N = 65,536. So apply it only inside blocks short
  enough that a^-L stays representable, then join the blocks with a scan over the block
  carries (factor a^L, N/L of them). Same idea as the chunked scans of Mamba-2-style SSMs.

All return every state h_0..h_{N-1}, starting from h_{-1} = 0.
"""

from __future__ import annotations

import math

import torch

from lmscope.errors import InvalidInputError

DEFAULT_BLOCK = 128


def _check(x: torch.Tensor) -> None:
    if x.dim() != 1 or x.numel() < 1:
        raise InvalidInputError("error.lab.scan.shape", shape=str(tuple(x.shape)))


def recurrence_loop(x: torch.Tensor, a: float) -> torch.Tensor:
    """Step by step: position t cannot start before t-1 is done."""
    _check(x)
    out = torch.empty_like(x)
    h = torch.zeros((), dtype=x.dtype, device=x.device)
    for t in range(x.numel()):
        h = a * h + x[t]
        out[t] = h
    return out


def associative_scan(x: torch.Tensor, a: float | torch.Tensor) -> torch.Tensor:
    """Hillis-Steele scan of the affine maps h -> a_t*h + x_t, each round on all positions."""
    _check(x)
    n = x.numel()
    coef = torch.as_tensor(a, dtype=x.dtype, device=x.device).expand(n).clone()
    acc = x.clone()
    d = 1
    while d < n:
        # Right-hand sides are computed from the previous round before being written back.
        acc[d:] = coef[d:] * acc[:-d] + acc[d:]
        coef[d:] = coef[d:] * coef[:-d]
        d *= 2
    return acc


def block_length(a: float, dtype: torch.dtype, block: int = DEFAULT_BLOCK) -> int:
    """Longest block (<= block) whose powers |a|^-(L-1) stay far inside the dtype's range."""
    if block < 1:
        raise InvalidInputError("error.lab.at-least-one", flag="block", got=block)
    mag = abs(a)
    if mag == 0.0:
        return 1  # h_t = x_t: nothing to carry
    log_mag = abs(math.log(mag))
    if log_mag == 0.0:
        return block  # |a| = 1: powers stay 1
    headroom = 0.25 * math.log(torch.finfo(dtype).max)  # use a quarter of the exponent range
    return max(1, min(block, int(headroom / log_mag) + 1))


def chunked_scan(x: torch.Tensor, a: float, block: int = DEFAULT_BLOCK) -> torch.Tensor:
    """Closed form inside short blocks (a cumsum), a scan across the block carries."""
    _check(x)
    if not x.is_floating_point():
        raise InvalidInputError("error.lab.scan.dtype", dtype=str(x.dtype))
    n = x.numel()
    length = block_length(a, x.dtype, block)
    n_blocks = -(-n // length)
    padded = torch.zeros(n_blocks * length, dtype=x.dtype, device=x.device)
    padded[:n] = x  # zeros after the end do not change earlier states
    xb = padded.view(n_blocks, length)

    # powers[i] = a^i for i = 0..L-1, by repeated multiplication (works for negative a too)
    steps = torch.full((length,), a, dtype=x.dtype, device=x.device)
    powers = torch.cat([steps.new_ones(1), steps[:-1].cumprod(0)])
    # Inside a block, from a zero start: h_i = a^i * sum_{j<=i} x_j / a^j
    local = torch.cumsum(xb / powers, dim=1) * powers
    # The state entering block k is the carry H_{k-1}: H_k = a^L * H_{k-1} + local[k, -1].
    carries = associative_scan(local[:, -1].contiguous(), a**length)
    entering = torch.cat([carries.new_zeros(1), carries[:-1]])
    out = local + entering[:, None] * (powers * a)[None, :]  # carry decays by a^(i+1)
    return out.reshape(-1)[:n]


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    """Largest absolute difference, relative to the largest state magnitude."""
    scale = want.abs().max().item() or 1.0
    return (got - want).abs().max().item() / scale


def closed_form_unblocked(x: torch.Tensor, a: float) -> torch.Tensor:
    """The one-line closed form over the whole sequence. Shown only to be refuted: a^-t
    overflows for long N and the result turns into inf/nan (see ``first_breakdown``)."""
    _check(x)
    powers = torch.full_like(x, a).cumprod(0) / a  # a^0 .. a^(N-1)
    return torch.cumsum(x / powers, dim=0) * powers


def first_breakdown(a: float, dtype: torch.dtype = torch.float32, limit: int = 1 << 20) -> int:
    """Smallest N at which the unblocked closed form is no longer finite (0 if never <= limit):
    the position where a^-t leaves the dtype's range."""
    x = torch.ones(limit, dtype=dtype)
    bad = ~torch.isfinite(closed_form_unblocked(x, a))
    return int(bad.nonzero()[0].item()) + 1 if bad.any() else 0
