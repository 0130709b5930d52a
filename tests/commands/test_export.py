"""lmscope export: a lean, loadable copy of a model folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import lmscope
from lmscope.cli import main


@pytest.mark.slow
def test_export_float16_round_trip(tmp_path, tiny_hf_dir, tiny_model, capsys):
    out = tmp_path / "exported"
    assert main(["export", str(tiny_hf_dir), str(out), "--dtype", "float16", "--name", "tiny"]) == 0
    again = lmscope.load(out)
    assert again.name == "tiny" and again.tokenizer.encode("hello") == [31373]
    ids = tiny_model.encode("Data visualization empowers users to")
    assert (again.logits(ids) - tiny_model.logits(ids)).abs().max() < 0.05
    weights = out / "model.safetensors"
    assert weights.stat().st_size < (tiny_hf_dir / "model.safetensors").stat().st_size * 0.6
    assert {p.name for p in out.iterdir()} >= {
        "lmscope.json",
        "model.safetensors",
        "encoder.json",
        "vocab.bpe",
    }
    assert main(["export", str(out), str(out)]) == 2
    assert "different output folder" in capsys.readouterr().err
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.slow
def test_an_export_keeps_the_runs_sample_timeline(tmp_path, capsys):
    """The exported copy of a char model kept no timeline.json, so its /rnn page and
    ``lmscope sample --timeline`` had no samples over training to show."""
    from lmscope.engine.loading import ASSET_MODELS

    out = tmp_path / "shared"
    assert main(["export", "warpeace-lstm", str(out)]) == 0
    for name in ("timeline.json", "timeline.md"):
        assert (out / name).read_bytes() == (ASSET_MODELS / "warpeace-lstm" / name).read_bytes()
    capsys.readouterr()
    assert main(["sample", "--timeline", str(out)]) == 0
    assert "iteration" in capsys.readouterr().out.lower()
    tiny = tmp_path / "tiny"
    assert main(["export", "warpeace-lstm", str(tiny)]) == 0  # a model without one: none made
    (tiny / "timeline.json").unlink()
    (tiny / "timeline.md").unlink()
    assert main(["export", str(tiny), str(tmp_path / "again")]) == 0
    assert not (tmp_path / "again" / "timeline.json").exists()
    (tiny / "timeline.json").write_text("{ not json", encoding="utf-8")  # a broken one
    capsys.readouterr()
    assert main(["export", str(tiny), str(tmp_path / "broken")]) == 2
    err = capsys.readouterr().err
    assert "timeline.json" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "broken").exists()  # refused before anything is written


# --- export never destroys (issue 16, item 4): every case lists the tree before and after ---


def tree(root) -> dict[str, tuple]:
    """Every path under ``root``: (kind, size, content hash) of files, ("dir",) of folders."""
    import hashlib

    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_dir():
            out[key] = ("dir",)
        else:
            out[key] = ("file", path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


@pytest.fixture
def model_dir(tmp_path, tiny_hf_dir):
    """A copy of the tiny model inside the test's folder, so the tree covers it."""
    import shutil

    return Path(shutil.copytree(tiny_hf_dir, tmp_path / "m"))


def refused(argv, capsys, *words) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmscope: error: "), err
    for word in words:
        assert word in err, err
    return err


def test_a_user_folder_is_never_replaced(tmp_path, model_dir, capsys):
    user = tmp_path / "userdir"
    user.mkdir()
    (user / "notes.txt").write_text("x")
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(user)], capsys, "notes.txt", "not an lmscope model")
    refused(["export", str(model_dir), str(user), "--overwrite"], capsys, "notes.txt")
    assert tree(tmp_path) == before


def test_a_file_is_never_turned_into_a_folder(tmp_path, model_dir, capsys):
    target = tmp_path / "target"
    target.write_text("keep me")
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(target)], capsys, "is a file")
    refused(["export", str(model_dir), str(target), "--overwrite"], capsys, "is a file")
    assert tree(tmp_path) == before  # no .target.old either


def test_the_destination_cannot_hold_or_sit_inside_the_source(tmp_path, model_dir, capsys):
    (tmp_path / "other.txt").write_text("a neighbour")
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(tmp_path)], capsys, "contains the model")
    refused(["export", str(model_dir), str(tmp_path), "--overwrite"], capsys, "contains")
    refused(["export", str(model_dir), str(model_dir / "inside")], capsys, "inside the model")
    refused(["export", str(model_dir), str(model_dir)], capsys, "different output folder")
    relative = Path("m") / ".." / "m" / "sub"  # the same check after resolving
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        refused(["export", "m", str(relative)], capsys, "inside the model")
    assert tree(tmp_path) == before


def test_unwritable_destinations_are_one_line(tmp_path, model_dir, capsys):
    (tmp_path / "afile").write_text("x")
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(tmp_path / "afile" / "sub")], capsys, "afile")
    refused(["export", str(model_dir), "/proc/nope"], capsys, "/proc/nope")
    assert tree(tmp_path) == before


def test_a_read_only_destination_is_refused_before_loading(
    tmp_path, model_dir, capsys, monkeypatch, read_only
):
    """Write permission is tried with a real file, as train's and the lab's --out are: root
    passes os.access everywhere, and a read-only disk refuses only the write itself."""
    read_only(tmp_path)
    monkeypatch.setattr(lmscope, "load", _never_loaded)
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(tmp_path / "out")], capsys, "Read-only file system")
    assert tree(tmp_path) == before


def _never_loaded(*args, **kwargs):
    raise AssertionError("the destination is checked before the model is loaded")


@pytest.mark.slow
def test_overwrite_replaces_only_a_previous_lmscope_model(tmp_path, model_dir, capsys):
    out = tmp_path / "exported"
    (tmp_path / "neighbour.txt").write_text("untouched")
    assert main(["export", str(model_dir), str(out), "--name", "first"]) == 0
    before = tree(tmp_path)
    # an lmscope model is there: replacing it needs --overwrite
    refused(["export", str(model_dir), str(out)], capsys, "--overwrite", "first")
    assert tree(tmp_path) == before
    assert main(["export", str(model_dir), str(out), "--name", "second", "--overwrite"]) == 0
    after = tree(tmp_path)
    outside = {k: v for k, v in after.items() if not k.startswith("exported")}
    assert outside == {k: v for k, v in before.items() if not k.startswith("exported")}
    assert lmscope.load(out).name == "second"
    assert not list(tmp_path.glob(".exported*"))  # the swap left nothing behind
    # a model folder holding a file lmscope did not write is not replaced either
    (out / "my-notes.md").write_text("mine")
    before = tree(tmp_path)
    refused(["export", str(model_dir), str(out), "--overwrite"], capsys, "my-notes.md")
    assert tree(tmp_path) == before


@pytest.mark.slow
def test_an_empty_folder_is_a_fine_destination(tmp_path, model_dir):
    out = tmp_path / "empty"
    out.mkdir()
    assert main(["export", str(model_dir), str(out)]) == 0
    assert (out / "model.safetensors").is_file()


def test_an_empty_run_or_out_is_refused(tmp_path, model_dir, capsys, monkeypatch):
    """An empty name was the current folder: 'export "" OUT' said OUT was inside the model."""
    monkeypatch.chdir(tmp_path)
    before = tree(tmp_path)
    refused(["export", "", str(tmp_path / "out")], capsys, "RUN is empty; name a model folder")
    refused(["export", " ", str(tmp_path / "out")], capsys, "RUN is empty")
    refused(["export", str(model_dir), ""], capsys, "OUT is empty; name the folder to write")
    assert tree(tmp_path) == before
