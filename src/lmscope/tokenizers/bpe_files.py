"""Reading and writing byte-level BPE vocabularies in GPT-2's file format.

Two spellings of the same content exist: OpenAI's `encoder.json` + `vocab.bpe` and Hugging
Face's `vocab.json` + `merges.txt`. Both hold a JSON map token -> id and a merges list (one
"left right" pair per line, earliest merge first, after an optional "#version" line), with
bytes spelled through the GPT-2 byte map.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from lmscope.errors import TokenizerError
from lmscope.i18n import Message
from lmscope.tokenizers.base import EOT_TEXT
from lmscope.tokenizers.bytes_map import bytes_to_text, text_to_bytes
from lmscope.tokenizers.json_files import read_json

# Names a BPE vocabulary may come under, in the order they are looked for.
FILE_PAIRS = (("encoder.json", "vocab.bpe"), ("vocab.json", "merges.txt"))

# Entries of the JSON vocabulary that are control tokens rather than byte strings.
KNOWN_SPECIALS = (EOT_TEXT, "<|startoftext|>")


@dataclass
class BPEFiles:
    """The parsed content of a vocabulary + merges file pair."""

    vocab: dict[bytes, int]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]


def find_bpe_files(directory: Path) -> tuple[Path, Path] | None:
    """The (vocabulary, merges) paths present in `directory`, or None."""
    for vocab_name, merges_name in FILE_PAIRS:
        vocab_path, merges_path = directory / vocab_name, directory / merges_name
        if vocab_path.is_file() and merges_path.is_file():
            return vocab_path, merges_path
    return None


def read_bpe_files(vocab_path: Path, merges_path: Path) -> BPEFiles:
    """Parse a vocabulary JSON and a merges file, raising TokenizerError when either is bad."""
    vocab, specials = _read_vocab(Path(vocab_path))
    merges = _read_merges(Path(merges_path))
    return BPEFiles(vocab, merges, specials)


def _read_vocab(path: Path) -> tuple[dict[bytes, int], dict[str, int]]:
    return parse_vocab(read_json(path, Message("error.tokenizer.part.bpe-vocab")), str(path))


def parse_vocab(
    data: object, where: object, *, specials: Collection[str] = KNOWN_SPECIALS
) -> tuple[dict[bytes, int], dict[str, int]]:
    """A JSON map token -> id as bytes -> id, with the tokens named in `specials` kept apart
    as text -> id."""
    if not isinstance(data, dict) or not data:
        raise TokenizerError("error.tokenizer.vocab-not-object", where=where)
    vocab: dict[bytes, int] = {}
    found: dict[str, int] = {}
    for token, token_id in data.items():
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            raise TokenizerError(
                "error.tokenizer.bad-id", where=where, token=repr(token), id=repr(token_id)
            )
        if token in specials:
            found[token] = token_id
        else:
            vocab[text_to_bytes(token)] = token_id
    return vocab, found


def _read_merges(path: Path) -> list[tuple[bytes, bytes]]:
    try:
        # splitlines also drops "\r": no GPT-2 byte character is a line break.
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise TokenizerError(
            "error.tokenizer.cannot-read-merges", file=str(path), why=str(err)
        ) from None
    merges = []
    for number, line in enumerate(lines, start=1):
        # The header ("#version: 0.2") and a trailing empty line carry no merge.
        if not line.strip() or (number == 1 and line.startswith("#version")):
            continue
        where = Message("error.tokenizer.part.line", file=str(path), line=str(number))
        merges.append(parse_merge(line, where))
    return merges


def parse_merge(item: object, where: object) -> tuple[bytes, bytes]:
    """One merge as files spell it, "left right" or ["left", "right"], as bytes."""
    left, right = split_merge(item, where)
    return text_to_bytes(left), text_to_bytes(right)


def split_merge(item: object, where: object) -> tuple[str, str]:
    """One merge as files spell it, "left right" or ["left", "right"], as its two token texts."""
    halves = item.split(" ") if isinstance(item, str) else item
    if not (
        isinstance(halves, list | tuple)
        and len(halves) == 2
        and all(isinstance(half, str) and half for half in halves)
    ):
        raise TokenizerError("error.tokenizer.bad-merge", where=where, got=repr(item))
    return halves[0], halves[1]


def write_bpe_files(
    directory: Path,
    vocab: dict[bytes, int],
    merges: list[tuple[bytes, bytes]],
    special_tokens: dict[str, int],
) -> None:
    """Write encoder.json + vocab.bpe the way GPT-2 ships them."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    encoder = {bytes_to_text(raw): token_id for raw, token_id in vocab.items()}
    encoder.update(special_tokens)
    encoder = dict(sorted(encoder.items(), key=lambda item: item[1]))
    (directory / "encoder.json").write_text(json.dumps(encoder, ensure_ascii=False), "utf-8")
    lines = ["#version: 0.2"]
    lines += [f"{bytes_to_text(left)} {bytes_to_text(right)}" for left, right in merges]
    (directory / "vocab.bpe").write_text("\n".join(lines) + "\n", encoding="utf-8")
