"""``lmscope sample --timeline MODEL`` prints the samples a model kept over training (issue 14:
the shipped War and Peace LSTM's timeline was shown by no command)."""

from __future__ import annotations

import json

from lmscope.cli import main
from lmscope.engine.loading import ASSET_MODELS


def test_the_shipped_lstm_prints_its_timeline(capsys):
    assert main(["sample", "--timeline", "warpeace-lstm"]) == 0
    out = capsys.readouterr().out
    saved = json.loads((ASSET_MODELS / "warpeace-lstm" / "timeline.json").read_text("utf-8"))
    for sample in saved["samples"]:
        assert f"## Iteration {sample['iteration']:,}" in out
        assert sample["text"].strip() in out
    assert f"seed {saved['seed']}" in out


def test_a_model_without_a_timeline_says_so(capsys):
    assert main(["sample", "--timeline", "shakespeare"]) != 0
    err = capsys.readouterr().err
    assert "keeps no sample timeline" in err and "Traceback" not in err


def _trained_without_samples(folder, sample_at):
    folder.mkdir()
    config = {"iters": 5, "sample_at": sample_at}
    trainer = {"format": "lmscope-trainer", "version": 1, "iteration": 5, "config": config}
    (folder / "trainer.json").write_text(json.dumps(trainer))
    return folder


def test_a_run_that_stopped_before_its_sample_points_says_so(capsys, tmp_path):
    folder = _trained_without_samples(tmp_path / "x2", [100, 300])
    assert main(["sample", "--timeline", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "stopped at iteration 5, before its first sample point (100)" in err, err
    assert "train with --sample-at" not in err


def test_without_sample_points_the_message_is_neutral(capsys, tmp_path):
    folder = _trained_without_samples(tmp_path / "plain", [])
    assert main(["sample", "--timeline", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "keeps no sample timeline" in err and "train with --sample-at" not in err
    assert "--sample-at" in err  # says how one is kept


def test_timeline_refuses_sampling_options_it_would_ignore(capsys):
    for extra, flag in ((["-n", "50"], "--length"), (["--prime", "Pierre"], "--prompt")):
        assert main(["sample", "--timeline", "warpeace-lstm", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err and "--timeline" in err, err


def test_the_timeline_speaks_chinese(capsys):
    assert main(["sample", "--timeline", "warpeace-lstm", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# 训练过程中的采样\n")
    assert "drawn the same way" not in out and "Iteration" not in out
    assert "## 第 100 次迭代（训练损失 2.891" in out


def test_an_empty_model_name_is_refused(capsys):
    """An empty name was the current folder: '. keeps no sample timeline'."""
    assert main(["sample", "--timeline", ""]) == 2
    assert capsys.readouterr().err == "lmscope: error: model name is empty\n"
