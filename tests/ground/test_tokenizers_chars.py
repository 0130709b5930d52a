"""The character-level vocabulary."""

from __future__ import annotations

import json

import pytest

from lmscope.errors import InvalidInputError, TokenizerError
from lmscope.tokenizers import CharTokenizer, Tokenizer, load_tokenizer, save_tokenizer

TEXT = "To be, or not to be: that is the question.\nÉté 夏 🙂"


@pytest.fixture
def chars() -> CharTokenizer:
    return CharTokenizer.from_text(TEXT)


def test_vocabulary_is_sorted_distinct_characters(chars):
    assert isinstance(chars, Tokenizer)
    assert chars.chars == tuple(sorted(set(TEXT)))
    assert chars.vocab_size == len(set(TEXT))
    assert (chars.name, chars.eot_id) == ("char", None)
    assert chars.encode("\n") == [0]  # "\n" sorts first


def test_round_trip(chars):
    ids = chars.encode(TEXT)
    assert len(ids) == len(TEXT)
    assert [chars.chars[i] for i in ids] == list(TEXT)
    assert chars.decode(ids) == TEXT
    assert chars.decode_bytes(ids) == TEXT.encode("utf-8")
    assert chars.encode("") == []


def test_unknown_characters_are_named(chars):
    with pytest.raises(TokenizerError) as info:
        chars.encode("toxz Zebra!")
    message = str(info.value)
    assert "4 characters are" in message  # x, z, Z and !: each unseen one once
    for unseen in ("'x'", "'z'", "'Z'"):
        assert unseen in message
    assert "unknown='skip'" in message


def test_unknown_characters_list_is_capped(chars):
    with pytest.raises(TokenizerError, match=r"and 3 more"):
        chars.encode("01234567")


def test_skip_mode_drops_unknown_characters():
    skipping = CharTokenizer.from_text(TEXT, unknown="skip")
    assert skipping.decode(skipping.encode("tox be!")) == "to be"


def test_bad_arguments():
    with pytest.raises(InvalidInputError, match="unknown='ignore'"):
        CharTokenizer("ab", unknown="ignore")
    with pytest.raises(InvalidInputError, match="empty text"):
        CharTokenizer.from_text("")
    with pytest.raises(TokenizerError, match="twice"):
        CharTokenizer(["a", "a"])
    with pytest.raises(TokenizerError, match="lone surrogate"):
        CharTokenizer.from_text("a\ud800")


def test_pieces_and_explain(chars):
    ids = chars.encode("夏🙂")
    assert [p.text for p in chars.pieces(ids)] == ["夏", "🙂"]
    assert chars.piece(ids[1]).raw == "🙂".encode()
    explained = chars.explain("to")
    assert [(e.id, e.pretoken, e.merges) for e in explained] == [
        (chars.encode("t")[0], "t", []),
        (chars.encode("o")[0], "o", []),
    ]


def test_unknown_id(chars):
    with pytest.raises(TokenizerError, match=f"token id {chars.vocab_size} "):
        chars.decode([0, chars.vocab_size])
    with pytest.raises(TokenizerError, match="token id -1 "):
        chars.piece(-1)


def test_save_and_load(tmp_path, chars):
    assert save_tokenizer(chars, tmp_path) == tmp_path
    saved = json.loads((tmp_path / "chars.json").read_text("utf-8"))
    assert saved["chars"] == list(chars.chars)
    loaded = load_tokenizer(tmp_path)
    assert isinstance(loaded, CharTokenizer)
    assert loaded.chars == chars.chars
    assert loaded.encode(TEXT) == chars.encode(TEXT)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{broken", "cannot read character vocabulary"),
        ('{"chars": "abc"}', "'chars' list"),
        ('{"chars": ["ab"]}', "not one character"),
        ('{"chars": []}', "at least one character"),
    ],
)
def test_corrupt_chars_file(tmp_path, content, message):
    (tmp_path / "chars.json").write_text(content, "utf-8")
    with pytest.raises(TokenizerError, match=message):
        load_tokenizer(tmp_path)
