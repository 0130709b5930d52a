"""BPE training: the incremental trainer checked against a slow, obvious one."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from lmscope.errors import InvalidInputError
from lmscope.tokenizers import BPETokenizer, ByteLevelBPE, load_tokenizer, train_bpe
from lmscope.tokenizers.training import count_pretokens

CORPUS = (
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\n"
    "All:\nSpeak, speak.\n\n"
    "First Citizen:\nYou are all resolved rather to die than to famish?\n\n"
    "All:\nResolved. resolved.\n\n"
    "Second Citizen: 我们 说话 1234 — naïve café 🙂🙂\n"
) * 8 + "lower lowest newer newest widest wider aaaaaaa bbbbbb\n"


def naive_merges(text: str, n_merges: int) -> list[tuple[bytes, bytes]]:
    """Recount every pair from scratch before each merge: slow but plainly right."""
    words = {chunk: [bytes((b,)) for b in chunk.encode()] for chunk in count_pretokens(text)}
    counts = count_pretokens(text)
    merges: list[tuple[bytes, bytes]] = []
    known = {bytes((b,)) for b in range(256)}
    while len(merges) < n_merges:
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for chunk, parts in words.items():
            for pair in pairwise(parts):
                if pair[0] + pair[1] not in known:
                    pairs[pair] += counts[chunk]
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merges.append(best)
        known.add(best[0] + best[1])
        for chunk, parts in words.items():
            words[chunk] = merge_parts(parts, best)
    return merges


def merge_parts(parts: list[bytes], pair: tuple[bytes, bytes]) -> list[bytes]:
    out, i = [], 0
    while i < len(parts):
        if tuple(parts[i : i + 2]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


@pytest.fixture(scope="module")
def trained() -> ByteLevelBPE:
    return train_bpe(CORPUS, 300, show_progress=False)


def test_shape_of_trained_vocabulary(trained):
    assert (trained.name, trained.vocab_size, trained.eot_id) == ("bpe-300", 300, 299)
    assert len(trained.merges) == 300 - 257
    assert trained.vocab[b"\x00"] == 0 and trained.vocab[b"\xff"] == 255
    left, right = trained.merges[0]
    assert trained.vocab[left + right] == 256


def test_first_merge_is_the_most_frequent_pair(trained):
    pairs: Counter[tuple[bytes, bytes]] = Counter()
    for chunk, count in count_pretokens(CORPUS).items():
        raw = chunk.encode()
        for a, b in pairwise(raw):
            pairs[(bytes((a,)), bytes((b,)))] += count
    top_count = max(pairs.values())
    assert trained.merges[0] == min(pair for pair, count in pairs.items() if count == top_count)


def test_incremental_counts_match_recounting(trained):
    assert list(trained.merges) == naive_merges(CORPUS, 300 - 257)


def test_round_trip_and_compression(trained):
    ids = trained.encode(CORPUS)
    assert trained.decode(ids) == CORPUS
    assert len(ids) < 0.6 * len(CORPUS.encode())  # 43 merges already save 40%
    unseen = "Text it never saw: Ελληνικά 🤖\t\x00"
    assert trained.decode(trained.encode(unseen)) == unseen


def test_save_load_gives_equal_ids(tmp_path, trained):
    trained.save(tmp_path)
    assert (tmp_path / "encoder.json").is_file() and (tmp_path / "vocab.bpe").is_file()
    loaded = load_tokenizer(tmp_path)
    assert isinstance(loaded, BPETokenizer)
    assert (loaded.name, loaded.vocab_size, loaded.eot_id) == ("bpe-300", 300, 299)
    assert loaded.reference.merges == trained.merges
    text = CORPUS + "<|endoftext|>more text, newer and widest"
    expected = trained.encode(text)
    assert expected[-1] != 299 and 299 in expected
    assert loaded.encode(text) == expected
    assert loaded.reference.encode(text) == expected


def test_tiktoken_backend_agrees_with_reference(trained):
    fast = BPETokenizer(trained)
    assert fast.backend == "tiktoken"
    for text in (CORPUS, "resolved famish 我们 aaaaaaaaaaaaa bbbbbbbbb  \n\n x"):
        assert fast.encode(text) == trained.encode(text)


def test_explain_on_trained_tokens(trained):
    explained = trained.explain(" resolved")
    assert [e.id for e in explained] == trained.encode(" resolved")
    for e in explained:
        raw = e.piece.raw
        assert (e.merges[-1].result if e.merges else raw) == raw


def test_endoftext_is_not_learned():
    text = "alpha<|endoftext|>beta<|endoftext|>" * 50
    bpe = train_bpe(text, 400, show_progress=False)
    assert not any(b"endoftext" in raw or b"<|" in raw for raw in bpe.vocab)
    assert bpe.encode("alpha<|endoftext|>").count(bpe.eot_id) == 1


def test_stops_when_nothing_is_left_to_merge():
    bpe = train_bpe("ab ab ab", 1000, show_progress=False)
    # Pre-tokens "ab" and " ab" (twice): "ab" (3 times) merges first, then " "+"ab".
    assert [left + right for left, right in bpe.merges] == [b"ab", b" ab"]
    assert (bpe.vocab_size, bpe.eot_id, bpe.name) == (259, 258, "bpe-259")


def test_progress_bar_can_be_shown(capsys):
    bpe = train_bpe("hello hello world", 260, show_progress=True)
    assert len(bpe.merges) == 3
    assert "Training BPE" in capsys.readouterr().err


@pytest.mark.parametrize("vocab_size", [256, 0, 300.0, True])
def test_bad_vocab_size(vocab_size):
    with pytest.raises(InvalidInputError, match="vocab_size"):
        train_bpe("some text", vocab_size, show_progress=False)


def test_empty_corpus():
    with pytest.raises(InvalidInputError, match="empty text"):
        train_bpe("", 300, show_progress=False)
