"""GPT-2 tokenization checked against tiktoken, the reference implementation.

The reference Encoding is built offline by tiktoken's own loader and regex from the shipped
files, so it shares no code with lmscope's tokenizers.
"""

from __future__ import annotations

import shutil

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiktoken.load import data_gym_to_mergeable_bpe_ranks
from tiktoken_ext.openai_public import r50k_pat_str

import lmscope.tokenizers.gpt2 as gpt2_module
from lmscope.errors import InvalidInputError, TokenizerError
from lmscope.tokenizers import (
    BPETokenizer,
    gpt2_files_dir,
    gpt2_tokenizer,
    load_bpe,
    load_tokenizer,
    readable_bytes,
)

EOT = 50256

SAMPLES = {
    "seed": "Data visualization empowers users to",
    "prose": (
        "It was the best of times, it was the worst of times, it was the age of wisdom, it "
        "was the age of foolishness. I'm sure they'll say we'd've known; you're right, "
        "isn't it? The 2nd of March, 1984: $3.50 (about 12%) — \"quoted\" & 'single'.\n\n"
        "A second paragraph starts here, after a blank line."
    ),
    "python": (
        "def fib(n: int) -> int:\n"
        '    """Return the n-th Fibonacci number."""\n'
        "    if n < 2:\n"
        "        return n\n"
        "    return fib(n - 1) + fib(n - 2)\n"
        "\n"
        "\tif x == {'a': [1, 2]}:  # tab indent\n"
        '\t\tprint(f"{x!r:>10}")\n'
    ),
    "chinese": "我爱自然语言处理，Transformer 是现代大语言模型的基础。",
    "emoji": "Family: 👨‍👩‍👧‍👦, flag 🏳️‍🌈, skin 👍🏽, keycap 1️⃣ and 🤖!",
    "spaces": "a   b\n\n\n  c",
    "trailing": "trailing spaces   ",
    "only_whitespace": " \n\t  \r\n ",
    "control": "nul\x00 bell\x07 esc\x1b[0m \x1c\x1d\x1e\x1f\x7f \x85 end",
    "mixed_scripts": "Ελληνικά, русский, العربية, हिन्दी, 日本語のテキスト, 한국어 ١٢٣ ⅷ",
    "contractions": "I'M sure it's 'tis we'LL 'll ''s",
}


@pytest.fixture(scope="module")
def reference_tiktoken() -> tiktoken.Encoding:
    directory = gpt2_files_dir()
    ranks = data_gym_to_mergeable_bpe_ranks(
        str(directory / "vocab.bpe"), str(directory / "encoder.json")
    )
    return tiktoken.Encoding(
        "gpt2-reference",
        pat_str=r50k_pat_str,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": EOT},
        explicit_n_vocab=50257,
    )


@pytest.fixture(scope="module")
def tok() -> BPETokenizer:
    return gpt2_tokenizer()


def test_shipped_tokenizer_basics(tok):
    assert tok is gpt2_tokenizer()  # loaded once
    assert (tok.name, tok.vocab_size, tok.eot_id) == ("gpt2", 50257, EOT)
    assert tok.backend == "tiktoken"
    assert tok.reference.name == "gpt2"


@pytest.mark.slow
def test_seed_sentence_ids_and_split(tok, reference_tiktoken):
    text = SAMPLES["seed"]
    expected = reference_tiktoken.encode(text)
    assert expected == [6601, 32704, 795, 30132, 2985, 284]
    assert tok.encode(text) == expected
    assert tok.reference.encode(text) == expected
    pieces = [piece.text for piece in tok.pieces(expected)]
    assert pieces == ["Data", " visualization", " em", "powers", " users", " to"]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_matches_tiktoken(tok, reference_tiktoken, name):
    text = SAMPLES[name]
    expected = reference_tiktoken.encode_ordinary(text)
    assert tok.encode(text) == expected
    assert tok.reference.encode(text) == expected
    assert tok.decode(expected) == text
    assert tok.reference.decode(expected) == text


def test_python_backend_matches_tiktoken_backend(tok):
    python_only = BPETokenizer(tok.reference, backend="python")
    assert python_only.backend == "python"
    for text in SAMPLES.values():
        assert python_only.encode(text) == tok.encode(text)


