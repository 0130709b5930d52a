"""One block traced alone, on the input a base trace recorded for it, records exactly what a
whole pass records there (GPT-2 and the Llama family), in a thirtieth of the work on SmolLM2."""

from __future__ import annotations

import pytest
import torch

from helpers_hf import load_random_llama
from lmscope.errors import InvalidInputError

IDS = [5, 17, 3, 99, 42, 42, 8, 0, 64, 23, 7, 7, 1]
BASE = ("blocks.*.hook_resid_pre", "blocks.*.hook_resid_post")


@pytest.fixture(scope="module", params=["gpt2", "llama", "mistral", "qwen2"])
def model(request, tmp_path_factory, tiny_model):
    if request.param == "gpt2":
        return tiny_model
    return load_random_llama(tmp_path_factory, request.param, num_hidden_layers=3)


def test_a_block_alone_records_what_the_whole_pass_records(model):
    ids = IDS[: min(len(IDS), model.config.n_ctx)]
    base = model.trace(ids, names=BASE)
    for layer in range(model.config.n_layer):
        alone = model.trace_layer(base, layer)
        whole = model.trace(ids, names=[f"blocks.{layer}.*"], layers=[layer])
        assert sorted(alone.names()) == sorted(whole.names())
        for name in whole.names():  # derived probes (head results, scores) included
            assert torch.equal(alone[name], whole[name]), name
        assert torch.equal(alone.last_logits, base.last_logits)


def test_the_block_alone_does_not_run_the_others(model, monkeypatch):
    base = model.trace(IDS[:6], names=BASE)
    ran = []
    for block in model.net.h:  # in the instance's own dict: undone without a trace left
        monkeypatch.setitem(
            vars(block),
            "forward",
            lambda *a, _f=block.forward, _l=block.layer, **k: (ran.append(_l), _f(*a, **k))[1],
        )
    model.trace_layer(base, 1)
    assert ran == [1]


def test_a_base_without_the_blocks_input_is_refused_in_one_line(model):
    base = model.trace(IDS[:6], names=["blocks.*.hook_resid_post"])
    with pytest.raises(InvalidInputError, match="needs the trace to hold its input") as err:
        model.trace_layer(base, 1)
    assert "\n" not in str(err.value)
    with pytest.raises(InvalidInputError):
        model.trace_layer(model.trace(IDS[:6]), model.config.n_layer)  # no such block
