"""Walking the page's 20 steps and checking that each shows the numbers POST /api/step gives
(tests/web/test_browser_families*.py: Gemma 3 and the shipped mixture of experts)."""

from __future__ import annotations

import math

from webtools import api, chip_ids, open_step, set_prompt, to_chinese, wait_idle

# Steps whose /api/step numbers the page draws only as pictures or as shapes: their body is
# checked for an error and its title, not for numbers.
PICTURES_ONLY = {"architecture"}


# The open step's title, error count, text, and the layer and head chosen where they are shown.
READ_STEP = """() => ({
  title: document.querySelector('[data-testid=step-title]')?.innerText ?? '',
  errors: document.querySelectorAll('[data-testid=step-error]').length,
  text: document.querySelector('.step-body')?.innerText ?? '',
  selects: ['layer', 'head']
    .map((p) => document.querySelector(`[data-testid=${p}-select]`))
    .filter((s) => s && s.offsetParent !== null)
    .map((s) => s.value),
})"""


def fractions(data, out: list[float] | None = None, limit: int = 64) -> list[float]:
    """The non-integer numbers of an /api/step answer (the first ``limit`` of each list)."""
    out = [] if out is None else out
    if isinstance(data, float) and math.isfinite(data) and data != int(data):
        out.append(data)
    elif isinstance(data, dict):
        for value in data.values():
            fractions(value, out, limit)
    elif isinstance(data, list):
        for value in data[:limit]:
            fractions(value, out, limit)
    return out


def written(x: float) -> set[str]:
    """How the page may write ``x``: 2 to 5 significant digits (draw.js's fmt, with its minus
    sign), 2 to 4 decimals (a column's format), or a probability as a percentage."""
    forms = set()
    for digits in (2, 3, 4, 5):
        forms.add(f"{float(f'{x:.{digits}g}'):g}".replace("-", "−"))
    for decimals in (2, 3, 4):
        forms.update({f"{x:.{decimals}f}", f"{x:.{decimals}f}".replace("-", "−")})
    if 0 < x <= 1:  # a probability, as a percentage
        forms.update({f"{100 * x:.1f}%", f"{100 * x:#.3g}%", f"{float(f'{100 * x:.3g}'):g}%"})
    return {f for f in forms if any(c.isdigit() and c != "0" for c in f)}


def walk(page, steps: list[dict]) -> dict[str, dict]:
    """Every step in order with the tour's next button, from the first: each without an error,
    under its own title, showing non-integer numbers of its /api/step answer (for the page's
    layer, head and position). Returns each step's /api/step answer."""
    ids = chip_ids(page)
    # the page's first choices: the last position, layer 0, head 0 (checked where shown)
    where = {"ids": ids, "position": len(ids) - 1, "layer": 0, "head": 0}
    answers = {}
    open_step(page, steps[0]["key"])
    for n, step in enumerate(steps, 1):
        key = step["key"]
        page.wait_for_selector(f".step-body[data-step='{key}']")
        wait_idle(page)
        shown = page.evaluate(READ_STEP)  # one round trip for what is checked
        assert shown["errors"] == 0, key
        assert shown["title"].endswith(step["said"]["title"]), key
        assert all(v == "0" for v in shown["selects"]), (key, shown["selects"])
        answers[key] = answer = api(page, "/api/step", {**where, "key": key})
        if key not in PICTURES_ONLY:
            numbers = fractions(answer["data"])
            seen = next((x for x in numbers if any(f in shown["text"] for f in written(x))), None)
            assert seen is not None, (key, numbers[:8], shown["text"][-800:])
        if n < len(steps):
            page.locator(f"[data-testid=step-nav] button[data-step='{steps[n]['key']}']").click()
    return answers


def walk_prompt(page, prompt: str) -> dict[str, dict]:
    """``walk`` over the 20 steps the server lists, on ``prompt``, with reduced motion (no
    flying packet: each step 0.6 s sooner)."""
    page.emulate_media(reduced_motion="reduce")
    set_prompt(page, prompt)
    steps = page.request.get(page.server + "/api/steps?lang=en").json()["steps"]
    assert len(steps) == 20
    return walk(page, steps)


def family_view_at_sizes(page, test_id: str):
    """The open step's family view (``test_id``) at 1440 px in English, then at 390 px in
    Chinese, each checked to lie inside the step panel: yields (view, width, lang)."""
    for width, lang in ((1440, "en"), (390, "zh")):  # docs/models.md has all four sizes
        if lang == "zh":
            to_chinese(page)
        page.set_viewport_size({"width": width, "height": 900})
        wait_idle(page)
        view = page.get_by_test_id(test_id)
        view.scroll_into_view_if_needed()
        box, panel = view.bounding_box(), page.get_by_test_id("step-panel").bounding_box()
        assert panel["x"] - 1 <= box["x"]
        assert box["x"] + box["width"] <= panel["x"] + panel["width"] + 1
        yield view, width, lang
