"""The Llama-family implementation (Llama, Mistral, Qwen2, SmolLM) against Hugging Face
transformers on the same random weights, and the properties of its probes."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import pytest
import torch

from helpers_hf import save_random_llama as make_hf
from lmscope.errors import CheckpointError, InvalidInputError, LmscopeError
from lmscope.formats.layout import read_json
from lmscope.formats.weights import read_tensors
from lmscope.models.llama import (
    Llama,
    LlamaConfig,
    llama_state_from_hf,
    llama_state_to_hf,
    rope_inv_freq,
)
from lmscope.models.state import build_from_hf

TOL = 1e-4

# name -> (transformers family, config overrides)
CASES = {
    "llama_gqa": ("llama", dict(tie_word_embeddings=False)),
    "llama3_rope": (
        "llama",
        dict(
            hidden_size=64,
            num_attention_heads=4,
            num_key_value_heads=1,
            rope_theta=10000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 32,
            },
        ),
    ),
    "llama_biases": ("llama", dict(attention_bias=True, mlp_bias=True, num_key_value_heads=4)),
    "mistral_window": ("mistral", dict(sliding_window=7)),
    "qwen2_tied": ("qwen2", dict(tie_word_embeddings=True)),
    "smollm": (
        "llama",
        dict(
            hidden_size=48,
            num_attention_heads=6,
            num_key_value_heads=2,
            intermediate_size=64,
            rope_theta=100000.0,
            tie_word_embeddings=True,
            rms_norm_eps=1e-5,
        ),
    ),
    "odd_sizes": (
        "qwen2",
        dict(
            vocab_size=97,
            hidden_size=36,
            num_attention_heads=3,
            num_key_value_heads=1,
            head_dim=10,
            intermediate_size=50,
            num_hidden_layers=3,
            max_position_embeddings=50,
        ),
    ),
}


def load_ours(directory: Path) -> Llama:
    return build_from_hf(
        Llama,
        read_json(directory / "config.json"),
        read_tensors(directory / "model.safetensors"),
        str(directory),
    )


@pytest.fixture(scope="module", params=list(CASES))
def pair(request, tmp_path_factory):
    family, overrides = CASES[request.param]
    directory = tmp_path_factory.mktemp(request.param)
    hf = make_hf(directory, family, **overrides)
    return request.param, hf, load_ours(directory)


@pytest.fixture(scope="module")
def llama_pair(tmp_path_factory):
    directory = tmp_path_factory.mktemp("llama")
    hf = make_hf(directory, "llama", seed=1)
    return hf, load_ours(directory)


@pytest.fixture(scope="module")
def mistral_pair(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mistral")
    hf = make_hf(directory, "mistral", seed=2, sliding_window=5)
    return hf, load_ours(directory)


class Recorder:
    """Keeps every probe; ``wants`` says yes so the optional hook_result runs too."""

    def __init__(self):
        self.tensors: dict[str, torch.Tensor] = {}

    def wants(self, name: str) -> bool:
        return True

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        self.tensors[name] = tensor
        return tensor


def ids_for(model: Llama, batch: int, length: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (batch, length), generator=g)


# ---------------------------------------------------------------------------------------------
# Against transformers


def test_logits_and_residual_stream_match_transformers(pair):
    name, hf, model = pair
    ids = ids_for(model, 2, min(40, model.config.n_ctx))
    with torch.no_grad():
        out = hf(ids, output_hidden_states=True)
        fast = model(ids)[0]
        rec = Recorder()
        probed = model(ids, hook=rec)[0]
    assert out.logits.abs().max() > 1.0, "weights too small for the comparison to mean much"
    assert (fast - out.logits).abs().max() < TOL, name
    assert (probed - out.logits).abs().max() < TOL, name
    hidden = out.hidden_states  # embeddings, after each layer but the last, final norm's output
    n = model.config.n_layer
    assert len(hidden) == n + 1
    assert (rec.tensors["hook_embed"] - hidden[0]).abs().max() < TOL
    for layer in range(n - 1):
        resid = rec.tensors[f"blocks.{layer}.hook_resid_post"]
        assert (resid - hidden[layer + 1]).abs().max() < TOL, (name, layer)
    assert (rec.tensors["ln_final.hook_out"] - hidden[n]).abs().max() < TOL
    # the last layer's residual, through HF's own final norm
    last = hf.model.norm(rec.tensors[f"blocks.{n - 1}.hook_resid_post"])
    assert (last - hidden[n]).abs().max() < TOL


def test_config_reads_every_family(pair):
    name, hf, model = pair
    c, h = model.config, hf.config
    assert (c.n_head, c.n_kv_head, c.n_layer) == (
        h.num_attention_heads,
        h.num_key_value_heads,
        h.num_hidden_layers,
    )
    assert c.d_head == (getattr(h, "head_dim", None) or h.hidden_size // h.num_attention_heads)
    assert c.n_kv_groups == c.n_head // c.n_kv_head
    assert (model.lm_head is None) == c.tie_word_embeddings
    assert model.num_params() == hf.num_parameters()
    assert LlamaConfig.from_dict(c.to_dict()) == c
    if name == "mistral_window":
        assert c.sliding_window == 7
    if name.startswith("qwen2") or name == "odd_sizes":
        assert c.attention_bias and not c.attention_out_bias
        assert model.h[0].attn.o_proj.bias is None


def test_inv_freq_matches_transformers(pair):
    _, hf, model = pair
    ref = hf.model.rotary_emb.inv_freq.float()
    assert torch.allclose(model.inv_freq, ref, rtol=1e-6, atol=0)
    assert model.inv_freq.shape == (model.config.d_head // 2,)


def test_llama3_scaling_changes_only_slow_pairs():
    plain = LlamaConfig(n_embd=64, n_head=4, n_layer=1, n_inner=8, vocab_size=10)
    scaled = LlamaConfig.from_dict(
        {**plain.to_dict(), "rope_scaling": CASES["llama3_rope"][1]["rope_scaling"]}
    )
    a, b = rope_inv_freq(plain), rope_inv_freq(scaled)
    # wavelengths (positions per turn) 6.3, 19.9, 62.8, ...; the cut-offs are 32/4 and 32/1
    assert a[0] == b[0]  # faster than the short cut-off: untouched
    assert a[1] / 8 < b[1] < a[1]  # in between: blended
    assert torch.allclose(b[2:], a[2:] / 8)  # slower than the long cut-off: divided by factor
    assert ((b <= a) & (b >= a / 8)).all()


@pytest.mark.slow
def test_greedy_generation_matches_transformers(llama_pair, mistral_pair):
    for hf, model in (llama_pair, mistral_pair):
        prompt = ids_for(model, 1, 6, seed=3)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = hf.generate(
                prompt,
                max_new_tokens=20,
                do_sample=False,
                pad_token_id=0,
                attention_mask=torch.ones_like(prompt),
            )[0].tolist()
        cache = model.new_cache()
        out = prompt[0].tolist()
        step = prompt
        with torch.no_grad():
            for _ in range(20):
                logits = model(step, cache=cache, last_only=True)[0]
                step = logits[:, -1].argmax(-1, keepdim=True)
                out.append(step.item())
        assert out == ref
        assert cache.length == len(out) - 1


def spy_on_decode_steps(monkeypatch) -> list[int]:
    """Counts the calls of Llama's one-token decode step (so a test knows it ran)."""
    calls: list[int] = []
    lean = Llama.decode_step

    def counted(self, idx, cache):
        calls.append(idx.shape[0])
        return lean(self, idx, cache)

    monkeypatch.setattr(Llama, "decode_step", counted)
    return calls


