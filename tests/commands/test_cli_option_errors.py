"""Bad option values said in one line that names the option as typed, library wording turned
into what the command line offers, and output that says what it left out."""

from __future__ import annotations

import io
import json
import re
from argparse import Namespace
from pathlib import Path

import pytest
from rich.console import Console

from lmscope.cli import main

PROMPT = "Data visualization empowers users to"
LONG = "hi " * 200  # more tokens than the tiny model's context of 128


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, *argv) -> str:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2, err
    assert err.startswith("lmscope: error:") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


@pytest.fixture
def prose(tmp_path):
    path = tmp_path / "prose.txt"
    path.write_text("To be, or not to be, that is the question. " * 3, encoding="utf-8")
    return path


# --- bad option values: one line, the option's name -------------------------------------------
@pytest.mark.parametrize("spec", ["", ",", " , "])
def test_lens_positions_with_no_number_is_refused(capsys, tiny_hf_dir, spec):
    err = one_line_error(capsys, "lens", PROMPT, "-m", tiny_hf_dir, "--positions", spec)
    assert "--positions must be comma-separated integers" in err


@pytest.mark.parametrize("top", ["0", "-2"])
@pytest.mark.parametrize("command", ["lens", "ablate"])
def test_top_below_one_names_the_option(capsys, tiny_hf_dir, command, top):
    argv = [command, PROMPT, "-m", tiny_hf_dir, "-k", top]
    err = one_line_error(capsys, *argv, *(["-a", "attn1"] if command == "ablate" else []))
    assert f"--top must be at least 1, got {top}" in err


@pytest.mark.slow
def test_ablate_top_is_clamped_to_the_vocabulary(capsys, tiny_hf_dir, tiny_model):
    code, out, err = run_cli(
        capsys, "ablate", "Hello", "-m", tiny_hf_dir, "-a", "attn1", "-k", "100000", "--json"
    )
    assert code == 0, err
    assert len(json.loads(out)["before"]) == tiny_model.vocab_size


@pytest.mark.parametrize(
    "flags, message",
    [
        (["-n", "-3"], "--tokens must be at least 0, got -3"),
        (["--tokens", "x"], "--tokens must be a whole number, got 'x'"),
        (["--seed", "-1"], "--seed must be between 0 and 2**64-1, got -1"),
        (["--seed", str(2**64)], "--seed must be between 0 and 2**64-1"),
        (["--top-k", "-5"], "--top-k must be 0 (off) or more, got -5"),
        (["--temperature", "-1"], "--temperature must be a finite number >= 0, got -1"),
        (["-t", "nan"], "--temperature must be a finite number >= 0, got nan"),
        (["--top-p", "2"], "--top-p must be in (0, 1] (leave it out for off), got 2"),
        (["--top-p", "0"], "--top-p must be in (0, 1] (leave it out for off), got 0"),
        (["--min-p", "1.5"], "--min-p must be in [0, 1] (0 or left out: off), got 1.5"),
        (["--min-p", "x"], "--min-p must be a number, got 'x'"),
    ],
)
def test_generate_options_are_named_as_typed(capsys, tiny_hf_dir, flags, message):
    err = one_line_error(capsys, "generate", "Hi", "-m", tiny_hf_dir, *flags)
    assert message in err


@pytest.mark.parametrize("value", ["-5", "0"])
def test_compare_max_chars_below_one_is_refused(capsys, tiny_hf_dir, prose, value):
    argv = ["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", prose]
    err = one_line_error(capsys, *argv, "--max-chars", value)
    assert f"--max-chars must be at least 1, got {value}" in err


