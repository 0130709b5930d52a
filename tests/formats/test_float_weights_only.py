"""Weights that are not floating-point numbers: an int32 (or bool, or int8) tensor where a model
has float weights is refused in one line naming the tensor and its dtype, in a Hugging Face
folder, an lmscope model folder and a training checkpoint's weights alike; it used to be cast
to float and loaded without a word (a model of whole numbers)."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_file

import lmscope
from lmscope.errors import CheckpointError
from lmscope.formats.weights import save_model_dir
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.models.state import load_checked


def _retype(path, name: str, dtype: torch.dtype) -> None:
    """Rewrite one tensor of a safetensors file in another dtype."""
    state = load_file(str(path))
    state[name] = state[name].round().to(dtype)
    save_file(state, str(path))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.int32, torch.int8, torch.bool])
def test_hf_folder_with_integer_weights_is_refused(make_hf_gpt2, dtype):
    folder = make_hf_gpt2()
    _retype(folder / "model.safetensors", "transformer.h.1.mlp.c_fc.weight", dtype)
    with pytest.raises(CheckpointError) as err:
        lmscope.load(folder)
    message = str(err.value)
    assert "\n" not in message
    assert "h.1.mlp.c_fc.weight" in message
    assert str(dtype).removeprefix("torch.") in message


def _tiny_gpt() -> GPT:
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=50, n_ctx=16, n_embd=16, n_layer=1, n_head=2)
    return GPT(config).eval()


def test_lmscope_folder_with_integer_weights_is_refused(tmp_path):
    from lmscope.engine.loading import save_model

    folder = save_model(_tiny_gpt(), tmp_path / "m")
    lmscope.load(folder)  # as written, it loads
    _retype(folder / "model.safetensors", "wte.weight", torch.int32)
    with pytest.raises(CheckpointError, match=r"wte\.weight.*int32"):
        lmscope.load(folder)


def test_checkpoint_weights_with_integer_tensor_are_refused():
    # a resumed training run puts a checkpoint's weights in with load_checked
    net = _tiny_gpt()
    state = {k: v.clone() for k, v in net.state_dict().items()}
    state["ln_f.weight"] = state["ln_f.weight"].to(torch.int64)
    with pytest.raises(CheckpointError, match=r"ln_f\.weight.*int64"):
        load_checked(_tiny_gpt(), state, "a checkpoint")


def test_saving_weights_as_integers_is_refused(tmp_path):
    net = _tiny_gpt()
    with pytest.raises(CheckpointError, match="int32"):
        save_model_dir(net.state_dict(), {}, tmp_path / "m", dtype=torch.int32)
    assert not (tmp_path / "m").exists()


def test_half_precision_weights_still_load(make_hf_gpt2, tmp_path):
    folder = make_hf_gpt2()
    _retype(folder / "model.safetensors", "transformer.h.0.attn.c_attn.weight", torch.float16)
    # round() above made whole numbers: the point is only that a float16 tensor is accepted
    assert lmscope.load(folder).trace([1, 2]).last_logits.dtype == torch.float32
