"""The recall experiment's figures, drawn from its result document (so a saved result can be
drawn again): accuracy against N and against P, a panel per size, and the memory each model
holds when the answer is due."""

from __future__ import annotations

from pathlib import Path

from lmscope.lab.plots import Panel, Series, cell_words, machine_words, plot_words, save_panels
from lmscope.lab.race import COLORS
from lmscope.lab.recall import texts
from lmscope.lab.recall.task import CHANCE
from lmscope.lab.results import LANGS, shown


# --- plots -------------------------------------------------------------------------------------
def plot_result(doc: dict, out_dir: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Draw the three figures from a result document, so a saved result can be drawn again:
    accuracy against N and against P (a panel per size), and the memory held at the answer;
    each in every language of ``langs`` (recall-distance.png, recall-distance.zh.png, ...)."""
    by_key = {s["key"]: s for s in doc["sections"]}
    hw, p = doc["hardware"], doc["params"]
    for lang in langs:
        say = plot_words(lang)
        axes = {
            "distance": ("distance", say("lab.plot.recall.axis-distance")),
            "amount": ("items", say("lab.plot.recall.axis-amount")),
        }
        for key, (x_key, xlabel) in axes.items():
            rows = by_key[key]["rows"]
            held = (
                say("lab.plot.recall.held-items", items=rows[0]["items"])
                if key == "distance"
                else say("lab.plot.recall.held-distance", distance=rows[0]["distance"])
            )
            sizes = dict.fromkeys(r["size"] for r in rows)
            save_panels(
                out_dir,
                f"recall-{key}",
                [accuracy_panel(rows, size, x_key, xlabel, held, lang) for size in sizes],
                suptitle=shown(texts.plot_title(key, p), lang),
                footnote=machine_words(hw, lang),
                lang=lang,
            )
        save_panels(
            out_dir,
            "recall-memory",
            [memory_panel(by_key[key]["rows"], *axes[key], lang) for key in axes],
            suptitle=shown(texts.plot_title("memory", p), lang),
            footnote=machine_words(hw, lang),
            lang=lang,
        )


SIZE_MARKERS = ("o", "s", "^", "D", "v", "P")


def _series(rows: list[dict], x_key: str, y_key: str, label, marker: str = "o") -> list[Series]:
    out = []
    for arch in dict.fromkeys(r["arch"] for r in rows):
        mine = [r for r in rows if r["arch"] == arch]
        x, y = [r[x_key] for r in mine], [r[y_key] for r in mine]
        out.append(Series(label(mine[0]), x, y, color=COLORS[arch], marker=marker))
    return out


def accuracy_panel(rows, size: int, x_key: str, xlabel: str, held: str, lang: str = "en") -> Panel:
    say = plot_words(lang)
    mine = [r for r in rows if r["size"] == size]
    return Panel(
        title=say("lab.plot.recall.size-title", size=size, held=held),
        xlabel=xlabel,
        ylabel=say("lab.plot.recall.accuracy"),
        series=_series(mine, x_key, "accuracy", lambda r: cell_words(r["model"], lang)),
        hlines=[(CHANCE, say("lab.plot.recall.chance", n=round(1 / CHANCE)))],
        logx=x_key == "items",  # P doubles: 1, 2, 4, 8; N starts at 0
        logy=False,
    )


def memory_panel(rows, x_key: str, xlabel: str, lang: str = "en") -> Panel:
    """Bytes held at the answer, every model of every size: flat for a recurrent state,
    growing for a KV cache. Colour names the model, the marker its size."""
    say = plot_words(lang)
    series = []
    for n, size in enumerate(dict.fromkeys(r["size"] for r in rows)):
        mine = [r for r in rows if r["size"] == size]
        marker = SIZE_MARKERS[n % len(SIZE_MARKERS)]
        series += _series(
            mine,
            x_key,
            "memory_bytes",
            lambda r: f"{cell_words(r['model'], lang)} d{r['size']}",
            marker,
        )
    held = f"P = {rows[0]['items']}" if x_key == "distance" else f"N = {rows[0]['distance']}"
    return Panel(
        title=say("lab.plot.recall.memory-title", held=held),
        xlabel=xlabel,
        ylabel=say("lab.plot.recall.memory-bytes"),
        series=series,
        y_unit="bytes",
        logx=x_key == "items",
        logy=True,
        legend_below=len(series) > 4,
    )
