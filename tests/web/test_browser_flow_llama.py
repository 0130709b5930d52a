"""The flow view draws what a Llama-family model does (issue 14): no position vector added
to the tokens (RoPE rotates q and k inside attention), RMSNorm, SwiGLU, and grouped-query
attention with its key/value heads, read from /api/model and /api/flow. A random 2-layer
Llama (4 query heads sharing 2 key/value heads) with no tokenizer: the prompt is token ids."""

from __future__ import annotations

import pytest
from webtools import api, chip_ids, shot

from helpers_hf import LLAMA_BASE, save_random_llama

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import lmscope
    from lmscope.web import create_app

    folder = tmp_path_factory.mktemp("llama")
    save_random_llama(folder, "llama")
    return create_app(lmscope.load(folder))


@pytest.mark.parametrize("width", [1440, 390])
def test_the_flow_draws_rope_rmsnorm_swiglu_and_grouped_heads(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_selector("[data-testid=flow][data-loaded='1'][data-drawn='1']")
    flow = page.get_by_test_id("flow")
    assert flow.get_attribute("data-family") == "llama"
    ids = chip_ids(page)
    d = api(page, "/api/flow", {"ids": ids})
    assert (d["norm"], d["positions"], d["mlp"]) == ("RMSNorm", "rotary", "SwiGLU")
    assert d["position_embedding"] is None and d["n_kv_head"] == LLAMA_BASE["num_key_value_heads"]
    # no position vector: the embedding is the token's row alone, and the flow says why
    assert flow.locator("[data-testid=flow-decomposition] [data-part=position]").count() == 0
    assert "RoPE" in flow.get_by_test_id("flow-no-positions").inner_text()
    assert flow.get_by_test_id("flow-rope").count() == 1
    assert "RMSNorm" in flow.get_by_test_id("flow-ln1").inner_text()
    assert "SwiGLU" in flow.get_by_test_id("flow-mlp").inner_text()
    # grouped-query attention: 2 key/value groups of 2 query heads
    groups = flow.locator(".flow-kv")
    assert groups.count() == 2
    assert [g.locator(".flow-head-dot").count() for g in groups.all()] == [2, 2]
    # step 6 lights RoPE inside attention, not a position vector
    page.locator("[data-testid=step-nav] button[data-step='positional-encoding']").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=flow]').dataset.step === 'positional-encoding'"
    )
    assert "on" in flow.get_by_test_id("flow-rope").get_attribute("class")
    assert "on" in flow.locator("[data-part=attn]").get_attribute("class")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"flow-llama-{width}")
