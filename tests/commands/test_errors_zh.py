"""Errors in Chinese under --lang zh (or $LMSCOPE_LANG=zh), as a new user meets them: the
option parser's own lines (a bad value, a missing argument, an unknown option...), the option
checks lmscope adds, and the common refusals of the library and the commands, each rendered
from the catalog (argparse's through ``parser_words``). English stays byte for byte."""

from __future__ import annotations

import re

import pytest

from lmscope.cli import main
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
        ["serve", "--max-wait", "abc"],
        "lmscope serve: error: argument --max-wait: invalid float value: 'abc'",
        "lmscope serve: 错误：参数 --max-wait：'abc' 不是有效的浮点数",
    ),
    (
        ["lens"],
        "lmscope lens: error: the following arguments are required: text",
        "lmscope lens: 错误：缺少必需的参数：text",
    ),
    (
        ["generate", "x", "y"],
        "lmscope generate: error: unrecognized arguments: y",
        "lmscope generate: 错误：无法识别的参数：y",
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
def test_parser_errors_in_chinese_with_the_usage_as_help_says_it(
    capsys, monkeypatch, argv, english, chinese
):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    code, err_en = run_cli(capsys, *argv)
    assert code == 2 and last_line(err_en) == english
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    code, err_zh = run_cli(capsys, *argv)
    assert code == 2 and last_line(err_zh) == chinese
    # the usage block says 用法：as --help does (it said "usage:" above a Chinese line), and
    # names the same options
    usage_en, usage_zh = err_en.splitlines()[:-1], err_zh.splitlines()[:-1]
    assert usage_en[0].startswith("usage: ") and usage_zh[0].startswith("用法：")
    words_en = " ".join(usage_en).removeprefix("usage: ").split()
    assert " ".join(usage_zh).removeprefix("用法：").split() == words_en


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


# words a command does not take are refused by the command itself, naming the option meant
# (test_cli_option_errors): argparse refuses them at the top, as lmscope's
OWN_REFUSALS = [["generate", "x", "y"]]


@pytest.mark.parametrize(
    "argv", [case[0] for case in PARSER_CASES if case[0] not in OWN_REFUSALS] + CHOICES
)
def test_english_parser_errors_are_argparse_s_own(capsys, monkeypatch, argv):
    """Byte for byte what argparse writes, with $LMSCOPE_LANG unset or --lang en."""
    import argparse

    from lmscope import cli

    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    _, ours = run_cli(capsys, *argv)
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    _, ours_lang_en = run_cli(capsys, *argv, "--lang", "en")
    monkeypatch.setattr(cli.Parser, "error", argparse.ArgumentParser.error)
    monkeypatch.setattr(cli.Parser, "format_usage", argparse.ArgumentParser.format_usage)
    _, plain = run_cli(capsys, *argv)
    assert ours == plain and "error: " in plain
    _, plain = run_cli(capsys, *argv, "--lang", "en")
    assert ours_lang_en == plain


@pytest.mark.parametrize(
    "lang_args", [["--lang", "zh"], ["--lang=zh"]], ids=["--lang zh", "--lang=zh"]
)
def test_lang_on_the_command_line_counts_when_parsing_fails(capsys, en, lang_args):
    code, err = run_cli(capsys, "generate", "--temperature", "abc", "x", *lang_args)
    assert code == 2 and last_line(err) == "lmscope: 错误：--temperature 必须是一个数，收到 'abc'"
    code, err = run_cli(capsys, "explain", *lang_args)  # no text: --lang is all it has
    assert code == 2 and last_line(err) == "lmscope explain: 错误：缺少必需的参数：text"
    # a command without --lang refuses it, but in the language it asked for
    code, err = run_cli(capsys, "serve", "--port", "abc", *lang_args)
    assert code == 2 and last_line(err).startswith("lmscope serve: 错误：")


def test_lang_en_on_the_command_line_wins_over_the_environment(capsys, zh):
    code, err = run_cli(capsys, "generate", "--temperature", "abc", "x", "--lang", "en")
    assert last_line(err) == "lmscope: error: --temperature must be a number, got 'abc'"
    code, err = run_cli(capsys, "generate", "-t", "abc", "x", "--lang", "zh", "--lang", "en")
    assert last_line(err).startswith("lmscope: error:")
    # after "--" nothing is an option: the text "--lang zh" asks for no language
    code, err = run_cli(capsys, "generate", "-t", "abc", "--lang", "en", "--", "--lang", "zh")
    assert last_line(err).startswith("lmscope: error:")


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
        (["generate", "-t", "-1", "hi", *m], ["--temperature 必须是不小于 0 的有限数，收到 -1"]),
        (
            ["generate", "--top-p", "0", "hi", *m],
            ["--top-p 必须在 (0, 1] 范围内（不设则关闭），收到 0"],
        ),
        (
            ["generate", "--min-p", "2", "hi", *m],
            ["--min-p 必须在 [0, 1] 范围内（0 或不设则关闭），收到 2"],
        ),
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


@pytest.mark.slow
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


# --- argparse's lines --------------------------------------------------------------------
def test_a_line_no_pattern_knows_stays_english():
    assert parser_message_in("something new went wrong", "zh") == "something new went wrong"
    assert parser_message_in("argument --x: something new", "zh") == "参数 --x：something new"


def test_english_is_never_rewritten():
    for line in ("unrecognized arguments: y", "--top must be at least 1, got 0"):
        assert parser_message_in(line, "en") == line


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
    ],
)
def test_the_rest_of_argparse_s_messages(message, chinese):
    assert parser_message_in(message, "zh") == chinese
    assert CJK.search(chinese) and english_in(chinese) == []