# --- lens positions counted from the end ------------------------------------------------------
@pytest.mark.slow
def test_lens_counts_negative_positions_from_the_end(capsys, tiny_hf_dir, tiny_model):
    n = len(tiny_model.encode(PROMPT))
    code, out, err = run_cli(
        capsys, "lens", PROMPT, "-m", tiny_hf_dir, "--positions", "0,2,-1", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["positions"] == [0, 2, n - 1]
    err = one_line_error(capsys, "lens", PROMPT, "-m", tiny_hf_dir, "--positions", f"0,-{n + 1}")
    assert "--positions" in err and f"-{n + 1}" in err


# --- compare's files and text -----------------------------------------------------------------
def test_compare_out_that_is_a_file_is_refused_and_kept(capsys, tmp_path, tiny_hf_dir, prose):
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf-8")
    argv = ["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", prose, "--out", afile]
    err = one_line_error(capsys, *argv)
    assert f"{afile} is a file, not a folder" in err
    assert afile.read_text(encoding="utf-8") == "mine"


def test_compare_text_that_is_a_folder_says_so(capsys, tmp_path, tiny_hf_dir):
    err = one_line_error(
        capsys, "compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", tmp_path
    )
    assert f"{tmp_path} is a folder, not a text file" in err


@pytest.mark.slow
def test_compare_reads_standard_input_as_neurons_does(capsys, monkeypatch, tmp_path, tiny_hf_dir):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("To be, or not to be, that is the question."))
    out_dir = tmp_path / "cmp"
    argv = ["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", "-", "--out", out_dir]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    body = json.loads((out_dir / "compare.json").read_text(encoding="utf-8"))
    assert "".join(body["pieces"]) == "To be, or not to be, that is the question."
    monkeypatch.setattr("sys.stdin", io.StringIO("  \n"))
    assert "standard input is empty" in one_line_error(capsys, *argv)


@pytest.mark.slow
def test_compare_says_when_it_scored_only_the_start(capsys, tmp_path, tiny_hf_dir, prose):
    total = len(prose.read_text(encoding="utf-8"))
    out_dir = tmp_path / "cmp"
    code, out, err = run_cli(
        capsys,
        *["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", prose],
        *["--out", out_dir, "--max-chars", "30"],
    )
    assert code == 0, err
    note = f"compared the first 30 of {total:,} characters"
    assert note in out and "--max-chars" in out
    assert note in (out_dir / "compare.html").read_text(encoding="utf-8")
    code, out, _ = run_cli(
        capsys, "compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", prose, "--out", out_dir
    )
    assert code == 0 and "compared the first" not in out  # the whole text: nothing to say


# --- explain --step, --seed, the sampling parameters, the ablation --------------------------
@pytest.mark.parametrize("step", ["21", "0", "foo", "-1"])
def test_explain_unknown_step_is_refused(capsys, tiny_hf_dir, step):
    for extra in ([], ["--json"]):
        err = one_line_error(capsys, "explain", "Hi", "-m", tiny_hf_dir, *extra, f"--step={step}")
        assert f"--step {step!r}" in err and "1-20" in err and "mlp" in err


def test_explain_step_keys_ignore_case_and_help_says_what_step_takes(capsys, tiny_hf_dir):
    code, out, _ = run_cli(capsys, "explain", "Hi", "-m", tiny_hf_dir, "--step", "MLP")
    assert code == 0 and "Step 13/20" in out and "Step 1/20" not in out
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "1-20" in text and "positional-encoding" in text


@pytest.mark.slow
def test_explain_has_no_seed_but_generate_has(capsys, tiny_hf_dir):
    """explain never samples a token, so a seed would change nothing."""
    with pytest.raises(SystemExit) as exit_:
        main(["explain", "Hi", "-m", str(tiny_hf_dir), "--seed", "3"])
    assert exit_.value.code == 2 and "--seed" in capsys.readouterr().err
    code, _, _ = run_cli(capsys, "generate", "Hi", "-m", tiny_hf_dir, "--seed", "3", "-n", "1")
    assert code == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "flags, shown",
    [
        ([], "temperature 1"),
        (["-t", "0"], "temperature 0 (greedy)"),
        (["--greedy"], "greedy"),
        (["-t", "0.7", "--top-k", "5", "--top-p", "0.9"], "temperature 0.7, top-k 5, top-p 0.9"),
    ],
)
def test_explain_sampling_step_shows_the_parameters_in_effect(capsys, tiny_hf_dir, flags, shown):
    code, out, _ = run_cli(capsys, "explain", "Hi", "-m", tiny_hf_dir, "--step", "17", *flags)
    params = next(line for line in out.splitlines() if "params" in line)
    assert code == 0 and shown in params and "defaults" not in params
    assert "=" not in params  # said in words, not as Python's keyword arguments


