"""Per-character features of a text, for finding the cells that track them.

Each feature gives one number per character, describing where the reader stands *after
reading that character* (the moment a recurrent cell's state is recorded):

- ``inside_quotes`` (binary): inside a double-quoted span. A straight quote ``"`` toggles; a
  curly ``“`` opens and ``”`` closes. The opening quote is inside, the closing one outside.
  A blank line (a new paragraph) ends any open quote: prose that carries a quotation over
  several paragraphs opens each one again without closing the last, and a plain toggle would
  then count the rest of the book inside out.
- ``line_position`` (continuous): characters since the last newline (a newline itself is 0).
- ``bracket_depth`` (continuous): how many ``( [ {`` are open; a closer never goes below 0.
- ``inside_url`` (binary): the character belongs to a URL (``http://``, ``https://``,
  ``www.`` up to the first space or closing bracket/quote).
- ``indent_level`` (continuous): the current line's leading whitespace, in columns (a tab is
  4), as far as it has been read: it grows through the indentation and then holds.
- ``inside_comment`` (binary, for code): a ``#`` or ``//`` comment to the end of the line, or
  a ``/* ... */`` block, delimiters included. Strings are not parsed, so a ``#`` in a string
  counts; ``://`` (a URL) does not start a comment.
- ``word_start`` (binary): a letter, digit or ``_`` that does not continue a word (an
  apostrophe between letters, as in "don't", continues it).

For Python source, three features read the text with Python's own tokenizer instead (see
``lmscope.interpret.code_features``): ``inside_string`` (any string literal: quotes of either
kind, triple-quoted strings and docstrings, f-strings), ``inside_comment_py`` (a ``#``
comment, not a ``#`` in a string) and ``bracket_depth_py`` (only brackets outside strings and
comments).

Two sets (``FEATURE_SETS``): ``prose``, the seven above (the default, what the finder has
always scored), and ``code``: string, comment, bracket depth (all three from the tokenizer),
indentation, position in line and URLs. ``feature_set_for`` picks one from a model's training
corpus or a file's name.

Binary features are 0/1. All are float arrays of the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lmscope.data import known_corpora, load_corpus
from lmscope.errors import InvalidInputError
from lmscope.interpret.code_features import bracket_depth_py, inside_comment_py, inside_string

TAB_WIDTH = 4
OPENERS, CLOSERS = "([{", ")]}"
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'()\[\]{}]*")


@dataclass(frozen=True)
class Feature:
    name: str
    kind: str  # "binary" or "continuous"
    compute: Callable[[str], np.ndarray]
    message: str  # the catalog's one line saying what it is, for tables and the page


def inside_quotes(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    inside, previous = False, ""
    for t, ch in enumerate(text):
        if ch == "\n" and previous == "\n":
            inside = False  # a new paragraph
        elif ch == '"':
            inside = not inside
        elif ch == "\u201c":
            inside = True
        elif ch == "\u201d":
            inside = False
        # the opening quote counts as inside, the closing one as outside
        out[t] = inside
        previous = ch
    return out


def line_position(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    column = 0
    for t, ch in enumerate(text):
        column = 0 if ch == "\n" else column + 1
        out[t] = column
    return out


def bracket_depth(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    depth = 0
    for t, ch in enumerate(text):
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth = max(0, depth - 1)
        out[t] = depth
    return out


def inside_url(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    for match in _URL.finditer(text):
        out[match.start() : match.end()] = 1
    return out


def indent_level(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    indent, leading = 0, True
    for t, ch in enumerate(text):
        if ch == "\n":
            indent, leading = 0, True
        elif leading and ch in " \t":
            indent += TAB_WIDTH if ch == "\t" else 1
        else:
            leading = False
        out[t] = indent
    return out


def inside_comment(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    t, n = 0, len(text)
    while t < n:
        ch, nxt = text[t], text[t + 1 : t + 2]
        if ch == "/" and nxt == "*":
            end = text.find("*/", t + 2)
            end = n if end < 0 else end + 2
        elif ch == "#" or (ch == "/" and nxt == "/" and text[t - 1 : t] != ":"):
            end = text.find("\n", t)
            end = n if end < 0 else end
        else:
            t += 1
            continue
        out[t:end] = 1
        t = end
    return out


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def word_start(text: str) -> np.ndarray:
    out = np.zeros(len(text))
    for t, ch in enumerate(text):
        if not _is_word_char(ch):
            continue
        before = text[t - 1] if t else ""
        after_apostrophe = before == "'" and t >= 2 and text[t - 2].isalpha()
        out[t] = not _is_word_char(before) and not after_apostrophe
    return out


FEATURES = {
    f.name: f
    for f in (
        Feature("inside_quotes", "binary", inside_quotes, "report.cells.feature.inside_quotes"),
        Feature("line_position", "continuous", line_position, "report.cells.feature.line_position"),
        Feature("bracket_depth", "continuous", bracket_depth, "report.cells.feature.bracket_depth"),
        Feature("inside_url", "binary", inside_url, "report.cells.feature.inside_url"),
        Feature("indent_level", "continuous", indent_level, "report.cells.feature.indent_level"),
        Feature("inside_comment", "binary", inside_comment, "report.cells.feature.inside_comment"),
        Feature("word_start", "binary", word_start, "report.cells.feature.word_start"),
        Feature("inside_string", "binary", inside_string, "report.cells.feature.inside_string"),
        Feature(
            "inside_comment_py",
            "binary",
            inside_comment_py,
            "report.cells.feature.inside_comment_py",
        ),
        Feature(
            "bracket_depth_py",
            "continuous",
            bracket_depth_py,
            "report.cells.feature.bracket_depth_py",
        ),
    )
}
FEATURE_SETS = {
    "prose": (
        "inside_quotes",
        "line_position",
        "bracket_depth",
        "inside_url",
        "indent_level",
        "inside_comment",
        "word_start",
    ),
    "code": (
        "inside_string",
        "inside_comment_py",
        "bracket_depth_py",
        "indent_level",
        "line_position",
        "inside_url",
    ),
}
DEFAULT_SET = "prose"
CODE_CORPORA = ("python-stdlib",)  # training corpora whose models get the code set
CODE_SUFFIXES = (".py", ".pyi")
# folders of a code corpus whose files are generated tables, not code a person wrote: the
# finder's default text (``validation_text``) starts after them
GENERATED = {"python-stdlib": ("encodings/",)}


def feature_set_for(corpus: str | None = None, path: str | None = None) -> str:
    """``code`` for a model trained on a code corpus or a Python file, else ``prose``."""
    if path is not None and str(path).lower().endswith(CODE_SUFFIXES):
        return "code"
    return "code" if corpus in CODE_CORPORA else DEFAULT_SET


def resolve_features(spec: str | list[str] | None) -> list[str]:
    """Feature names from a set name (``prose``, ``code``, ``all``), a comma list that may mix
    sets and names, or a list; None is the default set. Unknown names get one readable line."""
    if spec is None:
        return list(FEATURE_SETS[DEFAULT_SET])
    items = [i.strip() for i in spec.split(",")] if isinstance(spec, str) else list(spec)
    names: list[str] = []
    for item in items:
        if item == "all":
            names += list(FEATURES)
        elif item in FEATURE_SETS:
            names += FEATURE_SETS[item]
        elif item in FEATURES:
            names.append(item)
        elif item:
            sets = ", ".join([*FEATURE_SETS, "all"])
            raise InvalidInputError(
                "error.cells.unknown-feature", name=repr(item), known=", ".join(FEATURES), sets=sets
            )
    if not names:
        raise InvalidInputError("error.cells.no-features")
    return list(dict.fromkeys(names))


def trained_on(model) -> str | None:
    """The corpus a model's training recorded (a bundled corpus's name, or the path it was
    given then), or None."""
    return ((getattr(model, "meta", None) or {}).get("training") or {}).get("corpus")


def bundled_corpus_of(model) -> str | None:
    """The bundled corpus a model was trained on, which reads here as it did then; None for a
    model trained on a file of its own (the path it recorded may name another file here, or
    none) or without a record. What /rnn and ``lmscope neurons`` read when given no text."""
    name = trained_on(model)
    return name if name in known_corpora() else None


def validation_text(corpus: str, chars: int) -> str:
    """``chars`` characters of a corpus's validation split (the last 10%), the text the finder
    reads by default. It begins at a line start, so line positions are whole. In a code corpus
    it begins at a whole file (a ``# file:`` line), so the tokenizer sees every string and
    bracket open, and at the first one outside ``GENERATED``: in the standard library the
    ``encodings`` package is mostly machine-made 256-row lookup tables (``'\\x00'  #  0x00 ->
    NULL``), on which a finder learns the table's layout rather than Python."""
    loaded = load_corpus(corpus)
    val = loaded.split(0.1)[1]
    start = val.find("\n") + 1
    if loaded.name in CODE_CORPORA:
        skip = GENERATED.get(loaded.name, ())
        for header in re.finditer(r"^# file: (.*)$", val, re.MULTILINE):
            if header.start() and not header.group(1).startswith(skip):
                start = header.start()
                break
    return val[start : start + chars]


def compute_features(text: str, names: str | list[str] | None = None) -> dict[str, np.ndarray]:
    """The named features of ``text`` (a set name, a list, or None for the prose set, see
    ``resolve_features``): name -> float array [len(text)]."""
    return {name: FEATURES[name].compute(text) for name in resolve_features(names)}
