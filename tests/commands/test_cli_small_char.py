"""The terminal views on a small character GPT at 80 columns: lens rows in Chinese, as many
lens positions as one-character tokens allow, and explain's probe names shown whole."""

from __future__ import annotations

import re

import pytest

from lmscope.cli import main

PROMPT = "ROMEO: But soft, what light"


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_lens_rows_in_chinese(capsys, small_char_gpt):
    out = run_cli(capsys, "lens", PROMPT, "--model", small_char_gpt, "--lang", "zh")
    assert "第 0 层" in out and "第 1 层" in out and "block" not in out


def test_lens_sizes_columns_from_the_tokens(capsys, monkeypatch, small_char_gpt):
    monkeypatch.setenv("COLUMNS", "80")
    out = run_cli(capsys, "lens", PROMPT, "--model", small_char_gpt)
    header = next(line for line in out.splitlines() if re.match(r"\s+\d+\s+\d+", line))
    assert header.split() == [str(p) for p in range(len(PROMPT) - 12, len(PROMPT))]
    assert "wider terminal" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.slow
def test_explain_footers_name_probes_whole(capsys, monkeypatch, small_char_gpt):
    import lmscope
    from lmscope.explain.report import report

    monkeypatch.setenv("COLUMNS", "80")
    out = run_cli(capsys, "explain", PROMPT, "--model", small_char_gpt)
    model = lmscope.load(small_char_gpt)
    probes = {p for step in report(model, PROMPT).steps for p in step.probes[:3]}
    assert probes
    flat = re.sub(r"[\s│─╭╮╰╯]+", "", out)  # a name may wrap inside the box
    missing = [p for p in probes if p not in flat]
    assert not missing, missing
    assert max(len(line) for line in out.splitlines()) <= 80
