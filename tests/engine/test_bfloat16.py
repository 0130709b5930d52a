"""bfloat16 against float32 on random GPT-2 and Llama-family models: every probe of a trace is
finite and within a stated tolerance of float32, and greedy generation picks float32's tokens
wherever float32's margin between its top two tokens exceeds what bfloat16 can move.

The tolerance: bfloat16 keeps 8 significant bits (a rounding of at most 2^-9 relative per
operation). Through these models' layers every probe stays within ``PROBE_TOL`` of the largest
float32 value of that probe (measured worst: about 3%), and every logit within ``LOGIT_TOL``
of the largest float32 logit (measured worst: about 2%)."""

from __future__ import annotations

import pytest
import torch

import lmscope
from helpers_hf import save_random_hf_gpt2, save_random_llama
from lmscope.engine.sampling import SamplingParams

PROBE_TOL = 0.06  # |bf16 - f32| <= PROBE_TOL * max |f32| for each probe
LOGIT_TOL = 0.03  # |bf16 - f32| <= LOGIT_TOL * max |f32 logit|: the bf16 error bound
FAMILIES = ["gpt2", "llama", "mistral", "qwen2"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("bf16")
    save_random_hf_gpt2(root / "gpt2", n_positions=64, vocab_size=101)
    for family in FAMILIES[1:]:
        extra = {"sliding_window": 6} if family == "mistral" else {}
        save_random_llama(root / family, family, **extra)
    return root


def pair(folders, family):
    return lmscope.load(folders / family), lmscope.load(folders / family, dtype="bfloat16")


def prompt(model, n: int, seed: int) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (n,), generator=g).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_bf16_trace_is_finite_and_close_to_float32(folders, family):
    full, half = pair(folders, family)
    assert half.net.wte.weight.dtype == torch.bfloat16
    ids = prompt(full, 40, seed=1)
    names = ["*", "blocks.*.attn.hook_pattern", "blocks.*.attn.hook_attn_scores_raw"]
    ref, ours = full.trace(ids, names=names), half.trace(ids, names=names)
    assert ours.names() == ref.names()
    for name in ref.names():
        a, b = ref[name].float(), ours[name].float()
        if name.endswith("hook_attn_scores"):  # masked: -inf above the diagonal, by definition
            assert torch.equal(torch.isneginf(a), torch.isneginf(b)), name
            a, b = a.nan_to_num(neginf=0.0), b.nan_to_num(neginf=0.0)
        assert torch.isfinite(b).all(), name
        assert (a - b).abs().max() <= PROBE_TOL * a.abs().max(), name
    bound = LOGIT_TOL * ref.last_logits.abs().max()
    assert (ref.last_logits - ours.last_logits).abs().max() <= bound
    assert (full.logits(ids) - half.logits(ids)).abs().max() <= LOGIT_TOL * full.logits(
        ids
    ).abs().max()
    # the recorded pattern is the one the fused attention applied: pattern @ v gives z
    layer = full.config.n_layer - 1
    v = ours[f"blocks.{layer}.attn.hook_v"].float().transpose(0, 1)
    v = v.repeat_interleave(full.config.n_head // v.shape[0], dim=0)
    z = (ours[f"blocks.{layer}.attn.hook_pattern"] @ v).transpose(0, 1)
    z_recorded = ours[f"blocks.{layer}.attn.hook_z"].float()
    assert (z - z_recorded).abs().max() <= 0.01 * z_recorded.abs().max()


def greedy_with_margins(model, ids: list[int], n: int):
    """Greedy tokens, and at each step the gap between the top two logits and the bound."""
    tokens, margins, bounds = [], [], []
    logits, state = model.start(ids)
    for _ in range(n):
        top = logits.topk(2).values
        margins.append(float(top[0] - top[1]))
        bounds.append(LOGIT_TOL * float(logits.abs().max()))
        tokens.append(int(logits.argmax()))
        logits, state = model.step(state, tokens[-1])
    return tokens, margins, bounds


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_bf16_greedy_equals_float32_where_the_margins_allow(folders, family):
    """Each step is compared while float32's top-2 margin exceeds twice the bf16 error bound
    (then no logit moving by the bound can swap the top token); from the first step where it
    does not, the two may part, and what follows depends on a different text."""
    full, half = pair(folders, family)
    compared = 0
    for seed in range(12):
        ids = prompt(full, 6, seed)
        tokens, margins, bounds = greedy_with_margins(full, ids, 16)
        greedy = SamplingParams(greedy=True)
        ours = [t.id for t in half.generate(ids, 16, greedy, stop_at_eot=False)]
        for step, (margin, bound) in enumerate(zip(margins, bounds, strict=True)):
            if margin <= 2 * bound:
                break
            assert ours[step] == tokens[step], (seed, step, margin, bound)
            compared += 1
    assert compared >= 6, f"only {compared} steps had margins wide enough to compare"
