"""``lmscope train`` where its checkpoints cannot be written: one line, the last one kept."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from lmscope.cli import main

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")
TINY = "--layers 1 --heads 2 --dim 16 --context 16 --batch 4 --iters 4 --eval-every 2"


@pytest.fixture
def corpus(shakespeare_file) -> Path:
    return shakespeare_file(8_000)


def tiny_args(corpus, out, *extra) -> list[str]:
    settings = [*TINY.split(), "--eval-iters", "1", "--sample-every", "0", "--device", "cpu"]
    return ["train", "--data", str(corpus), *settings, "--out", str(out), *extra]


def _one_line(capsys, after_progress: bool = False) -> str:
    err = capsys.readouterr().err.strip()
    if after_progress:  # the run's own lines come first
        err = err.splitlines()[-1]
    assert err.startswith("lmscope: error:") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def test_an_out_under_a_file_is_refused_before_training(corpus, tmp_path, capsys):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    assert main(tiny_args(corpus, blocker / "run")) == 2
    err = _one_line(capsys)
    assert "--out" in err and "notes.txt" in err and "file" in err
    assert blocker.read_text() == "mine"


def test_an_out_that_cannot_be_written_is_refused_before_training(
    corpus, tmp_path, capsys, monkeypatch
):
    import tempfile

    real = tempfile.TemporaryFile

    def read_only(*args, dir=None, **kwargs):  # noqa: A002 - tempfile's own name
        if dir is not None and Path(dir) == tmp_path:
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", read_only)
    assert main(tiny_args(corpus, tmp_path / "run")) == 2
    err = _one_line(capsys)
    assert "cannot write" in err and "Read-only file system" in err
    assert not (tmp_path / "run").exists()


def test_a_save_that_fails_mid_run_keeps_the_last_checkpoint(corpus, tmp_path, capsys, monkeypatch):
    from lmscope.formats import checkpoints

    out = tmp_path / "run"
    real = checkpoints.save_checkpoint
    calls = []

    def disk_fills(*args, **kwargs):
        calls.append(1)
        if len(calls) > 2:  # the folder is claimed, one evaluation's checkpoint is written
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoints, "save_checkpoint", disk_fills)
    assert main(tiny_args(corpus, out)) == 2
    err = _one_line(capsys, after_progress=True)
    assert "No space left on device" in err and str(out) in err
    assert "iteration 2" in err and "kept" in err and "--resume" in err
    assert checkpoints.checkpoint_iteration(out) == 2
    monkeypatch.setattr(checkpoints, "save_checkpoint", real)
    assert main(["train", "--resume", "--out", str(out), "--no-progress"]) == 0
    assert "done: 4 iterations" in capsys.readouterr().out
