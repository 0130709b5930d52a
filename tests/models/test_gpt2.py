"""The GPT-2 implementation against Hugging Face transformers on the same random weights."""

from __future__ import annotations

import pytest
import torch

from lmscope.engine.loading import load_hf_gpt2
from lmscope.errors import InvalidInputError
from lmscope.models.gpt2 import GPT, GPTConfig, gpt2_state_to_hf

TOL = 1e-4


def hf_logits(hf, ids):
    with torch.no_grad():
        return hf(torch.as_tensor(ids)).logits


@pytest.mark.slow
def test_logits_match_transformers(tiny_hf_dir, tiny_hf_reference):
    model = load_hf_gpt2(tiny_hf_dir)
    ids = torch.randint(0, 50257, (3, 50), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        fast = model(ids)[0]
        probed = model(ids, hook=lambda name, t: t)[0]
    ref = hf_logits(tiny_hf_reference, ids)
    assert (fast - ref).abs().max() < TOL
    assert (probed - ref).abs().max() < TOL


@pytest.mark.parametrize("activation", ["gelu_new", "gelu", "relu"])
def test_config_variants_match(make_hf_gpt2, activation):
    d = make_hf_gpt2(
        vocab_size=300,
        n_embd=48,
        n_head=3,
        n_layer=3,
        n_inner=100,
        activation_function=activation,
        layer_norm_epsilon=1e-3,
    )
    from transformers import GPT2LMHeadModel

    hf = GPT2LMHeadModel.from_pretrained(d).eval()
    model = load_hf_gpt2(d)
    ids = torch.randint(0, 300, (1, 100))
    assert (model(ids)[0] - hf_logits(hf, ids)).abs().max() < TOL


@pytest.mark.slow
def test_gpt2_small_full_shape_matches(make_hf_gpt2):
    """GPT-2 small's exact shape (124M parameters), random weights at GPT-2's own init scale."""
    from transformers import GPT2LMHeadModel

    d = make_hf_gpt2(n_positions=1024, n_embd=768, n_layer=12, n_head=12, initializer_range=0.02)
    model = load_hf_gpt2(d)
    assert model.num_params() == 124_439_808
    hf = GPT2LMHeadModel.from_pretrained(d).eval()
    ids = torch.randint(0, 50257, (1, 64))
    ref = hf_logits(hf, ids)
    with torch.no_grad():
        assert (model(ids)[0] - ref).abs().max() < TOL
        assert (model(ids, hook=lambda n, t: t)[0] - ref).abs().max() < TOL
    # A full trace of a whole 1024-token context stays within a few GB.
    import lmscope

    trace = lmscope.load(d).trace(list(range(1024)))
    assert len(trace.names()) > 12 * 20 and trace.nbytes() < 2.2e9


def test_kv_cache_gives_same_logits(tiny_model):
    gpt = tiny_model.gpt
    ids = torch.randint(0, 50257, (1, 40), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = gpt(ids)[0]
        cache = gpt.new_cache()
        parts = [gpt(ids[:, :25], cache=cache)[0]]  # a prompt chunk, then one token at a time
        parts += [gpt(ids[:, t : t + 1], cache=cache)[0] for t in range(25, 32)]
        parts.append(gpt(ids[:, 32:], cache=cache)[0])  # a multi-token chunk after the cache
        probed_cache = gpt.new_cache()
        probed = [
            gpt(ids[:, :30], cache=probed_cache, hook=lambda n, t: t)[0],
            gpt(ids[:, 30:], cache=probed_cache, hook=lambda n, t: t)[0],
        ]
    assert cache.length == 40
    # float32 sums in another order: a few units in the last place of logits up to ~10
    tol = 1e-6 * full.abs().max()
    assert (torch.cat(parts, dim=1) - full).abs().max() < 10 * tol
    assert (torch.cat(probed, dim=1) - full).abs().max() < 10 * tol


def test_last_only_equals_last_row(tiny_model):
    ids = torch.randint(0, 50257, (2, 17), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        full = tiny_model.gpt(ids)[0]
        last = tiny_model.gpt(ids, last_only=True)[0]
    assert last.shape == (2, 1, 50257)
    # one row through the unembedding vs the same row inside a bigger matmul: float32 rounding
    assert torch.allclose(last[:, 0], full[:, -1], atol=1e-5)


def test_loss_is_cross_entropy(tiny_model, tiny_hf_reference):
    ids = torch.randint(0, 50257, (2, 20))
    with torch.no_grad():
        _, loss = tiny_model.gpt(ids[:, :-1], ids[:, 1:])
        ref = tiny_hf_reference(ids, labels=ids).loss
    assert abs(loss.item() - ref.item()) < 1e-4


def test_export_to_hf_layout_round_trips(tiny_hf_dir, tiny_hf_reference):
    model = load_hf_gpt2(tiny_hf_dir)
    exported = gpt2_state_to_hf(model)
    ref_state = tiny_hf_reference.state_dict()
    for key, tensor in exported.items():
        assert torch.equal(tensor, ref_state[key]), key


def test_context_overflow_is_a_clear_error(tiny_model):
    ids = torch.zeros(1, 129, dtype=torch.long)
    with pytest.raises(InvalidInputError, match="context of 128"):
        tiny_model.gpt(ids)


@pytest.mark.parametrize(
    "bad", [dict(n_embd=10, n_head=3), dict(n_layer=0), dict(activation="swish"), dict(dropout=1.0)]
)
def test_bad_config_is_rejected(bad):
    with pytest.raises(InvalidInputError):
        GPTConfig(**bad)


@pytest.mark.parametrize("eps", [-1, 0, 0.0, -1e-9, float("nan"), float("inf"), "x", None])
def test_a_layer_norm_eps_that_is_not_a_positive_number_is_refused(eps):
    # A non-positive eps makes LayerNorm divide by zero or a negative: NaN logits later on.
    with pytest.raises(InvalidInputError, match="layer_norm_eps") as err:
        GPTConfig(vocab_size=10, n_ctx=8, n_embd=8, n_layer=1, n_head=2, layer_norm_eps=eps)
    assert "\n" not in str(err.value)


def test_dropout_only_in_training():
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=50, n_ctx=16, n_embd=32, n_layer=1, n_head=2, dropout=0.5))
    ids = torch.randint(0, 50, (1, 16))
    model.eval()
    a, b = model(ids)[0], model(ids)[0]
    assert torch.equal(a, b)
    model.train()
    c, d = model(ids)[0], model(ids)[0]
    assert not torch.equal(c, d)