# --- the refusals of train, lab, race, export, minrnn, neurons, serve, compare ----------------
# (name, argv, English line, Chinese line): {placeholders} are the paths of ``gap_paths``
GAP_CASES = [
    # --out that cannot be written: a file in the way, a folder that refuses writes
    (
        "train --out under a file",
        ["train", "--data", "{data}", "--iters", "1", "--out", "{notes}/run"],
        "--out {notes}/run: {notes} is a file, not a folder; choose another folder",
        "--out {notes}/run：{notes} 是文件，不是文件夹；请换一个文件夹",
    ),
    (
        "train --out a file",
        ["train", "--data", "{data}", "--iters", "1", "--out", "{notes}"],
        "--out {notes} is a file, not a folder; choose another folder",
        "--out {notes} 是文件，不是文件夹；请换一个文件夹",
    ),
    (
        "train --out read-only",
        ["train", "--data", "{data}", "--iters", "1", "--out", "{ro}/run"],
        "--out {ro}/run: cannot write in {ro}: Read-only file system; choose another folder",
        "--out {ro}/run：无法在 {ro} 中写入：Read-only file system；请换一个文件夹",
    ),
    (
        "train --resume --out a file",
        ["train", "--resume", "--out", "{notes}"],
        "{notes} is a file, not a folder; --out names a run's folder",
        "{notes} 是文件，不是文件夹；--out 要指定一次训练的文件夹",
    ),
    (
        "train --resume --out empty folder",
        ["train", "--resume", "--out", "{tmp}/new"],
        "{tmp}/new holds no lmscope checkpoint to resume; drop --resume to start a new run there",
        "{tmp}/new 里没有可以接着训练的 lmscope 检查点；去掉 --resume 即可在那里开始新的训练",
    ),
    (
        "train --out ''",
        ["train", "--data", "{data}", "--iters", "1", "--out", ""],
        "--out is empty; give a folder for the checkpoint",
        "--out 是空的；请给出存放检查点的文件夹",
    ),
    (
        "lab --out under a file",
        ["lab", "recall", "--quick", "--out", "{notes}/run"],
        "--out {notes}/run: {notes} is a file, not a folder",
        "--out {notes}/run：{notes} 是文件，不是文件夹",
    ),
    (
        "lab --out read-only",
        ["lab", "gradients", "--out", "{ro}/run"],
        "--out {ro}/run: cannot write in {ro}: Read-only file system",
        "--out {ro}/run：无法在 {ro} 中写入：Read-only file system",
    ),
    (
        "race --out a file",
        ["race", "--out", "{notes}"],
        "--out {notes} is a file, not a folder",
        "--out {notes} 是文件，不是文件夹",
    ),
    (
        "lab --out ''",
        ["lab", "serial-depth", "--out", ""],
        "--out is empty; name a folder, e.g. --out lmscope-results/run",
        "--out 是空的；请给出一个文件夹，如 --out lmscope-results/run",
    ),
    (
        "export to a file",
        ["export", "{model}", "{notes}"],
        "{notes} is a file, not a folder; choose a folder to export to",
        "{notes} 是文件，不是文件夹；请换一个文件夹来导出",
    ),
    (
        "export under a file",
        ["export", "{model}", "{notes}/run"],
        "cannot export to {notes}/run: {notes} is a file, not a folder",
        "无法导出到 {notes}/run：{notes} 是文件，不是文件夹",
    ),
    (
        "export read-only",
        ["export", "{model}", "{ro}/run"],
        "cannot export to {ro}/run: cannot write in {ro}: Read-only file system",
        "无法导出到 {ro}/run：无法在 {ro} 中写入：Read-only file system",
    ),
    (
        "compare --out under a file",
        ["compare", "-m", "{model}", "-m", "{model}", "--text", "{text}", "--out", "{notes}/run"],
        "cannot create {notes}/run: {notes} is a file, not a folder",
        "无法创建 {notes}/run：{notes} 是文件，不是文件夹",
    ),
    # what export refuses to write over
    (
        "export over other files",
        ["export", "{model}", "{folder}"],
        "{folder} is not empty and not an lmscope model (it holds notes.md); export to a new or "
        "empty folder (--overwrite replaces only a model lmscope wrote)",
        "{folder} 不是空的，也不是 lmscope 模型（里面有 notes.md）；请导出到新的或空的文件夹"
        "（--overwrite 只会替换 lmscope 写的模型）",
    ),
    (
        "export onto itself",
        ["export", "{model}", "{model}"],
        "export needs a different output folder than the run folder",
        "导出需要一个不同于模型文件夹的输出文件夹",
    ),
    (
        "export inside the model",
        ["export", "{model}", "{model}/copy"],
        "{model}/copy is inside the model being exported ({model}); choose a folder outside it",
        "{model}/copy 在要导出的模型（{model}）里面；请换一个它外面的文件夹",
    ),
    (
        "export around the model",
        ["export", "{model}", "{models}"],
        "{models} contains the model being exported ({model}): writing it would replace the "
        "model; choose another folder",
        "{models} 包含要导出的模型（{model}）：写入它会替换这个模型；请换一个文件夹",
    ),
    # corpora: --data of train, race, minrnn
    (
        "train --data empty",
        ["train", "--data", "{empty}", "--out", "{tmp}/run"],
        "{empty} is empty; give a corpus with some text in it.",
        "{empty} 是空的；请给出有文字的语料。",
    ),
    (
        "minrnn --data binary",
        ["minrnn", "--data", "{binary}", "--iters", "1"],
        "{binary} looks binary (it contains NUL bytes); give a text file.",
        "{binary} 看起来是二进制文件（含有 NUL 字节）；请给出文本文件。",
    ),
    (
        "race --data not UTF-8 bytes",
        ["race", "--data", "{noise}", "--out", "{tmp}/race"],
        "{noise} looks binary (not UTF-8 text: byte 0xFF at offset 0); give a UTF-8 text file.",
        "{noise} 看起来是二进制文件（不是 UTF-8 文本：偏移 0 处的字节 0xFF）；请给出 UTF-8 "
        "文本文件。",
    ),
    (
        "train --data Latin-1",
        ["train", "--data", "{latin}", "--out", "{tmp}/run"],
        "{latin} is not UTF-8 text: byte 0xE9 at offset 3 (another encoding, such as Latin-1?); "
        "convert it first, e.g. iconv -f latin1 -t utf-8.",
        "{latin} 不是 UTF-8 文本：偏移 3 处的字节 0xE9（也许是 Latin-1 之类的其他编码？）；"
        "请先转换编码，如 iconv -f latin1 -t utf-8。",
    ),
    # the lab and the race
    (
        "lab show without a name",
        ["lab", "show"],
        "name a result to show: {shipped}, or a folder with result.json",
        "请指定要显示的结果：{shipped}，或一个存有 result.json 的文件夹",
    ),
    (
        "lab show a folder without a result",
        ["lab", "show", "{folder}"],
        "no lab result at {folder}/result.json; run an experiment with --out first",
        "{folder}/result.json 处没有 lab 结果；请先用 --out 运行一次实验",
    ),
    (
        "lab replot a file that is not one",
        ["lab", "replot", "{notes}"],
        "{notes} is not a result.json written by lmscope lab (not JSON)",
        "{notes} 不是 lmscope lab 写的 result.json（不是 JSON）",
    ),
    (
        "lab recall --models foo",
        ["lab", "recall", "--models", "foo", "--out", "{tmp}/lab"],
        "unknown model 'foo' in --models; use lstm, gru, gpt",
        "--models 里有未知模型 'foo'；可用：lstm, gru, gpt",
    ),
    (
        "race --models lstm",
        ["race", "--models", "lstm", "--out", "{tmp}/race"],
        "--models needs gpt and at least one of lstm, gru, rnn (e.g. lstm,gpt)",
        "--models 需要 gpt 和 lstm, gru, rnn 中的至少一个（如 lstm,gpt）",
    ),
    (
        "lab gradients --models foo",
        ["lab", "gradients", "--models", "foo", "--out", "{tmp}/lab"],
        "unknown model 'foo'; use some of rnn, lstm, gru, gpt",
        "未知模型 'foo'；请从 rnn, lstm, gru, gpt 中选用",
    ),
    (
        "lab recall --sizes x",
        ["lab", "recall", "--sizes", "x", "--out", "{tmp}/lab"],
        "--sizes takes GPT widths as whole numbers, e.g. 16,32,64; got 'x'",
        "--sizes 要用整数写 GPT 宽度，如 16,32,64；收到 'x'",
    ),
    (
        "lab recall --sizes 0",
        ["lab", "recall", "--sizes", "0", "--out", "{tmp}/lab"],
        "every --sizes entry (a GPT width) must be a whole number >= 16, got 0",
        "--sizes 的每一项（GPT 宽度）都必须是不小于 16 的整数，收到 0",
    ),
    (
        "lab recall --budget 0",
        ["lab", "recall", "--budget", "0", "--out", "{tmp}/lab"],
        "--budget must be above 0 seconds (or none), got '0'",
        "--budget 必须大于 0 秒（或 none），收到 '0'",
    ),
    (
        "race --budget abc",
        ["race", "--budget", "abc", "--out", "{tmp}/race"],
        "--budget 'abc' is not a time; use seconds (240) or a unit: 90s, 4m, 0.5h",
        "--budget 'abc' 不是时长；请用秒数（240）或带单位的时长：90s, 4m, 0.5h",
    ),
    (
        "race --budget 0",
        ["race", "--budget", "0", "--out", "{tmp}/race"],
        "--budget must be above 0 seconds (e.g. 240 or 4m), got 0",
        "--budget 必须大于 0 秒（如 240 或 4m），收到 0",
    ),
    (
        "race --threads 0",
        ["race", "--threads", "0", "--out", "{tmp}/race"],
        "--threads must be >= 1, got 0",
        "--threads 必须不小于 1，收到 0",
    ),
    (
        "race --context 0",
        ["race", "--context", "0", "--out", "{tmp}/race"],
        "--context (N) must be a whole number >= 1, got 0",
        "--context（N）必须是不小于 1 的整数，收到 0",
    ),
    (
        "race --device tpu",
        ["race", "--device", "tpu", "--out", "{tmp}/race"],
        "unknown device 'tpu'; use auto, cpu, cuda or a list: cpu,cuda",
        "未知设备 'tpu'；请用 auto、cpu、cuda 或逗号分隔的列表（如 cpu,cuda）",
    ),
    (
        "race on a short corpus",
        ["race", "--data", "{short}", "--context", "4", "--batch", "2", "--out", "{tmp}/race"],
        "--context 4 with --batch 2 needs 10 characters in the training split of '{short}', "
        "which has 2; use a shorter --context, a smaller --batch or a bigger corpus",
        "--context 4 配 --batch 2 需要训练集里有 10 个字符，而 '{short}' 的训练集只有 2 个；"
        "请调小 --context 或 --batch，或换更大的语料",
    ),
    # minrnn
    (
        "minrnn --iters -1",
        ["minrnn", "--iters", "-1"],
        "--iters must be 0 or more, got -1",
        "--iters 必须是 0 或更大，收到 -1",
    ),
    (
        "minrnn --sample-length 0",
        ["minrnn", "--sample-length", "0", "--iters", "1"],
        "--sample-length must be >= 1, got 0",
        "--sample-length 必须不小于 1，收到 0",
    ),
    (
        "minrnn on a short text",
        ["minrnn", "--data", "{short}", "--iters", "1"],
        "the text has 3 characters; one chunk of --seq 25 needs 26. Use a shorter --seq or a "
        "longer text.",
        "文本只有 3 个字符；一段 --seq 25 需要 26 个。请用更短的 --seq 或更长的文本。",
    ),
    (
        "minrnn --gradcheck on a short text",
        ["minrnn", "--gradcheck", "--data", "{short}"],
        "--data has 3 characters; a chunk of --seq 25 needs 26.",
        "--data 只有 3 个字符；一段 --seq 25 需要 26 个。",
    ),
    # neurons
    (
        "neurons --text missing",
        ["neurons", "-m", "{lstm}", "--text", "{tmp}/nope.txt", "--cell", "0:1"],
        "no such text file: {tmp}/nope.txt",
        "没有这个文本文件：{tmp}/nope.txt",
    ),
    (
        "neurons --text empty",
        ["neurons", "-m", "{lstm}", "--text", "{empty}", "--cell", "0:1"],
        "{empty} is empty",
        "{empty} 是空的",
    ),
    (
        "neurons --text Latin-1",
        ["neurons", "-m", "{lstm}", "--text", "{latin}", "--cell", "0:1"],
        "{latin} is not a UTF-8 text file",
        "{latin} 不是 UTF-8 文本文件",
    ),
    (
        "neurons --cell unit out of range",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--cell", "0:99"],
        "unit 99 does not exist; each layer has units 0..11",
        "单元 99 不存在；每层的单元编号是 0 到 11",
    ),
    (
        "neurons --cell abc",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--cell", "abc"],
        "--cell 'abc': write LAYER:UNIT with whole numbers, e.g. 0:42 (layer 0, unit 42)",
        "--cell 'abc'：请用整数写成 LAYER:UNIT，如 0:42（第 0 层，单元 42）",
    ),
    (
        "neurons --kind zz",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--cell", "0:1", "--kind", "zz"],
        "an LSTM has no 'zz' values; use one of h, c, i, f, g, o",
        "LSTM 没有 'zz' 值；请用 h, c, i, f, g, o 之一",
    ),
    (
        "neurons --out x.txt",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--cell", "0:1", "--out", "{tmp}/x.txt"],
        "--out {tmp}/x.txt: the name must end in .png, .svg, .html, .json",
        "--out {tmp}/x.txt：文件名必须以 .png, .svg, .html, .json 之一结尾",
    ),
    (
        "neurons --features foo",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--find", "--features", "foo"],
        "--features: unknown feature 'foo'; known: {features} (or a set: prose, code, all)",
        "--features：未知的特征 'foo'；已知的有：{features}（或一组：prose, code, all）",
    ),
    (
        "neurons --find --cell",
        ["neurons", "-m", "{lstm}", "--text", "{text}", "--find", "--cell", "0:1"],
        "--find and --cell do different things; use one of them",
        "--find 和 --cell 做的是不同的事；只用其中一个",
    ),
    # serve
    (
        "serve on a busy port",
        ["serve", "-m", "{model}", "--rnn", "none", "--port", "{port}"],
        "cannot listen on 127.0.0.1:{port} (Address already in use); pick another --port",
        "无法在 127.0.0.1:{port} 上监听（Address already in use）；请换一个 --port",
    ),
]


