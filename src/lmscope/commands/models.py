"""``lmscope models``: the models on this machine that lmscope can open (the name that opens
each, family, parameters, quantization, size, where it lies) and those it cannot, one line
each with the reason. Headers only: no weight is read."""

from __future__ import annotations

import json

from rich.cells import cell_len

from lmscope.commands.common import say, use_lang

# each store's label in the table (literal ids, for the catalog's completeness test)
STORE_LABELS = {
    "shipped": "report.models.store.shipped",
    "package": "report.models.store.package",
    "hf-cache": "report.models.store.hf-cache",
    "ollama": "report.models.store.ollama",
    "lmstudio": "report.models.store.lmstudio",
}
COLUMNS = (
    "report.models.column.name",
    "report.models.column.family",
    "report.models.column.parameters",
    "report.models.column.quantization",
    "report.models.column.size",
    "report.models.column.store",
)


def register(commands):
    p = commands.add("models", run)
    p.flag("--json")
    p.lang()


def run(args) -> int:
    from lmscope.engine.models_on_disk import models_on_disk  # lazy: see lmscope.commands

    use_lang(args)
    found = models_on_disk()
    if args.json:
        print(json.dumps([as_json(model) for model in found], ensure_ascii=False, indent=1))
        return 0
    print(table(found))
    return 0


def as_json(model) -> dict:
    """One model as ``--json`` writes it."""
    problem = model.problem
    return model.listed() | {
        "parameters": model.n_params,
        "tensor_types": model.tensor_types,
        "size_bytes": model.size,
        "path": str(model.path),
        "opens": problem is None,
        "problem": None if problem is None else problem.render(),
        "problem_id": None if problem is None else problem.id,
    }


def table(found) -> str:
    """The listing: a table of the models lmscope opens, a line for each it cannot, where it
    looked, and how to open one."""
    from lmscope.formats.stores import hf_cache, lmstudio, ollama

    opens = [m for m in found if m.problem is None]
    refused = [m for m in found if m.problem is not None]
    lines = [say("report.models.can-open", count=len(opens))]
    if opens:
        rows = [[say(c) for c in COLUMNS]] + [_row(m) for m in opens]
        lines += _aligned(rows)
    if refused:
        lines += ["", say("report.models.cannot-open", count=len(refused))]
        for m in refused:
            what = ", ".join(x for x in (m.family, _size(m.size) if m.size else None) if x)
            lines.append(
                "  " + say("report.models.refused", name=m.name, what=what or "?", why=m.problem)
            )
    lines += [
        "",
        say(
            "report.models.looked-in",
            hf=str(hf_cache.cache_root()),
            ollama=ollama.looked_in(),
            lmstudio=lmstudio.looked_in(),
        ),
        say("report.models.how-to-open"),
    ]
    return "\n".join(lines)


def _row(model) -> list[str]:
    family = model.family or "?"
    if model.experts:
        family = say("report.models.experts", family=family, experts=model.experts)
    return [
        model.name,
        family,
        _count(model.n_params),
        model.quantization or "?",
        _size(model.size),
        say(STORE_LABELS[model.store]),
    ]


def _count(n: int | None) -> str:
    """A parameter count as people write it: 76K, 135M, 0.6B, 7.2B."""
    if n is None:
        return "?"
    if n >= 500_000_000:  # 0.6B, as model names say it, not 600M
        value, unit = n / 1e9, "B"
    elif n >= 1_000_000:
        value, unit = n / 1e6, "M"
    elif n >= 1_000:
        value, unit = n / 1e3, "K"
    else:
        return str(n)
    return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"


def _size(n: int) -> str:
    """Bytes as a size on disk (decimal units, as Ollama and LM Studio show them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{n} B"


def _aligned(rows: list[list[str]]) -> list[str]:
    """Rows in columns two spaces apart, counting a Chinese character as two columns."""
    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell + " " * (w - cell_len(cell)) for cell, w in zip(row, widths, strict=True)
        ).rstrip()
        for row in rows
    ]
