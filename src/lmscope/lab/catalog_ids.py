"""The catalog ids the lab names by parts (a section's title and explanation, a table's headers
and cell codes): listed here for the completeness check (tests/ground/test_i18n.py)."""

from __future__ import annotations

from lmscope.lab import texts
from lmscope.lab.recall import texts as recall_texts
from lmscope.lab.results import table_ids


def runtime_ids() -> list[str]:
    parts = ("title", "explain")
    fixed = [".".join(("lab", s, part)) for s in texts.SECTIONS for part in parts]
    fixed += [".".join(("lab", "recall", s, p)) for s in recall_texts.SECTIONS for p in parts]
    cells = [texts.METHOD_CELLS.format(m) for m in texts.METHODS]
    cells += [texts.DEVICE_CELLS.format(d) for d in texts.DEVICES]
    return fixed + table_ids() + cells
