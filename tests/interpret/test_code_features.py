"""Code features from Python's tokenizer, on hand-written snippets with exact per-character
labels: strings (quotes, triple quotes, docstrings, prefixes, f-strings), comments (not a
``#`` in a string), bracket depth (not brackets in strings or comments), indentation, the
feature sets and how the CLI and the finder pick them, and texts cut out of a file."""

from __future__ import annotations

import numpy as np
import pytest

from lmscope.errors import InvalidInputError
from lmscope.interpret import features as F
from lmscope.interpret.code_features import (
    bracket_depth_py,
    inside_comment_py,
    inside_string,
    python_labels,
    python_start,
)


def marks(text: str, labels) -> str:
    """The text with every unlabelled character turned into '_'; a newline is '|' when
    labelled, '/' when not."""
    return "".join(
        ("|" if ch == "\n" else ch) if v else ("/" if ch == "\n" else "_")
        for ch, v in zip(text, labels, strict=True)
    )


def digits(labels) -> str:
    return "".join(str(int(v)) for v in labels)


# --- strings ----------------------------------------------------------------------------------


def test_strings_open_inside_and_close_outside():
    text = "a = 'x' + \"y z\"\n"
    assert marks(text, inside_string(text)) == "____'x____\"y z_/"


def test_prefixes_stay_outside_and_escapes_stay_inside():
    text = 'b = rb\'\\x00\' + u"it\\"s"\n'
    assert marks(text, inside_string(text)) == '______\'\\x00_____"it\\"s_/'


def test_docstrings_and_triple_quotes_span_lines():
    text = 'def f():\n    """Doc (x).\n    # not a comment\n    """\n    return 1\n'
    s = marks(text, inside_string(text))
    assert s == (
        "________/"
        '____"""Doc (x).|'
        "    # not a comment|"
        "    ___/"  # the closing quotes are outside: the string has ended
        "____________/"
    )
    assert not inside_comment_py(text).any()  # a '#' in a docstring is text, not a comment
    assert digits(bracket_depth_py(text))[:8] == "00000100"  # only the def's brackets count
    assert not bracket_depth_py(text)[9:].any()


def test_an_f_string_is_one_string_fields_included():
    text = 'x = f"a{b[0]}c" + 1\n'
    assert marks(text, inside_string(text)) == '_____"a{b[0]}c_____/'
    assert not bracket_depth_py(text).any()  # the field's brackets are inside the string


def test_a_text_that_ends_inside_a_string():
    text = 'x = """abc\nde'
    assert marks(text, inside_string(text)) == '____"""abc|de'
    text = "y = 'ab\nz = 1\n"  # a quote left open on its line: a string to the line's end
    assert marks(text, inside_string(text)) == "____'ab/_____/"


# --- comments and brackets --------------------------------------------------------------------


def test_comments_are_tokens_not_hashes():
    text = "s = '#x'  # a 'note' (1\nt = 2 #\n"
    assert marks(text, inside_comment_py(text)) == "__________# a 'note' (1/______#/"
    # the prose feature counts the '#' in the string too
    assert marks(text, F.inside_comment(text)).startswith("_____#x'  #")


def test_bracket_depth_skips_strings_and_comments():
    text = "f(a, [')', {1: 2}])  # (\n"
    # f ( a , _ [ ' ) ' , _ { 1 : _ 2 } ] ) _ _ # _ ( \n
    assert digits(bracket_depth_py(text)) == "0111122222233333210000000"
    prose = F.bracket_depth(text)  # the prose feature also counts the ')' in the string
    assert prose[7] == 1 and bracket_depth_py(text)[7] == 2


def test_brackets_across_lines_and_a_stray_closer():
    text = "x = (1,\n     2)\n)\ny = [\n]\n"
    depth = digits(bracket_depth_py(text))
    # the stray ')' on line 3 opens nothing and leaves the depth at 0
    assert depth == "00001111" + "1111110" + "0" + "00" + "000011" + "00"


# --- indentation, texts cut out of files ------------------------------------------------------


def test_indentation_of_code():
    text = "if x:\n    y = 1\n\tz\n"
    assert digits(F.indent_level(text)) == "000000" + "1234444440" + "440"