@pytest.mark.slow
def test_explain_header_says_what_is_ablated(capsys, tiny_hf_dir):
    code, out, _ = run_cli(
        capsys, "explain", PROMPT, "-m", tiny_hf_dir, "--ablate", "attn*", "--step", "1"
    )
    header = out[: out.index("╭")].splitlines()  # the model's long path may need two lines
    assert code == 0 and any("ablated: attn* (zero)" in line for line in header)  # whole
    code, out, _ = run_cli(capsys, "explain", PROMPT, "-m", tiny_hf_dir, "--step", "1")
    assert "ablated" not in out[: out.index("╭")]


@pytest.mark.slow
def test_lens_title_names_the_ablation_in_plain_text(capsys, monkeypatch, tiny_hf_dir):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(
        capsys, "lens", PROMPT, "-m", tiny_hf_dir, "--ablate", "mlp*", "--positions", "5"
    )
    assert code == 0 and "['" not in out
    title = next(line for line in out.splitlines() if "logit lens" in line)
    assert title.rstrip().endswith("ablated: mlp*")


def test_ablate_help_says_what_the_table_shows(capsys):
    with pytest.raises(SystemExit):
        main(["ablate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "before and after" in text and "tokens shown (default 10)" not in text


def test_compare_help_names_every_kind_of_model(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "smollm2" in text and ".gguf" in text and "shakespeare" in text


def test_rope_frequencies_line_speaks_chinese(tmp_path_factory):
    """Step 6's frequency line stayed English in Chinese once a wavelength was written
    6.28e+03 and 1.99e+04: the exponents' letters stopped the line matching its translation."""
    from helpers_hf import load_random_llama
    from lmscope import i18n
    from lmscope.commands import explain_render
    from lmscope.commands.common import use_lang
    from lmscope.explain.report import report

    model = load_random_llama(tmp_path_factory, "llama", hidden_size=64)  # 8 pairs a head
    data = report(model, [1, 2, 3, 4], steps=[6]).steps[0].data
    # what tripped the match: two wavelengths shown with an exponent (6.28e+03, 1.99e+04)
    assert [f"{w:,.3g}" for w in data.frequencies.wavelength[-2:]] == ["6.28e+03", "1.99e+04"]
    with i18n.using("en"):  # the Chinese that use_lang chooses ends with the block
        use_lang(Namespace(lang="zh"))
        buffer = io.StringIO()
        Console(width=200, file=buffer).print(explain_render.render(data))
    text = buffer.getvalue()
    assert "每个位置转过的弧度" in text and "rad/position" not in text


# --- model paths ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, message",
    [
        ("./nofile.gguf", "no such file: ./nofile.gguf"),
        ("nofile.gguf", "no such file: nofile.gguf"),
        ("some/dir/nofile.gguf", "no such file: some/dir/nofile.gguf"),
        ("./no-model-here", "no such file or folder: ./no-model-here"),
    ],
)
def test_a_missing_model_path_says_no_such_file(capsys, name, message):
    err = one_line_error(capsys, "generate", "Hi", "-m", name)
    assert message in err and "unknown model" not in err


# --- library wording turned into the command line's --------------------------------------------
@pytest.mark.parametrize("command", ["lens", "explain", "ablate"])
def test_too_long_prompt_says_shorten_it_without_truncate(capsys, tiny_hf_dir, command):
    extra = ["-a", "attn1"] if command == "ablate" else []
    err = one_line_error(capsys, command, LONG, "-m", tiny_hf_dir, *extra)
    assert "context is 128" in err and "Shorten it" in err and "truncate" not in err


def test_too_long_prompt_in_generate_names_the_truncate_option(capsys, tiny_hf_dir):
    err = one_line_error(capsys, "generate", LONG, "-m", tiny_hf_dir)
    assert re.search(r"use --truncate to keep the last \d+", err), err


@pytest.mark.parametrize("command", ["lens", "explain"])
def test_trace_limit_names_what_the_command_line_can_do(capsys, monkeypatch, tiny_hf_dir, command):
    monkeypatch.setenv("LMSCOPE_MAX_TRACE_TOKENS", "3")
    err = one_line_error(capsys, command, PROMPT, "-m", tiny_hf_dir)
    assert "LMSCOPE_MAX_TRACE_TOKENS" in err and "shorten the prompt" in err.lower()
    assert "layers=" not in err and "names=" not in err


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1e3"])
def test_a_trace_limit_that_is_no_count_is_said_not_ignored(
    capsys, monkeypatch, tiny_hf_dir, value
):
    monkeypatch.setenv("LMSCOPE_MAX_TRACE_TOKENS", value)
    err = one_line_error(capsys, "explain", PROMPT, "-m", tiny_hf_dir)
    assert (
        f"LMSCOPE_MAX_TRACE_TOKENS must be a whole number of tokens above 0, got {value!r}" in err
    )


def test_serve_checks_the_trace_limit_before_loading(capsys, monkeypatch):
    monkeypatch.setenv("LMSCOPE_MAX_TRACE_TOKENS", "lots")
    err = one_line_error(capsys, "serve", "--model", "no-such-model")
    assert "LMSCOPE_MAX_TRACE_TOKENS must be a whole number" in err


# --- what a hunt for odd command lines found ----------------------------------------------------
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_compare_text_that_is_a_device_is_refused_before_reading(capsys, tiny_hf_dir, tmp_path):
    """--text /dev/zero read without end until a MemoryError traceback."""
    out = tmp_path / "out"
    m = ["-m", tiny_hf_dir, "-m", tiny_hf_dir]
    err = one_line_error(capsys, "compare", *m, "--text", "/dev/zero", "--out", out)
    assert "/dev/zero is not a regular file; give a UTF-8 text file" in err
    assert not out.exists()


@pytest.mark.parametrize("out", ["", "  "])
def test_compare_refuses_an_empty_out(capsys, tmp_path, monkeypatch, tiny_hf_dir, prose, out):
    """An empty --out wrote compare.html, .json and .png into the current folder."""
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.iterdir())
    m = ["-m", tiny_hf_dir, "-m", tiny_hf_dir]
    err = one_line_error(capsys, "compare", *m, "--text", prose, "--out", out)
    assert "--out is empty; name a folder, e.g. --out lmscope-compare" in err
    assert sorted(tmp_path.iterdir()) == before


def test_compare_out_that_cannot_be_written_is_refused_before_loading(
    capsys, tmp_path, monkeypatch, tiny_hf_dir, prose
):
    """--out /proc/x was a FileNotFoundError traceback once both models had run."""
    import lmscope

    def never_loaded(*args, **kwargs):
        raise AssertionError("--out is checked before the models load")

    monkeypatch.setattr(lmscope, "load", never_loaded)
    m = ["-m", tiny_hf_dir, "-m", tiny_hf_dir]
    err = one_line_error(capsys, "compare", *m, "--text", prose, "--out", "/proc/lmscope-x")
    assert err.startswith("lmscope: error: --out /proc/lmscope-x: cannot write in /proc"), err


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("", "--host is empty; use 127.0.0.1 (this machine only)"),
        (" ", "--host is empty"),
        ("\x00", "--host '\\x00' is not a host name or an address"),  # was a traceback
    ],
)
def test_serve_refuses_a_host_it_cannot_bind(capsys, monkeypatch, host, message):
    import lmscope

    def never_loaded(*args, **kwargs):
        raise AssertionError("--host is checked before the model loads")

    monkeypatch.setattr(lmscope, "load", never_loaded)
    err = one_line_error(capsys, "serve", "--host", host, "--port", "0")
    assert message in err, err


