"""Characters that byte-level tokens share (issue 14): 我 is E6 88 91; a byte-level BPE may
split it over three tokens that are no character alone. char_spans finds such runs, the
trace summary carries them, and `lmscope explain` shows the character beside its tokens."""

from __future__ import annotations

from lmscope.explain.chars import char_spans, trace_char_spans


def test_a_character_split_over_tokens_is_one_span():
    spans = char_spans([b"\xe6", b"\x88", b"\x91"])
    assert [(s.start, s.end, s.text, s.complete) for s in spans] == [(0, 2, "我", True)]


def test_whole_characters_make_no_span_and_neighbours_join_the_text():
    assert char_spans([b"Hello", b" world", "你好".encode()]) == []
    spans = char_spans([b"ab\xe6", b"\x88", b"\x91c", b"d"])
    assert [(s.start, s.end, s.text) for s in spans] == [(0, 2, "ab我c")]


def test_two_runs_and_a_character_cut_off_at_the_end():
    pieces = ["数".encode()[:2], "数".encode()[2:], b"x", "据".encode()[:1], "据".encode()[1:2]]
    spans = char_spans(pieces)
    assert [(s.start, s.end, s.complete) for s in spans] == [(0, 1, True), (3, 4, False)]
    assert spans[0].text == "数" and spans[1].text == "\ufffd"


def test_stray_bytes_are_not_characters():
    assert char_spans([b"\x88", b"\x91"]) == []
    assert char_spans([b"\xe6", b"a"]) == []


def test_the_trace_summary_and_the_cli_group_the_chinese_prompt(tiny_model, capsys):
    from lmscope.cli import main
    from lmscope.engine.steps import STEPS_BY_KEY
    from lmscope.explain.summary import trace_summary

    text = "数据可视化让用户能够"
    ids = tiny_model.encode(text)
    spans = trace_char_spans(tiny_model, ids)
    assert "".join(s.text for s in spans) == text and len(ids) > len(text)
    summary = trace_summary(tiny_model, tiny_model.trace(ids))
    assert summary.chars == spans and summary.text == text
    step = STEPS_BY_KEY["token-embedding"].number
    assert step == 4  # tokenization before embedding (issue 38)
    main(["explain", "我", "--model", str(tiny_model.folder), "--step", "token-embedding"])
    out = capsys.readouterr().out
    assert "┐ 我" in out and "┘" in out