def test_a_slice_that_starts_indented_and_dedents_is_read_on():
    text = "        deep()  # a\n    out = (1,\n  2)\nz = '(' # b\n"
    labels = python_labels(text)  # IndentationError inside: the reader starts again there
    assert marks(text, labels.comment) == "________________# a/" + "_" * 13 + "/____/________# b/"
    assert marks(text, labels.string) == "_" * 19 + "/" + "_" * 13 + "/____/____'(_____/"
    assert digits(labels.bracket_depth) == (
        "00000000000010000000" + "00000000001111" + "11100" + "000000000000"
    )


def test_a_clean_place_to_cut_is_outside_strings_and_brackets():
    text = 'a = """\nb\n"""\nc = (1,\n2)\nd\n'
    assert python_start(text, 1) == text.index("c = (")
    assert python_start(text, text.index("2)")) == text.index("d\n")
    assert python_start(text, len(text)) == len(text)


def test_the_labels_of_one_text_are_copies():
    text = "x = '#'\n"
    inside_string(text)[:] = 7  # a caller's change does not reach the next caller
    assert marks(text, inside_string(text)) == "____'#_/"


# --- sets and choices -------------------------------------------------------------------------


def test_feature_sets():
    assert F.resolve_features(None) == list(F.FEATURE_SETS["prose"])
    assert F.resolve_features("prose") == [
        "inside_quotes",
        "line_position",
        "bracket_depth",
        "inside_url",
        "indent_level",
        "inside_comment",
        "word_start",
    ]
    assert F.resolve_features("code") == [
        "inside_string",
        "inside_comment_py",
        "bracket_depth_py",
        "indent_level",
        "line_position",
        "inside_url",
    ]
    assert F.resolve_features("code,word_start,inside_url") == [
        *F.FEATURE_SETS["code"],
        "word_start",
    ]
    assert F.resolve_features("all") == list(F.FEATURES)
    with pytest.raises(InvalidInputError, match="unknown feature 'strings'.*a set: prose, code"):
        F.resolve_features("strings")
    with pytest.raises(InvalidInputError, match="no features named"):
        F.resolve_features(" , ")


def test_the_set_follows_the_corpus_or_the_file():
    assert F.feature_set_for("python-stdlib") == "code"
    assert F.feature_set_for("warpeace-novel") == "prose"
    assert F.feature_set_for(None) == "prose"
    assert F.feature_set_for("warpeace-novel", "my/module.py") == "code"
    assert F.feature_set_for("python-stdlib", "notes.txt") == "code"  # the model's corpus


def test_compute_features_takes_a_set():
    text = "x = '#'  # c\n"
    values = F.compute_features(text, "code")
    assert list(values) == list(F.FEATURE_SETS["code"])
    assert marks(text, values["inside_comment_py"]) == "_________# c/"
    assert all(v.shape == (len(text),) and v.dtype == np.float64 for v in values.values())


def test_the_stdlib_validation_text_starts_at_a_whole_file():
    text = F.validation_text("python-stdlib", 2000)
    assert text.startswith("# file: ") and len(text) == 2000
    assert not text.startswith("# file: encodings/")  # generated tables are skipped
    labels = python_labels(text)
    assert labels.string.any() and labels.comment.any()
    prose = F.validation_text("warpeace-novel", 500)
    assert len(prose) == 500


def test_the_finder_picks_the_set_from_the_models_corpus():
    import torch

    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.interpret.cell_finder import find_cells
    from lmscope.interpret.neurons import neuron_activations
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer

    code = 'def f(a):\n    return [a, "(x)"]  # c\n' * 20
    chars = "".join(sorted(set(code)))
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(chars), cell="lstm", hidden=6, layers=1))
    names = {}
    for corpus in ("python-stdlib", "warpeace-novel", None):
        meta = {"training": {"corpus": corpus}} if corpus else {}
        model = RNNLanguageModel(net, CharTokenizer(chars), name="tiny", meta=meta)
        run = neuron_activations(model, code, kinds=("h",))
        assert run.corpus == corpus
        names[corpus] = [f.name for f in find_cells(run).features]
    assert names["python-stdlib"] == list(F.FEATURE_SETS["code"])
    assert names["warpeace-novel"] == names[None] == list(F.FEATURE_SETS["prose"])
