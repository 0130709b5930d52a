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


@pytest.mark.slow
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


@pytest.mark.slow
def test_padding_is_masked_in_the_trace_predictions(padded):
    trace = padded.trace("Hello")
    assert trace.last_logits.shape == (50257,)
    assert (trace.predictions.top_ids < 50257).all()


@pytest.mark.slow
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


# --- a second probe (issue: API hunt): odd arguments through the Python API --------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda m: m.trace("Hello", names=[1]), "probe names are text"),
        (lambda m: m.trace("Hello", names=[None]), "probe names are text"),
        (lambda m: m.trace("Hello", names=["blocks.0.attn.hook_patern"]), "did you mean"),
        (lambda m: m.trace("Hello", layers="0"), "layers must be a list"),
        (lambda m: m.trace("Hello", ablate=5), "ablations are a list"),
        (lambda m: m.trace("Hello", ablate_mode="avg"), "ablation mode"),
        (lambda m: m.trace(bytearray(b"ab")), "got bytearray"),
        (lambda m: m.trace(torch.tensor([[1, 2], [3, 4]])), "one prompt"),
        (lambda m: m.trace_many("Hello"), "list of prompts"),
        (lambda m: m.trace_many(None), "list of prompts"),
        (lambda m: m.trace_many(["Hi", "yo"], names=["hook_embd"]), "did you mean hook_embed"),
        (lambda m: m.trace_layer(None, 0), "expected a Trace"),
        (lambda m: m.start_from("Hello"), "expected a Trace"),
        (lambda m: m.start([]), "the prompt is empty"),
        (lambda m: m.start([-1]), "outside the vocabulary"),
        (lambda m: m.step(None, 1), "step continues a state"),
        (lambda m: m.step(m.start([1, 2])[1], 10**6), "outside the vocabulary"),
        (lambda m: m.decode(None), "list of integers"),
        (lambda m: m.decode(5), "list of integers"),
        (lambda m: m.pieces(None), "list of integers"),
        (lambda m: list(m.generate("Hello", 2, temprature=0.5)), "unknown option 'temprature'"),
        (lambda m: list(m.generate([1, 2], 2, foo=1)), "unknown option 'foo'"),
        (lambda m: list(m.generate("Hello", 2, lock=5)), "lock must be a context manager"),
    ],
)
def test_odd_arguments_are_one_line_errors(tiny_model, call, expected):
    with pytest.raises(InvalidInputError, match=expected) as err:
        call(tiny_model)
    one_line(err)


def test_one_probe_name_or_one_layer_may_be_given_bare(tiny_model):
    """A bare string was read as a list of one-character names: an empty trace, silently."""
    assert tiny_model.trace("Hello", names="hook_embed").names() == ["hook_embed"]
    assert all(".1." in n for n in tiny_model.trace("Hello", layers=1).names() if "blocks" in n)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda t: t[0], "a probe is named by text"),
        (lambda t: t[None], "a probe is named by text"),
        (lambda t: t.logit_lens(k=2.5), "k must be an integer"),
        (lambda t: t.logit_lens(k=None), "k must be an integer"),
        (lambda t: t.logit_lens(positions=[]), "positions is empty"),
        (lambda t: t.logit_lens(positions=[1.7]), "whole number, got 1.7"),
        (lambda t: t.logit_lens(positions=[True]), "whole number, got True"),
        (lambda t: t.logit_lens(positions=["a"]), "whole number"),
        (lambda t: t.logit_lens(positions=[99]), "position 99 does not exist"),
        (lambda t: t.dropout_example("hook_embed", p="0.1"), "dropout rate"),
        (lambda t: t.head_result_sum(99), "layer 99 does not exist"),
    ],
)
def test_trace_methods_refuse_odd_arguments(tiny_model, call, expected):
    trace = tiny_model.trace("Hello there")
    with pytest.raises(InvalidInputError, match=expected) as err:
        call(trace)
    one_line(err)


def test_a_missing_probe_is_an_lmscope_error_and_still_a_key_error(tiny_model):
    from lmscope.errors import ProbeNotFoundError

    trace = tiny_model.trace("Hello")
    with pytest.raises(ProbeNotFoundError) as err:
        trace["blocks.0.attn.hook_patern"]
    assert isinstance(err.value, KeyError) and isinstance(err.value, LmscopeError)
    assert one_line(err).startswith("no probe 'blocks.0.attn.hook_patern'")  # no quotes around


@pytest.mark.slow
def test_logit_lens_positions_count_back_like_every_position(tiny_model):
    trace = tiny_model.trace("Hello there")
    assert trace.logit_lens(positions=[-1]).positions == [len(trace) - 1]
    assert trace.logit_lens(positions=0).positions == [0]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (dict(device="cuda:99"), "cuda"),
        (dict(device="tpu9"), "unknown device 'tpu9'"),
        (dict(device=None), "device must be a name"),
        (dict(device="meta"), "cannot run a model"),
        (dict(allow_nonfinite="no"), "allow_nonfinite must be True or False"),
    ],
)
def test_load_refuses_a_device_it_cannot_use(tiny_hf_dir, options, expected):
    with pytest.raises(InvalidInputError, match=expected) as err:
        lmscope.load(tiny_hf_dir, **options)
    one_line(err)


def test_a_char_rnn_state_of_the_wrong_type_is_one_line():
    lstm = lmscope.load("warpeace-lstm")
    for state in (5, "x", (1, 2)):
        with pytest.raises(InvalidInputError, match="state must be 2 tensor") as err:
            lstm.activations("hi", state=state)
        one_line(err)
    with pytest.raises(InvalidInputError, match="batch must be"):
        lstm.initial_state(-1)
