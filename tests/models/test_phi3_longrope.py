"""Phi-3.5 and Phi-4-mini's RoPE against transformers' Phi3ForCausalLM: LongRoPE (a factor per
pair, short below the original context and long above it, and an attention factor on cos and
sin) and Phi-4-mini's partial rotary factor (the first 75% of each head's dims rotate), from a
Hugging Face folder and from a GGUF file laid out as llama.cpp's converter writes them.

The original context is 16 positions here (4,096 in the real models), so prompts on both sides
of it are a few tokens long; the context reaches 64."""

from __future__ import annotations

import copy
import io
import warnings
from argparse import Namespace
from pathlib import Path

import pytest
import torch
from rich.console import Console

import lmscope
from helpers_families import (
    assert_matches_transformers,
    assert_saved_folder_reloads,
    load_gguf_privately,
    random_ids,
    save_random,
    write_family_gguf,
)
from lmscope import i18n
from lmscope.commands import explain_render
from lmscope.commands.common import use_lang
from lmscope.errors import CheckpointError
from lmscope.explain import modern
from lmscope.explain.report import report
from lmscope.models.phi3 import Phi3Config

ORIGINAL = 16  # original_max_position_embeddings
LENGTHS = (12, ORIGINAL, ORIGINAL + 1, 40)  # shorter, at it (still short), just past, well past


def _factors(pairs: int, low: float, high: float, seed: int) -> list[float]:
    g = torch.Generator().manual_seed(seed)
    return (low + (high - low) * torch.rand(pairs, generator=g)).tolist()


def _make(folder, partial: float | None):
    """Phi-3.5's layout (LongRoPE, every dim rotating) or, with ``partial``, Phi-4-mini's."""
    pairs = int(8 * (partial or 1.0)) // 2  # head_dim 8
    rope = {
        "rope_type": "longrope",
        "short_factor": _factors(pairs, 1.0, 2.0, 1),
        "long_factor": _factors(pairs, 3.0, 9.0, 2),
    }
    extra = {} if partial is None else {"partial_rotary_factor": partial}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = save_random(
            folder, "phi3", original_max_position_embeddings=ORIGINAL, rope_scaling=rope, **extra
        )
    gguf = write_family_gguf(folder / "tiny-phi.gguf", hf, folder)
    return hf, lmscope.load(folder), load_gguf_privately(gguf)


@pytest.fixture(scope="module")
def phi35(tmp_path_factory):
    return _make(tmp_path_factory.mktemp("phi35"), None)


@pytest.fixture(scope="module")
def phi4(tmp_path_factory):
    return _make(tmp_path_factory.mktemp("phi4mini"), 0.75)


@pytest.mark.parametrize("which", ["phi35", "phi4"])
def test_folder_and_gguf_equal_transformers_on_both_sides_of_the_original_context(which, request):
    hf, folder, gguf = request.getfixturevalue(which)
    rope = hf.config.rope_parameters
    for model in (folder, gguf):
        config = model.net.config
        assert config.rotary_dims == (6 if which == "phi4" else 8)
        assert config.rope_scaling["short_factor"] == pytest.approx(rope["short_factor"])
        assert config.rope_scaling["long_factor"] == pytest.approx(rope["long_factor"])
        assert config.rope_scaling["original_max_position_embeddings"] == ORIGINAL
        assert model.net.rope_scale == pytest.approx(hf.model.rotary_emb.attention_scaling)
        assert config.sliding_window is None  # llama.cpp's 0 is no window
        for length in LENGTHS:
            assert_matches_transformers(hf, model.net, random_ids(hf.config.vocab_size, length))


def test_a_saved_folder_keeps_the_rope(phi4, tmp_path):
    """lmscope's own saved folder holds LongRoPE's factors and the partial rotary factor."""
    hf, model, _ = phi4
    assert_saved_folder_reloads(model.net, random_ids(hf.config.vocab_size, 20), tmp_path / "s")


