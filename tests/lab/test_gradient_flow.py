"""Gradient flow through time: matched model sizes, finite norms shaped as expected, the
result file with its plots, the CLI, and the shipped example."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from lmscope.cli import main
from lmscope.errors import InvalidInputError
from lmscope.lab.gradient_flow import (
    GradientFlowConfig,
    build_models,
    embedding_grads,
    matched_hidden,
    measure,
    run_gradient_flow,
    sample_sequences,
)
from lmscope.lab.results import read_result, shipped_dir, shown
from lmscope.models.rnn import param_count

SMALL = dict(max_k=24, embed=16, gpt_layers=2, gpt_heads=2, batches=2, batch_size=3)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    words = [
        "the",
        "old",
        "prince",
        "said",
        "nothing",
        "for",
        "a",
        "long",
        "while",
        "and",
        "then",
        "went",
        "out",
    ]
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=10)) for _ in range(800)]
    path = tmp_path_factory.mktemp("gf") / "small.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_models_have_about_the_same_size():
    models = build_models(GradientFlowConfig(**SMALL), vocab_size=40)
    counts = {a: sum(p.numel() for p in m.parameters()) for a, m in models.items()}
    for arch in ("rnn", "lstm", "gru"):
        assert abs(counts[arch] - counts["gpt"]) / counts["gpt"] < 0.03, counts
        assert models[arch].config.embed == 16
    assert models["gpt"].config.n_ctx == 25
    h = matched_hidden("lstm", 40, 1, 10_000, embed=16)
    gaps = [abs(param_count("lstm", 40, x, 1, 16) - 10_000) for x in (h - 1, h, h + 1)]
    assert gaps[1] == min(gaps)


def test_gradient_norms_are_finite_and_shaped_as_expected():
    torch.manual_seed(0)
    cfg = GradientFlowConfig(**SMALL)
    models = build_models(cfg, vocab_size=30)
    windows = sample_sequences(np.arange(500) % 30, cfg.max_k + 1, 6, seed=0)
    assert windows.shape == (6, 26)
    curves = measure(models, windows, batch_size=3)
    for arch, curve in curves.items():
        assert curve.shape == (24,) and curve.dtype == np.float64
        assert np.isfinite(curve).all() and (curve > 0).all(), arch
    # recurrent gradients shrink with distance; attention's path does not grow with k
    for arch in ("rnn", "lstm", "gru"):
        c = curves[arch]
        assert c[-1] < c[12] < c[0] and c[-1] < 1e-2 * c[0], arch
    gpt = curves["gpt"]
    assert gpt.max() / gpt.min() < 20


def test_embedding_gradient_reaches_only_the_past():
    models = build_models(GradientFlowConfig(**SMALL), vocab_size=30)
    ids = torch.randint(0, 30, (2, 10))
    for arch, net in models.items():
        norms = embedding_grads(net.double(), ids, torch.tensor([1, 2]))
        assert norms.shape == (2, 10) and (norms > 0).all(), arch


@pytest.mark.slow
def test_run_writes_the_result_and_its_plots(tmp_path, corpus_file):
    # the init state is measured above; here the trainer's path, on two of the models
    cfg = GradientFlowConfig(
        **SMALL, data=str(corpus_file), states=("trained",), train_iters=2, archs=("gru", "gpt")
    )
    result = run_gradient_flow(cfg, tmp_path)
    doc = read_result(tmp_path)
    assert doc["experiment"] == "gradient-flow" and doc == json.loads(json.dumps(result.to_dict()))
    assert [s["key"] for s in doc["sections"]] == ["trained"]
    for section in doc["sections"]:
        assert section["data"]["k"] == list(range(1, 25))
        assert set(section["data"]["norm"]) == {"gru", "gpt"}
        assert all(np.isfinite(section["data"]["norm"]["gru"]))
        assert shown(section["explain"], "en") and shown(section["explain"], "zh")
        assert "k = 24" in shown(section["verdict"], "en") and "k = 24" in shown(
            section["verdict"], "zh"
        )
        for name in section["plot"].values():
            assert (tmp_path / name).stat().st_size > 1000
    assert doc["params"]["train_iters"] == 2


def test_cli_errors_are_one_line(capsys):
    assert main(["lab", "gradients", "--models", "rnn,transformer"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown model 'transformer'" in err
    assert main(["lab", "gradients", "--max-k", "0"]) == 2
    assert "--max-k must be a whole number >= 2" in capsys.readouterr().err
    with pytest.raises(InvalidInputError, match="divisible"):
        GradientFlowConfig(embed=10, gpt_heads=4)
    # an empty list was "unknown model 'none'" / "--state 'none'"
    with pytest.raises(InvalidInputError, match="names no model; use some of rnn, lstm, gru, gpt"):
        GradientFlowConfig(archs=())
    with pytest.raises(InvalidInputError, match="names no state; use init, trained or both"):
        GradientFlowConfig(states=())
    with pytest.raises(InvalidInputError, match="needs more"):
        sample_sequences(np.arange(10), 20, 1, 0)


def test_shipped_example():
    doc = read_result(shipped_dir("gradient-flow"))
    init = doc["sections"][0]
    assert init["key"] == "init" and init["data"]["k"][-1] == 256
    folder = shipped_dir("gradient-flow")
    for section in doc["sections"]:
        assert (folder / section["plot"]["png"]).is_file()
        assert (folder / section["plot"]["svg"]).is_file()
        norms = section["data"]["norm"]
        assert set(norms) == {"rnn", "lstm", "gru", "gpt"}
        gpt = norms["gpt"]
        assert max(gpt) / min(gpt) < 100  # flat: the path length does not grow with k
    trained = [s for s in doc["sections"] if s["key"] == "trained"]
    if trained:  # after training: the textbook order, fastest fall in the vanilla RNN
        rows = {r["arch"]: r for r in trained[0]["rows"]}
        assert rows["rnn"]["per_step"] < min(rows["lstm"]["per_step"], rows["gru"]["per_step"])


def test_the_factor_per_step_reads_the_same_in_the_verdict_and_the_table():
    from lmscope.lab.gradient_flow import verdict
    from lmscope.lab.results import format_cell

    rows = [
        {"arch": "rnn", "model": "vanilla RNN", "last_over_first": 2e-50, "per_step": 0.63912},
        {"arch": "gpt", "model": "GPT", "last_over_first": 1.2, "per_step": 1.0097},
    ]
    said = verdict(rows, 256)
    for r in rows:
        tabled = format_cell(r["per_step"], "float")  # as the table shows it
        assert f"×{tabled} per step" in shown(said, "en") and f"每步 ×{tabled}" in shown(said, "zh")
