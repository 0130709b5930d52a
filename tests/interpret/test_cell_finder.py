"""The interpretable-cell finder: features on hand-made strings, the scoring on constructed
activations (held-out honesty, thresholds in both directions), and a planted quote cell in a
real LSTM found first."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from lmscope import i18n
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.errors import InvalidInputError
from lmscope.interpret import features as F
from lmscope.interpret.cell_finder import (
    best_thresholds,
    find_cells,
    pearson,
    rank_features,
    rule_scores,
)
from lmscope.interpret.neurons import neuron_activations
from lmscope.interpret.planted import plant_quote_cell
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer


def ints(a) -> list[int]:
    return [int(x) for x in a]


# --- features -------------------------------------------------------------------------------


def test_quotes_open_inside_and_close_outside():
    assert ints(F.inside_quotes('a"bc"d')) == [0, 1, 1, 1, 0, 0]
    assert ints(F.inside_quotes("x\u201cy\u201dz")) == [0, 1, 1, 0, 0]
    assert ints(F.inside_quotes('""')) == [1, 0]
    # a quotation carried over paragraphs opens each one again: the blank line closes it
    assert ints(F.inside_quotes('"a\n\n"b" c')) == [1, 1, 1, 0, 1, 1, 0, 0, 0]


def test_line_position_counts_since_the_newline():
    assert ints(F.line_position("ab\ncde\n\nf")) == [1, 2, 0, 1, 2, 3, 0, 0, 1]


def test_bracket_depth_never_negative():
    assert ints(F.bracket_depth("f(a[b]{c})) (")) == [0, 1, 1, 2, 2, 1, 2, 2, 1, 0, 0, 0, 1]


def test_url_spans():
    text = "see https://x.org/a?b=1 now (www.y.com) ok"
    url = F.inside_url(text)
    marked = "".join(ch for ch, u in zip(text, url, strict=True) if u)
    assert marked == "https://x.org/a?b=1www.y.com"


def test_indentation_grows_then_holds():
    text = "a\n  b c\n\tx\n"
    assert ints(F.indent_level(text)) == [0, 0, 1, 2, 2, 2, 2, 0, 4, 4, 0]


def test_comments_in_code():
    text = "x = 1  # one\ny = 'http://a' // two\n/* a\nb */ z"
    c = F.inside_comment(text)
    marked = "".join(ch if m else "_" for ch, m in zip(text, c, strict=True))
    # a line comment stops before its newline; a block comment keeps its own
    assert marked == "_______# one_" + "_" * 15 + "// two_/* a\nb */__"


def test_word_starts():
    text = "don't stop_now, 42x! a"
    starts = [i for i, s in enumerate(F.word_start(text)) if s]
    assert [text[i] for i in starts] == ["d", "s", "4", "a"]


def test_unknown_feature_name():
    with pytest.raises(InvalidInputError, match="unknown feature 'colour'"):
        F.compute_features("abc", ["colour"])


# --- the scoring ------------------------------------------------------------------------------


def test_pearson_and_constant_columns():
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    acts = np.stack([y, -2 * y + 1, np.ones(200), rng.normal(size=200)], axis=1)
    r = pearson(acts, y)
    assert r[0] == pytest.approx(1) and r[1] == pytest.approx(-1) and r[2] == 0
    assert abs(r[3]) < 0.3


def test_thresholds_in_both_directions():
    labels = np.array([0, 0, 1, 1, 1, 0, 1, 0], dtype=float)
    up = np.where(labels > 0, 0.9, 0.1) + np.linspace(0, 0.05, 8)
    down = -up
    rules = best_thresholds(np.stack([up, down, np.zeros(8)], axis=1), {"f": labels})["f"]
    thr, sign, f1 = rules
    assert f1[0] == pytest.approx(1) and sign[0] == 1 and 0.15 < thr[0] < 0.9
    assert f1[1] == pytest.approx(1) and sign[1] == -1
    assert rule_scores(down, labels, thr[1], sign[1]) == (1.0, 1.0, 1.0)
    # a constant column predicts everything: precision = base rate, recall 1
    assert rule_scores(np.zeros(8), labels, thr[2], sign[2])[1] == 1.0


def test_finder_reports_held_out_scores_of_the_unit_it_chose():
    rng = np.random.default_rng(1)
    n = 4000
    quotes = (np.sin(np.arange(n) / 37) > 0.3).astype(float)
    position = np.arange(n) % 70
    # column 5 tracks quotes with noise; column 9 tracks quotes only in the first half
    # (an overfit-looking unit): chosen on the first half, it must be scored on the second
    acts = rng.normal(size=(n, 12)).astype(np.float32)
    acts[:, 5] = quotes + 0.3 * rng.normal(size=n)
    acts[: n // 2, 9] = 1.5 * quotes[: n // 2] + 0.1 * rng.normal(size=n // 2)
    acts[:, 2] = -0.02 * position + 0.2 * rng.normal(size=n)
    labels = [("c", 0, j) for j in range(12)]
    results = rank_features(
        acts, labels, {"inside_quotes": quotes, "line_position": position.astype(float)}, n // 2
    )
    q, lp = results
    assert q.best[0].unit == 9 and q.best[0].f1_select > 0.95  # best on the first half...
    assert q.best[0].f1 < 0.7 and abs(q.best[0].r) < 0.2  # ...and honestly bad held out
    assert q.best[1].unit == 5 and q.best[1].f1 > 0.8 and q.best[1].direction == ">"
    assert lp.best[0].unit == 2 and lp.best[0].r < -0.8 and lp.best[0].threshold is None
    assert lp.strongest_r.unit == 2


# --- a planted quote cell in a real LSTM -----------------------------------------------------


def quote_text(n_lines: int = 120, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = "the old prince said nothing for a long while and then went out of the room"
    words = words.split(" ")
    lines, inside = [], False
    for _ in range(n_lines):
        line = []
        while sum(len(w) + 1 for w in line) < 60:
            word = rng.choice(words)
            if rng.random() < 0.12:
                word = '"' + word
                inside = not inside
            line.append(word)
        lines.append(" ".join(line))
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_planted_quote_unit_is_found_first(tmp_path):
    chars = '\n "abcdefghijklmnopqrstuvwxyz'
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(chars), cell="lstm", hidden=24, layers=2))
    plant_quote_cell(net, chars.index('"'), unit=17)
    model = RNNLanguageModel(net, CharTokenizer(chars), name="planted")
    text = quote_text()
    report = find_cells(neuron_activations(model, text, kinds=("c", "h")), top=3)
    quotes = report.feature("inside_quotes")
    first = quotes.best[0]
    assert (first.layer, first.unit) == (0, 17)
    assert first.f1 > 0.99 and first.precision > 0.99 and first.recall > 0.99
    assert (quotes.strongest_r.layer, quotes.strongest_r.unit) == (0, 17)
    assert abs(quotes.strongest_r.r) > 0.95
    # the report is a file: JSON with the held-out scores, and features the text lacks noted
    path = report.write(tmp_path / "cells.json")
    body = json.loads(path.read_text())
    assert body["schema"] == "lmscope.neurons.cells/1"
    by_name = {f["name"]: f for f in body["features"]}
    assert by_name["inside_url"]["note_data"]["code"] == "rare"
    assert by_name["bracket_depth"]["note_data"]["code"] == "constant"
    assert by_name["inside_quotes"]["best"][0]["unit"] == 17
    # the unit was chosen on the first part; its r is measured on the second, so not "best"
    line = report.headline("inside_quotes")
    assert line.startswith("inside_quotes: chosen on the first part: unit 0:17 "), line
    assert "held-out r = +1.000" in line or "held-out r = -1.000" in line, line
    rare = report.headline("inside_url")
    assert "((" not in rare and "))" not in rare and ") (" not in rare, rare
    assert "too few characters" in rare and "selection" in rare, rare
    with i18n.using("zh"):  # the Python API speaks the language set, like the CLI
        assert report.headline("inside_url").startswith("inside_url：未评分（")
        assert "字符太少" in report.headline("inside_url")
        assert "留出部分 r = " in report.headline("inside_quotes")


def test_finder_needs_some_text():
    chars = "ab"
    net = CharRNN(CharRNNConfig(vocab_size=2, cell="gru", hidden=4, layers=1))
    model = RNNLanguageModel(net, CharTokenizer(chars), name="tiny")
    with pytest.raises(InvalidInputError, match="needs a longer text"):
        find_cells(neuron_activations(model, "ab" * 10))
    with pytest.raises(InvalidInputError, match="select_fraction"):
        find_cells(neuron_activations(model, "ab" * 50), select_fraction=1.0)


def test_finder_names_the_length_its_split_needs():
    """The shortest text it takes depends on the split: 20 characters on each side. 100
    characters with 90% choosing leave 10 held out; saying "at least 40" of them was wrong."""
    chars = "ab"
    net = CharRNN(CharRNNConfig(vocab_size=2, cell="gru", hidden=4, layers=1))
    model = RNNLanguageModel(net, CharTokenizer(chars), name="tiny")
    needs = r"100 characters read, at least 196 \(20 to choose units on and 20 held out .* 0.9 of"
    with pytest.raises(InvalidInputError, match=needs):
        find_cells(neuron_activations(model, "ab" * 50), select_fraction=0.9)
    with pytest.raises(InvalidInputError, match=r"at least 40 \(20 to choose"):
        find_cells(neuron_activations(model, "ab" * 10))
    find_cells(neuron_activations(model, "ab" * 100), select_fraction=0.9)  # 180 + 20: enough