def stored_back_to_back(net: torch.nn.Module) -> None:
    """Every parameter moved into one buffer, one after another in registration order (as
    ``pack_weights`` leaves a loaded model's, without its alignment): q, k, v and gate, up
    can then be read as one matrix each."""
    params = list(net.parameters())
    buffer = torch.empty(sum(p.numel() for p in params))
    start = 0
    with torch.no_grad():
        for p in params:
            view = buffer[start : start + p.numel()].view(p.shape)
            view.copy_(p.data)
            p.data = view
            start += p.numel()


@pytest.mark.parametrize("joined", [False, True], ids=["apart", "back to back"])
def test_generation_steps_match_transformers(pair, monkeypatch, joined):
    """Each cached one-token step (the lean decode path) gives transformers' logits at that
    position: biases, a sliding window shorter than the sequence, Llama-3 RoPE, odd sizes.
    With the weights back to back, as a loaded model keeps them, q, k, v (and gate, up) are
    read as one product each."""
    name, hf, model = pair
    if joined:
        model = copy.deepcopy(model)
        stored_back_to_back(model)
    calls = spy_on_decode_steps(monkeypatch)
    length = min(24, model.config.n_ctx)
    ids = ids_for(model, 2, length, seed=6)
    with torch.no_grad():
        ref = hf(ids).logits
        cache = model.new_cache()
        model(ids[:, :4], cache=cache)
        for t in range(4, length):
            step = model(ids[:, t : t + 1], cache=cache, last_only=True)[0]
            assert (step[:, 0] - ref[:, t]).abs().max() < TOL, (name, t)
    assert calls == [2] * (length - 4)
    if joined and model._one_row_shortcut_fits:
        # a bias sits between two weights in registration order (q's weight, q's bias, k's
        # weight, ...): then each projection is its own product
        plan, biased = model.step_plan()[0], model.h[0].attn.q_proj.bias is not None
        assert plan.qkv.__name__ == ("one_each" if biased else "product"), name
        assert plan.gate_up.__name__ == ("one_each" if model.config.mlp_bias else "product")