def test_partial_rotary_without_longrope_equals_transformers(tmp_path):
    """A partial rotary factor with plain RoPE: the speeds are theta^(-2i/d) over the rotated
    dims d, not over the head's, as transformers computes them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = save_random(tmp_path, "phi3", partial_rotary_factor=0.5)
    model = lmscope.load(tmp_path)
    assert model.net.config.rotary_dims == 4 and model.net.config.rope_scaling is None
    assert_matches_transformers(hf, model.net, random_ids(hf.config.vocab_size, 30))


def test_the_long_factors_change_every_position(phi35):
    """Past the original context every position rotates with the long factors: the first 16
    positions of a 17-token prompt get other logits than the same 16 tokens alone (as in
    transformers), so the switch the comparisons above cross is real."""
    hf, model, _ = phi35
    ids = random_ids(hf.config.vocab_size, ORIGINAL + 1)
    with torch.no_grad():
        alone = model.net(ids[:, :ORIGINAL])[0]
        within = model.net(ids)[0][:, :ORIGINAL]
        theirs = hf(ids).logits[:, :ORIGINAL]
    assert (alone - within).abs().max() > 1e-2
    assert (within - theirs).abs().max() < 1e-4


def test_partial_rotary_rotates_the_first_dims_only(phi4):
    """Phi-4-mini's layout: hook_rot_q and hook_rot_k are hook_q and hook_k in their last 25% of
    dims, bit for bit, and rotated (and scaled) in the first 75%."""
    hf, model, _ = phi4
    rec = assert_matches_transformers(hf, model.net, random_ids(hf.config.vocab_size, 20))
    for which in "qk":
        before = rec.tensors[f"blocks.1.attn.hook_{which}"]
        after = rec.tensors[f"blocks.1.attn.hook_rot_{which}"]
        assert torch.equal(before[..., 6:], after[..., 6:])
        assert (before[..., 1:, :, :6] - after[..., 1:, :, :6]).abs().max() > 1e-2


def test_generation_across_the_original_context_equals_full_recompute(phi4):
    """Greedy generation through the KV cache from a 12-token prompt to 20 tokens: the step
    that passes the original context runs the sequence again (the cached keys were rotated with
    the short factors), so every step's logits are those of one pass over the whole sequence,
    and the tokens are transformers' generate()'s (which also recomputes there). Two runs of
    different lengths stepping together (step_many) give the same logits."""
    hf, model, _ = phi4
    prompt = random_ids(hf.config.vocab_size, 12, batch=1)[0].tolist()
    logits, state = model.start(prompt)
    ids = list(prompt)
    with torch.no_grad():
        while len(ids) < 20:
            whole = model.net(torch.tensor([ids]))[0][0, -1]
            assert (logits - whole).abs().max() < 1e-4, len(ids)
            ids.append(int(logits.argmax()))
            logits, state = model.step(state, ids[-1])
        start = torch.tensor([prompt])
        theirs = hf.generate(
            start,
            attention_mask=torch.ones_like(start),  # no id is padding
            max_new_tokens=8,
            do_sample=False,
            pad_token_id=0,
        )
    assert ids == theirs[0].tolist()
    # two runs, one crossing the boundary at this step and one already past it
    runs = [model.start(ids[:ORIGINAL])[1], model.start(ids[: ORIGINAL + 3])[1]]
    tokens = [ids[ORIGINAL], ids[ORIGINAL + 3]]
    together = model.step_many(runs, tokens)
    with torch.no_grad():
        for (got, _), n in zip(together, (ORIGINAL + 1, ORIGINAL + 4), strict=True):
            assert (got - model.net(torch.tensor([ids[:n]]))[0][0, -1]).abs().max() < 1e-4


def test_the_rope_step_says_what_rotates(phi4):
    """The explainer's RoPE step on a prompt past the original context: the speeds are the
    long factors' (one per rotated pair), the rotation is the model's own, and q·k still
    follows the distance alone (the shifted positions keep the prompt's factors). All 20
    steps build on this layout."""
    hf, _, model = phi4
    ids = random_ids(hf.config.vocab_size, 20, batch=1)[0].tolist()
    trace = model.trace(ids)
    step = modern.rope_view(model, trace, layer=1, head=2, position=18)
    f = step.frequencies
    assert (f.d_head, f.rotary_dims, len(f.inv_freq)) == (8, 6, 3)
    assert f.factors == "long" and f.attention_factor == pytest.approx(model.net.rope_scale)
    assert f.inv_freq == pytest.approx(model.net.inv_freq_long.tolist(), rel=1e-4)
    assert step.rotation_max_error < 1e-5
    assert step.check.relative_difference < 1e-4
    short = modern.rope_view(model, model.trace(ids[:12]), layer=1, head=2, position=10)
    assert short.frequencies.factors == "short"
    assert [s.number for s in report(model, ids, layer=1).steps] == list(range(1, 21))
    # the CLI says it in both languages: which dims rotate, which factors, the score's growth
    a2 = f"{model.net.rope_scale**2:.4g}"
    said = {}
    for lang in ("en", "zh"):
        with i18n.using(lang):
            use_lang(Namespace(lang=lang))
            for name, data in (("long", step), ("short", short)):
                buffer = io.StringIO()
                Console(width=200, file=buffer).print(explain_render.render(data))
                said[lang, name] = buffer.getvalue()
    assert "first 6 of each head's 8 dims rotate" in said["en", "long"]
    assert "20 positions are more than the 16" in said["en", "long"] and a2 in said["en", "long"]
    assert "12 positions fit in the 16" in said["en", "short"]
    assert "前 6 维旋转" in said["zh", "long"] and "长因子" in said["zh", "long"]
    assert "短因子" in said["zh", "short"]


# config.json as Microsoft ships Phi-3.5-mini-instruct and Phi-4-mini-instruct: "type", and the
# original context and partial rotary factor at the top level (the factors here are made up: 48
# of them, one per rotated pair in both models)
PHI35_MINI = dict(num_attention_heads=32, num_key_value_heads=32)  # head_dim 96, all rotate
PHI4_MINI = dict(num_attention_heads=24, num_key_value_heads=8, partial_rotary_factor=0.75)


@pytest.mark.parametrize("shape", [PHI35_MINI, PHI4_MINI], ids=["phi3.5-mini", "phi4-mini"])
def test_the_real_models_rope_equals_transformers_bit_for_bit(shape):
    """At the real models' sizes (context 131,072, original 4,096) lmscope's cos and sin are
    transformers' Phi3RotaryEmbedding's, to the bit, up to and past the original context."""
    from transformers import Phi3Config as TransformersPhi3Config
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    from lmscope.models.llama import rope_cos_sin, rope_inv_freq

    rope = {
        "type": "longrope",
        "short_factor": torch.linspace(1.0, 3.0, 48).tolist(),
        "long_factor": torch.linspace(1.0, 40.0, 48).tolist(),
    }
    hf = dict(
        vocab_size=32064,
        hidden_size=3072,
        intermediate_size=8192,
        num_hidden_layers=32,
        max_position_embeddings=131072,
        original_max_position_embeddings=4096,
        rope_theta=10000.0,
        rope_scaling=rope,
        **shape,
    )
    ours = Phi3Config.from_hf({"model_type": "phi3", **hf})
    assert ours.rotary_dims == 96
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = Phi3RotaryEmbedding(TransformersPhi3Config(**hf))
    scale = ours.rope_scaling["attention_factor"]
    assert scale == theirs.attention_scaling == pytest.approx(1.190238, abs=1e-6)
    for length in (4096, 4097, 6000):
        positions = torch.arange(length)
        cos, sin = theirs(torch.zeros(1), positions[None])
        inv_freq = rope_inv_freq(ours, long=length > 4096)
        our_cos, our_sin = rope_cos_sin(positions, inv_freq, scale)
        assert torch.equal(our_cos[:, 0], cos[0]) and torch.equal(our_sin[:, 0], sin[0])


def _lists(pairs: int) -> dict:
    """LongRoPE's two factor lists for ``pairs`` rotated pairs."""
    return {
        "short_factor": _factors(pairs, 1.0, 2.0, 3),
        "long_factor": _factors(pairs, 2.0, 9.0, 4),
    }


SPELLINGS = {  # head_dim 16: 8 pairs, 6 of them rotating at 0.75, 4 at 0.5
    "top-level fields": dict(
        rope_scaling={"type": "longrope", **_lists(6)},
        original_max_position_embeddings=16,
        partial_rotary_factor=0.75,
    ),
    "transformers 5": dict(
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 500.0,
            "partial_rotary_factor": 0.5,
            "original_max_position_embeddings": 16,
            **_lists(4),
        },
        original_max_position_embeddings=16,
    ),
    # transformers' Phi-3 takes the top-level original context (4,096 when absent) over this
    "original in the rope dict only": dict(
        rope_scaling={"type": "longrope", "original_max_position_embeddings": 8, **_lists(8)}
    ),
    "su, an explicit factor": dict(rope_scaling={"type": "su", "factor": 3.0, **_lists(8)}),
    "attention factor given": dict(
        rope_scaling={"rope_type": "longrope", "attention_factor": 1.5, **_lists(8)}
    ),
}


