"""A widget mounted in headless Chromium without a notebook server: the widget's own ES module
(``bundle.esm()``) renders into a plain page with a stand-in for anywidget's model, whose
messages go to the widget's Python ``answers`` (what the kernel would answer) and back. Used by
the widget browser test and for the docs' screenshots of the widgets."""

from __future__ import annotations

import json
from pathlib import Path

from lmscope.show import bundle

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>%(tip)s
body { margin: 0; padding: 12px; background: #fff; font-family: system-ui, sans-serif; }
</style></head><body><div id="cell"></div><script type="module">
const SETUP = %(setup)s;
const STYLES = %(styles)s;
const ESM = %(esm)s;
const listeners = [];
const model = {
  get: (key) => ({ setup: SETUP, styles: STYLES })[key],
  on: (name, fn) => name === "msg:custom" && listeners.push(fn),
  send: async (msg) => {
    const reply = await window.kernel(msg);
    for (const fn of listeners) fn(reply);
  },
};
const widget = await import(URL.createObjectURL(new Blob([ESM], { type: "text/javascript" })));
await widget.default.render({ model, el: document.getElementById("cell") });
document.body.dataset.mounted = "1";
</script></body></html>"""


def script_json(value) -> str:
    """JSON safe inside a <script>: no "</" closes it."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


def mount(page, widget, folder: Path) -> None:
    """Open a page holding ``widget`` (an ``lmscope.show`` view) and wire its messages to the
    widget's answers, as the kernel's comm would."""

    def kernel(msg: dict) -> dict:
        return {"id": msg["id"], **widget.answers.answer(msg["path"], msg.get("body") or {})}

    page.expose_function("kernel", kernel)
    html = PAGE % {
        "tip": bundle.document_css(),
        "setup": script_json(widget.setup),
        "styles": script_json(widget.styles),
        "esm": script_json(bundle.esm()),
    }
    path = folder / f"{widget.setup['view']}.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-mounted='1']")