@pytest.mark.parametrize("which", ["h.0.ln_2.weight", "h.1.attn.k_proj.weight"])
def test_a_generation_step_sees_changed_weights(llama_pair, which):
    """The lean step's weights and gains are gathered once (``step_plan``): an edit in place,
    as an ablation makes, is what the next step reads."""
    _, model = llama_pair
    ids = ids_for(model, 1, 8, seed=9)
    weight = model.get_parameter(which)

    def step() -> torch.Tensor:
        cache = model.new_cache()
        model(ids[:, :-1], cache=cache)
        return model(ids[:, -1:], cache=cache, last_only=True)[0][0, 0]

    with torch.no_grad():
        before = step()
        weight.mul_(-2.0)
        try:
            assert (step() - model(ids)[0][0, -1]).abs().max() < TOL
            assert (step() - before).abs().max() > 1e-3
        finally:
            weight.div_(-2.0)
        assert (step() - before).abs().max() < 1e-6


def decode_errors(model, ids, step, reference) -> list[float]:
    """Each one-token step's largest distance from the reference logits at its position."""
    cache = model.new_cache()
    model(ids[:, :3], cache=cache)
    return [
        (step(model, ids[:, t : t + 1], cache)[0, 0].float() - reference[t]).abs().max().item()
        for t in range(3, ids.shape[1])
    ]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_decode_step_is_the_general_path_in_fewer_operations(pair, dtype):
    """The lean step against DecoderLM's general one, both measured against the float32 full
    forward pass. In bfloat16 the two round differently (a fused multiply-add in the rotation),
    so the lean step is held to the general path's own distance from float32, not to it."""
    from lmscope.models.common import DecoderLM

    name, _, model = pair
    ids = ids_for(model, 1, min(20, model.config.n_ctx), seed=7)
    try:
        with torch.no_grad():
            reference = model(ids)[0][0]
            model.to(dtype)
            lean = decode_errors(model, ids, Llama.decode_step, reference)
            general = decode_errors(model, ids, DecoderLM.decode_step, reference)
    finally:
        model.float()
    if dtype == torch.float32:
        assert max(lean) < TOL and max(general) < TOL, name
    else:
        assert 0 < max(general) < 0.1 * reference.abs().max(), name  # bfloat16 does round
        assert max(lean) <= 2 * max(general), name


