"""lmscope lab ...: one-line errors with exit code 2, real output, and the shipped results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from lmscope.cli import main
from lmscope.lab.results import read_result, shipped_dir, shipped_experiments


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


BAD_INPUTS = [
    (["serial-depth", "--max-n", "0"], "--max-n must be >= 1"),
    (["serial-depth", "--max-n", "-3"], "--max-n must be >= 1"),
    (["serial-depth", "--repeats", "0"], "--repeats must be >= 1"),
    (["serial-depth", "--device", "tpu"], "unknown device"),
    (["serial-depth", "--threads", "0"], "--threads must be >= 1"),
    (["serial-depth", "--a", "1.5"], "--a must be between -1 and 1"),
    (["serial-depth", "--clock", "cpu"], "add --threads 1"),
    (["memory-wall", "--clock", "cpu", "--threads", "2"], "add --threads 1"),
    (["memory-wall", "--min-n", "0"], "--min-n must be >= 1"),
    (["memory-wall", "--max-n", "0"], "--max-n must be >= 1"),
    (["memory-wall", "--budget", "0"], "--budget must be more than 0"),
    (["memory-wall", "--budget", "plenty"], "cannot read size"),
    (["memory-wall", "--budget", "10TiB"], "is more than this machine's memory"),
    (["memory-wall", "--budget", "1e30"], "is more than this machine's memory"),
    (["memory-wall", "--repeats", "0"], "--repeats must be >= 1"),
    (["memory-wall", "--methods", "naive,mamba"], "--methods takes"),
    (["memory-wall", "--dtype", "int8"], "--dtype must be one of"),
    (["show", "no-such-result"], "no shipped result named"),
    (["show", __file__], "is not a result.json written by lmscope lab"),
    (["show"], "name a result to show"),
    # seeds torch or NumPy cannot take were tracebacks (OverflowError, ValueError)
    (["serial-depth", "--seed", str(2**70)], "--seed must be between 0 and 2**63-1"),
    (["gradients", "--seed", "-1"], "--seed must be between 0 and 2**63-1, got -1"),
    (["recall", "--seed", str(2**64)], "--seed must be between 0 and 2**63-1"),
    # an empty --data read every text file of the current folder; an empty --models said 'none'
    (["gradients", "--data", ""], "--data is empty; name a bundled corpus or a text file"),
    (["gradients", "--data", "  "], "--data is empty"),
    (["gradients", "--models", ""], "--models names no model; use some of rnn, lstm, gru, gpt"),
    (["gradients", "--models", " , "], "--models names no model"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_INPUTS)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, argv, message):
    code, out, err = run(
        capsys, "lab", *argv, *(["--out", str(tmp_path)] if argv[0] != "show" else [])
    )
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and err.startswith("lmscope: error: ")
    assert "Traceback" not in err
    assert not (tmp_path / "result.json").exists()


@pytest.mark.parametrize("seed", [str(2**70), "-1"])
def test_race_refuses_a_seed_torch_cannot_take(capsys, tmp_path, seed):
    code, _, err = run(capsys, "race", "--budget", "1", "--seed", seed, "--out", str(tmp_path))
    assert code == 2, err
    assert err.startswith("lmscope: error: --seed must be between 0 and 2**63-1")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "result.json").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("experiment", ["serial-depth", "memory-wall"])
def test_cuda_without_cuda_is_a_clear_error(capsys, experiment):
    code, _, err = run(capsys, "lab", experiment, "--device", "cuda")
    assert code == 2
    assert "sees no CUDA GPU" in err and len(err.strip().splitlines()) == 1


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_serial_depth_command_prints_tables_and_writes_files(capsys, tmp_path, keep_threads):
    argv = ["--max-n", "256", "--repeats", "1", "--device", "cpu", "--out", str(tmp_path)]
    code, out, _ = run(capsys, "lab", "serial-depth", *argv, "--clock", "cpu", "--threads", "1")
    assert code == 0
    assert "Serial depth: recurrence vs tree reduction" in out
    assert "Hillis-Steele" in out and "x.sum()" in out
    doc = read_result(tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {
        "result.json",
        "depth.png",
        "depth.svg",
        "python-timing.png",
        "python-timing.svg",
        "torch-sweep.png",
        "torch-sweep.svg",
    }
    assert doc["params"]["max_n"] == 256
    assert doc["params"]["clock"] == "cpu" and doc["hardware"]["torch_threads"] == 1
    python = next(s for s in doc["sections"] if s["key"] == "python")
    assert "CPU time" in python["explain"]["en"] and "CPU 时间" in python["explain"]["zh"]


@pytest.mark.slow
def test_show_prints_a_written_result_in_chinese_and_as_json(capsys, tmp_path):
    main(["lab", "serial-depth", "--max-n", "64", "--repeats", "1", "--out", str(tmp_path)])
    capsys.readouterr()
    code, out, _ = run(capsys, "lab", "show", str(tmp_path), "--lang", "zh")
    assert code == 0 and "串行深度" in out
    code, out, _ = run(capsys, "lab", "show", str(tmp_path / "result.json"), "--json")
    assert code == 0 and json.loads(out)["experiment"] == "serial-depth"


# --- the shipped example results --------------------------------------------------------------
def test_shipped_results_are_complete():
    assert set(shipped_experiments()) >= {"serial-depth", "memory-wall"}
    for name in ("serial-depth", "memory-wall"):
        folder = shipped_dir(name)
        doc = read_result(folder)
        hw = doc["hardware"]
        assert hw["cpu"] and hw["cpu_cores"] and hw["torch"] and hw["date"]
        for section in doc["sections"]:
            assert section["rows"]
            for lang in ("en", "zh"):
                assert section["title"][lang] and section["explain"][lang]
                assert section["verdict"][lang]
            if section["plot"]:
                for kind in ("png", "svg"):
                    assert (Path(folder) / section["plot"][kind]).stat().st_size > 5_000


def test_shipped_memory_wall_shows_the_wall():
    doc = read_result(shipped_dir("memory-wall"))
    sections = {s["key"]: s for s in doc["sections"]}
    limits = {r["method"]: r for r in sections["limits"]["rows"]}
    assert limits["naive"]["first_not_fit"]  # naive attention hit the budget...
    assert limits["sdpa"]["largest_fit"] > limits["naive"]["largest_fit"]  # ...SDPA went on
    assert sections["kv_cache"]["rows"][0]["per_token_float32"] == 73_728


def test_show_prints_the_shipped_result(capsys):
    code, out, _ = run(capsys, "lab", "show", "memory-wall")
    assert code == 0
    assert "KV cache of the GPT-2 family" in out and "73,728" in out


# --- an --out that cannot be used is refused before any work ---------------------------------
def _out_cases(tmp_path):
    afile = tmp_path / "afile.txt"
    afile.write_text("hi\n")
    return afile, [
        (str(afile), "is a file, not a folder"),
        (str(afile / "sub"), "is a file, not a folder"),
        ("", "--out is empty"),
        ("  ", "--out is empty"),
    ]


@pytest.mark.parametrize("command", [["lab", "serial-depth", "--quick"], ["race", "--budget", "1"]])
def test_unusable_out_is_one_line_before_any_work(capsys, tmp_path, monkeypatch, command):
    afile, cases = _out_cases(tmp_path)
    monkeypatch.chdir(tmp_path)
    for out, message in cases:
        code, _, err = run(capsys, *command, "--out", out)
        assert code == 2, out
        assert err.startswith("lmscope: error: --out") and message in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert afile.read_text() == "hi\n"  # never overwritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile.txt"]  # nothing written


def test_out_in_a_folder_that_cannot_be_written_is_refused(capsys, tmp_path, read_only):
    read_only(tmp_path)
    code, _, err = run(capsys, "lab", "serial-depth", "--quick", "--out", str(tmp_path / "x"))
    assert code == 2
    assert err.startswith("lmscope: error: --out") and "Read-only file system" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


# --- Chinese tables: headers and cells in Chinese, one word per idea --------------------------
ENGLISH_HEADERS = ("recurrence depth", "tree depth", "shallower by", "tokens seen", "size (GPT")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["serial-depth", "memory-wall", "race", "recall", "gradient-flow"])
def test_show_in_chinese_has_chinese_headers_and_cells(capsys, name):
    code, out, _ = run(capsys, "lab", "show", name, "--lang", "zh")
    assert code == 0
    words = (*ENGLISH_HEADERS, "vanilla RNN", " layers", "hidden 2", "递归", "resident set")
    for english in (*words, "CPU 时间，CPU"):
        assert english not in out, english
    if name == "serial-depth":
        assert "循环深度" in out


def test_every_shipped_header_has_one_chinese_source():
    from lmscope.lab.texts import zh_cell, zh_header

    for name in shipped_experiments():
        for section in read_result(shipped_dir(name))["sections"]:
            for col in section["columns"]:
                label = col["label"]
                assert (
                    zh_header(label) != label
                    or label in ("N", "a", "d_model", "x.sum()", "sum/len")
                    or label.startswith("k=")
                ), label
    assert zh_header("spread %") != "spread %"
    assert zh_header("step-time spread %") != "step-time spread %"
    assert zh_cell("vanilla RNN") == "朴素 RNN"
    assert zh_cell("2 layers, hidden 255") == "2 层，隐藏层 255"


# --- help texts ------------------------------------------------------------------------------
def _help(capsys, *argv) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere


def test_help_texts_say_what_ships_and_what_quick_does(capsys):
    recall = _help(capsys, "lab", "recall")
    assert "%%" not in recall and "95% intervals" in recall
    assert "30 s budget" in recall
    show = _help(capsys, "lab", "show")
    for name in shipped_experiments():
        assert name in show
    assert "about 10 s" not in _help(capsys, "lab", "serial-depth")


def _broken_results():
    """result.json files with lmscope's schema line but not the rest of a result."""
    real = json.loads((shipped_dir("race") / "result.json").read_text("utf-8"))
    schema = real["schema"]
    return {
        "schema only": {"schema": schema},
        "sections not a list": {**real, "sections": "nope"},
        "no hardware": {**real, "hardware": None},
        "a section without a title": {**real, "sections": [{"rows": []}]},
    }


@pytest.mark.parametrize("case", list(_broken_results()))
def test_show_of_an_incomplete_result_is_one_line(capsys, tmp_path, case):
    """Each was a KeyError or TypeError traceback, some after half the tables had printed."""
    (tmp_path / "result.json").write_text(json.dumps(_broken_results()[case]), encoding="utf-8")
    code, out, err = run(capsys, "lab", "show", str(tmp_path))
    assert code == 2, err
    assert err.startswith(f"lmscope: error: {tmp_path / 'result.json'} is not a complete lab ")
    assert "run the experiment again" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""  # nothing printed before the refusal
