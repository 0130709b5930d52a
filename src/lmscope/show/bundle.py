"""The widget's front end, made of the page's own files: its JavaScript modules and its style
sheets, read from the installed package (``lmscope/web/static``), never copied.

anywidget takes one ES module (``_esm``). The page's views are several modules importing each
other by relative name (``./draw.js``), so the widget's module carries their sources and, when
a widget is drawn, gives each a ``blob:`` address with its imports pointed at the others'
addresses, then imports the entry (``show/static/widget.js``). Each drawn widget gets its own
instances, so two widgets in one notebook keep their own state (the flow view keeps one)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "web" / "static"
PAGE_JS = PAGE / "js"
ENTRY = Path(__file__).resolve().parent / "static" / "widget.js"
# the page's sheets the views' classes are in (style.css first: the others refine it)
SHEETS = ("style.css", "flow.css", "picture.css", "interpret.css", "circuits.css", "rnn.css")

IMPORT = re.compile(r"""(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])\./([\w.-]+\.js)\2""")

LOADER = """\
// lmscope.show: the page's modules, each given a blob: address when a widget is drawn
const SOURCES = %(sources)s;
const ENTRY = %(entry)s;
const IMPORT = new RegExp(%(pattern)s, "g");
function addresses() {
  const urls = new Map();
  const urlOf = (name) => {
    if (!urls.has(name)) {
      const text = SOURCES[name].replace(IMPORT, (_, head, q, dep) => head + q + urlOf(dep) + q);
      urls.set(name, URL.createObjectURL(new Blob([text], { type: "text/javascript" })));
    }
    return urls.get(name);
  };
  return urlOf;
}
export default {
  async render({ model, el }) {
    const entry = await import(addresses()(ENTRY));
    return entry.mount(el, model);
  },
};
"""


def imports(source: str) -> list[str]:
    """The sibling modules a module imports (``./name.js``), in order."""
    return [m.group(3) for m in IMPORT.finditer(source)]


def modules() -> dict[str, str]:
    """The entry and every page module it reaches, by file name."""
    found: dict[str, str] = {}
    todo = [(ENTRY.name, ENTRY)]
    while todo:
        name, path = todo.pop()
        if name in found:
            continue
        found[name] = path.read_text(encoding="utf-8")
        todo += [(dep, PAGE_JS / dep) for dep in imports(found[name]) if dep not in found]
    return found


@functools.cache
def esm() -> str:
    """The widget's one ES module."""
    sources = json.dumps(modules(), ensure_ascii=False, sort_keys=True)
    pattern = json.dumps(IMPORT.pattern)
    return LOADER % {"sources": sources, "entry": json.dumps(ENTRY.name), "pattern": pattern}


@functools.cache
def styles() -> str:
    """The page's sheets for the widget's shadow root: what the page sets on ``:root`` and
    ``body`` is set on the widget's host, so nothing leaks into the notebook or out of it."""
    text = "\n".join((PAGE / name).read_text(encoding="utf-8") for name in SHEETS)
    text = re.sub(r"(?m)^:root\b", ":host", text)
    text = re.sub(r"(?m)^body\b(?=\s*[{,])", ":host", text)
    return text + WIDGET_CSS


# The few rules of the parts only the widget has (its frame; the page lays these out in its
# template's grid instead).
WIDGET_CSS = """
.lmscope-widget { font-family: system-ui, sans-serif; color: var(--ink); background: var(--bg);
  padding: 10px; border-radius: 8px; display: flex; flex-direction: column; gap: 10px; }
.lmscope-widget .tokens { display: flex; flex-wrap: wrap; gap: 4px; }
.lmscope-widget .lmscope-facts { display: flex; gap: 14px; flex-wrap: wrap; color: var(--muted); }
.lmscope-widget .lmscope-steps { display: flex; flex-wrap: wrap; gap: 4px; }
.lmscope-widget .lmscope-steps button { font-size: 12px; }
.lmscope-widget .panel { background: var(--panel); border: 1px solid var(--line);
  border-radius: 8px; padding: 10px; }
"""


@functools.cache
def document_css() -> str:
    """The one rule drawn outside the shadow root: the tooltip, which the views put on the
    document's body (draw.js showTip)."""
    text = (PAGE / "style.css").read_text(encoding="utf-8")
    found = re.search(r"(?ms)^\.tip\s*\{.*?^\}", text)
    rule = found.group(0) if found else ""
    # the page's colour names are defined on its :root, which the notebook does not have
    for name, value in re.findall(r"(?m)^\s*(--[\w-]+):\s*([^;]+);", text.split("}")[0]):
        rule = rule.replace(f"var({name})", value)
    return rule