def test_empty_text(tok):
    assert tok.encode("") == []
    assert tok.reference.encode("") == []
    assert tok.decode([]) == ""
    assert tok.explain("") == []


@pytest.mark.parametrize("implementation", ["public", "reference"])
def test_endoftext_both_modes(tok, reference_tiktoken, implementation):
    encoder = tok if implementation == "public" else tok.reference
    text = "first doc<|endoftext|>second doc <|endoftext|><|endoftext|>"
    special = encoder.encode(text)
    assert special == reference_tiktoken.encode(text, allowed_special="all")
    assert special.count(EOT) == 3
    assert encoder.decode(special) == text
    ordinary = encoder.encode(text, allow_special=False)
    assert ordinary == reference_tiktoken.encode_ordinary(text)
    assert EOT not in ordinary
    assert encoder.decode(ordinary) == text
    assert encoder.encode("<|endoftext|>") == [EOT]


def test_pure_python_cache_gives_same_ids(tok):
    reference = tok.reference
    text = SAMPLES["prose"]
    reference.clear_cache()
    cold = reference.encode(text)
    warm = reference.encode(text)
    assert cold == warm


# -- properties over arbitrary text ------------------------------------------------------

utf8_text = st.text(st.characters(codec="utf-8"), max_size=80)
# Characters that sit on the pre-tokenizer's boundaries, so runs and edges get exercised.
boundary_text = st.text(
    st.sampled_from(list(" \t\n\r\x0b'sdtlmrevSDLT0123ab.,!-_ 我的😀\u200d\u00a0\u3000é")),
    max_size=60,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(utf8_text, boundary_text))
def test_round_trip(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode("utf-8")
    assert tok.reference.decode(tok.reference.encode(text)) == text


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(utf8_text, boundary_text))
def test_pure_python_matches_tiktoken(tok, reference_tiktoken, text):
    expected = reference_tiktoken.encode(text, allowed_special="all")
    assert tok.reference.encode(text) == expected
    assert tok.encode(text) == expected


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("implementation", ["public", "reference"])
def test_lone_surrogate_is_a_clear_error(tok, implementation):
    encoder = tok if implementation == "public" else tok.reference
    with pytest.raises(TokenizerError, match="lone surrogate") as info:
        encoder.encode("ok \ud800 no")
    assert "position 3" in str(info.value)
    with pytest.raises(TokenizerError, match="lone surrogate"):
        encoder.explain("\udfff")


def test_not_a_string_is_invalid_input(tok):
    with pytest.raises(InvalidInputError, match="must be a str"):
        tok.encode(b"bytes")


@pytest.mark.parametrize("bad_id", [-1, 50257, 10**9])
@pytest.mark.parametrize("implementation", ["public", "reference"])
def test_unknown_id_is_named(tok, implementation, bad_id):
    decoder = tok if implementation == "public" else tok.reference
    with pytest.raises(TokenizerError, match=f"token id {bad_id} "):
        decoder.decode([464, bad_id])
    with pytest.raises(TokenizerError, match=str(bad_id)):
        decoder.piece(bad_id)


def test_non_integer_ids_are_invalid_input(tok):
    with pytest.raises(InvalidInputError, match="integers"):
        tok.decode([1.5])


def test_decode_reads_a_generator_once(tok):
    """The fast path took min() and max() of the ids, so a generator decoded to ''."""
    ids = tok.encode(SAMPLES["seed"])
    assert tok.decode(i for i in ids) == SAMPLES["seed"]


def test_bools_are_no_token_ids(tok):
    for ids in ([True], [1, False], [False, 2], (b for b in [2, True])):
        with pytest.raises(InvalidInputError, match="True or False"):
            tok.pieces(ids)
    with pytest.raises(InvalidInputError):
        tok.decode(None)


def test_decode_accepts_tensors_and_arrays(tok):
    import numpy as np
    import torch

    ids = tok.encode(SAMPLES["seed"])
    assert tok.decode(torch.tensor(ids)) == SAMPLES["seed"]
    assert tok.decode(np.array(ids)) == SAMPLES["seed"]
    assert tok.piece(torch.tensor(795)).text == " em"


