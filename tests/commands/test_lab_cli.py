"""lmscope lab ...: one-line errors with exit code 2, real output, and the shipped results."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from lmscope.cli import main
from lmscope.lab.results import (
    SCHEMA,
    cell_text,
    column_label,
    read_result,
    shipped_dir,
    shipped_experiments,
    shown,
)


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
    assert "CPU time" in shown(python["explain"], "en")
    assert "CPU 时间" in shown(python["explain"], "zh")


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
                assert shown(section["title"], lang) and shown(section["explain"], lang)
                assert shown(section["verdict"], lang)
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


def test_every_shipped_header_and_text_cell_comes_from_the_catalog():
    """A header is a catalog text, or a symbol or code name that reads the same everywhere; a
    text cell that is words (a model, a shape, why a run stopped) is a catalog text too."""
    names = {"N", "a", "d_model", "x.sum()", "sum/len"}
    for name in shipped_experiments():
        doc = read_result(shipped_dir(name))
        assert doc["schema"] == SCHEMA
        for section in doc["sections"]:
            for col in section["columns"]:
                label = column_label(section["key"], col)
                assert isinstance(label, dict) or label in names or label.startswith("k="), label
                for row in section["rows"]:
                    cell = cell_text(row.get(col["key"]), col)
                    if col["kind"] == "text" and isinstance(cell, str):
                        # one token: a name or code (LSTM, gpt2-medium, float32), or a number
                        assert re.fullmatch(r"[\w.:%\[\]–-]+( \[[\d–%]+\])?", cell), cell


# A word of the pseudo-language is bracketed (⟦…⟧); outside the brackets a line may hold
# numbers, units, names and code, never an English word.
PSEUDO_NAMES = {
    "LSTM",
    "GRU",
    "GPT",
    "d_model",
    "float64",
    "float32",
    "float16",
    "sum",
    "len",
    "ms",
    "ns",
}
PSEUDO_NAMES |= {"KiB", "MiB", "GiB", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"}


def _outside_brackets(text: str) -> str:
    depth, out = 0, []
    for ch in text:
        depth += ch == "⟦"
        if depth == 0:
            out.append(ch)
        depth -= ch == "⟧" and depth > 0
    return "".join(out)


def _shown_wide(name: str, lang: str, width: int = 100_000) -> str:
    """``lmscope lab show NAME --lang LANG`` on a console too wide to wrap or cut a text (or
    on a terminal ``width`` columns wide)."""
    import io

    from rich.console import Console

    from lmscope.commands.lab import common as lab_common

    folder, buffer = shipped_dir(name), io.StringIO()
    lab_common.render(read_result(folder), Console(file=buffer, width=width), lang, folder)
    return buffer.getvalue()


def _tables(text: str) -> list[list[list[str]]]:
    """Each table drawn in ``text``: its header line, then its rows, each a list of cells."""
    tables: list[list[list[str]]] = []
    for line in text.splitlines():
        if line.startswith("┏"):
            tables.append([])
        elif line[:1] in ("┃", "│"):
            tables[-1].append([cell.strip() for cell in re.split("[┃│]", line)[1:-1]])
    return tables


SHIPPED = ["serial-depth", "memory-wall", "race", "recall", "gradient-flow"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", SHIPPED)
def test_show_in_an_80_column_terminal_splits_wide_tables_and_cuts_no_value(name, lang):
    """Each table wider than the terminal is printed as several, each with the column that
    names the rows: put back together they are the whole table, every header and value whole
    on one line (squeezed, the memory wall's N of 16,384 read "16,3…")."""
    from rich.cells import cell_len

    narrow = _shown_wide(name, lang, width=80)
    assert max(cell_len(line) for line in narrow.splitlines()) <= 80
    parts = iter(_tables(narrow))
    for whole in _tables(_shown_wide(name, lang)):
        joined = next(parts)
        while len(joined[0]) < len(whole[0]):
            part = next(parts)
            assert [row[0] for row in part] == [row[0] for row in joined]  # the same rows
            joined = [a + b[1:] for a, b in zip(joined, part, strict=True)]
        assert joined == whole
    assert next(parts, None) is None


@pytest.mark.parametrize("name", SHIPPED)
def test_show_of_every_shipped_result_in_the_pseudo_language_is_all_catalog(capsys, name):
    code, out, _ = run(capsys, "lab", "show", name, "--lang", "pseudo")
    assert code == 0 and "⟦" in out
    shown_wide = _shown_wide(name, "pseudo")
    assert shown_wide.count("⟦") == shown_wide.count("⟧") > 10  # no text cut short
    for line in _outside_brackets(shown_wide).splitlines():
        line = re.sub(r"[\w-]+\.png|\d\.?\d*e[+-]\d+", "", line)  # plot files, 2.1e-16
        words = set(re.findall(r"[A-Za-z][\w-]*\w", line))
        assert words <= PSEUDO_NAMES, (words - PSEUDO_NAMES, line)


def test_a_result_written_before_the_catalog_still_reads_in_its_languages(tmp_path):
    """Schema /1 kept each text as an {en, zh} pair and headers in English: the pair is shown
    in its language, a header by its table's catalog id, in the terminal and on the page."""
    from lmscope.web.lab import LabResults

    old = {
        "schema": "lmscope.lab.result/1",
        "experiment": "memory-wall",
        "title": {"en": "The wall", "zh": "显存墙"},
        "hardware": {"cpu": "x86", "cpu_cores": 2, "torch": "2.13", "date": "2026-11-30"},
        "sections": [
            {
                "key": "limits",
                "title": {"en": "Limits", "zh": "极限"},
                "explain": {"en": "What fit.", "zh": "放得下的。"},
                "verdict": {"en": "naive stopped.", "zh": "朴素注意力停止了。"},
                "columns": [{"key": "reason", "label": "why it stopped", "kind": "text"}],
                "rows": [{"reason": "all sizes fit"}],
                "plot": None,
            }
        ],
    }
    (tmp_path / "memory-wall").mkdir()
    (tmp_path / "memory-wall" / "result.json").write_text(json.dumps(old), encoding="utf-8")
    zh = _render(tmp_path / "memory-wall", "zh")
    assert "显存墙" in zh and "停止原因" in zh and "朴素注意力停止了。" in zh and "2 核" in zh
    assert "The wall" in _render(tmp_path / "memory-wall", "en")
    doc = LabResults(results_dir=tmp_path).read("memory-wall", "local")
    assert shown(doc["sections"][0]["columns"][0]["label"], "zh") == "停止原因"


def _render(folder: Path, lang: str) -> str:
    import io

    from rich.console import Console

    from lmscope.commands.lab import common as lab_common

    buffer = io.StringIO()
    lab_common.render(read_result(folder), Console(file=buffer, width=300), lang, folder)
    return buffer.getvalue()


@pytest.mark.parametrize("name", SHIPPED)
def test_show_of_every_shipped_result_in_chinese_has_no_english_sentence(capsys, name):
    code, out, _ = run(capsys, "lab", "show", name, "--lang", "zh")
    assert code == 0
    # three English words in a row would be a sentence (names stand alone, or in pairs)
    assert not re.search(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}", out), re.search(
        r".{30}[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}.{30}", out
    )


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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_show_into_a_pipe_keeps_to_the_columns_asked_for(capsys, monkeypatch, lang):
    """Into a pipe or a file the lab printed 150 columns whatever $COLUMNS said (for tables
    that could not be split then); ``lmscope lab serial-depth --quick | less`` in an 80-column
    terminal drew every paragraph over two lines."""
    from rich.cells import cell_len

    from lmscope.cli import main

    monkeypatch.setenv("COLUMNS", "100")
    assert main(["lab", "show", "serial-depth", "--lang", lang]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(cell_len(line) for line in lines) <= 100
    assert max(cell_len(line) for line in lines) > 90  # the paragraphs fill the width
