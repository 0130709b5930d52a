"""The CLI in Chinese and at 80 columns: --lang zh (and LMSCOPE_LANG) for every command that
explains, from the same texts as the web (explain.catalogue, the catalog, lab.texts); tables
that fit the terminal; a quiet exit when the reader closes the pipe; one column at T = 1."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from lmscope import i18n
from lmscope.cli import main

PROMPT = "Data visualization empowers users to"
COMMANDS = Path(__file__).parents[2] / "src" / "lmscope" / "commands"


# --- the checker: English left in a Chinese explanation ---------------------------------------
def _words(*lines: str) -> set[str]:
    return {word for line in lines for word in line.split()}


FUNCTION_WORDS = _words(
    "the an and or of to in on at by for from with into per each every after before than",
    "not no is are was were be it its this that which when while only all some",
)
# Names a Chinese text keeps as they are (the catalogue's own Chinese uses them)
TERMS = _words(
    "token tokens id logit logits softmax query key value block blocks lens kernel",
    "GELU SiLU SwiGLU LayerNorm RMSNorm Transformer GPT BPE MLP KV KL nats RNN LSTM GRU",
    "PyTorch NumPy Adagrad gamma beta rank batch epoch dropout min max",
)


def english_left(text: str) -> list[str]:
    """Lines that still read as English: a function word, or three English words in a row.
    Numbers, identifiers (d_model, blocks.0.hook_resid_pre, top_k, --json), quoted token
    pieces and probe names do not count."""
    found = []
    for line in text.splitlines():
        line = re.sub(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"", " ", line)  # token pieces
        run = 0
        for chunk in line.split():
            word = chunk.strip("()[]{},.;:!?“”（），。；：、…")
            if not re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)*", word):
                run = 0
                continue
            if word in TERMS:
                continue
            run += 1
            if run >= 3 or word.lower() in FUNCTION_WORDS:
                found.append(line.strip())
                break
    return found


def test_the_checker_finds_english_and_spares_identifiers():
    assert english_left("the model predicts the next token")
    assert english_left("最关注  attends most to")
    assert not english_left("第 8/20 步 · 多头自注意力 · blocks.0.attn.hook_pattern, top_k 2,048")
    assert not english_left("token  ' the'  id  logit  'of the'  --json  d_model 768")


# --- running a command ---------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def texts(tmp_path):
    prose = tmp_path / "prose.txt"
    prose.write_text('he said "yes it is" and then "no"\n' * 40, encoding="utf-8")
    return prose


def commands(tiny_hf_dir, quote_lstm, prose, out: Path) -> dict[str, list]:
    m = ["--model", tiny_hf_dir]
    return {
        "explain": ["explain", PROMPT, *m, "--top-k", "5", "-t", "0.7"],
        "lens": ["lens", PROMPT, *m],
        "ablate": ["ablate", PROMPT, *m, "-a", "L0H1", "-a", "mlp1"],
        "compare": ["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir, "--text", prose],
        "neurons": ["neurons", "--model", quote_lstm, "--text", prose, "--cell", "0:5"],
        "neurons --find": ["neurons", "--model", quote_lstm, "--text", prose, "--find"],
        "minrnn": ["minrnn", "--hello", "--iters", "50"],
        "lab show": ["lab", "show", "serial-depth"],
    } | {"compare": [*["compare", "-m", tiny_hf_dir, "-m", tiny_hf_dir], "--text", prose]}


WIDE = ("explain", "lens", "ablate", "compare", "neurons", "neurons --find")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["explain", "lens", "ablate", "compare", "neurons", "neurons --find", "minrnn"]
)
def test_every_explaining_command_speaks_chinese(
    name, capsys, monkeypatch, tmp_path, tiny_hf_dir, quote_lstm, texts
):
    monkeypatch.chdir(tmp_path)  # compare and neurons --find write their files here
    argv = commands(tiny_hf_dir, quote_lstm, texts, tmp_path)[name]
    code, out, err = run_cli(capsys, *argv, "--lang", "zh")
    assert code in (0, 1), err  # minrnn --hello says 1 when 50 steps did not learn it all
    shown = out + err
    if name == "neurons":  # the rest is the text read, coloured by the unit
        shown = out.splitlines()[0]
    assert re.search(r"[\u4e00-\u9fff]", shown), name
    assert english_left(shown) == [], name


def test_sample_says_what_is_wrong_with_a_prompt_in_chinese(capsys, quote_lstm):
    code, _, err = run_cli(capsys, "sample", quote_lstm, "--prompt", "Zut!", "--lang", "zh")
    assert code == 2 and "提示词里有 2 个模型从没见过的字符：'Z', '!'" in err
    assert english_left(err.replace("--skip-unknown", "")) == []


def test_lab_show_speaks_chinese_around_its_tables(capsys):
    code, out, _ = run_cli(capsys, "lab", "show", "serial-depth", "--lang", "zh")
    assert code == 0
    prose = [line for line in out.splitlines()[2:] if not re.search("[│┃┏┗┡└╇┳┻━─]", line)]
    assert english_left("\n".join(prose)) == []
    assert "图表和 result.json 在" in out


@pytest.mark.slow
def test_lmscope_lang_is_the_default_and_a_wrong_one_is_one_line(capsys, monkeypatch, tiny_hf_dir):
    monkeypatch.setenv("LMSCOPE_LANG", "zh_CN.UTF-8")
    code, out, _ = run_cli(capsys, "explain", PROMPT, "--model", tiny_hf_dir, "--step", "8")
    assert code == 0 and "第 8/20 步 · 多头自注意力" in out and "它自己和前面" in out
    code, out, _ = run_cli(capsys, "lab", "show", "memory-wall")
    assert code == 0 and "因果注意力的峰值内存与耗时" in out
    code, out, _ = run_cli(
        capsys, "explain", PROMPT, "--model", tiny_hf_dir, "--step", "8", "--lang", "en"
    )
    assert "Step 8/20 · Multi-head self-attention" in out and "from itself and the earlier" in out
    monkeypatch.setenv("LMSCOPE_LANG", "fr")
    code, _, err = run_cli(capsys, "lens", PROMPT, "--model", tiny_hf_dir)
    assert code == 2 and "LMSCOPE_LANG='fr'" in err and len(err.strip().splitlines()) == 1


# --- 80 columns ----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_line_is_wider_than_the_terminal(
    columns, lang, capsys, monkeypatch, tmp_path, tiny_hf_dir, quote_lstm, texts
):
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(tmp_path)
    for name, argv in commands(tiny_hf_dir, quote_lstm, texts, tmp_path).items():
        if name not in WIDE:
            continue
        code, out, _ = run_cli(capsys, *argv, "--lang", lang)
        assert code == 0, name
        widest = max(cell_len(line) for line in out.splitlines())
        assert widest <= columns, (name, widest)
        assert not re.search(r"\d…|…\d", out), name  # no number cut short


@pytest.mark.slow
def test_explain_shows_whole_numbers_and_says_how_to_see_the_rest(
    capsys, monkeypatch, tiny_hf_dir, tiny_model
):
    words_ = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    prompt = words_ + " fifteen sixteen seventeen eighteen nineteen twenty"
    n = len(tiny_model.encode(prompt))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli(capsys, "explain", prompt, "--model", tiny_hf_dir, "--step", "8")
    assert code == 0
    header = next(line for line in out.splitlines() if "q\\k" in line)
    shown = [int(x) for x in header.strip("│ ").split()[1:]]
    assert 10 <= len(shown) < n and shown[-1] == n - 1  # the last positions, as many as fit
    assert f"(positions {shown[0]}–{n - 1} of {n}; a wider terminal shows more" in out
    rows = [line for line in out.splitlines() if re.match(r"│\s+\d+ \d\.\d\d", line)]
    assert len(rows) == len(shown)  # every row: whole numbers such as 0.21, never "0.…"
    monkeypatch.setenv("COLUMNS", "160")
    _, out, _ = run_cli(capsys, "explain", prompt, "--model", tiny_hf_dir, "--step", "8")
    assert "(positions " not in out  # wider: every position


# --- T = 1 -------------------------------------------------------------------------------------
@pytest.mark.slow
def test_temperature_one_prints_one_column(capsys, tiny_hf_dir):
    _, out, _ = run_cli(capsys, "explain", PROMPT, "--model", tiny_hf_dir, "--step", "16")
    assert out.count("p at T=1") == 1
    _, out, _ = run_cli(
        capsys, "explain", PROMPT, "--model", tiny_hf_dir, "--step", "16", "-t", "2"
    )
    assert "p at T=1" in out and "p at T=2" in out


# --- the pipe closed early ---------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "Hello", "--tokens", "100", "--no-stop", "--json"],
        ["sample", "{model}", "--length", "100", "--prompt", "Hello"],
        ["explain", PROMPT],
    ],
)
def test_a_reader_that_stops_early_gets_a_quiet_exit(argv, tiny_hf_dir):
    argv = [str(tiny_hf_dir) if a == "{model}" else a for a in argv]
    if "{model}" not in str(argv) and argv[0] != "sample":
        argv += ["--model", str(tiny_hf_dir)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "lmscope", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.readline()  # like `head -1`: one line, then the pipe is closed
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=300)  # minutes: only a hung command takes so long
    assert code in (0, 141), err
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception" not in err


# --- one source for the words --------------------------------------------------------------
def test_every_word_the_cli_says_is_in_the_catalog():
    # (the steps' titles and summaries are the catalog's: tests/explain/test_catalogue.py)
    said = set()
    for path in COMMANDS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "say"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                said.add(node.args[0].value)
    assert len(said) > 40
    assert [text for text in said if not i18n.has(text)] == []
