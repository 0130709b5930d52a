"""Checkpoint folders: round trips without pickle, atomic replacement, crash recovery."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time

import numpy as np
import pytest
import torch

from lmscope.errors import CheckpointError
from lmscope.formats import checkpoints
from lmscope.tokenizers import CharTokenizer


def _parts(iteration: int, size: int = 64) -> dict:
    """A checkpoint whose every number tells which iteration wrote it."""
    weights = {"w": torch.full((size,), float(iteration)), "b": torch.arange(3.0) + iteration}
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    model(torch.ones(1, 4)).sum().backward()
    optimizer.step()
    return dict(
        arch="toy",
        model_config={"size": size},
        weights=weights,
        tokenizer=CharTokenizer("abc"),
        optimizer_state=optimizer.state_dict(),
        trainer_state={"iteration": iteration, "config": {"seed": 1}, "history": {}},
    )


def test_round_trip_restores_every_part(tmp_path):
    torch.manual_seed(3)
    np.random.seed(4)
    random.seed(5)
    rng = checkpoints.capture_rng()
    expected = (torch.rand(3), np.random.rand(3), random.random())
    parts = _parts(7)
    carry = (torch.randn(1, 2, 3), torch.randn(1, 2, 3))
    out = checkpoints.save_checkpoint(tmp_path / "ck", **parts, rng_state=rng, carry=carry)

    ck = checkpoints.load_checkpoint(out)
    assert ck.iteration == 7
    assert ck.meta["format"] == "lmscope" and ck.meta["arch"] == "toy"
    assert ck.meta["model"] == {"size": 64}
    assert torch.equal(ck.weights["w"], parts["weights"]["w"])
    saved_opt = parts["optimizer_state"]
    assert ck.optimizer["param_groups"][0]["betas"] == saved_opt["param_groups"][0]["betas"]
    for index, state in saved_opt["state"].items():
        for name, value in state.items():
            assert torch.equal(ck.optimizer["state"][index][name], value)
    assert all(torch.equal(a, b) for a, b in zip(ck.carry, carry, strict=True))
    # Restoring the generators replays the very same draws.
    checkpoints.restore_rng(ck.rng)
    assert torch.equal(torch.rand(3), expected[0])
    assert np.array_equal(np.random.rand(3), expected[1])
    assert random.random() == expected[2]


def test_optimizer_reloads_into_torch(tmp_path):
    parts = _parts(1)
    checkpoints.save_checkpoint(tmp_path / "ck", **parts)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    optimizer.load_state_dict(checkpoints.load_checkpoint(tmp_path / "ck").optimizer)
    assert optimizer.state_dict()["param_groups"][0]["betas"] == (0.9, 0.999)
    assert float(optimizer.state_dict()["state"][0]["step"]) == 1.0


def test_only_json_and_safetensors_are_written(tmp_path):
    out = checkpoints.save_checkpoint(tmp_path / "ck", **_parts(1))
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "chars.json",
        "lmscope.json",
        "model.safetensors",
        "optimizer.safetensors",
        "trainer.json",
        "trainer.safetensors",
    ]
    for name in names:
        if name.endswith(".json"):
            json.loads((out / name).read_text())
        else:  # safetensors starts with an 8-byte header length, then a JSON header
            raw = (out / name).read_bytes()
            header = int.from_bytes(raw[:8], "little")
            json.loads(raw[8 : 8 + header])
    assert not list(tmp_path.glob(".*")), "no temporary folders left behind"


def test_folder_states(tmp_path):
    assert checkpoints.folder_state(tmp_path / "nothing") == "missing"
    (tmp_path / "empty").mkdir()
    assert checkpoints.folder_state(tmp_path / "empty") == "empty"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    assert checkpoints.folder_state(tmp_path / "notes") == "other"
    (tmp_path / "file").write_text("x")
    assert checkpoints.folder_state(tmp_path / "file") == "other"
    checkpoints.save_checkpoint(tmp_path / "ck", **_parts(2))
    assert checkpoints.folder_state(tmp_path / "ck") == "checkpoint"
    assert checkpoints.checkpoint_iteration(tmp_path / "ck") == 2


def test_a_failed_write_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    out = tmp_path / "ck"
    checkpoints.save_checkpoint(out, **_parts(1))
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoints, "save_file", broken_save)
    with pytest.raises(OSError):
        checkpoints.save_checkpoint(out, **_parts(2))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


def test_a_crash_between_the_two_renames_is_recovered(tmp_path, monkeypatch):
    out = tmp_path / "ck"
    checkpoints.save_checkpoint(out, **_parts(1))
    real_replace = os.replace
    calls = []

    def dies_on_second_rename(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process stops after out -> .ck.old
        real_replace(src, dst)

    monkeypatch.setattr(checkpoints.os, "replace", dies_on_second_rename)
    with pytest.raises(KeyboardInterrupt):
        checkpoints.save_checkpoint(out, **_parts(2))
    monkeypatch.setattr(checkpoints.os, "replace", real_replace)
    assert not out.exists() and (tmp_path / ".ck.old").is_dir()

    assert checkpoints.load_checkpoint(out).iteration == 1  # recovered, not lost
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
    checkpoints.save_checkpoint(out, **_parts(3))
    assert checkpoints.load_checkpoint(out).iteration == 3


def _write_forever(folder: str, ready, parts: dict) -> None:
    # A forked child must not start thread pools or autograd: one thread, no backward.
    torch.set_num_threads(1)
    iteration = 1
    while True:
        weights = {"w": torch.full((400_000,), float(iteration)), "b": torch.zeros(3)}
        state = {"iteration": iteration, "config": {}, "history": {}}
        checkpoints.save_checkpoint(folder, **dict(parts, weights=weights, trainer_state=state))
        ready.set()
        iteration += 1


@pytest.mark.slow
def test_kill_9_mid_write_keeps_a_whole_checkpoint(tmp_path):
    out = tmp_path / "ck"
    context = multiprocessing.get_context("fork")  # no re-import of torch: a fast child
    parts = _parts(0, size=400_000)
    mid_write = 0
    for delay in (0.0, 0.013, 0.031, 0.057, 0.089):
        ready = context.Event()
        child = context.Process(target=_write_forever, args=(str(out), ready, parts))
        child.start()
        assert ready.wait(120), "the writer never finished a checkpoint"  # only if hung
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        mid_write += sorted(p.name for p in tmp_path.iterdir()) != ["ck"]  # debris: it hit a save
        ck = checkpoints.load_checkpoint(out)
        # Whatever moment the kill hit, the folder is one whole checkpoint.
        assert torch.all(ck.weights["w"] == ck.iteration)
        assert ck.meta["model"] == {"size": 400_000}
    assert [p.name for p in tmp_path.iterdir()] == ["ck"]
    assert mid_write >= 1, "no kill landed inside a save; the test proved nothing"


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda out: (out / "trainer.json").write_text("{not json"), "not valid JSON"),
        (lambda out: (out / "trainer.json").unlink(), "is not a training checkpoint"),
        (
            lambda out: (out / "model.safetensors").write_bytes(b"\x10\x00\x00"),
            "cannot read weights",
        ),
        (
            lambda out: (out / "trainer.json").write_text(json.dumps({"format": "other"})),
            "not a version-1 lmscope trainer state",
        ),
    ],
)
def test_damaged_checkpoints_raise_one_clear_error(tmp_path, damage, message):
    out = checkpoints.save_checkpoint(tmp_path / "ck", **_parts(1))
    damage(out)
    with pytest.raises(CheckpointError, match=message) as err:
        checkpoints.load_checkpoint(out)
    assert "\n" not in str(err.value)


def test_loading_a_missing_folder_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        checkpoints.load_checkpoint(tmp_path / "nowhere")


# --- files lmscope did not write ------------------------------------------------------------------


def _user_files(folder) -> None:
    (folder / "NOTES.md").write_text("my notes")
    (folder / "plots").mkdir()
    (folder / "plots" / "a.png").write_bytes(b"png")


def _assert_user_files(folder) -> None:
    assert (folder / "NOTES.md").read_text() == "my notes"
    assert (folder / "plots" / "a.png").read_bytes() == b"png"


def test_a_save_carries_over_files_lmscope_did_not_write(tmp_path):
    out = tmp_path / "ck"
    checkpoints.save_checkpoint(out, **_parts(1), extra_files={"timeline.json": b"{}"})
    _user_files(out)
    checkpoints.save_checkpoint(out, **_parts(2))
    _assert_user_files(out)
    # lmscope's own file that the new save lacks goes: a stale timeline must not linger
    assert not (out / "timeline.json").exists()
    assert checkpoints.load_checkpoint(out).iteration == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


@pytest.mark.parametrize("dies_at", [3, 4])  # while carrying the user's files back, at each one
def test_a_crash_after_the_swap_keeps_the_users_files(tmp_path, monkeypatch, dies_at):
    out = tmp_path / "ck"
    checkpoints.save_checkpoint(out, **_parts(1))
    _user_files(out)
    real_replace = os.replace
    calls = []

    def dies_while_carrying(src, dst):
        calls.append(dst)
        if len(calls) == dies_at:
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dies_while_carrying)
    with pytest.raises(KeyboardInterrupt):
        checkpoints.save_checkpoint(out, **_parts(2))
    monkeypatch.setattr(os, "replace", real_replace)

    checkpoints.recover(out)
    _assert_user_files(out)
    assert checkpoints.load_checkpoint(out).iteration == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]


def test_recover_after_a_kill_mid_carry_keeps_the_users_files(tmp_path):
    """A kill -9 after the swap and before the user's files came back: .ck.old still holds
    them next to lmscope's old files; recover moves them into the new folder."""
    out = tmp_path / "ck"
    checkpoints.save_checkpoint(out, **_parts(1))
    old = tmp_path / ".ck.old"
    os.replace(out, old)
    _user_files(old)
    checkpoints.save_checkpoint(tmp_path / "new", **_parts(2))
    os.replace(tmp_path / "new", out)

    checkpoints.recover(out)
    _assert_user_files(out)
    assert checkpoints.load_checkpoint(out).iteration == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck"]
