"""Per-character features of Python source, read with the standard ``tokenize`` module.

The prose features in ``lmscope.interpret.features`` look at single characters (a ``#``
starts a comment, every ``(`` opens a bracket). In code that is wrong often: ``"#"`` is a
string, ``"("`` in a docstring opens nothing. These labels come from Python's own tokenizer:

- ``inside_string``: the character belongs to a string literal (``'...'``, ``"..."``, triple
  quotes, docstrings, byte and raw strings, f-strings). The prefix (``f``, ``rb``...) is
  outside, the opening quote(s) and the body inside, the closing quote(s) outside: the state
  after reading each character, as for ``inside_quotes``. A quote left open at the end of a
  line (a text cut mid-string) runs to the line's end. An f-string counts as a whole, its
  ``{...}`` fields included, on every Python version (3.12 tokenizes the fields separately).
- ``inside_comment_py``: a ``COMMENT`` token, ``#`` up to the end of its line (the newline
  itself is outside). A ``#`` inside a string is not a comment.
- ``bracket_depth_py``: how many ``( [ {`` are open, counting only bracket tokens, not those
  in strings or comments; an opener counts from itself, a closer no longer counts.

Texts cut out of a corpus are rarely whole files, so the reader is forgiving: an unfinished
string at the end of the text runs to its end; an indentation the tokenizer rejects (a slice
that starts deep in a function and later dedents past its start) makes it start again at
that line with a fresh state (past it, if the line fails again). What it cannot know is a
string opened before the text begins: a text that starts inside a docstring is read as code
up to the docstring's closing quotes. Slices therefore best start at a line outside any
string and bracket (``python_start``).
"""

from __future__ import annotations

import tokenize
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

OPEN, CLOSE = "([{", ")]}"
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass(frozen=True)
class PythonLabels:
    """The three token-based labels of a text, each a float array of its length."""

    string: np.ndarray
    comment: np.ndarray
    bracket_depth: np.ndarray


def _lines(text: str) -> list[str]:
    """The text cut after each newline, as a file's readline cuts it (not str.splitlines,
    which also cuts at form feeds and other separators the tokenizer reads as spaces)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _line_starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line)
    starts.append(at)
    return starts


def _mark_string(out: np.ndarray, text: str, start: int, end: int) -> None:
    """Mark a string literal text[start:end]: the opening quotes and body, not the prefix or
    the closing quotes (when it is closed)."""
    quote = start
    while quote < end and text[quote] not in "'\"":
        quote += 1  # the prefix: f, r, b, u in any case and order
    if quote >= end:
        return
    q = text[quote]
    width = 3 if text[quote : quote + 3] == q * 3 else 1
    closed = end - quote >= 2 * width and text[end - width : end] == q * width
    out[quote : end - width if closed else end] = 1


def python_labels(text: str) -> PythonLabels:
    """Strings, comments and bracket depth of ``text`` per character (see the module doc)."""
    labels = _python_labels(text)  # the three features of one text share one pass
    return PythonLabels(*(a.copy() for a in (labels.string, labels.comment, labels.bracket_depth)))


@lru_cache(maxsize=2)
def _python_labels(text: str) -> PythonLabels:
    n = len(text)
    string, comment, depth_at = np.zeros(n), np.zeros(n), np.zeros(n)
    changes = np.zeros(n + 1)  # +1 at an opener, -1 at a closer: depth is the running sum
    lines = _lines(text)
    starts = _line_starts(lines)
    first = 0  # the line the tokenizer (re)starts at
    while first < len(lines):
        first = _tokenize_from(text, lines, starts, first, string, comment, changes)
    depth = 0.0
    for t in range(n):
        depth = max(0.0, depth + changes[t])
        depth_at[t] = depth
    return PythonLabels(string, comment, depth_at)


def _tokenize_from(text, lines, starts, first, string, comment, changes) -> int:
    """Tokenize from line ``first`` and mark what is found; returns the line to start again
    at after an error, or the number of lines when the text is read to its end."""

    def offset(row: int, col: int) -> int:  # row is 1-based within the restarted text
        return starts[first + row - 1] + col

    readline = iter(lines[first:]).__next__  # StopIteration ends the text
    fstring_from: list[int] = []  # starts of open f-strings (3.12+), innermost last
    at_line = first
    try:
        for tok in tokenize.generate_tokens(readline):
            at_line = first + tok.start[0] - 1
            start, end = offset(*tok.start), offset(*tok.end)
            if _FSTRING_START is not None and tok.type == _FSTRING_START:
                fstring_from.append(start)
            elif _FSTRING_END is not None and tok.type == _FSTRING_END and fstring_from:
                began = fstring_from.pop()
                if not fstring_from:
                    _mark_string(string, text, began, end)
            elif fstring_from:
                continue  # inside an f-string: part of the string, not code
            elif tok.type == tokenize.STRING:
                _mark_string(string, text, start, end)
            elif tok.type == tokenize.ERRORTOKEN and tok.string in ("'", '"'):
                # a quote never closed on its line (3.11; 3.12 raises): a string to the line end
                line_end = text.find("\n", start)
                string[start : len(text) if line_end < 0 else line_end] = 1
            elif tok.type == tokenize.COMMENT:
                comment[start:end] = 1
            elif tok.type == tokenize.OP and tok.string in OPEN:
                changes[start] += 1
            elif tok.type == tokenize.OP and tok.string in CLOSE:
                changes[start] -= 1  # the closer itself shows the depth after it
    except tokenize.TokenError as err:
        # "EOF in multi-line string": the text ends inside a string that began at (row, col)
        where = err.args[1] if len(err.args) > 1 else None
        if "string" in str(err.args[0]) and isinstance(where, tuple):
            start = offset(*where)
            if fstring_from:
                start = fstring_from[0]
            _mark_string(string, text, start, len(text))
        elif fstring_from:
            _mark_string(string, text, fstring_from[0], len(text))
        return len(lines)
    except (SyntaxError, ValueError) as err:  # IndentationError, and 3.12's stricter errors
        row = getattr(err, "lineno", None)
        failed = first + row - 1 if isinstance(row, int) and row >= 1 else at_line
        # again from the failing line with a fresh state; past it if it fails first
        return failed if failed > first else first + 1
    return len(lines)


def python_start(text: str, at: int = 0) -> int:
    """The first line start at or after ``at`` where the tokenizer, reading ``text`` from its
    beginning, is outside any string and bracket: a clean place to cut a slice of code."""
    labels = python_labels(text)
    t = at
    while t < len(text):
        if (t == 0 or text[t - 1] == "\n") and (
            t == 0 or (not labels.string[t - 1] and labels.bracket_depth[t - 1] == 0)
        ):
            return t
        nxt = text.find("\n", t)
        if nxt < 0:
            break
        t = nxt + 1
    return len(text)


def inside_string(text: str) -> np.ndarray:
    return python_labels(text).string


def inside_comment_py(text: str) -> np.ndarray:
    return python_labels(text).comment


def bracket_depth_py(text: str) -> np.ndarray:
    return python_labels(text).bracket_depth