@pytest.mark.parametrize("spelling", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_config_json_is_read_as_transformers_reads_it(spelling):
    """Each way a config.json spells Phi-3's RoPE gives transformers' rotated dims, theta,
    original context, factors and attention factor."""
    from transformers import Phi3Config as TransformersPhi3Config
    from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding

    hf = dict(
        vocab_size=10,
        hidden_size=64,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=4,  # head_dim 16
        max_position_embeddings=1024,
        **spelling,
    )
    ours = Phi3Config.from_hf({"model_type": "phi3", **copy.deepcopy(hf)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = TransformersPhi3Config(**hf)
        embedding = Phi3RotaryEmbedding(theirs)
    rope = theirs.rope_parameters
    assert ours.rotary_dims == int(16 * rope["partial_rotary_factor"])
    assert ours.rope_theta == rope["rope_theta"]
    s = ours.rope_scaling
    assert s["original_max_position_embeddings"] == rope["original_max_position_embeddings"]
    assert s["attention_factor"] == pytest.approx(embedding.attention_scaling, rel=1e-12)
    assert (s["short_factor"], s["long_factor"]) == (rope["short_factor"], rope["long_factor"])


def test_a_gguf_file_with_one_factor_list_is_refused_in_one_line(phi35, tmp_path):
    """llama.cpp writes LongRoPE's two lists together; a file with only the long one names the
    tensor it lacks."""
    from types import SimpleNamespace

    from lmscope.formats.gguf import read_gguf

    hf, _, model = phi35
    config = copy.deepcopy(hf.config)
    del config.rope_parameters["short_factor"]
    folder = Path(model.source).parent  # the GGUF file beside the saved weights
    path = write_family_gguf(tmp_path / "half.gguf", SimpleNamespace(config=config), folder)
    with pytest.raises(CheckpointError) as err:
        read_gguf(path)
    assert "rope_factors_short.weight" in str(err.value) and "\n" not in str(err.value)


def test_unsupported_rope_is_one_line():
    """RoPE scalings transformers' Phi-3 does not run, factor lists of the wrong length, and a
    partial rotary factor that leaves an odd number of dims are refused in one line."""
    hf = dict(
        model_type="phi3",
        vocab_size=10,
        hidden_size=16,
        intermediate_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        original_max_position_embeddings=4,
    )
    longrope = {"rope_type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4}
    assert Phi3Config.from_hf({**hf, "rope_scaling": longrope}).rotary_dims == 8
    for changes in (
        {"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
        {"rope_scaling": {**longrope, "long_factor": [2.0] * 3}},
        {"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0] * 4}},
        {"partial_rotary_factor": 0.7},  # 5.6 of 8 dims: 5, odd
    ):
        with pytest.raises(CheckpointError) as err:
            Phi3Config.from_hf({**hf, **changes})
        assert "\n" not in str(err.value)