@pytest.mark.slow
def test_hf_export_round_trips(pair, tmp_path):
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM

    name, hf, model = pair
    (tmp_path / "config.json").write_text(json.dumps(model.config.to_hf()))
    save_file(llama_state_to_hf(model), str(tmp_path / "model.safetensors"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    ids = ids_for(model, 1, 30)
    with torch.no_grad():
        assert (back(ids).logits - model(ids)[0]).abs().max() < TOL, name
    assert LlamaConfig.from_hf(model.config.to_hf()) == model.config
    # and through our own reader once more
    assert torch.equal(load_ours(tmp_path)(ids)[0], model(ids)[0])


def test_loss_matches_transformers(llama_pair):
    hf, model = llama_pair
    ids = ids_for(model, 2, 30)
    targets = torch.cat([ids[:, 1:], torch.full((2, 1), -1)], dim=1)
    with torch.no_grad():
        ref = hf(ids, labels=ids).loss
        ours = model(ids, targets)[1]
    assert abs(ours.item() - ref.item()) < TOL


# ---------------------------------------------------------------------------------------------
# The model's own consistency


@pytest.mark.parametrize("which", ["llama", "mistral"])
def test_kv_cache_gives_same_logits(which, llama_pair, mistral_pair):
    model = (llama_pair if which == "llama" else mistral_pair)[1]
    ids = ids_for(model, 2, 30, seed=4)
    with torch.no_grad():
        full = model(ids)[0]
        for hook in (None, Recorder()):
            cache = model.new_cache()
            parts = [model(ids[:, :12], cache=cache, hook=hook)[0]]  # a prompt chunk
            parts += [model(ids[:, t : t + 1], cache=cache, hook=hook)[0] for t in range(12, 20)]
            parts.append(model(ids[:, 20:], cache=cache, hook=hook)[0])  # a chunk after the cache
            assert (torch.cat(parts, dim=1) - full).abs().max() < TOL
            # the cache holds the n_kv_head keys: the real GQA memory
            assert cache.keys[0].shape == (2, model.config.n_kv_head, 30, model.config.d_head)


def test_probes_shapes_and_fast_path(llama_pair):
    _, model = llama_pair
    c = model.config
    ids = ids_for(model, 1, 9)
    rec = Recorder()
    with torch.no_grad():
        probed = model(ids, hook=rec)[0]
        fast = model(ids)[0]
    assert (probed - fast).abs().max() < TOL
    t = rec.tensors
    T, H, K, D = 9, c.n_head, c.n_kv_head, c.d_head
    a = "blocks.1.attn"
    assert t[f"{a}.hook_q"].shape == t[f"{a}.hook_rot_q"].shape == (1, T, H, D)
    for probe in ("hook_k", "hook_v", "hook_rot_k"):
        assert t[f"{a}.{probe}"].shape == (1, T, K, D)
    for probe in ("hook_attn_scores_raw", "hook_attn_scores_scaled", "hook_pattern"):
        assert t[f"{a}.{probe}"].shape == (1, H, T, T)
    assert t[f"{a}.hook_z"].shape == (1, T, H, D)
    assert t[f"{a}.hook_result"].shape == (1, T, H, c.n_embd)
    assert t["blocks.0.ln1.hook_scale"].shape == (1, T, 1)
    assert t["blocks.0.mlp.hook_pre"].shape == t["blocks.0.mlp.hook_pre_linear"].shape
    assert t["blocks.0.mlp.hook_post"].shape == (1, T, c.d_mlp)
    assert "hook_pos_embed" not in t
    for layer in range(c.n_layer):
        p = f"blocks.{layer}"
        for probe in ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out"):
            assert f"{p}.{probe}" in t
        assert torch.allclose(
            t[f"{p}.hook_resid_mid"], t[f"{p}.hook_resid_pre"] + t[f"{p}.hook_attn_out"]
        )
    for norm in ("blocks.0.ln1", "blocks.1.ln2", "ln_final"):
        x = t[f"{norm}.hook_normalized"]
        assert torch.allclose(x.pow(2).mean(-1), torch.ones(1, T), atol=1e-3)
    # the derived views an engine computes from recorded tensors agree with the live probes
    attn = model.h[1].attn
    raw = t[f"{a}.hook_attn_scores_raw"]
    assert torch.equal(attn.scale_scores(raw), t[f"{a}.hook_attn_scores_scaled"])
    assert torch.equal(attn.masked_scores(raw), t[f"{a}.hook_attn_scores"])


def test_head_results_sum_to_attn_out(tmp_path):
    make_hf(tmp_path, "llama", attention_bias=True)  # o_proj has a bias: outside head_results
    model = load_ours(tmp_path)
    rec = Recorder()
    with torch.no_grad():
        model(ids_for(model, 1, 7), hook=rec)
    for layer, block in enumerate(model.h):
        summed = rec.tensors[f"blocks.{layer}.attn.hook_result"].sum(-2) + block.attn.o_proj.bias
        assert (summed - rec.tensors[f"blocks.{layer}.hook_attn_out"]).abs().max() < TOL


def test_mlp_probes_compose(llama_pair):
    _, model = llama_pair
    rec = Recorder()
    with torch.no_grad():
        model(ids_for(model, 1, 5), hook=rec)
    m = "blocks.0.mlp"
    gate, up = rec.tensors[f"{m}.hook_pre"], rec.tensors[f"{m}.hook_pre_linear"]
    assert torch.allclose(torch.nn.functional.silu(gate) * up, rec.tensors[f"{m}.hook_post"])
    down = model.h[0].mlp.down_proj(rec.tensors[f"{m}.hook_post"])
    assert torch.allclose(down, rec.tensors["blocks.0.hook_mlp_out"])


def test_rotated_probes_are_the_rotation_of_q_and_k(llama_pair):
    _, model = llama_pair
    ids = ids_for(model, 1, 16)
    cache = model.new_cache()
    with torch.no_grad():
        for start, chunk in ((0, ids[:, :10]), (10, ids[:, 10:])):  # also after a cache
            rec = Recorder()
            model(chunk, hook=rec, cache=cache)
            positions = range(start, start + chunk.shape[1])
            for layer in range(model.config.n_layer):
                a = f"blocks.{layer}.attn"
                for x in ("q", "k"):
                    rotated = model.rotate(rec.tensors[f"{a}.hook_{x}"], positions)
                    assert torch.equal(rotated, rec.tensors[f"{a}.hook_rot_{x}"])
                assert not torch.equal(rec.tensors[f"{a}.hook_rot_q"], rec.tensors[f"{a}.hook_q"])


def test_scores_use_each_query_heads_shared_kv_head(llama_pair):
    _, model = llama_pair
    rec = Recorder()
    with torch.no_grad():
        model(ids_for(model, 1, 8), hook=rec)
    a = "blocks.0.attn"
    q, k = rec.tensors[f"{a}.hook_rot_q"][0], rec.tensors[f"{a}.hook_rot_k"][0]
    raw = rec.tensors[f"{a}.hook_attn_scores_raw"][0]
    groups = model.config.n_kv_groups
    assert groups == 2 and model.kv_head_of(3) == 1 and model.h[0].attn.kv_head_of(1) == 0
    for head in range(model.config.n_head):
        kv = model.kv_head_of(head)
        assert kv == head // groups
        expected = q[:, head] @ k[:, kv].T
        assert torch.allclose(raw[head], expected, atol=1e-5)


def test_pattern_is_causal_and_normalized(llama_pair, mistral_pair):
    for _, model in (llama_pair, mistral_pair):
        rec = Recorder()
        with torch.no_grad():
            model(ids_for(model, 1, 12), hook=rec)
        window = model.config.sliding_window
        for layer in range(model.config.n_layer):
            pattern = rec.tensors[f"blocks.{layer}.attn.hook_pattern"][0]
            assert torch.allclose(pattern.sum(-1), torch.ones(pattern.shape[:-1]), atol=1e-6)
            i, j = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
            assert (pattern[:, j > i] == 0).all()  # exactly zero above the diagonal
            outside = (i - j >= window) if window is not None else torch.zeros_like(i, dtype=bool)
            assert (pattern[:, outside] == 0).all()  # and beyond a sliding window
            assert (pattern[:, (j <= i) & ~outside] > 0).all()
            assert outside.any() == (window is not None)


@pytest.mark.parametrize("scaled", [False, True])
def test_rope_scores_depend_only_on_distance(scaled):
    scaling = CASES["llama3_rope"][1]["rope_scaling"] if scaled else None
    config = LlamaConfig(
        vocab_size=10, n_embd=64, n_layer=1, n_head=2, n_kv_head=1, n_inner=8, rope_scaling=scaling
    )
    model = Llama(config)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 32, generator=g), torch.randn(1, 1, 32, generator=g)
    for i, j in ((5, 2), (9, 9), (3, 17), (40, 0)):
        base = (model.rotate(q, [i]) * model.rotate(k, [j])).sum(-1)
        for shift in (1, 7, 123, 1000):
            moved = (model.rotate(q, [i + shift]) * model.rotate(k, [j + shift])).sum(-1)
            assert torch.allclose(base, moved, atol=1e-4), (i, j, shift)
    # rotation keeps lengths, and moves the vector unless the position is 0
    assert torch.allclose(model.rotate(q, [77]).norm(dim=-1), q.norm(dim=-1))
    assert torch.equal(model.rotate(q, [0]), q)


def test_half_precision_keeps_float32_frequencies(llama_pair):
    _, model = llama_pair
    half = Llama(model.config)
    half.load_state_dict(model.state_dict())
    half = half.to(torch.bfloat16).eval()
    assert half.inv_freq.dtype == torch.float32
    ids = ids_for(model, 1, 10)
    with torch.no_grad():
        ref = model(ids)[0]
        fast, probed = half(ids)[0], half(ids, hook=lambda n, t: t)[0]
    assert fast.dtype == torch.bfloat16
    scale = ref.abs().max()
    assert (fast.float() - ref).abs().max() < 0.1 * scale
    assert (probed.float() - ref).abs().max() < 0.1 * scale


# ---------------------------------------------------------------------------------------------
# Refusals: one line each, lmscope's own error types


def one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert text and "\n" not in text
    assert isinstance(err.value, LmscopeError)
    return text


def test_bad_configs_are_refused():
    base = dict(vocab_size=10, n_embd=32, n_layer=1, n_head=4, n_inner=8)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, n_kv_head=3)
    assert "divisible by n_kv_head" in one_line(err)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**{**base, "n_embd": 30})
    assert "divisible" in one_line(err)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, head_dim=7)
    assert "even" in one_line(err)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, rope_scaling={"rope_type": "yarn", "factor": 4.0})
    assert "yarn" in one_line(err)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, activation="gelu")
    one_line(err)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, sliding_window=0)
    one_line(err)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("rms_norm_eps", 0.0),
        ("rms_norm_eps", -1e-6),
        ("rms_norm_eps", float("nan")),
        ("rms_norm_eps", float("inf")),
        ("rms_norm_eps", "x"),
        ("rope_theta", 0.0),
        ("rope_theta", float("nan")),
        ("rope_theta", float("inf")),
        ("rope_theta", "x"),
    ],
)
def test_float_fields_must_be_finite_and_positive(field, value):
    base = dict(vocab_size=10, n_embd=32, n_layer=1, n_head=4, n_inner=8)
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, **{field: value})
    assert field in one_line(err)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("factor", float("nan")),
        ("factor", "x"),
        ("low_freq_factor", 0.0),
        ("low_freq_factor", None),
    ],
)
def test_rope_scaling_numbers_must_be_finite_and_positive(key, value):
    base = dict(vocab_size=10, n_embd=32, n_layer=1, n_head=4, n_inner=8)
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    with pytest.raises(InvalidInputError) as err:
        LlamaConfig(**base, rope_scaling={**scaling, key: value})
    assert key in one_line(err)


