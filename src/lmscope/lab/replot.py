"""Draw a saved result's figures again from its result.json, without re-running anything:
``lmscope lab replot FOLDER``. Each experiment draws from the rows its sections keep
(``plot_result``), in English, Chinese or both; a result measured before there were Chinese
figures gets them this way."""

from __future__ import annotations

from pathlib import Path

from lmscope.errors import InvalidInputError
from lmscope.lab import gradient_flow, memory_wall, race, serial_depth
from lmscope.lab.recall import plots as recall_plots
from lmscope.lab.results import LANGS, RESULT_FILE, plot_name, read_result

PLOTTERS = {
    "serial-depth": serial_depth.plot_result,
    "memory-wall": memory_wall.plot_result,
    "race": race.plot_result,
    "gradient-flow": gradient_flow.plot_result,
    "recall": recall_plots.plot_result,
}


def replot(path: str | Path, langs: tuple[str, ...] = LANGS) -> list[Path]:
    """Draw the figures of the result at ``path`` (a folder, or its result.json) into its
    folder, in each of ``langs``; return the files written."""
    folder = Path(path)
    if folder.name == RESULT_FILE and not folder.is_dir():
        folder = folder.parent
    doc = read_result(folder)
    plotter = PLOTTERS.get(doc.get("experiment"))
    if plotter is None:
        known = ", ".join(PLOTTERS)
        raise InvalidInputError(
            "error.lab.replot.unknown",
            folder=str(folder),
            experiment=str(doc.get("experiment")),
            known=known,
        )
    try:
        plotter(doc, folder, langs)
    except (KeyError, IndexError, TypeError, StopIteration):
        raise InvalidInputError(
            "error.lab.replot.no-rows", file=str(folder / RESULT_FILE)
        ) from None
    return [
        folder / plot_name(file, lang)
        for section in doc["sections"]
        if isinstance(section.get("plot"), dict)
        for lang in langs
        for file in section["plot"].values()
    ]
