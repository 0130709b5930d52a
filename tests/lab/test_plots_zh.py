"""Every lab figure in Chinese: each experiment draws its figures in English (<stem>.png, as
before) and in Chinese (<stem>.zh.png), from the same result document, with the same numbers,
in a font that has the characters; ``lmscope lab replot`` draws a saved result's figures
again; the shipped results carry their Chinese figures; ``lab show --lang zh`` names them."""

from __future__ import annotations

import html
import inspect
import re
import shutil
import warnings
from pathlib import Path

import pytest

from lmscope import i18n
from lmscope.cli import main
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import SerialDepthConfig
from lmscope.lab.plots import cjk_fonts, machine_words, plot_words
from lmscope.lab.replot import PLOTTERS, replot
from lmscope.lab.results import (
    LANGS,
    RESULT_FILE,
    plot_name,
    read_result,
    shipped_dir,
    shipped_experiments,
)
from lmscope.lab.serial_depth import plot_depth
from tiers import slow_work

CJK = re.compile(r"[\u4e00-\u9fff]")
WIDE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")  # Chinese characters and punctuation
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


# the English words a Chinese figure keeps: names of models, methods, libraries and units
def _words(*lines: str) -> set[str]:
    return {word for line in lines for word in line.split()}


TERMS = _words(
    "Transformer GPT LSTM GRU RNN token epoch batch nats KV cache PyTorch NumPy Python",
    "Blelloch Hillis-Steele Processor vs float32 float16 shakespeare CPU",
)
FUNCTION_WORDS = _words(
    "the an and or of to in on at by for from with into per each every after before than",
    "not no is are was were be it its this that which when while only all some",
)
# a phrase of each English figure as it was before there were Chinese ones
ENGLISH = {
    "race": ["Val loss against training time", "tokens seen", "training time (CPU time)"],
    "serial-depth": ["dependent steps", "Serial depth: steps that must run one after another"],
    "memory-wall": ["Peak memory of causal attention vs an LSTM", "sequence length N"],
    "gradient-flow": ["Relative to k = 1", "Gradient flow through time: at initialisation"],
    "recall": ["accuracy of the first answer", "chance (1 in 26)"],
}


def svg_texts(path: Path) -> list[str]:
    """The texts of a figure: matplotlib draws each line as glyph paths after a comment that
    holds it."""
    return [html.unescape(t).strip() for t in re.findall(r"<!-- (.*?) -->", path.read_text())]


def english_left(text: str) -> bool:
    """Whether a line still reads as English: a function word, or three English words in a
    row. Numbers, identifiers (x.sum(), d_head, norm(k)) and the names in TERMS do not count."""
    run = 0
    for chunk in text.split():
        word = chunk.strip("()[]{},.;:!?“”（），。；：、…")
        if not re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)*", word):
            run = 0
            continue
        if word in TERMS:
            continue
        run += 1
        if run >= 3 or word.lower() in FUNCTION_WORDS:
            return True
    return False


def plot_files(doc: dict) -> list[str]:
    return [f for s in doc["sections"] if s.get("plot") for f in s["plot"].values()]


def copy_result(name: str, to: Path, figures: bool = False) -> Path:
    """A shipped result's result.json (and its English figures) in a folder of its own."""
    folder = to / name
    folder.mkdir(parents=True)
    shutil.copy(shipped_dir(name) / RESULT_FILE, folder)
    if figures:
        for file in plot_files(read_result(folder)):
            shutil.copy(shipped_dir(name) / file, folder)
    return folder


