"""The Python API as a notebook user meets it: a mistyped keyword is one lmscope line naming the
keyword meant (it was Python's own "unexpected keyword argument" TypeError, or for generate a
list of encoding options that did not name its real ones), and printing a result object shows
a short summary, not thousands of characters of tensors."""

from __future__ import annotations

import inspect

import pytest

import lmscope
from lmscope.engine.generation import generate
from lmscope.engine.sampling import SamplingParams, candidate_pool
from lmscope.errors import InvalidInputError

TEXT = "The cat sat on the mat because"


def refused(call, *args, **kwargs) -> str:
    """The one line ``call`` is refused with: an lmscope error, still a TypeError."""
    with pytest.raises(InvalidInputError) as err:
        result = call(*args, **kwargs)
        list(result) if inspect.isgenerator(result) else None
    assert isinstance(err.value, TypeError)  # a call's mistake, as Python would class it
    message = str(err.value)
    assert message and "\n" not in message
    return message


@pytest.fixture(scope="module")
def trace(tiny_model):
    return tiny_model.trace(TEXT)


def test_trace_with_layer_for_layers(tiny_model):
    message = refused(tiny_model.trace, TEXT, layer=[1])
    assert "'layer'" in message and "did you mean layers?" in message


def test_trace_step_with_layers_for_layer(trace):
    message = refused(trace.step, 3, layers=1)
    assert "did you mean layer?" in message


def test_logit_lens_with_top_k_for_k(trace):
    # trace() calls it top_k; the lens calls it k: the line says so
    assert "did you mean k?" in refused(trace.logit_lens, top_k=3)


def test_load_with_a_typo(tiny_hf_dir):
    message = refused(lmscope.load, tiny_hf_dir, dtyp="float16")
    assert "did you mean dtype?" in message and "load()" in message


def test_sampling_params_with_a_typo():
    assert "did you mean temperature?" in refused(SamplingParams, temprature=0.7)


def test_too_many_positional_arguments(trace):
    message = refused(trace.step, 3, 1, 2)
    assert "positional" in message


@pytest.mark.parametrize("name", ["temperature", "top_p", "top_k", "min_p", "greedy"])
def test_generate_with_a_sampling_setting_names_sampling_params(tiny_model, name):
    value = True if name == "greedy" else 0.5
    for call in (tiny_model.generate, lambda *a, **k: generate(tiny_model, *a, **k)):
        message = refused(call, "Hello", 3, **{name: value})
        assert f"params=SamplingParams({name}=" in message


def test_generate_with_a_misspelt_sampling_setting(tiny_model):
    message = refused(tiny_model.generate, "Hello", 3, temprature=0.5)
    assert "unknown option 'temprature'" in message
    assert "params=SamplingParams(temperature=0.5)" in message


def test_generate_with_a_typo_names_its_own_keywords(tiny_model):
    message = refused(tiny_model.generate, "Hello", 3, sed=1)
    assert "did you mean seed?" in message


@pytest.mark.slow
def test_generate_encoding_option_still_works():
    model = lmscope.load("warpeace-lstm")
    tokens = list(model.generate("Hi\x00there", 2, seed=0, skip_unknown=True))
    assert len(tokens) == 2


def test_a_function_passing_options_on_checks_them_against_where_they_go(tiny_model):
    # explain(model, text, **options) passes its options to report(): the way to check them
    from lmscope.errors import checked_keywords
    from lmscope.explain.report import explain, report

    checked = checked_keywords(like=report)(explain)
    message = refused(checked, tiny_model, "Hello", layers=1)
    assert "for explain(); did you mean layer?" in message
    assert checked(tiny_model, "Hello", layer=1, steps=[1])["layer"] == 1
    with pytest.raises(TypeError, match="like="):  # a **kwargs function must say where they go
        checked_keywords(explain)


def test_checked_functions_keep_their_signature_and_docstring(tiny_model):
    from lmscope.engine.loading import load

    assert "dtype" in inspect.signature(load).parameters
    assert "Load a model" in (load.__doc__ or "")
    assert "layers" in inspect.signature(tiny_model.trace).parameters