def hf_dict(**changes) -> dict:
    config = LlamaConfig(vocab_size=10, n_embd=32, n_layer=1, n_head=4, n_inner=8).to_hf()
    return {**config, **changes}


def test_bad_hf_configs_are_refused():
    with pytest.raises(CheckpointError) as err:
        LlamaConfig.from_hf(hf_dict(model_type="gpt2"))
    assert "gpt2" in one_line(err)
    with pytest.raises(CheckpointError) as err:
        LlamaConfig.from_hf(hf_dict(model_type="gemma"))
    one_line(err)
    bad = hf_dict()
    del bad["hidden_size"]
    with pytest.raises(CheckpointError) as err:
        LlamaConfig.from_hf(bad)
    assert "hidden_size" in one_line(err)
    for scaling in ({"rope_type": "yarn", "factor": 4.0}, {"type": "linear", "factor": 2.0}):
        with pytest.raises(CheckpointError) as err:
            LlamaConfig.from_hf(hf_dict(rope_scaling=scaling))
        assert scaling.get("rope_type", scaling.get("type")) in one_line(err)
    with pytest.raises(CheckpointError) as err:  # transformers 5's spelling of the same
        LlamaConfig.from_hf(hf_dict(rope_parameters={"rope_type": "dynamic", "rope_theta": 1e4}))
    one_line(err)
    with pytest.raises(CheckpointError) as err:
        LlamaConfig.from_hf(hf_dict(num_key_value_heads=3))
    assert "n_kv_head" in one_line(err)
    with pytest.raises(CheckpointError) as err:
        LlamaConfig.from_hf(hf_dict(hidden_act="gelu"))
    one_line(err)
    # and the accepted spellings: transformers 5's rope_parameters, old rope_theta
    assert LlamaConfig.from_hf(hf_dict(rope_theta=5e5)).rope_theta == 5e5
    params = {"rope_type": "default", "rope_theta": 123456.0}
    assert LlamaConfig.from_hf(hf_dict(rope_parameters=params)).rope_theta == 123456.0


