"""SentencePiece-style BPE (Llama 2, Mistral v0.1, TinyLlama) against Hugging Face.

* tokenizer.json files in every spelling Hugging Face writes them (Llama 2's Prepend + Replace
  normalizer; Metaspace with prepend_scheme first / always / never, and split into words),
  against `tokenizers` on the same file, and transformers' tokenizer for the BOS rule.
* GGUF vocabularies of model "llama" (tokens and scores, no merges) against transformers'
  tokenizer read from the same GGUF file.
* Merge explanations, saving and reading back, byte fallback and unknown characters, long
  texts, a vocabulary whose tokens join a word to the next "▁", and bad files refused in one
  line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers_spm import (
    BYTES,
    SPACE,
    SPECIALS,
    as_sentencepiece_spaces,
    gguf_fields,
    spm_folder,
    spm_tokenizer,
    write_gguf_tokenizer,
)
from lmscope.errors import TokenizerError
from lmscope.tokenizers import load_tokenizer, tokenizer_from_gguf_fields, tokenizer_from_hf_json
from lmscope.tokenizers.spm_bpe import SentencePieceBPE

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, pre_tokenizers  # noqa: E402

FORMS = ["normalizer", "metaspace-first", "metaspace-always", "metaspace-never", "metaspace-split"]

FIXED = [
    "Data visualization empowers users to",
    "Hello world",
    " Hello",
    "  two  spaces ",
    "trailing   ",
    "<s>Hello</s>",
    "a<s> b</s>c<unk>d",
    "",
    " ",
    "\n",
    "数据可视化让用户能够 🤖 emoji 👨‍👩‍👧",
    "line\nnew\n\n  x\r\n",
    "ſ e\u0301 \u00a0x \u2581 already ▁spelled",
    "[INST] What is the capital of France? [/INST]",
    "def fib(n):\n    return n if n < 2 else fib(n - 1)\n",
    "<0x41> is not the letter A",
]
FRAGMENTS = [*FIXED, "<s>", "</s>", "<unk>", " ", "  ", "\t", "▁", "the", " the", "数据", "🤖"]
TEXT = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
    ),
    max_size=8,
).map("".join)
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module", params=FORMS)
def pair(request, tmp_path_factory):
    """(lmscope's tokenizer, `tokenizers`' own) from one tokenizer.json, per spelling."""
    folder = spm_folder(tmp_path_factory.mktemp(request.param), request.param)
    return load_tokenizer(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def _same(ours, ref, text: str) -> None:
    ids = ref.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == ids, (text, ref.encode(text, add_special_tokens=False).tokens)
    assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False)
    assert [e.id for e in ours.explain(text)] == ids


@pytest.mark.slow
@pytest.mark.parametrize("text", FIXED)
def test_fixed_texts_match_tokenizers(pair, text):
    _same(*pair, text)


@pytest.mark.slow
@FUZZ
@given(text=TEXT)
def test_any_text_matches_tokenizers(pair, text):
    _same(*pair, text)


def test_it_is_read_as_sentencepiece_style(pair):
    ours, _ = pair
    assert isinstance(ours, SentencePieceBPE)
    assert (ours.unk_id, ours.bos_id, ours.eos_id, ours.add_bos) == (0, 1, 2, True)
    assert ours.vocab_size == 1456
    assert ours.token_bytes(BYTES.index("<0x0A>") + 3) == b"\n"
    # the prefix "▁" is a space in front of the first word
    first = ours.piece(ours.encode("Data")[0]).text
    assert first.startswith(" ") == (ours.prefix != "never")


@pytest.mark.parametrize("form", ["normalizer", "metaspace-first"])
def test_transformers_adds_the_same_bos(tmp_path, form):
    """The model sees what transformers' tokenizer gives it: <s>, then the text's tokens."""
    from transformers import AutoTokenizer

    folder = spm_folder(tmp_path, form)
    ours, theirs = load_tokenizer(folder), AutoTokenizer.from_pretrained(folder)
    for text in FIXED[:6]:
        assert theirs.encode(text) == [ours.bos_id, *ours.encode(text)]


def test_merges_explain_every_token(pair):
    ours, _ = pair
    text = "Data visualization empowers users to 数据 🤖"
    explained = ours.explain(text)
    assert [e.id for e in explained] == ours.encode(text)
    for e in explained:
        if e.merges:
            assert e.merges[-1].result == e.piece.raw
            assert all(m.left + m.right == m.result for m in e.merges)
        assert e.piece.text in e.pretoken or len(e.piece.raw) == 1  # (a fallback byte)
    spaced = ours.prefix != "never"
    assert explained[0].pretoken == (" Data" if spaced else "Data")


def test_byte_fallback_and_unknown_characters(tmp_path):
    """A character the vocabulary lacks becomes its UTF-8 bytes; without byte tokens it is
    <unk>, a run of them one <unk> (fuse_unk), as `tokenizers` does."""
    ref = spm_tokenizer()
    data = json.loads(ref.to_str())
    vocab = data["model"]["vocab"]
    ours = tokenizer_from_hf_json(_write(tmp_path / "a", data))
    robot = ours.encode("🤖")
    assert [ours.token_bytes(i) for i in robot[1:]] == [bytes([b]) for b in "🤖".encode()]
    no_bytes = dict(data)
    no_bytes["model"] = dict(
        data["model"],
        byte_fallback=False,
        vocab={t: i for t, i in vocab.items() if t not in BYTES or t == "<0x0A>"},
    )
    ours = tokenizer_from_hf_json(_write(tmp_path / "b", no_bytes))
    theirs = tokenizers.Tokenizer.from_file(str(tmp_path / "b" / "tokenizer.json"))
    for text in ["🤖🤖 x 🤖", "数据可视化🤖", "plain"]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids
    assert ours.encode("🤖🤖")[-1:] == [0]


def _write(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return path


@pytest.mark.parametrize("form", FORMS)
def test_saved_tokenizer_reads_back(tmp_path, form):
    ours = load_tokenizer(spm_folder(tmp_path / "in", form))
    ours.save(tmp_path / "out")
    again = load_tokenizer(tmp_path / "out")
    theirs = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    assert (again.bos_id, again.eos_id, again.unk_id, again.add_bos) == (1, 2, 0, True)
    for text in FIXED:
        assert again.encode(text) == ours.encode(text)
        assert theirs.encode(text, add_special_tokens=False).ids == ours.encode(text)
        assert again.decode(ours.encode(text)) == ours.decode(ours.encode(text))


def _joined_vocabulary() -> tokenizers.Tokenizer:
    """Tokens that carry a word into the next one ("of▁the"): cutting the text into words
    would be wrong here, so the whole text is merged as one."""
    chars = ["<unk>", SPACE, *"abcdefghijklmnopqrstuvwxyz"]
    merges = [("o", "f"), ("h", "e"), ("t", "he"), ("of", SPACE), ("of" + SPACE, "the")]
    merges += [(SPACE, "the"), (SPACE, "of"), (SPACE, SPACE)]
    vocab = {t: i for i, t in enumerate(chars)}
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence(
        [decoders.Replace(SPACE, " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return tok


def test_tokens_across_words_merge_over_the_whole_text(tmp_path):
    ref = _joined_vocabulary()
    ref.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path)
    for text in ["of the", "the king of the hill of  the", "of the " * 300, " of the"]:
        assert ours.encode(text) == ref.encode(text).ids
    assert ours.pretokenize("a of the") == [SPACE + "a" + SPACE + "of" + SPACE + "the"]


def test_unknown_characters_around_an_unknown_space_fuse_as_one(tmp_path):
    """Without "▁" in the vocabulary a space is unknown too, so "龘 龘" is one fused <unk>:
    cutting the text into words there would make it two."""
    vocab = {t: i for i, t in enumerate(["<unk>", "a", "b", "ab"])}
    ref = tokenizers.Tokenizer(models.BPE(vocab, [("a", "b")], unk_token="<unk>", fuse_unk=True))
    ref.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, prepend_scheme="first", split=False)
    ref.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path)
    for text in ["龘 龘", "ab 龘 ab", "ab ab"]:
        assert ours.encode(text) == ref.encode(text).ids


@st.composite
def _random_bpe(draw):
    """A small vocabulary over "ab▁" whose merges come in any order (a merge may rank before
    the merges that build its parts), and a text: the order merges apply in is put to the test."""
    tokens = ["<unk>", "a", "b", SPACE]
    merges: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(tokens[1:])), draw(st.sampled_from(tokens[1:]))
        if (left, right) not in merges and len(left + right) <= 6:
            merges.append((left, right))
            if left + right not in tokens:
                tokens.append(left + right)
    order = draw(st.permutations(range(len(merges))))
    text = draw(st.text(alphabet="ab ", max_size=24))
    return {t: i for i, t in enumerate(tokens)}, [merges[i] for i in order], text


@pytest.mark.slow
@FUZZ
@given(case=_random_bpe(), split=st.booleans())
def test_any_merge_order_applies_as_tokenizers_applies_it(tmp_path_factory, case, split):
    vocab, merges, text = case
    ref = tokenizers.Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=True))
    ref.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, prepend_scheme="always", split=split)
    folder = tmp_path_factory.mktemp("random")
    ref.save(str(folder / "tokenizer.json"))
    assert load_tokenizer(folder).encode(text) == ref.encode(text).ids, ref.encode(text).tokens


def test_long_text_matches(pair):
    ours, ref = pair
    text = " ".join(FIXED) * 40  # about 20,000 characters
    assert ours.encode(text) == ref.encode(text, add_special_tokens=False).ids


# -- GGUF "llama" vocabularies ------------------------------------------------------------------


@pytest.fixture(scope="module")
def gguf_pair(tmp_path_factory):
    """(lmscope's tokenizer from the fields, transformers' from a GGUF file holding them).

    transformers' GGUF reader puts no "▁" before text that starts with a space or follows a
    special token; SentencePiece, llama.cpp and Llama 2's own tokenizer.json do (" Hello" is
    "▁▁Hello"), and so does lmscope, so transformers' tokenizer is given that rule here. On
    the real Llama 2 vocabulary (llama.cpp's ggml-vocab-llama-spm.gguf) lmscope gives
    llama.cpp's ids on all 47 of its test texts."""
    from transformers import AutoTokenizer

    fields = gguf_fields(spm_tokenizer())
    folder = tmp_path_factory.mktemp("gguf")
    write_gguf_tokenizer(folder / "t.gguf", fields)
    theirs = AutoTokenizer.from_pretrained(folder, gguf_file="t.gguf")
    return tokenizer_from_gguf_fields(fields), as_sentencepiece_spaces(theirs)


def _same_as_transformers(ours, theirs, text: str) -> None:
    ids = theirs.encode(text, add_special_tokens=False)
    assert ours.encode(text) == ids, (text, theirs.convert_ids_to_tokens(ids))
    assert theirs.encode(text) == [ours.bos_id, *ids]  # add_bos_token: llama.cpp's default
    assert ours.decode(ids) == theirs.decode(ids)


@pytest.mark.slow
@pytest.mark.parametrize("text", FIXED)
def test_gguf_vocabulary_matches_transformers(gguf_pair, text):
    _same_as_transformers(*gguf_pair, text)


@pytest.mark.slow
@FUZZ
@given(text=TEXT)
def test_gguf_vocabulary_matches_transformers_on_any_text(gguf_pair, text):
    _same_as_transformers(*gguf_pair, text)


def test_gguf_merges_come_from_the_scores(gguf_pair):
    ours, theirs = gguf_pair
    assert isinstance(ours, SentencePieceBPE)
    assert ours.special_tokens == {t: i for i, t in enumerate(SPECIALS)}
    ranked = json.loads(theirs.backend_tokenizer.to_str())["model"]["merges"]
    assert [list(m) for m in ours.merges] == ranked


@pytest.mark.slow
def test_gguf_without_space_prefix(tmp_path):
    """add_space_prefix false: no "▁" in front, as llama.cpp reads the flag (transformers
    ignores it, so its tokenizer is given the same setting here)."""
    from transformers import AutoTokenizer

    fields = gguf_fields(spm_tokenizer())
    write_gguf_tokenizer(tmp_path / "t.gguf", fields, add_space_prefix=False, add_bos_token=False)
    theirs = AutoTokenizer.from_pretrained(tmp_path, gguf_file="t.gguf").backend_tokenizer
    theirs.pre_tokenizer = pre_tokenizers.Metaspace(SPACE, prepend_scheme="never", split=False)
    theirs.decoder = decoders.Sequence(
        [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    ours = tokenizer_from_gguf_fields({**fields, "add_space_prefix": False, "add_bos_token": False})
    assert not ours.add_bos
    for text in FIXED:
        ids = theirs.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == ids
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=False)


# -- bad files ----------------------------------------------------------------------------------


def _one_line_error(call, match: str) -> None:
    with pytest.raises(TokenizerError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


BAD = {
    "lowercase": (
        lambda d: d["normalizer"]["normalizers"].append({"type": "Lowercase"}),
        "Lowercase",
    ),
    "spaces to _": (
        lambda d: d["normalizer"]["normalizers"][1].update(content="_"),
        "replaces spaces",
    ),
    "no space handling": (lambda d: d.update(normalizer=None), "never turns spaces"),
    "merge of unknown tokens": (
        lambda d: d["model"]["merges"].insert(0, ["x", "q"]),
        "does not have",
    ),
    "bad merge": (lambda d: d["model"]["merges"].insert(0, "a b c"), "two tokens"),
    "no vocab": (lambda d: d["model"].update(vocab={}), "no vocabulary"),
    "dropout": (lambda d: d["model"].update(dropout=0.1), "dropout"),
    "whitespace split": (
        lambda d: d.update(pre_tokenizer={"type": "WhitespaceSplit"}),
        "WhitespaceSplit",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD)
def test_bad_files_are_one_line_errors(tmp_path, case):
    change, match = BAD[case]
    data = json.loads(spm_tokenizer("normalizer").to_str())
    change(data)
    path = _write(tmp_path, data)
    _one_line_error(lambda: tokenizer_from_hf_json(path), match)
    _one_line_error(lambda: load_tokenizer(tmp_path), match)


def test_bad_gguf_vocabularies_are_one_line_errors():
    good = gguf_fields(spm_tokenizer())
    cases = [
        ({"scores": good["scores"][:-1]}, "scores"),
        ({"scores": ["x"] * len(good["tokens"])}, "numbers"),
        ({"token_type": [1, 2]}, "token types"),
        ({"bos_token_id": 10**6}, "bos id"),
        ({"merges": ["a"]}, "two tokens"),
    ]
    for change, match in cases:
        _one_line_error(lambda change=change: tokenizer_from_gguf_fields({**good, **change}), match)
