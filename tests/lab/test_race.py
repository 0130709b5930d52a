"""lmscope race: the trainer's step hook, a seconds-long race on a tiny corpus (well-formed
JSON, plots, verdicts), the pieces it is built from, and one-line errors for bad input."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pytest
import torch

from lmscope.cli import main
from lmscope.lab import race
from lmscope.lab.results import SCHEMA, read_result, shown
from tiers import slow_work

TINY = ["--gpt-layers", "1", "--gpt-heads", "2", "--gpt-dim", "32", "--rnn-layers", "1"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """40,000 characters of Shakespeare: enough for 4 streams of 32 in either split."""
    from lmscope.data import load_corpus

    path = tmp_path_factory.mktemp("race-data") / "tiny.txt"
    path.write_text(load_corpus("shakespeare").text[:40_000], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
@slow_work
def raced(corpus, tmp_path_factory):
    """One short race through the CLI: (result file, what --json printed, out folder)."""
    out = tmp_path_factory.mktemp("race-out")
    threads = torch.get_num_threads()
    argv = ["race", "--data", str(corpus), "--budget", "1.5", "-N", "32", "--batch", "4"]
    argv += [*TINY, "--eval-points", "3", "--eval-batches", "2", "--out", str(out)]
    argv += ["--threads", "1", "--clock", "cpu", "--json"]
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            assert main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    return read_result(out), json.loads(printed.getvalue()), out


@pytest.mark.slow
def test_trainer_hook_evaluates_and_stops_on_request(corpus, tmp_path):
    from lmscope.train import TrainConfig, train

    seen = []

    def hook(info):
        seen.append((info.step_s, info.step_cpu_s))
        info.evaluate = info.iteration == 2
        info.stop = info.iteration == 4

    cfg = TrainConfig(
        data=str(corpus), layers=1, heads=2, dim=16, context=16, batch=2, iters=100,
        eval_every=1000, eval_iters=1, sample_every=0, out=str(tmp_path / "run"), device="cpu",
    )  # fmt: skip
    result = train(cfg, progress=False, log=lambda text: None, on_step=hook)
    assert result.iteration == 4
    assert [e["iteration"] for e in result.evals] == [2, 4]  # asked for, then the last step
    assert all(wall > 0 and cpu >= 0 for wall, cpu in seen)


@pytest.mark.slow
def test_short_race_writes_a_well_formed_result(raced):
    doc, _, out = raced
    assert doc["schema"] == SCHEMA and doc["experiment"] == "race"
    assert doc["params"]["clock"] == "cpu" and doc["params"]["context"] == 32
    assert doc["hardware"]["cpu"] and doc["hardware"]["torch_threads"] == 1
    speed, loss = doc["sections"]
    assert (speed["key"], loss["key"]) == ("speed", "loss")
    rows = {r["arch"]: r for r in speed["rows"]}
    assert set(rows) == {"lstm", "gpt"}
    for r in rows.values():
        assert r["steps"] >= 1 and r["tokens"] == r["steps"] * 4 * 32
        for k in ("tokens_per_s", "epoch_s", "epochs", "gflops", "val_loss"):
            assert math.isfinite(r[k]) and r[k] > 0, k
    # equal sizes: the LSTM's hidden size is the one nearest the GPT's parameter count
    assert abs(rows["lstm"]["params"] - rows["gpt"]["params"]) / rows["gpt"]["params"] < 0.05
    data = speed["data"]
    assert data["rival"] == "lstm" and data["held"] in ("yes", "partly", "no")
    assert data["ratio"] == pytest.approx(rows["lstm"]["epoch_s"] / rows["gpt"]["epoch_s"])
    for section in (speed, loss):
        assert shown(section["verdict"], "en") and shown(section["verdict"], "zh")
        assert shown(section["explain"], "zh") and "CPU" in shown(section["explain"], "en")
        for file in section["plot"].values():
            assert (out / file).stat().st_size > 1000
    assert (out / "race-speed.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (out / "race-loss.svg").read_text()[:500]
    # the curve: at least one evaluation per model, the last at the end of the budget
    for arch in ("lstm", "gpt"):
        curve = [r for r in loss["rows"] if r["arch"] == arch]
        assert curve and curve[-1]["step"] == rows[arch]["steps"]
        assert curve[-1]["seconds"] >= 1.5


def test_race_prints_the_json_it_writes_and_names_the_ratio_in_its_figure(raced):
    doc, printed, out = raced
    assert printed == doc
    json.dumps(doc, allow_nan=False)  # no NaN or infinity anywhere
    ratio = doc["sections"][0]["data"]["ratio"]
    shown = f"{ratio:.2f}" if ratio >= 1 else f"{1 / ratio:.2f}"
    assert f"{shown}x faster per epoch" in (out / "race-speed.svg").read_text()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("240", 240.0), ("90s", 90.0), ("4m", 240.0), ("2 min", 120.0), ("0.5h", 1800.0)],
)
def test_parse_budget(text, seconds):
    assert race.parse_budget(text) == seconds


def test_matched_hidden_is_the_nearest_size():
    from lmscope.models.rnn import param_count

    for cell in ("lstm", "gru", "rnn"):
        h = race.matched_hidden(cell, 65, 2, 867_200)
        best = abs(param_count(cell, 65, h, 2) - 867_200)
        assert best <= abs(param_count(cell, 65, h - 1, 2) - 867_200)
        assert best <= abs(param_count(cell, 65, h + 1, 2) - 867_200)
    assert race.matched_hidden("lstm", 65, 2, 867_200) == 255  # 867,320 parameters


def test_val_at_tokens_interpolates_inside_the_curve():
    curve = [{"tokens": 100, "val_loss": 3.0}, {"tokens": 300, "val_loss": 2.0}]
    assert race.val_at_tokens(curve, 200) == pytest.approx(2.5)
    assert race.val_at_tokens(curve, 300) == 2.0
    assert race.val_at_tokens(curve, 50) is None


@pytest.mark.parametrize(("lstm_epoch", "held"), [(60.0, "yes"), (20.0, "partly"), (5.0, "no")])
def test_verdict_follows_the_measured_ratio(lstm_epoch, held):
    from lmscope.lab import texts

    rows = [
        {
            "arch": "lstm",
            "model": "LSTM",
            "epoch_s": lstm_epoch,
            "val_loss": 2.0,
            "flops_per_token": 100,
            "gflops": 10.0,
        },
        {
            "arch": "gpt",
            "model": "GPT",
            "epoch_s": 10.0,
            "val_loss": 2.1,
            "flops_per_token": 150,
            "gflops": 15.0 * lstm_epoch / 10,
        },
    ]
    curves = {a: [{"tokens": 10, "val_loss": 2.0}] for a in ("lstm", "gpt")}
    hw = {"torch_threads": 1}
    s = race.summarise(rows, curves, race.RaceConfig(budget_s=1), hw)
    s["epoch_tokens"] = 1000
    assert s["held"] == held and s["ratio"] == pytest.approx(lstm_epoch / 10)
    verdict = texts.race_speed(rows, s)["verdict"]
    assert {"yes": "held on", "partly": "only in part", "no": "did not hold"}[held] in shown(
        verdict, "en"
    )
    assert "课程" in shown(verdict, "zh")
    assert "the GPT does 1.50× the LSTM's work" in shown(verdict, "en")


BAD = [
    (["--budget", "0"], "--budget must be above 0 seconds"),
    (["--budget", "-5"], "--budget must be above 0 seconds"),
    (["--budget", "soon"], "is not a time"),
    (["-N", "0"], "--context (N) must be a whole number >= 1"),
    (["--context", "-3"], "--context (N) must be a whole number >= 1"),
    (["--batch", "0"], "--batch must be a whole number >= 1"),
    (["--models", "lstm"], "--models needs gpt and at least one of"),
    (["--models", "gpt,mamba"], "unknown model 'mamba'"),
    (["--gpt-dim", "30", "--gpt-heads", "4"], "must be divisible by --gpt-heads"),
    (["--clock", "cpu"], "add --threads 1"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--device", "tpu"], "unknown device"),
    (["-N", "100000"], "needs 800,008 characters in the validation split"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_is_one_line(argv, message, capsys, tmp_path):
    code = main(["race", *argv, "--out", str(tmp_path / "r")])
    out, err = capsys.readouterr()
    assert code == 2 and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r").exists()  # nothing written for a refused run


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_cuda_without_a_gpu_is_one_line(capsys):
    assert main(["race", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "sees no CUDA GPU" in err and err.count("\n") == 1


def _race_rows(vals: dict[str, float], epochs: dict[str, float]):
    names = {"lstm": "LSTM", "gru": "GRU", "rnn": "vanilla RNN", "gpt": "GPT"}
    rows = [
        {
            "arch": a,
            "model": names[a],
            "epoch_s": epochs[a],
            "val_loss": v,
            "flops_per_token": 100,
            "gflops": 10.0,
        }
        for a, v in vals.items()
    ]
    # each curve fell by 0.05 over its last evaluation interval
    curves = {
        a: [{"tokens": 1000, "val_loss": v + 0.05}, {"tokens": 2000, "val_loss": v}]
        for a, v in vals.items()
    }
    return rows, curves


def _race_texts(vals, epochs=None):
    from lmscope.lab import texts

    epochs = epochs or dict.fromkeys(vals, 10.0)
    rows, curves = _race_rows(vals, epochs)
    cfg = race.RaceConfig(budget_s=10, clock="cpu", threads=1)
    s = race.summarise(rows, curves, cfg, {"torch_threads": 1})
    s["epoch_tokens"] = 1000
    return texts.race_speed(rows, s)["verdict"], texts.race_loss(rows, s)["verdict"]


def test_a_gap_smaller_than_the_curves_own_movement_names_no_winner():
    _, loss = _race_texts({"lstm": 3.40, "gru": 3.295, "rnn": 3.5, "gpt": 3.293})
    assert "too close to call" in shown(loss, "en") and "ahead at equal time" not in shown(
        loss, "en"
    )
    assert "难分高下" in shown(loss, "zh") and "领先" not in shown(loss, "zh")
    # the equal-tokens sentence names every model that ran, in both languages
    same = shown(loss, "en").split("At the same")[1]
    for name in ("LSTM", "GRU", "vanilla RNN", "GPT"):
        assert name in same
    assert "朴素 RNN" in shown(loss, "zh") and "vanilla" not in shown(loss, "zh")
    _, loss = _race_texts({"lstm": 1.9, "gpt": 2.5})
    assert "the LSTM is ahead at equal time" in shown(loss, "en") and "LSTM 领先" in shown(
        loss, "zh"
    )


def test_race_verdict_in_chinese_says_cpu_once_and_one_unit():
    speed, _ = _race_texts({"rnn": 2.0, "gpt": 2.1}, {"rnn": 83.9, "gpt": 144.0})
    assert "CPU 时间，CPU" not in shown(speed, "zh") and "CPU 时间，1 个线程" in shown(speed, "zh")
    assert "朴素 RNN" in shown(speed, "zh") and "vanilla" not in shown(speed, "zh")
    assert "83.9 s and the GPT 144 s" in shown(speed, "en")  # one unit in one sentence
    assert "83.9 秒，GPT 需要 144 秒" in shown(speed, "zh")


def test_the_shipped_race_says_what_this_code_says_about_its_numbers():
    from lmscope.lab import texts
    from lmscope.lab.results import shipped_dir

    doc = read_result(shipped_dir("race"))
    speed, loss = doc["sections"]
    curves: dict[str, list[dict]] = {}
    for point in loss["rows"]:
        curves.setdefault(point["arch"], []).append(point)
    summary = speed["data"] | {"val_margin": race.val_margin(curves)}
    assert speed["verdict"] == texts.race_speed(speed["rows"], summary)["verdict"]
    assert loss["verdict"] == texts.race_loss(speed["rows"], summary)["verdict"]
    assert "CPU 时间，CPU" not in shown(speed["verdict"], "zh")