# --- reprs -----------------------------------------------------------------------------------


def test_predictions_repr_is_a_summary(trace):
    text = repr(trace.predictions)
    assert len(text) < 300 and "tensor(" not in text
    assert f"{len(trace)} positions" in text


def test_logit_lens_repr_is_a_summary(trace):
    lens = trace.logit_lens(k=5)
    text = repr(lens)
    assert len(text) < 300 and "tensor(" not in text
    assert f"{len(lens.stages)} stages" in text


@pytest.mark.slow
def test_rnn_activations_repr_is_a_summary():
    model = lmscope.load("warpeace-lstm")
    text = repr(model.activations("Hello there, " * 20))
    assert len(text) < 300 and "tensor(" not in text


def test_a_probe_of_a_layer_the_model_lacks_names_its_layers(trace, tiny_model):
    # it suggested blocks.1.attn.hook_pattern and blocks.0...: closest in spelling, not in use
    n = tiny_model.config.n_layer
    with pytest.raises(KeyError) as err:
        trace["blocks.12.attn.hook_pattern"]
    message = str(err.value)
    assert f"the model has {n} layers, blocks.0 to blocks.{n - 1}" in message
    assert "did you mean" not in message


@pytest.mark.parametrize(
    ("short", "full"),
    [
        (("pattern", 1), "blocks.1.attn.hook_pattern"),
        (("resid_pre", 0), "blocks.0.hook_resid_pre"),
        (("q", 1), "blocks.1.attn.hook_q"),
        (("post", 0), "blocks.0.mlp.hook_post"),
        (("mlp_out", 1), "blocks.1.hook_mlp_out"),
    ],
)
def test_a_probe_by_short_name_and_layer_as_transformerlens_reads_a_cache(trace, short, full):
    # cache["pattern", 0] is how TransformerLens users read a cache: the same tensor here
    assert trace[short] is trace[full]


def test_a_short_name_that_fits_two_probes_names_both(trace):
    with pytest.raises(KeyError) as err:
        trace["scale", 0]  # ln1's or ln2's
    message = str(err.value)
    assert "blocks.0.ln1.hook_scale" in message and "blocks.0.ln2.hook_scale" in message


def test_a_steps_tensors_print_as_their_names_and_shapes(trace):
    """``trace.step("positional-encoding", layer=3)``, as the docs write it, printed every
    number of every tensor; it is still a dict of them."""
    tensors = trace.step("self-attention", layer=1)
    text = repr(tensors)
    assert len(text) < 400 and "tensor(" not in text and "\n" not in text
    assert "'self-attention', layer 1" in text
    name, first = next(iter(tensors.items()))
    assert f"{name} {list(first.shape)}" in text
    assert isinstance(tensors, dict) and first is trace[name]


def test_a_candidate_pool_repr_is_a_summary(trace):
    # it printed four tensors, two of them as long as the vocabulary
    pool = candidate_pool(trace.last_logits, SamplingParams(temperature=0.7, top_k=5))
    text = repr(pool)
    assert len(text) < 300 and "tensor(" not in text and "\n" not in text
    assert f"5 of {trace.last_logits.shape[-1]:,} tokens" in text
    assert "temperature=0.7" in text and "top_k=5" in text
    best, p = pool.top(1)[0]
    assert f"{best} {p:.1%}" in text


# --- what a notebook's tab completion offers ----------------------------------------------------
@pytest.mark.parametrize("package", ["lmscope", "lmscope.show", "lmscope.train", "lmscope.data"])
def test_tab_completion_offers_the_public_names_only(package):
    """``lmscope.<Tab>`` offered import_module, lazy and lazy_names beside load; and
    ``lmscope.show.<Tab>`` offered Any and annotations: the modules' own imports."""
    import importlib

    module = importlib.import_module(package)
    offered = {name for name in dir(module) if not name.startswith("_")}
    public = {name for name in getattr(module, "__all__", ()) if not name.startswith("_")}
    assert public <= offered
    assert offered - public <= {"circuits"}, offered - public  # lmscope.circuits, a subpackage
