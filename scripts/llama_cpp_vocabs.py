"""llama.cpp's own tokenizer test data: real vocabularies and the ids llama.cpp gives.

llama.cpp keeps, for its tokenizer tests, vocabulary-only GGUF files of real models (Llama 2's
SentencePiece vocabulary, Llama 3's, Qwen2's, GPT-2's, Phi-3's) with test texts (``.inp``)
and the ids llama.cpp tokenizes them to (``.out``). The llama-cpp-python source distribution
on the package registry carries them, so they come without a hub:

    python scripts/llama_cpp_vocabs.py fetch DIR   # the sdist's test files, extracted to DIR
    python scripts/llama_cpp_vocabs.py check DIR   # lmscope's ids against llama.cpp's

``tests/ground/test_tokenizers_llama_cpp.py`` runs the check when ``LMSCOPE_LLAMA_CPP_VOCABS``
names such a folder (``.ci/run`` fetches it). The work is ``lmscope.testing.llama_cpp``, which
imports only the standard library, so ``fetch`` runs before the project is installed: this
command line then loads that one file from this checkout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _vocabs():
    """``lmscope.testing.llama_cpp``; before the project is installed, its file in this
    checkout, loaded on its own (it imports only the standard library)."""
    try:
        from lmscope.testing import llama_cpp
    except ImportError:
        import importlib.util

        path = Path(__file__).resolve().parents[1] / "src/lmscope/testing/llama_cpp.py"
        spec = importlib.util.spec_from_file_location("llama_cpp_vocabs_data", path)
        llama_cpp = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(llama_cpp)
    return llama_cpp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("fetch", "check"))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    vocabs = _vocabs()
    if args.action == "fetch":
        print(vocabs.fetch(args.folder))
        return 0
    return vocabs.check(args.folder)


if __name__ == "__main__":
    sys.exit(main())