def test_bad_weights_are_refused(llama_pair, tmp_path):
    _, model = llama_pair
    hf_state = llama_state_to_hf(model)
    hf_config = model.config.to_hf()
    missing = {k: v for k, v in hf_state.items() if k != "lm_head.weight"}
    with pytest.raises(CheckpointError) as err:  # untied: lm_head is required
        build_from_hf(Llama, hf_config, missing, "here")
    assert "lm_head.weight" in one_line(err)
    with pytest.raises(CheckpointError) as err:
        build_from_hf(Llama, {**hf_config, "intermediate_size": 9}, hf_state, "here")
    assert "shape" in one_line(err)
    # tied: lm_head may be absent or equal to the embedding, never different
    tied = {**hf_config, "tie_word_embeddings": True}
    build_from_hf(Llama, tied, missing, "here")
    same = {**missing, "lm_head.weight": missing["model.embed_tokens.weight"].clone()}
    build_from_hf(Llama, tied, {**same, "model.rotary_emb.inv_freq": torch.ones(4)}, "here")
    with pytest.raises(CheckpointError) as err:
        build_from_hf(Llama, tied, hf_state, "here")
    assert "lm_head" in one_line(err)
    renamed = llama_state_from_hf(hf_state, model.config)
    assert set(renamed) == set(model.state_dict())


