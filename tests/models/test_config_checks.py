"""The value checks every family's config shares (``JsonConfig.require_*``): each refuses a bad
value in one line that names the field, the bound and the value it got."""

import pytest

from lmscope.errors import InvalidInputError
from lmscope.models.gemma3 import Gemma3Config
from lmscope.models.gpt2 import GPTConfig
from lmscope.models.llama import LlamaConfig
from lmscope.models.moe import MoEConfig

GPT = dict(vocab_size=10, n_ctx=8, n_embd=8, n_layer=1, n_head=2)
LLAMA = dict(vocab_size=10, n_embd=32, n_layer=1, n_head=4, n_inner=8)
MOE = dict(LLAMA, n_expert=4, n_expert_used=2)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda: GPTConfig(**{**GPT, "n_ctx": 0}), "n_ctx must be >= 1, got 0"),
        (lambda: GPTConfig(**{**GPT, "n_head": 3}), "n_embd (8) must be divisible by n_head (3)"),
        (lambda: GPTConfig(**GPT, dropout=1.0), "dropout must be in [0, 1), got 1.0"),
        (lambda: GPTConfig(**GPT, layer_norm_eps=0.0), "layer_norm_eps must be > 0, got 0.0"),
        (lambda: LlamaConfig(**LLAMA, n_kv_head=0), "n_kv_head must be >= 1, got 0"),
        (lambda: LlamaConfig(**{**LLAMA, "n_inner": -2}), "n_inner must be >= 1, got -2"),
        (lambda: LlamaConfig(**LLAMA, head_dim=1), "head_dim must be >= 2, got 1"),
        (
            lambda: LlamaConfig(**LLAMA, n_kv_head=3),
            "n_head (4) must be divisible by n_kv_head (3)",
        ),
        (lambda: LlamaConfig(**LLAMA, rms_norm_eps=-1e-6), "rms_norm_eps must be > 0, got -1e-06"),
        (lambda: LlamaConfig(**LLAMA, rope_theta=1.0), "rope_theta must be > 1, got 1.0"),
        (lambda: LlamaConfig(**LLAMA, sliding_window=0), "sliding_window must be >= 1, got 0"),
        (lambda: LlamaConfig(**LLAMA, dropout=-0.1), "dropout must be in [0, 1), got -0.1"),
        (lambda: MoEConfig(**{**MOE, "n_expert_used": 0}), "n_expert_used must be >= 1, got 0"),
        (lambda: MoEConfig(**MOE, sparse_step=0), "sparse_step must be >= 1, got 0"),
        (
            lambda: Gemma3Config(**LLAMA, rope_local_theta=0.5),
            "rope_local_theta must be > 1, got 0.5",
        ),
    ],
)
def test_a_bad_value_is_refused_in_one_line_naming_field_bound_and_value(make, said):
    with pytest.raises(InvalidInputError) as err:
        make()
    assert str(err.value) == said


def test_a_field_left_as_none_is_not_checked_against_a_bound():
    assert LlamaConfig(**LLAMA, sliding_window=None).sliding_window is None
    assert LlamaConfig(**LLAMA).n_kv_head == 4  # None means n_head, and that is checked
