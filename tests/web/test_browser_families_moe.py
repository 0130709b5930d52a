"""The page walks all 20 steps on the shipped mixture of experts (shakespeare-moe, trained by
``lmscope train --arch moe``): every step shows numbers that POST /api/step gives, and the MLP
step draws the router of the chosen layer: each token's probabilities over the experts, the
two it goes through with their weights, and how many tokens each expert took, as the API gives
them, in English at 1440 px and in Chinese at 390 px. The trained router sends every space to one
expert in layer 0 (its model card's table), which the page shows."""

from __future__ import annotations

import json

import pytest
from walk_steps import family_view_at_sizes, walk_prompt
from webtools import ARTIFACTS, open_step

pytestmark = pytest.mark.browser

PROMPT = "ROMEO:\nI go, my lord."


@pytest.fixture(scope="module")
def app():
    import lmscope
    from lmscope.web import create_app

    return create_app(lmscope.load("shakespeare-moe"))


def test_all_20_steps_and_the_router(page):
    answers = walk_prompt(page, PROMPT)

    model = page.evaluate("fetch('/api/model').then((r) => r.json())")
    assert model["lineage"][0] == "mixtral" and model["lineage"][-1] == "llama"
    open_step(page, "mlp")  # layer 0
    router = answers["mlp"]["family_data"][0]
    assert router["kind"] == "router" and router["layer"] == 0
    assert (router["n_expert"], router["top_k"]) == (4, 2)
    tokens = router["tokens"]
    assert "".join(t["token"] for t in tokens) == PROMPT
    # layer 0 of the trained model: every space goes first to one expert (the model card: 100%)
    spaces = {t["chosen"][0] for t in tokens if t["token"] == " "}
    assert len(spaces) == 1
    assert sum(router["tokens_per_expert"]) == 2 * len(PROMPT)

    ARTIFACTS.mkdir(exist_ok=True)
    for view, width, lang in family_view_at_sizes(page, "family-router"):
        heat = view.locator("canvas.heat")
        assert heat.count() == 1
        assert (heat.get_attribute("data-rows"), heat.get_attribute("data-cols")) == (
            str(len(PROMPT)),
            "4",
        )
        # the table: the last 12 tokens, each with its two experts and weights, as the API says
        rows = view.locator("tbody tr").evaluate_all(
            "(rows) => rows.map((r) => [...r.cells].map((c) => c.innerText))"
        )
        assert len(rows) == 12
        for cells, token in zip(rows, tokens[-12:], strict=True):
            assert cells[0] == str(token["position"]) and cells[1] == json.dumps(token["token"])
            assert cells[2] == ", ".join(
                f"{e} ({float(f'{w:.2g}'):g})"  # two significant digits, as draw.js's fmt
                for e, w in zip(token["chosen"], token["weights"], strict=True)
            )
        said = view.inner_text()
        counts = ", ".join(f"#{e}: {n}" for e, n in enumerate(router["tokens_per_expert"]))
        assert counts in said
        assert "GPT-2" in said and ("专家" in said) == (lang == "zh")
        view.screenshot(path=str(ARTIFACTS / f"family-moe-router-{lang}-{width}.png"))


def test_the_line_under_the_flow_names_the_experts(page):
    """It called a mixture of experts a "Llama architecture" with one "SwiGLU MLP"."""
    page.wait_for_selector("[data-testid=flow][data-loaded='1']")
    line = page.get_by_test_id("flow-arch").inner_text()
    assert "router" in line and "experts" in line, line
