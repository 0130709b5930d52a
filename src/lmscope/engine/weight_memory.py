"""Weights in huge pages: a generation step reads every weight once, and on a CPU it is bound by
how fast memory streams to the cores. Spread over ordinary 4 KiB pages, 540 MB of weights (SmolLM2
in float32) cross about 130,000 page boundaries per token, each a translation the processor must
look up; in one buffer backed by 2 MiB pages they cross about 270. On the 2-core machine of
BENCHMARKS.md that made the weight-reading floor of a step about 6% faster.

Linux only, through transparent huge pages (``madvise`` or ``always`` mode); elsewhere, or when
the kernel refuses, the weights stay where they are and nothing else changes.
"""

from __future__ import annotations

import mmap
import sys

import torch
from torch import nn

from lmscope.engine.libc import libc

HUGE_PAGE = 2 << 20
ALIGN = 64  # bytes: a cache line, so every tensor starts where vector loads like it

__all__ = ["give_back_freed_memory", "pack_weights"]


def pack_weights(net: nn.Module, *, values: bool = True) -> bool:
    """Move every parameter of a CPU model into one buffer advised to use transparent huge pages.
    The parameters keep their identity, values, dtypes and shapes (tied ones stay tied); only
    the memory under them moves. Returns whether they were moved. With ``values=False`` their
    values are left behind (for a network whose weights are loaded next, into the buffer)."""
    params = list(net.parameters())  # a tied parameter appears once
    if not params or not _huge_pages_possible() or any(p.device.type != "cpu" for p in params):
        return False
    offsets, size = [], 0
    for p in params:
        size = -(-size // ALIGN) * ALIGN
        offsets.append(size)
        size += p.numel() * p.element_size()
    try:
        length = -(-size // HUGE_PAGE) * HUGE_PAGE
        buffer = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        buffer.madvise(mmap.MADV_HUGEPAGE)
    except (OSError, ValueError):
        return False
    memory = torch.frombuffer(buffer, dtype=torch.uint8)  # keeps the buffer alive
    with torch.no_grad():
        for p, start in zip(params, offsets, strict=True):
            nbytes = p.numel() * p.element_size()
            view = memory[start : start + nbytes].view(p.dtype).view(p.shape)
            if values:
                view.copy_(p.data)
            p.data = view
    give_back_freed_memory()  # the weights' old home, or the process would hold both copies
    return True


def give_back_freed_memory() -> bool:
    """glibc's malloc_trim: return the freed parts of the heap to the kernel; True when it ran
    (elsewhere, or without glibc, nothing)."""
    c = libc()
    if c is None or not hasattr(c, "malloc_trim"):
        return False
    c.malloc_trim(0)
    return True


def _huge_pages_possible() -> bool:
    if not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_HUGEPAGE"):
        return False
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as f:
            return "[never]" not in f.read()
    except OSError:
        return False
