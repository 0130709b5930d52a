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
    ],
)
def test_the_rest_of_argparse_s_messages(message, chinese):
    assert parser_message_in(message, "zh") == chinese
    assert CJK.search(chinese) and english_in(chinese) == []


@pytest.mark.parametrize(
    ("message", "chinese"),
    [
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


def test_weights_that_do_not_fit_or_are_not_floats_in_chinese():
    for message, words in (
        (
            "the weights in runs/x/model.safetensors are not floating-point numbers: "
            "h.1.mlp.c_fc.weight is int32; a model's weights are float32, float16 or bfloat16",
            ("runs/x/model.safetensors", "h.1.mlp.c_fc.weight", "int32", "浮点数"),
        ),
        (
            "the weights in runs/x do not fit the model: missing ['h.0.ln_1.weight']",
            ("runs/x", "['h.0.ln_1.weight']", "缺少"),
        ),
        (
            "the weights in runs/x do not fit the model: unexpected ['extra.weight']",
            ("runs/x", "['extra.weight']", "多出"),
        ),
        (
            "the weights in runs/x do not fit the model: wte.weight has shape (65, 64), the "
            "config implies (66, 64)",
            ("runs/x", "wte.weight", "(65, 64)", "(66, 64)", "形状"),
        ),
    ):
        said = in_lang(message, "zh")
        assert CJK.search(said) and english_in(said) == [], said
        assert all(w in said for w in words), said


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
        "no text file at {tmp}/nope.txt",
        "{tmp}/nope.txt 处没有文本文件",
    ),
    (
        "neurons --text empty",
        ["neurons", "-m", "{lstm}", "--text", "{empty}", "--cell", "0:1"],
        "{empty} is empty; give a file with some text",
        "{empty} 是空的；请给出有文字的文件",
    ),
    (
        "neurons --text Latin-1",
        ["neurons", "-m", "{lstm}", "--text", "{latin}", "--cell", "0:1"],
        "{latin} is not UTF-8 text",
        "{latin} 不是 UTF-8 文本",
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


LINE_CASES = [
    (
        "cannot write the checkpoint of iteration 0 to runs/a: No space left on device; "
        "nothing was saved",
        "无法把第 0 次迭代的检查点写入 runs/a：No space left on device；什么也没有保存",
    ),
    (
        "cannot write the checkpoint of iteration 500 to runs/a: Disk quota exceeded; the "
        "checkpoint of iteration 250 is kept (continue with: lmscope train --resume --out "
        "runs/a)",
        "无法把第 500 次迭代的检查点写入 runs/a：Disk quota exceeded；第 250 次迭代的检查点"
        "还在（接着训练：lmscope train --resume --out runs/a）",
    ),
    ("cannot write out/m: No space left on device", "无法写入 out/m：No space left on device"),
    ("cannot read notes.txt: Permission denied", "无法读取 notes.txt：Permission denied"),
    (
        "Cannot read 'notes.txt' (Permission denied); check it.",
        "无法读取 'notes.txt'（Permission denied）；请检查它。",
    ),
    (
        "res is not a result.json written by lmscope lab (no schema 1)",
        "res 不是 lmscope lab 写的 result.json（没有 schema 1）",
    ),
    (
        "--budget 'inf' is not a finite time",
        "--budget 'inf' 不是有限的时长",
    ),
    (
        "--budget must be above 0 seconds (e.g. 90 or 2m), got -1.0",
        "--budget 必须大于 0 秒（如 90 或 2m），收到 -1.0",
    ),
    (
        "--max-n must be >= 1, got 0",
        "--max-n 必须不小于 1，收到 0",
    ),
    (
        "a GRU has no 'c' values; use one of h, r, z, n",
        "GRU 没有 'c' 值；请用 h, r, z, n 之一",
    ),
    (
        "out holds the lmscope model 'm' and also x.md, y.md, z.md, plot.png and 2 more, "
        "which lmscope did not write; move those out first or export to another folder",
        "out 里除了 lmscope 模型 'm'，还有不是 lmscope 写的 x.md, y.md, z.md, plot.png，"
        "另外还有 2 个；请先把它们移走，或导出到另一个文件夹",
    ),
    (
        "out already holds the lmscope model 'm'; pass --overwrite to replace it "
        "(atomically), or choose another folder",
        "out 里已有 lmscope 模型 'm'；加 --overwrite 替换它（原子操作），或换一个文件夹",
    ),
    (
        "--context 512 with --batch 8 needs 4,104 characters in the validation split of "
        "'x.txt', which has 2; use a shorter --context, a smaller --batch or a bigger corpus",
        "--context 512 配 --batch 8 需要验证集里有 4,104 个字符，而 'x.txt' 的验证集只有 "
        "2 个；请调小 --context 或 --batch，或换更大的语料",
    ),
    (
        "the text has 1 character; one chunk of --seq 1,000 needs 1,001. Use a shorter "
        "--seq or a longer text.",
        "文本只有 1 个字符；一段 --seq 1,000 需要 1,001 个。请用更短的 --seq 或更长的文本。",
    ),
    (
        "cannot listen on 10.9.9.9:8000 (Cannot assign requested address); --host 10.9.9.9 is "
        "not an address of this machine; use 127.0.0.1 (this machine only) or 0.0.0.0 (every "
        "network interface)",
        "无法在 10.9.9.9:8000 上监听（Cannot assign requested address）；--host 10.9.9.9 不是这台"
        "机器的地址；请用 127.0.0.1（只有本机能访问）或 0.0.0.0（所有网络接口）",
    ),
    (
        "--data is empty; name a bundled corpus or a text file",
        "--data 是空的；请给出随附语料的名字或一个文本文件",
    ),
    (
        "--text is empty; name a UTF-8 text file, or '-' for standard input",
        "--text 是空的；请给出一个 UTF-8 文本文件，或用 '-' 读标准输入",
    ),
    (
        "--corpus is empty; name a bundled corpus, e.g. warpeace-novel",
        "--corpus 是空的；请给出随附语料的名字，如 warpeace-novel",
    ),
    (
        "RUN is empty; name a model folder or a shipped model to export",
        "RUN 是空的；请给出要导出的模型文件夹或随附模型的名字",
    ),
    (
        "OUT is empty; name the folder to write, e.g. my-model",
        "OUT 是空的；请给出要写入的文件夹，如 my-model",
    ),
    ("model name is empty", "模型名是空的"),
    (
        "--host is empty; use 127.0.0.1 (this machine only) or 0.0.0.0 (every network interface)",
        "--host 是空的；请用 127.0.0.1（只有本机能访问）或 0.0.0.0（所有网络接口）",
    ),
    (
        "--host 'a\\x00b' is not a host name or an address (embedded null byte); use 127.0.0.1 "
        "(this machine only) or 0.0.0.0 (every network interface)",
        "--host 'a\\x00b' 不是主机名或地址（embedded null byte）；请用 127.0.0.1（只有本机能访问）"
        "或 0.0.0.0（所有网络接口）",
    ),
    (
        "model 'm' has no tokenizer files; the command line reads text, so put the tokenizer's "
        "files (tokenizer.json, or vocab.json and merges.txt) in the model's folder",
        "模型 'm' 没有分词器文件；命令行读的是文本，请把分词器的文件（tokenizer.json，或 "
        "vocab.json 和 merges.txt）放进模型的文件夹",
    ),
    (
        "LMSCOPE_MAX_TRACE_TOKENS must be a whole number of tokens above 0, got 'abc'; unset it "
        "for the default 2,048",
        "LMSCOPE_MAX_TRACE_TOKENS 必须是大于 0 的整数（token 数），收到 'abc'；取消设置即用默认值 "
        "2,048",
    ),
    (
        "the weights overflowed at iteration 1; training stopped. Use a smaller --lr (1e+308 "
        "makes it diverge; the default is 0.1)",
        "权重溢出了（第 1 次迭代），训练已停止。请用更小的 --lr（1e+308 会让它发散；默认是 0.1）",
    ),
    (
        "the loss became nan at iteration 7; training stopped. Use a smaller --lr (50 makes it "
        "diverge; the default is 0.1)",
        "损失变成了 nan（第 7 次迭代），训练已停止。请用更小的 --lr（50 会让它发散；默认是 0.1）",
    ),
    (
        "the loss reached 4.12e+300 nats a character at iteration 2; training stopped. Use a "
        "smaller --lr (1e+300 makes it diverge; the default is 0.1)",
        "每个字符的损失达到 4.12e+300 nats（第 2 次迭代），训练已停止。请用更小的 --lr"
        "（1e+300 会让它发散；默认是 0.1）",
    ),
    (
        "size '1e400GB' is too large to count in bytes; write e.g. 4GB, 512MiB or 1000000",
        "大小 '1e400GB' 太大，无法按字节计数；请写成如 4GB、512MiB 或 1000000",
    ),
    (
        "the corpus name is empty; use one of: shakespeare, warpeace, or a path to a text file "
        "or folder.",
        "语料名是空的；请用其中之一：shakespeare, warpeace，或一个文本文件或文件夹的路径。",
    ),
    (
        "a micro-batch of --batch 12 x --context 100000 needs about 45.2 GB for the activations "
        "kept for the backward pass, besides 217.6 MB for the weights, gradients and adamw "
        "state: more than the 24.6 GB of memory available; use a smaller --context or --batch",
        "--batch 12 × --context 100000 的一个微批次，反向传播要保留的激活值约需 45.2 GB，权重、"
        "梯度和 adamw 状态另需 217.6 MB：超过了可用的 24.6 GB 内存；请减小 --context 或 --batch",
    ),
    (
        "a micro-batch of --batch 1 x --seq 8,192 needs about 4.4 GB for the activations kept "
        "for the backward pass (with --dropout 0.1 on the CPU attention keeps every head's "
        "--seq x --seq weights), besides 1.0 MB for the weights, gradients and adamw state: "
        "more than the 2.0 GB of GPU memory available; use a smaller --seq or --batch",
        "--batch 1 × --seq 8,192 的一个微批次，反向传播要保留的激活值约需 4.4 GB（在 CPU 上用 "
        "--dropout 0.1 时，注意力要保留每个头完整的权重矩阵），权重、梯度和 adamw 状态另需 1.0 MB"
        "：超过了可用的 2.0 GB 显存；请减小 --seq 或 --batch",
    ),
    ("standard input is not UTF-8 text", "标准输入不是 UTF-8 文本"),
    ("standard input is empty; pipe some text in", "标准输入是空的；请用管道传入一些文字"),
    (
        "/dev/zero is not a regular file; give a UTF-8 text file",
        "/dev/zero 不是普通文件；请给出一个 UTF-8 文本文件",
    ),
    (
        "cannot write in /proc/x: Read-only file system",
        "无法在 /proc/x 里写入：Read-only file system",
    ),
    (
        "--models names no model; use some of rnn, lstm, gru, gpt",
        "--models 没有给出任何模型；请从 rnn, lstm, gru, gpt 中选用",
    ),
    (
        "runs/x/result.json is not a complete lab result (no 'title'); run the experiment "
        "again to write a complete one",
        "runs/x/result.json 不是完整的实验结果（缺少 'title'）；请重新运行实验，写出完整的结果",
    ),
    ("--min-p must be a number, got 'x'", "--min-p 必须是一个数，收到 'x'"),
    (
        "--top-p must be in (0, 1] (leave it out for off), got 2",
        "--top-p 必须在 (0, 1] 范围内（不设则关闭），收到 2",
    ),
    (
        "--min-p must be in [0, 1] (0 or left out: off), got 1.5",
        "--min-p 必须在 [0, 1] 范围内（0 或不设则关闭），收到 1.5",
    ),
    (
        "--out cells.json: it is a folder; name the file to write",
        "--out cells.json：这是一个文件夹；请给出要写的文件名",
    ),
    (
        "rank 0 could not write the checkpoint of iteration 3 to run; its own line says why",
        "0 号进程无法把第 3 次迭代的检查点写入 run；原因见它自己的那一行",
    ),
    (
        "the finder needs a longer text: 100 characters read, at least 196 (20 to choose units "
        "on and 20 held out to score them, with 0.9 of it choosing; a few thousand give "
        "steadier scores)",
        "查找器需要更长的文本：读到 100 个字符，至少要 196 个（用 0.9 的文本挑选单元、其余的给"
        "它们打分，两边各至少 20 个；几千个字符的分数更稳定）",
    ),
]


@pytest.mark.parametrize(
    ("message", "chinese"), LINE_CASES, ids=[" ".join(m.split()[:5]) for m, _ in LINE_CASES]
)
def test_command_lines_the_cases_above_do_not_reach(message, chinese):
    assert in_lang(message, "zh") == chinese
    assert in_lang(message, "en") == message
    assert english_in(chinese) == [], chinese