def draw(folder: Path, langs: tuple[str, ...]) -> list[str]:
    """Draw the figures; return the warnings matplotlib gave (a missing glyph is one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replot(folder, langs)
    return [str(w.message) for w in caught]


@pytest.fixture(scope="module")
@slow_work
def drawn(tmp_path_factory) -> dict[str, Path]:
    """Every shipped result drawn again, in both languages, into a folder of its own."""
    root = tmp_path_factory.mktemp("drawn")
    folders = {}
    for name in shipped_experiments():
        folders[name] = copy_result(name, root)
        said = draw(folders[name], LANGS)
        if cjk_fonts():  # fonts-noto-cjk installed: no character is drawn as an empty box
            assert not [w for w in said if "missing from" in w], (name, said)
    return folders


def test_every_experiment_is_drawn_again_from_its_result():
    assert set(PLOTTERS) == set(shipped_experiments())
    for plotter in PLOTTERS.values():  # an experiment's run draws both languages by default
        assert inspect.signature(plotter).parameters["langs"].default == LANGS == ("en", "zh")


@pytest.mark.slow
@pytest.mark.parametrize("name", shipped_experiments())
def test_each_figure_is_drawn_in_chinese_with_the_same_numbers(drawn, name):
    folder = drawn[name]
    files = plot_files(read_result(folder))
    assert files
    for file in files:
        zh, en = folder / plot_name(file, "zh"), folder / file
        assert zh.name.endswith((".zh.png", ".zh.svg"))
        head = zh.read_bytes()[:2000]
        assert head.startswith(b"\x89PNG") if zh.suffix == ".png" else b"<svg" in head
        if zh.suffix != ".svg":
            continue
        zh_texts, en_texts = svg_texts(zh), svg_texts(en)
        words = [t for t in zh_texts if CJK.search(t)]
        assert len(words) >= 3, (file, zh_texts)  # title, axes, legend, footnote...
        assert not [t for t in zh_texts if english_left(t)], file
        assert not [t for t in en_texts if CJK.search(t)], file  # English stays English
        # the same measurements, said in the other language
        assert sorted(NUMBER.findall(" ".join(zh_texts))) == sorted(
            NUMBER.findall(" ".join(en_texts))
        ), file


@pytest.mark.parametrize("name", shipped_experiments())
def test_the_english_figures_keep_their_words_and_names(drawn, name):
    folder = drawn[name]
    texts = [t for file in plot_files(read_result(folder)) if file.endswith(".svg")
             for t in svg_texts(folder / file)]  # fmt: skip
    for phrase in ENGLISH[name]:
        assert any(phrase in t for t in texts), (name, phrase)


@pytest.mark.parametrize("name", shipped_experiments())
def test_the_shipped_results_carry_their_chinese_figures(drawn, name):
    """Drawn from their result.json with ``lmscope lab replot FOLDER --figures zh``: the same
    words as the figures drawn now (rendering may differ with the fonts installed)."""
    for file in plot_files(read_result(shipped_dir(name))):
        shipped = shipped_dir(name) / plot_name(file, "zh")
        assert shipped.is_file(), shipped
        if file.endswith(".svg"):
            assert svg_texts(shipped) == svg_texts(drawn[name] / plot_name(file, "zh"))


@pytest.mark.slow
def test_a_run_draws_both_languages(tmp_path):
    from lmscope.lab.serial_depth import run_serial_depth

    run_serial_depth(SerialDepthConfig(max_n=256, repeats=1, quick=True), tmp_path)
    files = plot_files(read_result(tmp_path))
    assert len(files) == 6
    for file in files:
        for lang in LANGS:
            assert (tmp_path / plot_name(file, lang)).stat().st_size > 5_000


@pytest.mark.slow
def test_only_the_language_asked_for_is_drawn(tmp_path):
    folder = copy_result("race", tmp_path)
    written = replot(folder, ("zh",))
    assert sorted(p.name for p in written) == [
        "race-loss.zh.png",
        "race-loss.zh.svg",
        "race-speed.zh.png",
        "race-speed.zh.svg",
    ]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [RESULT_FILE, *(p.name for p in written)]
    )


def test_a_plot_name_in_chinese():
    assert plot_name("race-speed.png", "zh") == "race-speed.zh.png"
    assert plot_name("gradient-flow-init.svg", "zh") == "gradient-flow-init.zh.svg"
    assert plot_name("race-speed.png", "en") == "race-speed.png"


def test_every_figure_text_is_in_the_catalog_and_chinese_in_chinese():
    english, chinese = i18n.catalog("en"), i18n.catalog("zh")
    plot_ids = [key for key in english if key.startswith("lab.plot.")]
    assert len(plot_ids) > 50
    for key in plot_ids:
        assert WIDE.search(chinese[key]), key
    say = plot_words("zh")
    assert say("lab.plot.race.training-time", clock=say("lab.plot.clock-cpu")) == (
        "训练用时（CPU 时间）"
    )


def test_a_figure_in_the_pseudo_language_draws_every_letter(tmp_path):
    """The pseudo-language's accented Latin letters are in the figure's fonts: no box."""
    doc = read_result(shipped_dir("serial-depth"))
    rows = next(s["rows"] for s in doc["sections"] if s["key"] == "depth")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_depth(rows, tmp_path, "pseudo")
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert (tmp_path / plot_name("depth.png", "pseudo")).stat().st_size > 1000


def test_the_footnote_names_the_machine_as_the_page_does():
    hw = {
        "cpu": "Intel(R) Xeon(R) Processor",
        "cpu_detail": "family 6 model 207, AVX-512",
        "cpu_cores": 2,
        "torch_threads": 1,
        "torch": "2.13.0+cpu",
        "date": "2026-11-30",
    }
    assert machine_words(hw, "en") == (
        "Intel(R) Xeon(R) Processor (family 6 model 207, AVX-512), 2 cores, "
        "torch 2.13.0+cpu (1 thread), 2026-11-30"
    )
    assert machine_words(hw, "zh") == (
        "Intel(R) Xeon(R) Processor（系列 6 型号 207，AVX-512），2 核，torch 2.13.0+cpu（1 线程），"
        "2026-11-30"
    )


# --- the command line -------------------------------------------------------------------------
def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_replot_draws_a_saved_result_in_chinese_and_leaves_the_english_files(capsys, tmp_path):
    folder = copy_result("race", tmp_path, figures=True)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    code, out, _ = run(capsys, "lab", "show", folder, "--lang", "zh")
    assert code == 0 and "图：race-speed.png" in out  # no Chinese figure yet: the English one
    code, out, _ = run(capsys, "lab", "replot", folder, "--figures", "zh")
    assert code == 0 and f"drew 4 figure files in {folder}" in out
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in before} == before
    assert (folder / "race-loss.zh.svg").is_file()
    code, out, _ = run(capsys, "lab", "show", folder, "--lang", "zh")
    assert code == 0 and "图：race-speed.zh.png" in out and "图：race-loss.zh.png" in out
    code, out, _ = run(capsys, "lab", "show", folder)
    assert code == 0 and "plot: race-speed.png" in out and ".zh." not in out


def test_lab_show_in_chinese_names_the_shipped_chinese_figures(capsys):
    code, out, _ = run(capsys, "lab", "show", "serial-depth", "--lang", "zh")
    assert code == 0
    assert "图：depth.zh.png" in out and "图：torch-sweep.zh.png" in out


def test_replot_refuses_what_it_cannot_draw(capsys, tmp_path):
    code, _, err = run(capsys, "lab", "replot", tmp_path)
    assert code != 0 and "no lab result at" in err
    folder = copy_result("race", tmp_path)
    doc = (folder / RESULT_FILE).read_text(encoding="utf-8")
    (folder / RESULT_FILE).write_text(doc.replace('"key": "loss"', '"key": "lost"'), "utf-8")
    with pytest.raises(InvalidInputError, match="lacks the rows its figures are drawn from"):
        replot(folder)
    assert not list(folder.glob("*.png"))
