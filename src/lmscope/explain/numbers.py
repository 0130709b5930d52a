"""Tensors to JSON-ready lists: rounded to significant digits, -inf/NaN as None.

Rounding is vectorised (numpy) because attention windows hold thousands of numbers and the
first response has a time budget; a per-element Python loop would dominate it.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def as_array(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().to(torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def rounded(x, digits: int = 6) -> list:
    """Nested lists of floats with ``digits`` significant digits; non-finite values -> None."""
    a = as_array(x)
    finite = np.isfinite(a)
    magnitude = np.where(finite & (a != 0), np.abs(a), 1.0)
    exponent = digits - 1 - np.floor(np.log10(magnitude))
    with np.errstate(over="ignore", invalid="ignore"):
        # Multiply/divide by exact powers of ten so the result prints as a short decimal.
        up = 10.0 ** np.clip(exponent, 0, 300)
        down = 10.0 ** np.clip(-exponent, 0, 300)
        out = np.where(exponent >= 0, np.round(a * up) / up, np.round(a / down) * down)
    if finite.all():
        return out.tolist()
    obj = out.astype(object)
    obj[~finite] = None
    return obj.tolist()


# Known gap, found by the type checker: many views declare number()'s value as a plain float
# (each such line says "None if not finite: see numbers.number"), so a view of a model loaded
# with allow_nonfinite whose numbers hold NaN raises pydantic's ValidationError where the
# view should show NaN as null (their fields would need Number, and their readers to take null).
def number(x, digits: int = 6) -> float | None:
    """One value as ``rounded`` gives it, in plain Python: a view has dozens of single numbers
    (norms, means, scales), and numpy's fixed cost per call was most of a layer view's time."""
    v = float(x.item() if hasattr(x, "item") else x)
    if not math.isfinite(v):
        return None
    exponent = digits - 1 - math.floor(math.log10(abs(v) if v != 0 else 1.0))
    if exponent >= 0:
        up = 10.0 ** min(exponent, 300)
        out = round(v * up) / up
    else:
        down = 10.0 ** min(-exponent, 300)
        out = round(v / down) * down
    return math.copysign(out, v) if out == 0 else out  # numpy keeps the sign of a rounded zero


Number = float | None  # None where the model's value is -inf (a masked score) or NaN
