"""``lmscope train`` in a container: its memory limit, not the machine's, bounds the model."""

from __future__ import annotations

import pytest

from lmscope.cli import main

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")


def test_a_container_limit_below_the_model_refuses_it(
    shakespeare_file, tmp_path, capsys, monkeypatch
):
    from lmscope.engine import machine_memory

    # the machine has plenty; the control group this process runs in has 1 MB left
    monkeypatch.setattr(machine_memory, "_meminfo_available", lambda: 64 << 30)
    monkeypatch.setattr(machine_memory, "cgroup_room", lambda *a: 1_000_000)
    out = tmp_path / "wide"
    corpus = shakespeare_file(8_000)
    argv = ["train", "--data", str(corpus), "--layers", "1", "--heads", "2", "--dim", "128"]
    argv += ["--context", "16", "--batch", "4", "--iters", "2", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lmscope: error:") and "\n" not in err
    assert "1.0 MB" in err and "available" in err
    assert not out.exists()
