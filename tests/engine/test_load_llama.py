"""lmscope.load on Llama-family Hugging Face folders: the same wrapper, trace, generation loop,
lens, ablation and saving as GPT-2, checked against transformers on the same weights."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_hf import save_random_llama
from lmscope.engine.loading import save_model
from lmscope.engine.sampling import SamplingParams

# family -> config overrides
CONFIGS = {
    "llama": ("llama", dict(tie_word_embeddings=False)),
    "qwen2": ("qwen2", dict(tie_word_embeddings=True)),
    "mistral": ("mistral", dict(num_key_value_heads=1, sliding_window=None)),
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def pair(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    family, overrides = CONFIGS[request.param]
    reference = save_random_llama(folder, family, **overrides)
    return lmscope.load(folder), reference


IDS = [5, 17, 3, 99, 42, 42, 8, 0, 64, 23]


def test_loads_as_a_transformer_with_declared_capabilities(pair):
    model, _ = pair
    caps = model.capabilities
    assert (caps.family, caps.kind, caps.trace, caps.attention) == ("llama", "transformer", 1, 1)
    info = model.info()
    assert info.family == "llama" and info.n_kv_head in (1, 2) and info.n_layer == 2


def test_logits_and_trace_equal_transformers(pair):
    model, reference = pair
    with torch.no_grad():
        expected = reference(torch.tensor([IDS])).logits[0]
    torch.testing.assert_close(model.logits(IDS), expected, atol=1e-4, rtol=0)
    trace = model.trace(IDS, keep_logits="all")
    torch.testing.assert_close(trace["logits"], expected, atol=1e-4, rtol=0)
    assert "blocks.1.attn.hook_rot_q" in trace and "hook_pos_embed" not in trace
    assert trace["blocks.0.attn.hook_pattern"].shape == (4, len(IDS), len(IDS))
    assert trace["blocks.0.attn.hook_result"].shape == (len(IDS), 4, 32)


@pytest.mark.slow
def test_greedy_generation_equals_transformers(pair):
    model, reference = pair
    ours = [t.id for t in model.generate(IDS, 12, SamplingParams(greedy=True))]
    seq = list(IDS)
    with torch.no_grad():  # transformers' full forward pass at every step: no cache involved
        for _ in range(12):
            seq.append(int(reference(torch.tensor([seq])).logits[0, -1].argmax()))
    assert ours == seq[len(IDS) :]


def test_lens_and_ablation_run_on_llama(pair):
    model, _ = pair
    lens = model.trace(IDS).logit_lens(k=3)
    final = lens.top_ids[-1] if hasattr(lens, "top_ids") else None
    assert final is not None
    ablated = model.trace(IDS, ablate=["L0H1", "mlp1"])
    plain = model.trace(IDS)
    assert not torch.equal(ablated.last_logits, plain.last_logits)
    assert torch.all(ablated["blocks.0.attn.hook_z"][:, 1] == 0)


def test_save_and_load_round_trip(pair, tmp_path):
    model, _ = pair
    folder = save_model(model.net, tmp_path / "copy", meta={"name": "copy"})
    again = lmscope.load(folder)
    assert again.name == "copy" and again.capabilities.family == "llama"
    torch.testing.assert_close(again.logits(IDS), model.logits(IDS), atol=0, rtol=0)


@pytest.mark.slow
@pytest.mark.parametrize("settings", [SamplingParams(greedy=True), SamplingParams(top_k=20)])
def test_runs_stepped_together_draw_the_tokens_they_draw_alone(pair, settings):
    """Three runs of different prompt lengths, each step computed by one model.step_many for
    all of them and handed over with provide(), draw exactly the tokens each draws alone."""
    model, _ = pair
    prompts = [IDS[:2], IDS[:5], IDS]
    kwargs = dict(seed=7, per_position=True, stop_at_eot=False)
    alone = [[t.id for t in model.generate(p, 6, settings, **kwargs)] for p in prompts]
    runs = [model.generate(list(p), 6, settings, **kwargs) for p in prompts]
    assert all(run.pending is None for run in runs)  # the first token reads the prompt
    drawn = [[next(run).id] for run in runs]
    while any(run.pending is not None for run in runs):
        waiting = [run for run in runs if run.pending is not None]
        states, tokens = zip(*(run.pending for run in waiting), strict=True)
        for run, (logits, state) in zip(
            waiting, model.step_many(list(states), list(tokens)), strict=True
        ):
            run.provide(logits, state)
            assert run.pending is None  # provided: nothing more to compute
        for run, ids in zip(runs, drawn, strict=True):
            ids.extend(t.id for t in [next(run, None)] if t is not None)
    assert drawn == alone
    assert all(next(run, None) is None for run in runs)
