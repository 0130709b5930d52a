"""The page's RoPE step on Phi-4-mini's layout (a random model: LongRoPE with an original
context of 16 positions, the first 6 of each head's 8 dims rotating): it says which dims rotate
and that a 20-token prompt turns with the long factors, draws a dial and a speed bar for each of
the 3 rotated pairs only, in English and in Chinese. No tokenizer: the prompt is token ids."""

from __future__ import annotations

import warnings

import pytest
from webtools import open_step, to_chinese, wait_idle

from helpers_families import save_random

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import lmscope
    from lmscope.web import create_app

    folder = tmp_path_factory.mktemp("phi4mini")
    rope = {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0], "long_factor": [3.0, 5, 8]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        save_random(
            folder,
            "phi3",
            original_max_position_embeddings=16,
            rope_scaling=rope,
            partial_rotary_factor=0.75,
        )
    return create_app(lmscope.load(folder))


def test_the_rope_step_says_what_rotates_and_which_factors(page):
    page.get_by_test_id("prompt-input").fill(" ".join(str(i) for i in range(3, 23)))
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=token-chip]').length === 20"
    )
    open_step(page, "positional-encoding")
    body = page.locator(".step-body")
    said = body.inner_text()
    assert "Only the first 6 of each head's 8 dims rotate" in said
    assert "20 positions are more than the 16" in said and "1.5 times" in said
    assert page.locator("[data-testid=rope-frequencies] rect[data-pair]").count() == 3
    for which in "qk":
        assert page.locator(f"[data-testid=rope-dials-{which}] svg").count() == 3
    to_chinese(page)
    wait_idle(page)
    said = body.inner_text()
    assert "只有前 6 维旋转" in said and "长因子" in said
