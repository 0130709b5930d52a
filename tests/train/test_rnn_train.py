"""Char-RNNs in the shared trainer: truncated BPTT over streams, exact resume, the sample
timeline (for GPTs too), ``lmscope train --arch lstm`` and ``lmscope sample`` for RNNs, and
one-line refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

import lmscope
from helpers_train import quiet_train
from lmscope.cli import main
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.train import ARCHS, TrainConfig, train
from lmscope.train.adapters import RNN_DEFAULTS, LSTMAdapter

pytestmark = pytest.mark.usefixtures("quiet_fast_cpu")


@pytest.fixture
def corpus(shakespeare_file) -> Path:
    return shakespeare_file(6_000)


def rnn_cfg(corpus: Path, out: Path, arch: str = "lstm", **changes) -> TrainConfig:
    shape = dict(arch=arch, layers=2, dim=24, context=16, batch=4)
    run = dict(iters=8, eval_every=4, eval_iters=2, sample_every=0, out=str(out), device="cpu")
    return TrainConfig(**{**RNN_DEFAULTS, **shape, **run, "data": str(corpus), **changes})


# --- the trainer --------------------------------------------------------------------------------


def test_rnn_families_are_registered_as_stateful_stream_models():
    for arch in ("rnn", "lstm", "gru"):
        assert ARCHS[arch].stateful and ARCHS[arch].default_batches == "stream"


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "optimizer"), [("lstm", "adam"), ("gru", "rmsprop")])
def test_training_learns_and_the_checkpoint_loads_as_an_rnn(corpus, tmp_path, arch, optimizer):
    cfg = rnn_cfg(
        corpus, tmp_path / arch, arch, iters=30, eval_every=10, optimizer=optimizer, lr=1e-2
    )
    lrs = []
    result = train(cfg, progress=False, log=lambda t: None, on_step=lambda s: lrs.append(s.lr))
    uniform = math.log(len(set(corpus.read_text())))
    assert result.evals[-1]["val"] < min(uniform - 0.5, result.evals[0]["val"])
    assert lrs[0] == pytest.approx(cfg.lr) and lrs[-1] < lrs[0] / 5  # decays towards min_lr
    model = lmscope.load(tmp_path / arch)
    assert isinstance(model, RNNLanguageModel) and model.arch == arch
    assert model.config.hidden == 24 and model.config.layers == 2
    meta = json.loads((tmp_path / arch / "lmscope.json").read_text())
    assert meta["arch"] == arch and meta["model"]["cell"] == arch


@pytest.mark.slow
def test_state_is_carried_detached_and_reset_when_the_streams_restart(
    corpus, tmp_path, monkeypatch
):
    seen = []
    honest = LSTMAdapter.forward

    def spy(self, net, x, targets, state):
        h, c = state
        seen.append((bool(h.abs().sum() == 0), h.requires_grad, c.requires_grad))
        return honest(self, net, x, targets, state)

    monkeypatch.setattr(LSTMAdapter, "forward", spy)
    # 5,400 training characters in 4 streams of 1,350: 84 chunks of 16 make an epoch.
    cfg = rnn_cfg(corpus, tmp_path / "run", iters=90, eval_every=0)
    quiet_train(cfg)
    zero = [i for i, (is_zero, *_) in enumerate(seen) if is_zero]
    assert zero == [0, 84]  # fresh at the start and again at the epoch boundary
    assert not any(grad_h or grad_c for _, grad_h, grad_c in seen)  # detached: truncated BPTT


@pytest.mark.slow
def test_lstm_resume_is_exact(corpus, tmp_path):
    # Stopping at 4 with the schedule of an 8-step run, then resuming to 8.
    common = dict(dropout=0.1, decay_iters=8, eval_every=3)
    straight = quiet_train(rnn_cfg(corpus, tmp_path / "a", iters=8, **common))
    quiet_train(rnn_cfg(corpus, tmp_path / "b", iters=4, **common))
    resumed = quiet_train(rnn_cfg(corpus, tmp_path / "b", iters=8, **common), resume=True)
    assert resumed.start_iteration == 4
    assert resumed.losses == straight.losses  # bit for bit, hidden state and dropout included
    a = lmscope.load(tmp_path / "a").net.state_dict()
    b = lmscope.load(tmp_path / "b").net.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_embedding_input_is_a_setting(corpus, tmp_path):
    quiet_train(rnn_cfg(corpus, tmp_path / "run", arch="gru", embed=8, iters=2))
    model = lmscope.load(tmp_path / "run")
    assert model.config.embed == 8 and model.net.embedding.weight.shape[1] == 8


# --- the timeline -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["lstm", "gpt"])
def test_sample_at_keeps_a_timeline_in_the_run_folder(corpus, tmp_path, arch):
    extra = {"heads": 2, "warmup": 1, "optimizer": "adamw"} if arch == "gpt" else {}
    cfg = rnn_cfg(corpus, tmp_path / "run", arch, sample_at=[0, 3, 6], sample_length=40, **extra)
    quiet_train(cfg)
    data = json.loads((tmp_path / "run" / "timeline.json").read_text())
    assert [s["iteration"] for s in data["samples"]] == [0, 3, 6]
    assert data["seed"] == cfg.seed and data["prime"] == "\n" and data["length"] == 40
    assert data["samples"][0]["train_loss"] is None and data["samples"][1]["train_loss"] > 0
    texts = [s["text"] for s in data["samples"]]
    assert all(t.startswith("\n") and len(t) == 41 for t in texts)
    assert len(set(texts)) == 3  # same seed and prime: only the weights changed
    md = (tmp_path / "run" / "timeline.md").read_text()
    assert "## Iteration 3" in md and texts[2] in md
    # The same settings draw the same timeline.
    quiet_train(cfg, overwrite=True)
    again = json.loads((tmp_path / "run" / "timeline.json").read_text())
    assert [s["text"] for s in again["samples"]] == texts


@pytest.mark.slow
def test_timeline_survives_a_resume(corpus, tmp_path):
    common = dict(sample_at=[2, 5], sample_length=20, decay_iters=6)
    quiet_train(rnn_cfg(corpus, tmp_path / "a", iters=6, **common))
    quiet_train(rnn_cfg(corpus, tmp_path / "b", iters=3, **common))
    quiet_train(rnn_cfg(corpus, tmp_path / "b", iters=6, **common), resume=True)
    a = json.loads((tmp_path / "a" / "timeline.json").read_text())["samples"]
    b = json.loads((tmp_path / "b" / "timeline.json").read_text())["samples"]
    assert a == b and [s["iteration"] for s in b] == [2, 5]


def test_sample_points_past_iters_are_announced(corpus, tmp_path):
    """--sample-at 100 with --iters 5 drew nothing and said nothing; `sample --timeline` then
    told the user to train with --sample-at, which they had. Points past --iters stay allowed
    (a run trained in parts plans its whole timeline) and are said aloud."""
    from lmscope.train import train

    said: list[str] = []
    cfg = rnn_cfg(corpus, tmp_path / "run", iters=4, sample_at=[2, 100, 300], sample_length=5)
    train(cfg, progress=False, log=said.append)
    notes = [line for line in said if "--sample-at" in line]
    assert notes == [
        "--sample-at 100, 300 lies past --iters 4: drawn only if the run is resumed that far"
    ]
    data = json.loads((tmp_path / "run" / "timeline.json").read_text())
    assert [s["iteration"] for s in data["samples"]] == [2]


# --- the CLI ------------------------------------------------------------------------------------


LSTM = "--arch lstm --layers 1 --hidden 16 --seq 12 --batch 4 --iters 4 --eval-every 2"


def cli_args(corpus: Path, out: Path, *extra: str) -> list[str]:
    settings = [*LSTM.split(), "--eval-iters", "1", "--sample-every", "0", "--no-progress"]
    return ["train", "--data", str(corpus), *settings, "--out", str(out), *extra]


@pytest.mark.slow
def test_cli_trains_an_lstm_with_rnn_defaults_then_samples(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(cli_args(corpus, out, "--sample-at", "2,4")) == 0
    assert "done: 4 iterations, val loss" in capsys.readouterr().out
    stored = json.loads((out / "trainer.json").read_text())["config"]
    assert stored["dim"] == 16 and stored["context"] == 12 and stored["sample_at"] == [2, 4]
    assert stored["optimizer"] == "adam" and stored["grad_clip"] == 5.0  # the family's defaults
    assert (out / "timeline.md").is_file()

    argv = ["sample", str(out), "--prime", "ROMEO:", "--temperature", "0.7", "--length", "30"]
    assert main([*argv, "--seed", "5"]) == 0
    first = capsys.readouterr().out
    assert first.startswith("ROMEO:") and len(first) == len("ROMEO:") + 31
    assert main([*argv, "--seed", "5"]) == 0
    assert capsys.readouterr().out == first
    assert main(["sample", str(out), "--prime", "ROMEO:", "--argmax", "--length", "10"]) == 0
    greedy = capsys.readouterr().out
    model = lmscope.load(out)
    ids = model.tokenizer.encode("ROMEO:")
    for _ in range(10):
        ids.append(int(model.logits(ids)[-1].argmax()))
    assert greedy == model.decode(ids) + "\n"


@pytest.mark.slow
def test_cli_sample_skips_unknown_characters_only_when_asked(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(cli_args(corpus, out)) == 0
    capsys.readouterr()
    assert main(["sample", str(out), "--prime", "ROMEO§¤:", "--length", "5"]) == 2
    err = capsys.readouterr().err
    assert "'§', '¤'" in err and "--skip-unknown" in err and err.count("\n") == 1
    argv = ["sample", str(out), "--prime", "ROMEO§¤:", "--length", "5", "--skip-unknown"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("ROMEO:")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seq", "0"], "--seq must be a whole number >= 1"),
        (["--hidden", "0"], "--hidden must be a whole number >= 1"),
        (["--hidden", "8", "--dim", "16"], "--hidden and --dim"),
        (["--batch", "400"], "needs at least"),  # a corpus shorter than one batch
        (["--sample-at", "10,x"], "--sample-at"),
        (["--embed", "-1"], "--embed"),
    ],
)
def test_cli_bad_settings_are_one_line(corpus, tmp_path, capsys, extra, message):
    assert main([*cli_args(corpus, tmp_path / "run"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("lmscope: error:") and err.count("\n") == 1


@pytest.mark.slow
def test_another_architecture_is_refused_in_one_line(corpus, tmp_path, capsys):
    gpt_args = [a if a != "lstm" else "gpt" for a in cli_args(corpus, tmp_path / "gpt")]
    assert main([*gpt_args, "--heads", "2"]) == 0
    capsys.readouterr()
    # Resuming a GPT checkpoint as an LSTM.
    argv = ["train", "--resume", "--out", str(tmp_path / "gpt"), "--arch", "lstm"]
    assert main(argv) == 2
    assert "--arch" in capsys.readouterr().err
    # A GPT-only command on an LSTM.
    assert main(cli_args(corpus, tmp_path / "lstm")) == 0
    capsys.readouterr()
    assert main(["explain", "the", "--model", str(tmp_path / "lstm")]) == 2
    err = capsys.readouterr().err
    assert "char-LSTM" in err and "needs a Transformer" in err and err.count("\n") == 1
    assert main(["generate", "ROMEO", "--model", str(tmp_path / "lstm"), "--tokens", "3"]) == 0