def test_too_long_a_sequence_is_refused(llama_pair):
    _, model = llama_pair
    with pytest.raises(InvalidInputError) as err:
        model(torch.zeros(1, model.config.n_ctx + 1, dtype=torch.long))
    assert "context" in one_line(err)
    with pytest.raises(InvalidInputError) as err:
        model.kv_head_of(model.config.n_head)
    one_line(err)


def test_trace_step_reads_the_families_own_probes(tmp_path):
    """trace.step("positional-encoding", layer=3) on SmolLM2 gave GPT-2's probes of block 0
    (blocks.0.hook_resid_pre) instead of the chosen layer's q and k before and after RoPE."""
    import lmscope

    make_hf(tmp_path, "llama", seed=1)
    model = lmscope.load(tmp_path)
    trace = model.trace([3, 4, 5, 6])
    last = model.config.n_layer - 1
    rope = trace.step("positional-encoding", layer=last)
    assert list(rope) == [
        f"blocks.{last}.attn.{name}"
        for name in ("hook_q", "hook_rot_q", "hook_k", "hook_rot_k", "hook_attn_scores_raw")
    ]
    assert "blocks.0.mlp.hook_pre_linear" in trace.step("mlp")
    assert "hook_pos_embed" not in trace.step(5)  # the embedding step: no position vector
