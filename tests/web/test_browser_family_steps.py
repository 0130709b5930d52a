"""The step panel draws what Gemma 3 adds to the Llama recipe (family_steps.js, from POST
/api/step's family_data): the sqrt(d_model) scale, QK-norm, the sliding window's mask, GeGLU and
the four sandwich norms, each opening with what GPT-2 and Llama do instead. A random 3-layer
Gemma 3 (layer 0 local, window 5) with no tokenizer: the prompt is token ids."""

from __future__ import annotations

import pytest
from webtools import ARTIFACTS

from helpers_families import save_random

pytestmark = pytest.mark.browser

# step -> the family views its panel shows on a Gemma 3
SHOWN = {
    "embedding": ["embed-scale"],
    "qkv": ["qk-norm"],
    "masked-attention": ["sliding-window"],
    "mlp": ["geglu"],
    "layernorm": ["sandwich"],
}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import lmscope
    from lmscope.web import create_app

    folder = tmp_path_factory.mktemp("gemma3")
    save_random(folder, "gemma3_text")
    return create_app(lmscope.load(folder))


def test_gemma3_steps_show_what_the_family_adds(page):
    page.get_by_test_id("prompt-input").fill(" ".join(str(i) for i in range(3, 13)))
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=token-chip]').length === 10"
    )
    model = page.evaluate("fetch('/api/model').then((r) => r.json())")
    assert model["lineage"] == ["gemma3", "llama"]
    for key, kinds in SHOWN.items():
        page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
        page.wait_for_selector(f".step-body[data-step='{key}']:not(.loading)")
        shown = page.locator(".step-body .family-view").evaluate_all(
            "(views) => views.map((v) => v.dataset.testid.replace('family-', ''))"
        )
        assert shown == kinds, key
        if key == "masked-attention":  # the last query of a local layer sees 5 keys
            view = page.get_by_test_id("family-sliding-window")
            assert "GPT-2" in view.inner_text() and view.locator("canvas.heat").count() == 1
            view.scroll_into_view_if_needed()
            view.screenshot(path=str(ARTIFACTS / "family-gemma3-window.png"))