OS_WORDS = ("Address already in use", "Read-only file system")  # the system's, as it says them


@pytest.fixture
def gap_paths(tmp_path, monkeypatch, read_only, small_char_gpt, quote_lstm):
    """The files and folders GAP_CASES name; writing in ``ro`` fails as on a read-only disk
    (root may write anywhere, so a chmod would not do)."""
    import socket

    from lmscope.data import load_corpus
    from lmscope.interpret.features import FEATURES
    from lmscope.lab.results import shipped_experiments

    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    files = {
        "notes": "mine\n",
        "text.txt": "hello there\n",
        "empty.txt": "",
        "short.txt": "abc",
        "data.txt": load_corpus("shakespeare").text[:8000],
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"text\x00more")
    (tmp_path / "noise.bin").write_bytes(bytes([0xFF, 1, 2, 3, 4, 5]))
    (tmp_path / "latin.txt").write_bytes("café au lait\n".encode("latin-1"))
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.md").write_text("mine")
    (tmp_path / "ro").mkdir()
    (tmp_path / "new").mkdir()
    read_only(tmp_path / "ro")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    yield {
        "tmp": tmp_path,
        **{name.split(".")[0]: tmp_path / name for name in [*files, "binary.txt", "latin.txt"]},
        "noise": tmp_path / "noise.bin",
        "folder": tmp_path / "folder",
        "ro": tmp_path / "ro",
        "model": small_char_gpt,
        "models": small_char_gpt.parent,
        "lstm": quote_lstm,
        "shipped": ", ".join(shipped_experiments()),
        "features": ", ".join(FEATURES),
        "port": busy.getsockname()[1],
    }
    busy.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "english", "chinese"),
    [case[1:] for case in GAP_CASES],
    ids=[case[0] for case in GAP_CASES],
)
def test_command_refusals_in_chinese(capsys, monkeypatch, gap_paths, argv, english, chinese):
    """The Chinese line, and the English one byte for byte as the library says it."""
    argv = [arg.format(**gap_paths) for arg in argv]
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    code, err = run_cli(capsys, *argv)
    assert code == 2 and last_line(err) == "lmscope: error: " + english.format(**gap_paths)
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    code, err = run_cli(capsys, *argv)
    assert code == 2 and last_line(err) == "lmscope: 错误：" + chinese.format(**gap_paths)
    said = last_line(err)
    for value in (gap_paths["shipped"], gap_paths["features"], *OS_WORDS):  # values, kept
        said = said.replace(value, "")
    assert english_in(said) == [], said