@pytest.mark.parametrize("data", ["", " "])
def test_minrnn_refuses_an_empty_data(capsys, tmp_path, monkeypatch, data):
    """An empty --data trained on every text file of the current folder."""
    (tmp_path / "notes.txt").write_text("hello there " * 50, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, "minrnn", "--data", data, "--iters", "1", "--no-progress")
    assert "--data is empty; name a bundled corpus or a text file" in err


def test_a_model_without_tokenizer_files_says_what_the_command_line_needs(capsys, tmp_path):
    """Python can pass token ids; the command line reads text, so its advice is the files."""
    from helpers_hf import save_random_llama

    save_random_llama(tmp_path, "llama")  # weights and config only
    capsys.readouterr()  # transformers' own progress while saving
    err = one_line_error(capsys, "explain", "hi", "-m", tmp_path)
    assert "has no tokenizer files; the command line reads text, so put the tokenizer's" in err
    assert "token ids" not in err


# --- an option the command does not have -------------------------------------------------------
def parser_error(capsys, monkeypatch, lang: str, *argv) -> list[str]:
    """The lines argparse's refusal prints: the usage block, then the error."""
    monkeypatch.setenv("LMSCOPE_LANG", lang)
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    assert stop.value.code == 2
    return capsys.readouterr().err.rstrip("\n").splitlines()


