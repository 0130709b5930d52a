"""How much memory this process may use: the machine's, within its control group's limit.

/proc/meminfo speaks for the whole machine. In a container (Docker, Kubernetes, a CI runner)
the control group's limit is lower, and a process that passes it is killed without a word; so
a check made before long work ("does this model fit?") takes the smaller of the two.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")
NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a number near 2**63
# (limit file, usage file, the page cache in memory.stat that the kernel may drop) by version
V2 = ("memory.max", "memory.current", "inactive_file")
V1 = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")


def available_bytes() -> int | None:
    """Bytes this process could still allocate (None when it cannot be told)."""
    known = [n for n in (_meminfo_available(), cgroup_room()) if n is not None]
    return min(known, default=None)


def total_bytes() -> int | None:
    """All the memory this process may ever use (not what is free now)."""
    known = [n for n in (physical_bytes(), cgroup_limit()) if n is not None]
    return min(known, default=None)


def cgroup_room(root: Path = CGROUP_ROOT, self_file: Path = SELF_CGROUP) -> int | None:
    """Limit minus use (less the page cache it may drop) of the tightest limited control group
    this process is in, or None where none is limited or none can be read."""
    rooms = []
    for folder, (limit_name, usage_name, cache_name) in _groups(root, self_file):
        limit, usage = _number(folder / limit_name), _number(folder / usage_name)
        if limit is None or usage is None:
            continue
        usage -= min(usage, _stat(folder / "memory.stat", cache_name))
        rooms.append(max(0, limit - usage))
    return min(rooms, default=None)


def cgroup_limit(root: Path = CGROUP_ROOT, self_file: Path = SELF_CGROUP) -> int | None:
    """The tightest memory limit of the control groups this process is in, or None."""
    limits = (_number(folder / names[0]) for folder, names in _groups(root, self_file))
    return min((n for n in limits if n is not None), default=None)


def _groups(root: Path, self_file: Path) -> Iterator[tuple[Path, tuple[str, str, str]]]:
    """This process's control group folders with memory files, and each one's parents (a
    parent's limit binds its children), for cgroup v2 and v1's memory controller."""
    try:
        lines = self_file.read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            base, names = root, V2
        elif "memory" in controllers.split(","):
            base, names = root / "memory", V1
        else:
            continue
        folder = base / path.strip().lstrip("/")
        while True:
            yield folder, names
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent


def _number(path: Path) -> int | None:
    """A memory file's byte count; None for "max", v1's no-limit value, or no readable number."""
    try:
        value = int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if 0 <= value < NO_LIMIT else None


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return max(0, int(value))
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return 0


def _meminfo_available() -> int | None:
    try:  # MemAvailable counts the page cache the kernel can drop
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def physical_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
