"""The README's commands as written: --help texts that say what the command does, `serve
--workers` with a model that cannot load, and explain's output for a prompt of one token."""

from __future__ import annotations

import pytest

from lmscope.cli import build_parser, main


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def help_of(capsys, *argv) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().out


@pytest.fixture
def no_workers_start(monkeypatch):
    """uvicorn's process manager, replaced: it records that it would have started workers."""
    import uvicorn

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    return started


# --- serve --workers: every model is checked once, before the workers start ------------------
@pytest.mark.slow
@pytest.mark.parametrize("option", ["--compare", "--rnn"])
def test_serve_workers_refuses_a_model_that_cannot_load_in_one_line(
    capsys, no_workers_start, option
):
    """Each worker loaded --compare/--rnn itself: a traceback per worker, restarted without end,
    after the line that said the app was served."""
    code, _, err = run_cli(
        capsys,
        "serve",
        "-m",
        "shakespeare",
        "--port",
        "0",
        "--workers",
        "2",
        option,
        "no-such-model",
    )
    assert code == 2, err
    assert no_workers_start == []
    assert "Traceback" not in err
    kind = "char model" if option == "--rnn" else "model"  # /rnn reads char models only
    assert err.startswith(f"lmscope: error: unknown {kind} 'no-such-model'"), err
    assert len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_serve_workers_says_what_it_serves_as_one_worker_does(capsys, no_workers_start):
    """With --workers the start line left out the precision, the compared models and /rnn."""
    code, _, err = run_cli(
        capsys,
        "serve",
        "--model",
        "shakespeare",
        "--port",
        "0",
        "--workers",
        "2",
        "--dtype",
        "bfloat16",
        "--compare",
        "shakespeare",
        "--rnn",
        "warpeace-lstm",
    )
    assert code == 0, err
    assert len(no_workers_start) == 1 and no_workers_start[0]["workers"] == 2
    assert "serving shakespeare in bfloat16 at http://127.0.0.1:0/ from 2 worker" in err
    assert "the page can compare it with shakespeare" in err
    assert "char-RNN neurons of warpeace-lstm at http://127.0.0.1:0/rnn" in err


# --- --help says what the command does ---------------------------------------------------------
def test_train_description_is_wrapped_to_the_terminal(capsys, monkeypatch):
    """A raw description printed its 500 characters as one line."""
    monkeypatch.setenv("COLUMNS", "80")
    out = help_of(capsys, "train")
    assert "Train a model and write checkpoints" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_export_names_its_output_folder_as_its_help_does(capsys):
    """The usage said `RUN out` while --overwrite's help spoke of OUT."""
    out = help_of(capsys, "export")
    assert "RUN OUT" in out
    assert "in OUT" in out


def test_sample_help_takes_shipped_models_as_the_readme_does(capsys):
    """`lmscope sample warpeace-lstm` works, but the help asked only for a model folder."""
    out = help_of(capsys, "sample")
    assert "shipped model" in out
    top = build_parser().format_help()
    assert "stream text from a model folder written by 'lmscope train'" not in top


def test_minrnn_lists_every_corpus_it_takes(capsys):
    """--data warpeace-novel trains, but minrnn's help left it out."""
    from lmscope.data.corpora import corpus_names

    out = " ".join(help_of(capsys, "minrnn").split())
    assert all(name in out for name in corpus_names())


def test_lens_help_names_the_norm_of_every_family(capsys):
    """On SmolLM2 (the default) the lens reads out through the final RMSNorm, not a LayerNorm."""
    out = " ".join(help_of(capsys, "lens").split())
    assert "final norm (LayerNorm or RMSNorm)" in out


def test_compare_help_gives_the_default_out(capsys):
    out = " ".join(help_of(capsys, "compare").split())
    assert "(default lmscope-compare)" in out


def test_recall_help_says_default_like_every_other_option(capsys):
    """`--queries QUERIES queries per example (4)`: a bare number where the rest say default."""
    out = " ".join(help_of(capsys, "lab", "recall").split())
    for words in (
        "queries per example (default 4)",
        "examples per step (default 32)",
        "learning rate of every model (default 0.005)",
        "GPT blocks (default 2)",
        "layers of each recurrent model (default 1)",
    ):
        assert words in out, words


# --- one token is "1 token" ----------------------------------------------------------------------
@pytest.mark.slow
def test_explain_of_one_token_says_token(capsys, monkeypatch):
    """`lmscope explain "..."` headed its steps "1 tokens" and said "after 1 tokens"."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli(capsys, "explain", "hi", "-m", "shakespeare", "--step", "2")
    assert code == 0, err
    assert "1 tokens" not in out
    assert "shakespeare · 1 token · layer 0" in out
    assert "after 1 token the model predicts" in out
    code, out, err = run_cli(capsys, "explain", "hi", "-m", "shakespeare", "--lang", "zh")
    assert code == 0, err
    assert "1 个 token" in out


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lens_position_outside_one_token_prompt(capsys, lang):
    code, _, err = run_cli(
        capsys, "lens", "hi", "-m", "shakespeare", "--positions", "9", "--lang", lang
    )
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    if lang == "en":
        assert "outside the prompt of 1 token (0..0" in err, err
    else:
        assert "--positions" in err and "token" in err and "outside" not in err, err


@pytest.mark.slow
def test_explain_never_breaks_a_token_across_lines(capsys, monkeypatch):
    """At 80 columns "attends most to" broke ' mind'@24 after its opening quote."""
    monkeypatch.setenv("COLUMNS", "80")
    prompt = "To be, or not to be, that is the question: whether tis nobler in the mind to suffer"
    code, out, err = run_cli(capsys, "explain", prompt, "-m", "shakespeare", "--step", "8")
    assert code == 0, err
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if "attends most to" in line)
    last = next(i for i, line in enumerate(lines) if "attention output" in line)
    listed = [
        line.strip("│ ").removeprefix("attends most to").strip() for line in lines[first:last]
    ]
    assert len(listed) > 1  # the list does wrap at 80 columns
    for line in listed:  # every line holds whole items: 'token'@position (weight)
        assert line.count("'") % 2 == 0 and line.count("@") == line.count("("), listed


@pytest.mark.slow
def test_explain_names_the_characters_that_draw_nothing(capsys, monkeypatch):
    """The character column printed a no-break space as a blank and U+FE0F raw (nothing to see,
    and the panel's right border one cell off), where the page and the merges list name them."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli(capsys, "explain", "a\xa0b\ufe0f", "-m", "shakespeare", "--step", "4")
    assert code == 0, err
    assert "┐ ⍽" in out
    assert "┐ <U+FE0F>" in out
    assert "\ufe0f" not in out and "\xa0" not in out
