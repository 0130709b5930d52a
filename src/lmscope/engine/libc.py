"""The C library, found once per process, for glibc's malloc controls (``malloc_trim``,
``mallopt``) that the engine and the server use to keep memory flat."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def libc() -> ctypes.CDLL | None:
    """glibc (or the system's C library), or None where there is none to open.

    ``ctypes.util.find_library`` runs ``ldconfig -p`` in a subprocess; every model load and
    server start used to pay for that, so the usual name is tried first and the answer kept."""
    try:
        return ctypes.CDLL("libc.so.6")  # glibc's soname on every Linux
    except OSError:
        pass
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"))
    except (OSError, TypeError):
        return None
