"""Findings of an independent probe (issue 16), each reproduced: wrong types through the Python
API, non-finite weights, badly typed configs. Every one is a one-line lmscope error now."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

import lmscope
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import CheckpointError, InvalidInputError, LmscopeError


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


@pytest.mark.parametrize("bad", [[1.5], None, 123, ["a"], [True], torch.tensor([float("nan")])])
def test_trace_refuses_what_is_not_token_ids(tiny_model, bad):
    with pytest.raises(InvalidInputError) as err:
        tiny_model.trace(bad)
    one_line(err)


@pytest.mark.parametrize("count", [1.5, "3", None, True])
def test_generate_refuses_a_count_that_is_not_a_whole_number(tiny_model, count):
    with pytest.raises(InvalidInputError) as err:
        list(tiny_model.generate("Hello", count))
    one_line(err)


def test_generate_refuses_params_of_the_wrong_type(tiny_model):
    with pytest.raises(InvalidInputError):
        list(tiny_model.generate("Hello", 2, {"temperature": 0.5}))


def test_an_unknown_step_is_an_lmscope_error(tiny_model):
    trace = tiny_model.trace("Hello")
    with pytest.raises(InvalidInputError, match="unknown step 'nope'") as err:
        trace.step("nope")
    one_line(err)


# --- non-finite weights -----------------------------------------------------------------------


@pytest.fixture
def poisoned(tiny_hf_dir, tmp_path):
    """A copy of the tiny GPT-2 with one NaN weight and one infinite one."""
    import shutil

    folder = tmp_path / "poisoned"
    shutil.copytree(tiny_hf_dir, folder)
    state = load_file(folder / "model.safetensors")
    state["transformer.wte.weight"][7, 3] = float("nan")
    state["transformer.h.0.mlp.c_fc.weight"][0, 0] = float("inf")
    save_file(state, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_non_finite_weights_are_refused_naming_the_tensor(poisoned):
    with pytest.raises(
        CheckpointError, match="(wte.weight holds 1 NaN|c_fc.weight holds 1 infinite) value"
    ) as err:
        lmscope.load(poisoned)
    assert "allow_nonfinite" in one_line(err)


def test_non_finite_weights_load_when_asked_and_show_nan_as_nan(poisoned):
    model = lmscope.load(poisoned, allow_nonfinite=True)
    trace = model.trace([7, 1, 2])  # token 7 carries the NaN
    assert torch.isnan(trace["hook_embed"]).any()
    assert torch.isnan(trace.last_logits).all()
    fast = model.logits([7, 1, 2])
    assert torch.isnan(fast).all()  # the fast path agrees with the trace: NaN, not made up


def test_lmscope_checkpoints_are_checked_too(tiny_model, tmp_path):
    from lmscope.engine.loading import save_model

    folder = save_model(tiny_model.net, tmp_path / "m")
    state = load_file(folder / "model.safetensors")
    state["ln_f.weight"][0] = float("-inf")
    save_file(state, folder / "model.safetensors")
    with pytest.raises(CheckpointError, match="ln_f.weight holds 1 infinite value"):
        lmscope.load(folder)


# --- badly typed configs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: [c], "must hold a JSON object"),
        (lambda c: {**c, "n_embd": 64.0}, "n_embd must be a whole number, got 64.0"),
        (lambda c: {**c, "vocab_size": None}, "vocab_size must be a whole number, got None"),
        (lambda c: {**c, "n_embd": "64"}, "n_embd must be a whole number, got '64'"),
        (lambda c: {**c, "n_layer": True}, "n_layer must be a whole number, got True"),
        (lambda c: {**c, "layer_norm_epsilon": "tiny"}, "layer_norm_eps must be a number"),
    ],
)
def test_badly_typed_config_json_is_one_line_naming_the_field(
    tiny_hf_dir, tmp_path, change, expected
):
    import shutil

    folder = tmp_path / "bad"
    shutil.copytree(tiny_hf_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(change(config)))
    with pytest.raises(LmscopeError, match=expected) as err:
        lmscope.load(folder)
    one_line(err)


def test_badly_typed_lmscope_config_is_one_line(tiny_model, tmp_path):
    from lmscope.engine.loading import save_model

    folder = save_model(tiny_model.net, tmp_path / "m")
    meta = json.loads((folder / "lmscope.json").read_text())
    meta["model"]["n_head"] = 2.5
    (folder / "lmscope.json").write_text(json.dumps(meta))
    with pytest.raises(LmscopeError, match="n_head must be a whole number, got 2.5") as err:
        lmscope.load(folder)
    one_line(err)


# --- padded vocabularies ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def padded(tmp_path_factory):
    """A GPT-2 whose embedding has 50,304 rows (a multiple of 64, as nanoGPT pads it) for the
    tokenizer's 50,257 tokens; the padding rows get large logits so a sampler would pick them."""
    from helpers_hf import save_random_hf_gpt2

    folder = save_random_hf_gpt2(tmp_path_factory.mktemp("padded"), vocab_size=50304)
    model = lmscope.load(folder)
    with torch.no_grad():
        model.net.wte.weight[50257:] = model.net.wte.weight[:47] * 40
    return model


def test_a_padded_vocabulary_never_samples_a_padding_id(padded):
    for seed in range(5):
        ids = [t.id for t in padded.generate("Hello there", 8, SamplingParams(), seed=seed)]
        assert all(i < 50257 for i in ids)
    greedy = [t.id for t in padded.generate("Hello", 4, SamplingParams(greedy=True))]
    assert all(i < 50257 for i in greedy)


def test_tracing_a_padding_id_is_a_clear_error(padded):
    with pytest.raises(InvalidInputError, match="padding") as err:
        padded.trace([50300])
    one_line(err)


def test_padding_is_masked_in_the_trace_predictions(padded):
    trace = padded.trace("Hello")
    assert trace.last_logits.shape == (50257,)
    assert (trace.predictions.top_ids < 50257).all()


def test_padding_is_masked_wherever_a_trace_is_read_out(padded):
    """An earlier position's logits (the final step's view) and every logit-lens stage read
    the residual stream out through the padded unembedding: the padding rows are not tokens,
    so they are neither shown nor counted in a softmax."""
    from lmscope.engine.lens import logit_lens
    from lmscope.explain.logits import final_view, position_logits

    trace = padded.trace("Hello there, my friend")
    for position in range(len(trace)):
        logits = position_logits(padded, trace, position)
        assert logits.shape == (50257,), position
        view = final_view(padded, trace, position, logits)
        assert all(i < 50257 for i in view.logits.ids)
    lens = logit_lens(trace, k=5)
    assert (lens.top_ids < 50257).all() and (lens.final_ids < 50257).all()
    readout = trace.readout(trace["blocks.0.hook_resid_post"])
    assert readout.shape[-1] == 50257
    from lmscope.interpret.ablation import ablation_effect

    effect = ablation_effect(padded, "Hello there", ["L0H0"], k=5)
    assert all(row["id"] < 50257 for row in effect.before + effect.after + effect.diff)