@pytest.mark.parametrize(
    ("argv", "typed", "meant"),
    [
        (["explain", "--layr", "5", "hi"], "--layr", "--layer"),
        (["lens", "hi", "--top-k", "3"], "--top-k", "--top"),  # explain's --top-k is sampling's
        (["ablate", "hi", "-a", "L0H0", "--topk=3"], "--topk", "--top"),
        (["generate", "hi", "--temprature", "0.7"], "--temprature", "--temperature"),
    ],
)
def test_a_mistyped_option_is_named_with_the_one_meant(capsys, monkeypatch, argv, typed, meant):
    """It said ``lmscope: error: unrecognized arguments: --layr hi`` under the usage of
    ``lmscope`` itself: the prompt named as a second mistake, and no word of the option meant."""
    lines = parser_error(capsys, monkeypatch, "en", *argv)
    command = argv[0]
    assert lines[0].startswith(f"usage: lmscope {command} ")
    assert lines[-1] == f"lmscope {command}: error: unknown option {typed}; did you mean {meant}?"
    lines = parser_error(capsys, monkeypatch, "zh", *argv)
    assert lines[-1] == f"lmscope {command}: 错误：没有选项 {typed}；你是不是想写 {meant}？"


def test_an_option_like_none_of_the_commands_points_to_its_help(capsys, monkeypatch):
    lines = parser_error(capsys, monkeypatch, "en", "lens", "hi", "--zzzz")
    said = "lmscope lens: error: unknown option --zzzz (lmscope lens --help lists them)"
    assert lines[-1] == said
    lines = parser_error(capsys, monkeypatch, "zh", "lens", "hi", "--zzzz")
    assert lines[-1] == "lmscope lens: 错误：没有选项 --zzzz（lmscope lens --help 列出了所有选项）"


def test_a_word_too_many_is_refused_by_its_command(capsys, monkeypatch):
    # the usage shown was lmscope's own, not that of the command the word was given to
    lines = parser_error(capsys, monkeypatch, "en", "generate", "x", "y")
    assert lines[0].startswith("usage: lmscope generate ")
    assert lines[-1] == "lmscope generate: error: unrecognized arguments: y"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["circuits", "attribute", "The Eiffel Tower is in", "--answer", " Paris"],
            "lmscope circuits attribute: error: unknown option --answer "
            "(lmscope circuits attribute --help lists them)",
        ),
        (
            ["circuits", "patch", "--clean", "a", "--corupt", "b", "--right", "x", "--wrong", "y"],
            "lmscope circuits patch: error: unknown option --corupt; did you mean --corrupt?",
        ),
        (  # a required option left out, and nothing mistyped: that is the mistake
            ["circuits", "attribute", "The Eiffel Tower is in"],
            "lmscope circuits attribute: error: the following arguments are required: --token",
        ),
    ],
)
def test_a_mistyped_option_is_named_before_a_missing_one(capsys, monkeypatch, argv, said):
    """`circuits attribute TEXT --answer ' Paris'` said only that --token was missing: the
    word typed for it, and the reason it was missing, went unmentioned."""
    assert parser_error(capsys, monkeypatch, "en", *argv)[-1] == said
    in_chinese = parser_error(capsys, monkeypatch, "zh", *argv)[-1]
    assert in_chinese.startswith(said.split(": error:")[0] + ": 错误：")
    assert ("没有选项" in in_chinese) == ("unknown option" in said)
