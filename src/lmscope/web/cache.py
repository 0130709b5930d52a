"""The server's one cache: values kept by key, least recently used evicted first once their
total size passes a byte budget (or their number passes ``max_entries``).

A missing value is computed behind a lock (by default the model gate, so one forward pass runs
at a time); a request that waited for the lock looks again first, so two requests for the same
new value cost one computation.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from pydantic import BaseModel

_MISSING = object()
NOT_KEPT = math.inf  # the size a compute gives a value it wants answered but not kept


class CacheStats(BaseModel):
    entries: int
    bytes: int
    max_bytes: int
    hits: int
    misses: int


class LRUCache:
    def __init__(self, max_bytes: int = 1 << 30, max_entries: int = 64):
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self._lock = threading.Lock()  # guards the entries
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    def get(self, key: Hashable, default=None):
        with self._lock:
            found = self._entries.get(key, _MISSING)
            if found is _MISSING:
                return default
            self._entries.move_to_end(key)
            return found[0]

    def hit(self, key: Hashable, default=None):
        """The value under ``key``, counted as a hit; ``default`` (not counted) when missing."""
        value = self.get(key, _MISSING)
        if value is _MISSING:
            return default
        self.hits += 1
        return value

    def put(self, key: Hashable, value, nbytes: int) -> None:
        if nbytes > self.max_bytes:
            return  # too big to keep: answer this request and forget it
        with self._lock:
            if key in self._entries:
                self._bytes -= self._entries.pop(key)[1]
            self._entries[key] = (value, nbytes)
            self._bytes += nbytes
            while self._bytes > self.max_bytes or len(self._entries) > self.max_entries:
                _, (_, size) = self._entries.popitem(last=False)
                self._bytes -= size

    def cached(
        self, key: Hashable, compute: Callable[[], tuple[Any, int]], lock=None
    ) -> tuple[Any, bool]:
        """(the value under ``key``, whether it was cached), computing it behind ``lock`` and
        keeping it when missing. ``compute`` returns (value, its size in bytes)."""
        value = self.hit(key, _MISSING)
        if value is not _MISSING:
            return value, True
        with lock if lock is not None else contextlib.nullcontext():
            value = self.hit(key, _MISSING)  # filled while this request waited?
            if value is not _MISSING:
                return value, True
            self.misses += 1
            value, nbytes = compute()
        self.put(key, value, nbytes)
        return value, False

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(
                entries=len(self._entries),
                bytes=self._bytes,
                max_bytes=self.max_bytes,
                hits=self.hits,
                misses=self.misses,
            )

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
