"""Tests for lmscope.data: corpora, splits, the encoding cache and both batch loaders."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch

from lmscope.data import (
    Corpus,
    RandomBatches,
    StreamBatches,
    default_cache_dir,
    dtype_for_vocab,
    encode_corpus,
    known_corpora,
    load_corpus,
    load_python_stdlib,
    tokenizer_identity,
    train_val_split,
)
from lmscope.errors import InvalidInputError, TokenizerError

ASSETS = resources.files("lmscope") / "assets" / "corpora"


class ByteTokenizer:
    """Stand-in tokenizer: one id per UTF-8 byte; counts how often it is asked to encode."""

    def __init__(self, name: str = "bytes", vocab_size: int = 256, salt: str = "") -> None:
        self.name = name
        self.vocab_size = vocab_size
        self.salt = salt  # changes what save() writes, like retrained merges would
        self.calls = 0

    def encode(self, text: str) -> list[int]:
        self.calls += 1
        return list(text.encode("utf-8"))

    def save(self, directory: str) -> None:
        Path(directory, "tokenizer.json").write_text(json.dumps({"salt": self.salt}))


class BadTokenizer(ByteTokenizer):
    def encode(self, text: str) -> list[int]:
        return [300] * len(text)


def sha256_of(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- corpora -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "folder"), [("shakespeare", "tinyshakespeare"), ("warpeace", "warpeace")]
)
def test_bundled_files_match_their_cards(name, folder):
    card = (ASSETS / folder / "CARD.md").read_text(encoding="utf-8")
    assert sha256_of(ASSETS / folder / "input.txt") in card
    assert f"`{name}`" in card


def test_shakespeare_matches_card_and_alias():
    corpus = load_corpus("shakespeare")
    assert len((ASSETS / "tinyshakespeare" / "input.txt").read_bytes()) == 1_115_394
    assert len(corpus.text) == 1_115_394
    assert len(set(corpus.text)) == 65
    assert corpus.text.startswith("First Citizen:\n")
    assert load_corpus("tinyshakespeare").text == corpus.text
    assert "text=" not in repr(corpus)  # a megabyte of text must not flood a log line


def test_war_and_peace_is_normalised_on_read():
    raw = (ASSETS / "warpeace" / "input.txt").read_bytes()
    assert len(raw) == 3_266_296
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw  # the asset itself is untouched
    corpus = load_corpus("war-and-peace")
    assert corpus.name == "warpeace"
    assert corpus.text.startswith('"Well, Prince, so Genoa')
    assert "\r" not in corpus.text and "\ufeff" not in corpus.text
    assert len(corpus.text) == 3_203_272
    assert corpus.text.count("\n") == raw.count(b"\r\n") == 62_191


def test_text_file_is_read_with_bom_and_crlf_normalised(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes("\ufeffone\r\ntwo\r\n".encode())
    corpus = load_corpus(path)
    assert corpus.text == "one\ntwo\n"
    assert corpus.name == "notes.txt"
    assert load_corpus(str(path)).text == corpus.text


def test_folder_is_sorted_recursive_and_skips_binary_and_hidden(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.txt").write_text("zed\n")
    (tmp_path / "a.txt").write_text("alpha")  # no final newline: one is added
    (tmp_path / "c.md").write_text("gamma\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    corpus = load_corpus(tmp_path)
    assert corpus.text == "alpha\nzed\ngamma\n"
    assert "3 text file(s), 2 skipped" in corpus.source


def test_folder_without_text_is_refused(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(InvalidInputError, match="no UTF-8 text.*1 non-text"):
        load_corpus(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"abc\x00def", "looks binary.*NUL"),
        (b"\xff\xfe\x00a", "looks binary"),
        (b"ok then \xc3\x28", "is not UTF-8 text: byte 0xC3 at offset 8"),
        ("caf\u00e9 au lait\n".encode("latin-1"), "is not UTF-8 text: byte 0xE9 at offset 3"),
        (bytes(range(1, 256)) * 4, "looks binary"),
        (b"", "is empty"),
        (b"  \n\n", "is empty"),
    ],
)
def test_unusable_files_are_refused_with_one_readable_line(tmp_path, content, message):
    path = tmp_path / "data.txt"
    path.write_bytes(content)
    with pytest.raises(InvalidInputError, match=message) as info:
        load_corpus(path)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_name_lists_known_corpora():
    with pytest.raises(InvalidInputError, match="Unknown corpus 'shakespear'") as info:
        load_corpus("shakespear")
    for name in ("shakespeare", "warpeace", "python-stdlib"):
        assert name in str(info.value)
    assert set(known_corpora()) >= {"shakespeare", "tinyshakespeare", "warpeace", "war-and-peace"}


@pytest.mark.parametrize("name", ["", "  ", "\t\n"])
def test_empty_name_is_refused_not_read_as_the_current_folder(tmp_path, monkeypatch, name):
    (tmp_path / "notes.txt").write_text("a text file in the current folder\n")
    monkeypatch.chdir(tmp_path)  # was: Path("") is ".", so every text file here was read
    with pytest.raises(InvalidInputError, match="corpus name is empty") as info:
        load_corpus(name)
    assert "shakespeare" in str(info.value) and "\n" not in str(info.value)


def test_missing_path_says_so(tmp_path):
    with pytest.raises(InvalidInputError, match="No file or folder at"):
        load_corpus(tmp_path / "nope.txt")
    with pytest.raises(InvalidInputError, match="No file or folder at"):
        load_corpus("some/where.txt")


@pytest.mark.slow
def test_python_stdlib_is_deterministic_and_skips_tests():
    first = load_corpus("python-stdlib")
    second = load_python_stdlib()
    assert first.text == second.text
    assert len(first.text) == 5_000_000
    assert first.text.startswith("# file: __future__.py\n")
    assert "\n# file: abc.py\n" in first.text

    whole = load_python_stdlib(max_chars=None)
    assert "\n# file: os.py\n" in whole.text
    headers = [line for line in whole.text.splitlines() if line.startswith("# file: ")]
    paths = [line.removeprefix("# file: ") for line in headers]
    assert paths == sorted(paths)
    for path in paths:
        parts = path.split("/")
        assert not {"test", "tests", "idle_test", "site-packages"} & set(parts[:-1])


def test_python_stdlib_cap_must_be_positive():
    with pytest.raises(InvalidInputError, match="max_chars"):
        load_python_stdlib(max_chars=0)


# --- split -------------------------------------------------------------------------------


def test_split_is_nanogpt_style():
    train, val = load_corpus("shakespeare").split()
    assert (len(train), len(val)) == (1_003_854, 111_540)
    assert train + val == load_corpus("shakespeare").text
    assert train_val_split(list(range(10)), 0.3) == (list(range(7)), [7, 8, 9])
    assert train_val_split("abcd", 0.0) == ("abcd", "")
    with pytest.raises(InvalidInputError, match="val_fraction"):
        train_val_split("abcd", 1.0)


# --- encoding cache ----------------------------------------------------------------------


def small_corpus(text: str = "hello world, " * 20) -> Corpus:
    return Corpus(name="small", text=text, source="test")


def test_encode_corpus_splits_and_maps(tmp_path):
    corpus = small_corpus()
    encoded = encode_corpus(corpus, ByteTokenizer(), tmp_path)
    train, val = corpus.split()
    assert isinstance(encoded.train, np.memmap) and encoded.train.dtype == np.uint16
    assert bytes(encoded.train.astype(np.uint8)) == train.encode()
    assert bytes(encoded.val.astype(np.uint8)) == val.encode()
    assert not encoded.from_cache
    assert encoded.path.parent == tmp_path


def test_dtype_follows_vocab_size():
    assert dtype_for_vocab(256) == np.uint16
    assert dtype_for_vocab(65_536) == np.uint16
    assert dtype_for_vocab(65_537) == np.uint32
    assert dtype_for_vocab(50_257).itemsize == 2


def test_cache_is_reused_and_invalidated(tmp_path):
    tok = ByteTokenizer()
    first = encode_corpus(small_corpus(), tok, tmp_path)
    assert tok.calls == 2  # train and val
    second = encode_corpus(small_corpus(), tok, tmp_path)
    assert tok.calls == 2 and second.from_cache
    np.testing.assert_array_equal(first.train, second.train)

    encode_corpus(small_corpus("other text " * 20), tok, tmp_path)
    assert tok.calls == 4  # new text, new entry
    encode_corpus(small_corpus(), tok, tmp_path, val_fraction=0.2)
    assert tok.calls == 6  # another split is another entry
    encode_corpus(small_corpus(), ByteTokenizer(salt="retrained"), tmp_path)
    assert tok.calls == 6  # a different tokenizer never reuses this one's ids


def test_explicit_tokenizer_key_skips_save(tmp_path):
    class NoSave:
        name, vocab_size = "nosave", 256

        def encode(self, text):
            return list(text.encode())

    with pytest.raises(InvalidInputError, match="tokenizer_key"):
        encode_corpus(small_corpus(), NoSave(), tmp_path)
    encoded = encode_corpus(small_corpus(), NoSave(), tmp_path, tokenizer_key="bytes-v1")
    assert len(encoded.train) + len(encoded.val) == len(small_corpus().text)


def test_tokenizer_identity_tracks_saved_files():
    assert tokenizer_identity(ByteTokenizer()) == tokenizer_identity(ByteTokenizer())
    assert tokenizer_identity(ByteTokenizer()) != tokenizer_identity(ByteTokenizer(salt="x"))
    assert tokenizer_identity(ByteTokenizer()) != tokenizer_identity(ByteTokenizer(name="b2"))


@pytest.mark.parametrize("damage", ["truncate", "drop_meta", "garble_meta"])
def test_half_written_cache_is_not_loaded(tmp_path, damage):
    tok = ByteTokenizer()
    good = encode_corpus(small_corpus(), tok, tmp_path)
    expected = np.array(good.train)
    entry = good.path
    del good
    if damage == "truncate":  # killed while writing train.bin (without the atomic rename)
        data = (entry / "train.bin").read_bytes()
        (entry / "train.bin").write_bytes(data[: len(data) // 2])
    elif damage == "drop_meta":  # killed after the arrays, before the meta
        (entry / "meta.json").unlink()
    else:
        (entry / "meta.json").write_text('{"format": 1, "key": ')
    again = encode_corpus(small_corpus(), tok, tmp_path)
    assert tok.calls == 4 and not again.from_cache
    np.testing.assert_array_equal(again.train, expected)
    assert encode_corpus(small_corpus(), tok, tmp_path).from_cache


def test_no_temp_files_are_left_behind(tmp_path):
    encoded = encode_corpus(small_corpus(), ByteTokenizer(), tmp_path)
    assert sorted(p.name for p in encoded.path.iterdir()) == ["meta.json", "train.bin", "val.bin"]


def test_out_of_range_ids_are_refused(tmp_path):
    with pytest.raises(TokenizerError, match="id 300, outside its vocab_size 256"):
        encode_corpus(small_corpus(), BadTokenizer(), tmp_path)


def test_default_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "corpora"
    encoded = encode_corpus(small_corpus(), ByteTokenizer())
    assert encoded.path.parent == tmp_path / "corpora"
    monkeypatch.delenv("LMSCOPE_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "lmscope" / "corpora"


def test_unwritable_cache_dir_says_what_to_do(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(InvalidInputError, match="Cannot write the corpus cache.*LMSCOPE_CACHE"):
        encode_corpus(small_corpus(), ByteTokenizer(), blocker)


def test_empty_val_split_is_an_empty_array(tmp_path):
    encoded = encode_corpus(small_corpus(), ByteTokenizer(), tmp_path, val_fraction=0.0)
    assert encoded.val.shape == (0,) and len(encoded.train) == len(small_corpus().text)
    assert encode_corpus(small_corpus(), ByteTokenizer(), tmp_path, val_fraction=0.0).from_cache


# --- random batches ----------------------------------------------------------------------

DATA = np.arange(1000, dtype=np.uint16)


def test_random_batches_shapes_and_shift():
    x, y = next(RandomBatches(DATA, batch_size=4, context=8, seed=1))
    assert x.shape == y.shape == (4, 8) and x.dtype == torch.long
    assert torch.equal(x[:, 1:], y[:, :-1])
    assert torch.equal(y, x + 1)  # DATA[i] == i, so windows are runs of consecutive ids


def test_random_batches_are_reproducible_and_resume_exactly():
    loader = RandomBatches(DATA, 4, 8, seed=7)
    batches = [next(loader) for _ in range(6)]
    twin = RandomBatches(DATA, 4, 8, seed=7)
    for x, _ in batches:
        assert torch.equal(next(twin)[0], x)
    assert not torch.equal(next(RandomBatches(DATA, 4, 8, seed=8))[0], batches[0][0])

    head = RandomBatches(DATA, 4, 8, seed=7)
    for _ in range(3):
        next(head)
    state = json.loads(json.dumps(head.state_dict()))  # it must survive a JSON checkpoint
    resumed = RandomBatches(DATA, 4, 8, seed=0)
    resumed.load_state_dict(state)
    for x, y in batches[3:]:
        rx, ry = next(resumed)
        assert torch.equal(rx, x) and torch.equal(ry, y)


def test_random_batches_cover_the_last_window_and_accept_memmaps(tmp_path):
    encoded = encode_corpus(small_corpus("ab"), ByteTokenizer(), tmp_path, val_fraction=0.0)
    x, y = next(RandomBatches(encoded.train, batch_size=3, context=1))
    assert x.tolist() == [[97]] * 3 and y.tolist() == [[98]] * 3


def test_random_batches_refuse_bad_settings():
    with pytest.raises(InvalidInputError, match="context 1,000 needs at least 1,001 tokens"):
        RandomBatches(DATA, 2, 1000)
    with pytest.raises(InvalidInputError, match="batch_size"):
        RandomBatches(DATA, 0, 8)
    with pytest.raises(InvalidInputError, match="1-D array of integer"):
        RandomBatches(np.zeros((4, 4), dtype=np.int64), 1, 2)
    loader = RandomBatches(DATA, 2, 8)
    with pytest.raises(InvalidInputError, match="context=16"):
        loader.load_state_dict(RandomBatches(DATA, 2, 16).state_dict())


# --- stream batches ----------------------------------------------------------------------


def test_stream_batches_are_contiguous_per_stream():
    loader = StreamBatches(DATA, batch_size=4, seq_len=10)
    assert loader.stream_len == 250 and len(loader) == 24
    (x0, y0), (x1, y1) = next(loader), next(loader)
    assert x0.shape == y0.shape == (4, 10)
    assert torch.equal(y0, x0 + 1) and torch.equal(y1, x1 + 1)
    assert torch.equal(x1[:, 0], y0[:, -1])  # chunk k+1 starts where chunk k ended
    assert x0[:, 0].tolist() == [0, 250, 500, 750]


def test_stream_batches_wrap_at_epoch_end():
    loader = StreamBatches(DATA, batch_size=4, seq_len=10)
    assert loader.is_epoch_start
    first, _ = next(loader)
    assert loader.new_epoch and not loader.is_epoch_start
    flags = [loader.new_epoch]
    for _ in range(23):
        next(loader)
        flags.append(loader.new_epoch)
    assert flags == [True] + [False] * 23
    assert loader.is_epoch_start and loader.epoch == 1
    again, _ = next(loader)
    assert loader.new_epoch and torch.equal(again, first)


def test_stream_batches_resume_exactly():
    loader = StreamBatches(DATA, 4, 10)
    for _ in range(30):
        next(loader)
    state = json.loads(json.dumps(loader.state_dict()))
    expected = [next(loader) for _ in range(25)]
    resumed = StreamBatches(DATA, 4, 10)
    resumed.load_state_dict(state)
    assert (resumed.epoch, resumed.chunk) == (1, 6)
    for x, y in expected:
        rx, ry = next(resumed)
        assert torch.equal(rx, x) and torch.equal(ry, y)


def test_stream_batches_refuse_too_little_data():
    StreamBatches(np.arange(44), 4, 10)  # exactly B * (T + 1) tokens: one batch
    with pytest.raises(InvalidInputError, match="need at least 44 tokens but the data has 43"):
        StreamBatches(np.arange(43), 4, 10)
    with pytest.raises(InvalidInputError, match="seq_len"):
        StreamBatches(DATA, 4, 0)
    with pytest.raises(InvalidInputError, match="batch_size=4"):
        StreamBatches(DATA, 2, 10).load_state_dict(StreamBatches(DATA, 4, 10).state_dict())


def test_latin1_text_is_not_called_binary(tmp_path):
    path = tmp_path / "old.txt"
    path.write_bytes("Tr\u00e8s bien, merci.\n".encode("latin-1") * 50)
    with pytest.raises(InvalidInputError) as info:
        load_corpus(path)
    message = str(info.value)
    assert "not UTF-8" in message and "offset 2" in message and "binary" not in message