# -- readable pieces -----------------------------------------------------------------------


def test_partial_utf8_pieces_show_bytes(tok):
    ids = tok.encode("我爱")
    pieces = tok.pieces(ids)
    # GPT-2 has no token for these characters: they come out as byte fragments.
    assert [p.raw for p in pieces] == [b"\xe6\x88", b"\x91", b"\xe7", b"\x88", b"\xb1"]
    assert [p.text for p in pieces] == ["<0xE6><0x88>", "<0x91>", "<0xE7>", "<0x88>", "<0xB1>"]
    assert [p.id for p in pieces] == ids
    # A lone fragment decodes to the replacement character; together they make the text.
    assert tok.decode(ids[:1]) == "\ufffd"
    assert tok.decode(ids) == "我爱"


def test_whole_characters_show_as_text(tok):
    (token_id,) = tok.encode("的")
    assert tok.piece(token_id).text == "的"
    assert tok.piece(tok.encode(" hello")[0]).text == " hello"
    assert tok.piece(EOT).text == "<|endoftext|>"
    assert tok.piece(EOT).raw == b"<|endoftext|>"


def test_readable_bytes_mixes_text_and_bytes():
    assert readable_bytes(b" \xe4") == " <0xE4>"
    assert readable_bytes(b"\xbd\xa0ok") == "<0xBD><0xA0>ok"
    assert readable_bytes("é".encode()) == "é"


# -- explain -----------------------------------------------------------------------------


def replay(merges, start: bytes) -> list[bytes]:
    """Apply recorded merges to single bytes; each must find its left+right side by side."""
    parts = [start[i : i + 1] for i in range(len(start))]
    for left, right, _rank, result in merges:
        assert left + right == result
        spots = [i for i in range(len(parts) - 1) if (parts[i], parts[i + 1]) == (left, right)]
        assert spots, f"merge {left!r}+{right!r} replayed on {parts!r}"
        i = spots[0]
        parts[i : i + 2] = [result]
    return parts


@pytest.mark.parametrize("name", ["seed", "prose", "chinese", "emoji", "python"])
def test_explain_merges_rebuild_each_token(tok, name):
    text = SAMPLES[name]
    explained = tok.explain(text)
    assert [e.id for e in explained] == tok.encode(text)
    for e in explained:
        assert e.piece == tok.piece(e.id)
        assert e.piece.raw in e.pretoken.encode("utf-8")
        assert replay(e.merges, e.piece.raw) == [e.piece.raw]
        ranks = [step.rank for step in e.merges]
        assert ranks == sorted(ranks)
    pretokens = tok.reference.pretokenize(text)
    assert "".join(pretokens) == text
    assert {e.pretoken for e in explained} == set(pretokens)


def test_explain_shows_empowers(tok):
    explained = tok.explain(" empowers")
    assert [e.piece.text for e in explained] == [" em", "powers"]
    em = explained[0]
    assert em.pretoken == " empowers"
    assert [(s.left, s.right, s.result) for s in em.merges] == [
        (b" ", b"e", b" e"),
        (b" e", b"m", b" em"),
    ]
    assert all(tok.reference.merges[s.rank] == (s.left, s.right) for s in em.merges)


def test_explain_special_token(tok):
    explained = tok.explain("hi<|endoftext|>")
    assert [e.id for e in explained] == [tok.encode("hi")[0], EOT]
    assert explained[1].pretoken == "<|endoftext|>"
    assert explained[1].merges == []
    assert EOT not in [e.id for e in tok.explain("hi<|endoftext|>", allow_special=False)]


# -- files -------------------------------------------------------------------------------