def test_a_lab_device_without_cuda_in_chinese(capsys, zh, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("the machine has a CUDA GPU")
    code, err = run_cli(capsys, "race", "--device", "cuda", "--out", tmp_path / "race")
    assert code == 2 and err == (
        "lmscope: 错误：--device cuda：这个 PyTorch 找不到 CUDA GPU；请用 --device cpu\n"
    )


@pytest.mark.slow
def test_a_save_that_fails_mid_run_in_chinese(capsys, monkeypatch, shakespeare_file, tmp_path):
    """The checkpoint kept and the command that continues it, then the refusals that a run's
    folder gives: a new run over it, a resume of a folder without one."""
    import errno

    from lmscope.formats import checkpoints

    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    real = checkpoints.save_checkpoint

    def disk_fills(*args, **kwargs):
        if kwargs["trainer_state"]["iteration"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoints, "save_checkpoint", disk_fills)
    out = tmp_path / "run"
    tiny = "--layers 1 --heads 2 --dim 16 --context 16 --batch 4 --iters 4 --eval-every 2"
    argv = ["train", "--data", shakespeare_file(8_000), *tiny.split(), "--eval-iters", "1"]
    argv += ["--sample-every", "0", "--device", "cpu", "--no-progress", "--out", out]
    code, err = run_cli(capsys, *argv)
    assert code == 2 and last_line(err) == (
        f"lmscope: 错误：无法把第 4 次迭代的检查点写入 {out}：No space left on device；"
        f"第 2 次迭代的检查点已保留（接着训练：lmscope train --resume --out {out}）"
    )
    code, err = run_cli(capsys, *argv)
    assert code == 2 and last_line(err) == (
        f"lmscope: 错误：{out} 里已有一个检查点（第 2 次迭代）；加 --resume 接着训练，"
        "或加 --overwrite 从头开始"
    )


def test_a_chinese_locale_gets_chinese_errors_without_lmscope_lang(capsys, monkeypatch):
    """LANG=zh_CN.UTF-8 printed English until $LMSCOPE_LANG=zh was set too."""
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    code, err = run_cli(capsys, "explain", "--layr", "5", "hi")
    assert code == 2
    assert last_line(err) == "lmscope explain: 错误：没有选项 --layr；你是不是想写 --layer？"
    monkeypatch.setenv("LMSCOPE_LANG", "en")  # the variable still wins
    code, err = run_cli(capsys, "explain", "--layr", "5", "hi")
    assert last_line(err) == "lmscope explain: error: unknown option --layr; did you mean --layer?"
