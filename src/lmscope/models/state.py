"""Putting weights into a model: the one check that a state dict fits before it is loaded."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import torch
from torch import nn

from lmscope.errors import CheckpointError
from lmscope.i18n import Message

_Net = TypeVar("_Net", bound=nn.Module)


def load_checked(
    model: _Net,
    state: dict[str, torch.Tensor],
    source: str,
    *,
    allow_nonfinite: bool = False,
) -> _Net:
    """Load ``state`` into ``model`` (as float32) after checking that every name is there, no
    name is extra, every shape matches and (unless ``allow_nonfinite``, for people studying
    broken models) every value is finite; a failure is one line naming the first culprit."""
    check_fit(model.state_dict(), state, source)
    if not allow_nonfinite:
        check_finite(state, source)
    model.load_state_dict({k: v.float() for k, v in state.items()})
    return model.eval()


def check_fit(expected: dict[str, torch.Tensor], state: dict[str, torch.Tensor], source: str):
    """Every name there, none extra, every shape the one the config implies."""
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing:
        raise CheckpointError("error.weights.missing", source=source, names=str(missing[:3]))
    if unexpected:
        raise CheckpointError("error.weights.unexpected", source=source, names=str(unexpected[:3]))
    for key, tensor in state.items():
        if tensor.shape != expected[key].shape:
            raise CheckpointError(
                "error.weights.shape",
                source=source,
                key=key,
                shape=str(tuple(tensor.shape)),
                implied=str(tuple(expected[key].shape)),
            )
        # load_state_dict would cast whole numbers (or bools) to float without a word
        if expected[key].is_floating_point() and not tensor.is_floating_point():
            raise CheckpointError(
                "error.weights.not-float",
                source=source,
                key=key,
                dtype=str(tensor.dtype).removeprefix("torch."),
            )


def build_checked(
    make: Callable[[], _Net],
    n_layer: int,
    state: dict[str, torch.Tensor],
    source: str,
    *,
    allow_nonfinite: bool = False,
) -> _Net:
    """``make()`` the network a config describes and load ``state`` into it; but first refuse,
    in one line and before allocating anything, a config the weights cannot fill (a damaged or
    hand-edited config would otherwise ask for terabytes, or build layers for hours): more
    layers than the weights have tensors, or any shape the config implies that they lack."""
    if n_layer > len(state):
        raise CheckpointError("error.weights.too-few", source=source, layers=n_layer, n=len(state))
    try:
        with torch.device("meta"), weights_left_unfilled():  # shapes without memory
            shaped = make()
    except (RuntimeError, NotImplementedError):  # an init that needs real numbers
        shaped = None
    if shaped is not None:
        check_fit(shaped.state_dict(), state, source)
    try:
        with weights_left_unfilled():  # load_checked fills every one of them
            model = make()
    except (RuntimeError, MemoryError) as err:  # a size beyond this machine (RoPE tables...)
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise CheckpointError("error.weights.cannot-build", source=source, why=first) from None
    home = _weights_home.get()
    if home is not None:
        home(model)  # before the weights are in: they are copied once, into their home
    return load_checked(model, state, source, allow_nonfinite=allow_nonfinite)


def build_from_hf(
    model_class: Any,
    hf_config: dict,
    hf_state: dict[str, torch.Tensor],
    source: str,
    *,
    allow_nonfinite: bool = False,
) -> Any:
    """A float32 ``model_class`` in eval mode from a Hugging Face config.json dict and state
    dict: its ``config_class`` reads the config, its ``state_from_hf`` gives the tensors our
    names, and ``build_checked`` builds it. Every family is built this way."""
    config = model_class.config_class.from_hf(hf_config)
    state = model_class.state_from_hf(hf_state, config)
    return build_checked(
        lambda: model_class(config), config.n_layer, state, source, allow_nonfinite=allow_nonfinite
    )


# Where build_checked moves a network's (still unfilled) weights before loading them, if
# anywhere: the engine's huge-page buffer, set for one load by weights_built_in.
_weights_home: ContextVar[Callable[[nn.Module], object] | None] = ContextVar(
    "weights_home", default=None
)


@contextmanager
def weights_built_in(home: Callable[[nn.Module], object] | None) -> Iterator[None]:
    """Inside, build_checked hands each network it builds to ``home`` before filling it, so
    that weights meant to live elsewhere (one huge-page buffer) are copied there once, instead
    of filled in place and then moved."""
    token = _weights_home.set(home)
    try:
        yield
    finally:
        _weights_home.reset(token)


# nn.init's fills, which modules call as they are built (reset_parameters, _init_weights)
_FILLS = (
    "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
    "sparse_",
)  # fmt: skip
_fills_lock = threading.Lock()


@contextmanager
def weights_left_unfilled() -> Iterator[None]:
    """Build modules without drawing their weights: nn.init's fills do nothing inside. For a
    network whose every weight is loaded next (SmolLM2's random init took 5 s, and 3 s more on
    the meta device, where it pulls in torch's compiler). nn.init is shared by the process, so
    builds take turns."""
    with _fills_lock:
        saved = {name: getattr(nn.init, name) for name in _FILLS}
        try:
            for name in saved:
                setattr(nn.init, name, _left_as_is)
            yield
        finally:
            for name, fill in saved.items():
                setattr(nn.init, name, fill)


def _left_as_is(tensor: torch.Tensor, *args, **kwargs) -> torch.Tensor:
    return tensor


# what ends the error about NaN or infinite weights: the Python keyword (engine.advice names
# the front doors' own words in its place)
NONFINITE_ADVICE = "error.advice.allow-nonfinite"


def check_finite(state: dict[str, torch.Tensor], source: str) -> None:
    """One sum per tensor; the first NaN or infinity is named with its tensor."""
    for key, tensor in state.items():
        if tensor.is_floating_point() and not _all_finite(tensor):
            bad = (~torch.isfinite(tensor)).sum().item()
            nan = torch.isnan(tensor).any()
            raise CheckpointError(
                "error.weights.nonfinite",
                source=source,
                key=key,
                n=int(bad),
                kind="NaN" if nan else Message("error.weights.part.infinite"),
                advice=Message(NONFINITE_ADVICE),  # a front door without the keyword swaps it
            )


def _all_finite(tensor: torch.Tensor) -> bool:
    # A NaN or infinity anywhere makes the sum non-finite, so a finite sum clears the tensor
    # without the boolean mask isfinite builds (135 MB for SmolLM2, 0.4 s of each load); a sum
    # that overflowed on large finite values is looked at element by element.
    total = tensor.sum(dtype=torch.float32)
    return bool(torch.isfinite(total)) or bool(torch.isfinite(tensor).all())