def write_hf_files(directory, *, header=True, newline="\n"):
    """Hugging Face names the same content vocab.json + merges.txt."""
    shutil.copy(gpt2_files_dir() / "encoder.json", directory / "vocab.json")
    lines = (gpt2_files_dir() / "vocab.bpe").read_text("utf-8").splitlines()
    if not header:
        lines = lines[1:]
    (directory / "merges.txt").write_bytes(newline.join(lines).encode("utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("header", "newline"), [(True, "\n"), (False, "\n"), (True, "\r\n")], ids=["hf", "bare", "crlf"]
)
def test_hugging_face_files_give_identical_ids(tmp_path, tok, header, newline):
    write_hf_files(tmp_path, header=header, newline=newline)
    loaded = load_tokenizer(tmp_path)
    assert isinstance(loaded, BPETokenizer)
    assert (loaded.name, loaded.vocab_size, loaded.eot_id) == ("gpt2", 50257, EOT)
    assert loaded.reference.merges == tok.reference.merges
    for text in SAMPLES.values():
        assert loaded.encode(text) == tok.encode(text)
        assert loaded.reference.encode(text) == tok.encode(text)


@pytest.mark.slow
def test_save_and_load_round_trip(tmp_path, tok):
    tok.save(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert loaded.reference.vocab == tok.reference.vocab
    assert loaded.reference.merges == tok.reference.merges
    assert (tmp_path / "vocab.bpe").read_text("utf-8") == (
        gpt2_files_dir() / "vocab.bpe"
    ).read_text("utf-8")
    text = SAMPLES["prose"] + "<|endoftext|>"
    assert loaded.encode(text) == tok.encode(text)


@pytest.mark.slow
def test_without_tiktoken_falls_back_to_python(monkeypatch, tok):
    monkeypatch.setattr(gpt2_module, "tiktoken", None)
    fallback = load_bpe(gpt2_files_dir())
    assert fallback.backend == "python"
    assert fallback.encode(SAMPLES["emoji"]) == tok.encode(SAMPLES["emoji"])
    assert fallback.decode(tok.encode(SAMPLES["emoji"])) == SAMPLES["emoji"]
    with pytest.raises(TokenizerError, match="tiktoken"):
        BPETokenizer(tok.reference, backend="tiktoken")


def test_load_tokenizer_errors(tmp_path):
    with pytest.raises(TokenizerError, match="does not exist"):
        load_tokenizer(tmp_path / "missing")
    with pytest.raises(TokenizerError, match="no tokenizer files"):
        load_tokenizer(tmp_path)


@pytest.mark.parametrize(
    ("vocab", "merges", "message"),
    [
        ("{not json", "#version: 0.2\n", "cannot read BPE vocabulary"),
        ('["a", "b"]', "#version: 0.2\n", "JSON object"),
        ('{"a": "one"}', "#version: 0.2\n", "not an id"),
        ('{"a\\u3042": 0}', "#version: 0.2\n", "not a GPT-2 byte character"),
        ('{"a": 0}', "#version: 0.2\n", "lacks 255 of the 256 single-byte tokens"),
        (None, "#version: 0.2\na b c\n", "line 2: expected two tokens"),
        (None, "#version: 0.2\nzqzqzq qzqzqz\n", "do not belong together"),
    ],
)
def test_corrupt_bpe_files(tmp_path, vocab, merges, message):
    if vocab is None:
        shutil.copy(gpt2_files_dir() / "encoder.json", tmp_path / "encoder.json")
    else:
        (tmp_path / "encoder.json").write_text(vocab, "utf-8")
    (tmp_path / "vocab.bpe").write_text(merges, "utf-8")
    with pytest.raises(TokenizerError, match=message):
        load_tokenizer(tmp_path)


def test_unknown_backend_is_refused(tok):
    with pytest.raises(TokenizerError, match="unknown backend"):
        BPETokenizer(tok.reference, backend="rust")


@given(st.binary(max_size=40))
def test_gpt2s_byte_characters_spell_any_bytes_and_back(raw):
    from lmscope.tokenizers.bytes_map import bytes_to_text, text_to_bytes

    assert text_to_bytes(bytes_to_text(raw)) == raw


@given(st.text(min_size=1, max_size=12))
def test_a_character_outside_gpt2s_byte_map_is_refused_by_name(text):
    from lmscope.tokenizers.bytes_map import text_to_bytes, unicode_to_byte

    outside = [char for char in text if char not in unicode_to_byte()]
    if not outside:
        assert len(text_to_bytes(text)) == len(text)
        return
    with pytest.raises(TokenizerError, match="is not a GPT-2 byte character") as err:
        text_to_bytes(text)
    assert f"holds {outside[0]!r}," in str(err.value)
