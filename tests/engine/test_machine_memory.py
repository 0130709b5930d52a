"""The memory a process may use: the machine's, within its control group's limit."""

from __future__ import annotations

from pathlib import Path

from lmscope.engine import machine_memory

GIB = 1 << 30


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _self(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "self-cgroup"
    path.write_text(text)
    return path


def test_a_v2_limit_leaves_room_minus_what_the_group_uses(tmp_path):
    root = tmp_path / "cg"
    _tree(
        root,
        {
            "box/memory.max": f"{4 * GIB}\n",
            "box/memory.current": f"{3 * GIB}\n",
            "box/memory.stat": f"anon 123\ninactive_file {GIB // 2}\n",
        },
    )
    me = _self(tmp_path, "0::/box\n")
    # 4 GiB allowed, 3 used of which half a GiB is page cache the kernel can drop
    assert machine_memory.cgroup_room(root, me) == GIB + GIB // 2
    assert machine_memory.cgroup_limit(root, me) == 4 * GIB


def test_the_tightest_limit_of_the_group_and_its_parents_counts(tmp_path):
    root = tmp_path / "cg"
    _tree(
        root,
        {
            "memory.max": "max\n",
            "a/memory.max": f"{2 * GIB}\n",
            "a/memory.current": f"{GIB}\n",
            "a/b/memory.max": "max\n",
            "a/b/memory.current": "100\n",
        },
    )
    me = _self(tmp_path, "0::/a/b\n")
    assert machine_memory.cgroup_room(root, me) == GIB
    assert machine_memory.cgroup_limit(root, me) == 2 * GIB


def test_a_v1_memory_controller_limit_counts(tmp_path):
    root = tmp_path / "cg"
    _tree(
        root,
        {
            "memory/memory.limit_in_bytes": "9223372036854771712\n",  # v1's "no limit"
            "memory/job/memory.limit_in_bytes": f"{GIB}\n",
            "memory/job/memory.usage_in_bytes": f"{GIB // 4}\n",
            "memory/job/memory.stat": "total_inactive_file 0\n",
        },
    )
    me = _self(tmp_path, "9:pids:/\n4:memory:/job\n0::/\n")
    assert machine_memory.cgroup_room(root, me) == GIB - GIB // 4
    assert machine_memory.cgroup_limit(root, me) == GIB


def test_no_limit_no_cgroups_or_unreadable_files_mean_none(tmp_path):
    root = tmp_path / "cg"
    _tree(root, {"memory/memory.limit_in_bytes": "9223372036854771712\n", "memory.max": "max"})
    me = _self(tmp_path, "4:memory:/\n0::/\n")
    assert machine_memory.cgroup_room(root, me) is None
    assert machine_memory.cgroup_limit(root, me) is None
    assert machine_memory.cgroup_room(tmp_path / "absent", tmp_path / "absent-self") is None
    _tree(root, {"x/memory.max": "garbage", "x/memory.current": "1"})
    assert machine_memory.cgroup_room(root, _self(tmp_path, "0::/x\n")) is None


def test_available_is_the_smaller_of_the_machine_and_the_group(monkeypatch):
    monkeypatch.setattr(machine_memory, "_meminfo_available", lambda: 16 * GIB)
    monkeypatch.setattr(machine_memory, "cgroup_room", lambda *a: 2 * GIB)
    assert machine_memory.available_bytes() == 2 * GIB
    monkeypatch.setattr(machine_memory, "cgroup_room", lambda *a: None)
    assert machine_memory.available_bytes() == 16 * GIB
    monkeypatch.setattr(machine_memory, "physical_bytes", lambda: 32 * GIB)
    monkeypatch.setattr(machine_memory, "cgroup_limit", lambda *a: 8 * GIB)
    assert machine_memory.total_bytes() == 8 * GIB


def test_on_this_machine_the_numbers_are_sane():
    have, total = machine_memory.available_bytes(), machine_memory.total_bytes()
    assert have is not None and total is not None and 0 < have <= total
