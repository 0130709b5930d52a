"""Each front door's advice names what works there: the CLI names its flags, never a Python
argument (unknown='skip', allow_nonfinite=True), on a small character GPT such as
`lmscope train --tokenizer char` writes; and every model command speaks --lang."""

from __future__ import annotations

import pytest

from lmscope.cli import main

MODEL_COMMANDS = ("explain", "generate", "lens", "ablate", "sample", "compare")


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["explain", "generate", "lens", "ablate"])
def test_unseen_characters_get_cli_advice(capsys, small_char_gpt, command):
    extra = ("-a", "attn0") if command == "ablate" else ()
    code, _, err = run_cli(capsys, command, "hi 你", "--model", small_char_gpt, *extra)
    assert code == 2 and "'你'" in err and len(err.strip().splitlines()) == 1
    assert "unknown=" not in err and "remove" in err


def test_compare_unseen_characters_get_cli_advice(capsys, small_char_gpt, tmp_path):
    text = tmp_path / "zh.txt"
    text.write_text("你好", encoding="utf-8")
    code, _, err = run_cli(
        capsys, "compare", "-m", small_char_gpt, "-m", small_char_gpt, "--text", text
    )
    assert code == 2 and "'你'" in err and "unknown=" not in err


def test_python_advice_names_what_python_can_do(small_char_gpt):
    import lmscope
    from lmscope.errors import LmscopeError

    model = lmscope.load(small_char_gpt)
    with pytest.raises(LmscopeError) as caught:
        model.generate("hi 你", 2)
    assert "model.tokenizer.unknown = 'skip'" in str(caught.value)
    model.tokenizer.unknown = "skip"  # the advice works
    assert len(list(model.generate("hi 你", 2))) == 2


@pytest.mark.slow
def test_nonfinite_weights_advice_works_in_the_cli(capsys, broken_gpt):
    code, _, err = run_cli(capsys, "sample", broken_gpt, "--length", "2")
    assert code == 2 and "--allow-nonfinite" in err and "allow_nonfinite=" not in err
    for argv in (
        ("explain", "hi", "--model", broken_gpt, "--step", "1", "--allow-nonfinite"),
        ("lens", "hi", "--model", broken_gpt, "--allow-nonfinite"),
    ):
        code, _, err = run_cli(capsys, *argv)
        assert code == 0, (argv, err)
    # the model loads; drawing from NaN logits (tied to the NaN embedding) is refused on its own
    for argv in (
        ("sample", broken_gpt, "--prompt", "hi", "-n", "1", "--allow-nonfinite"),
        ("generate", "hi", "--model", broken_gpt, "-n", "1", "--allow-nonfinite"),
    ):
        code, _, err = run_cli(capsys, *argv)
        assert "not finite" not in err, (argv, err)


def test_python_nonfinite_advice_names_the_argument(broken_gpt):
    import lmscope
    from lmscope.errors import LmscopeError

    with pytest.raises(LmscopeError) as caught:
        lmscope.load(broken_gpt)
    assert "allow_nonfinite=True" in str(caught.value) and "--" not in str(caught.value)


@pytest.mark.parametrize("command", MODEL_COMMANDS)
def test_every_model_command_takes_lang(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--lang" in capsys.readouterr().out


# --- errors in --lang zh ------------------------------------------------------------------------
def zh_error(capsys, *argv) -> str:
    code, _, err = run_cli(capsys, *argv, "--lang", "zh")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    return err


def test_common_errors_in_chinese(capsys, small_char_gpt, broken_gpt):
    err = zh_error(capsys, "explain", "hi 你", "--model", small_char_gpt)
    assert "'你'" in err and "词表" in err and "vocabulary" not in err
    err = zh_error(capsys, "generate", "hi " * 40, "--model", small_char_gpt)
    assert "上下文" in err and "--truncate" in err and "context" not in err
    err = zh_error(capsys, "lens", "hi", "--model", "no-such-model")
    assert "no-such-model" in err and "未知模型" in err and "folder" not in err
    err = zh_error(capsys, "sample", broken_gpt, "-n", "1")
    assert "--allow-nonfinite" in err and "NaN" in err and "weights" not in err
    err = zh_error(capsys, "explain", "hi", "--model", small_char_gpt, "--layer", "9")
    assert "9" in err and "层" in err and "does not exist" not in err
    err = zh_error(capsys, "sample", small_char_gpt, "--prompt", "你")
    assert "--skip-unknown" in err and "字符" in err


def test_the_tokenizer_ends_with_the_advice_the_front_doors_reword():
    from lmscope.engine import advice
    from lmscope.errors import TokenizerError
    from lmscope.tokenizers import CharTokenizer

    with pytest.raises(TokenizerError) as caught:
        CharTokenizer("ab").encode("abc")
    assert caught.value.values["advice"].id == advice.ADVICE_UNKNOWN_CHARS_TOKENIZER


@pytest.mark.parametrize(
    "argv",
    [
        ("explain", "hi", "--model"),
        ("ablate", "hi", "-a", "attn0", "--model"),
    ],
)
def test_a_broken_model_is_one_line_where_a_view_cannot_show_nan(capsys, broken_gpt, argv):
    code, _, err = run_cli(capsys, *argv, broken_gpt, "--allow-nonfinite")
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "lens" in err, err
