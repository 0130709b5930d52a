"""The schemathesis run: schemathesis against ``lmscope serve`` on loopback, every check,
positive and negative data, the examples, coverage, fuzzing and stateful phases, within a time
budget.

`served(...)` starts the server with a model (also offered for comparison) and a char-LSTM for
the /rnn routes; `small_gpt2` and `char_lstm` write small random ones (2 layers, 4 heads,
d_model 64, GPT-2's vocabulary, 128 positions; a tiny LSTM with a corpus name, so the cell
finder reads a corpus sample). `schemathesis_run(...)` runs schemathesis's command line on it,
`totals(report)` keeps the figures worth keeping, and `run(...)` does it all in a temporary
folder.

What the schema cannot say is answered 400 (it depends on the model, or on two fields at
once: ``MODEL_DEPENDENT`` lists it), so ``positive_data_acceptance`` expects 200, 400 or 404.

``tests/web/test_schemathesis.py`` runs it for a minute in CI; ``benchmarks/bench_fuzz.py``
runs it longer for BENCHMARKS.md, and ``python -m benchmarks.schemathesis_api`` alone. Needs
schemathesis (a test extra), run in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from lmscope.testing.load import serve_process

MODEL_DEPENDENT = (
    "token ids beyond the served model's vocabulary",
    "a prompt, or a prompt plus the tokens to generate, longer than the model's context",
    "a position beyond the prompt's length (a relation between ids and position)",
    "a layer or head the model does not have, and ablation specs naming them",
    "chat on a model without a chat template",
    "text the model cannot tokenize into anything (a char model's unknown characters), and a "
    "cell-finder text shorter than the finder needs for a held-out half",
    "a compare or char-RNN model name the server was not started with, or an RNN value kind "
    "the named model's cell does not have",
    "404: a lab experiment, result or plot that does not exist (the path names it)",
)
# A body over the server's 256 KiB limit is refused 413 (declared on every operation) before
# it is read, so a schema-breaking one too (a 100,001-character text of non-ASCII characters
# is 600 KB of JSON escapes): a rejection, beside schemathesis's default list.
REJECTIONS = ("400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429")
CONFIG = f"""
[checks.positive_data_acceptance]
expected-statuses = [200, 400, 404]

[checks.negative_data_rejection]
expected-statuses = [{", ".join(f'"{s}"' for s in (*REJECTIONS, "5xx"))}]
"""
CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def small_gpt2(folder: Path) -> Path:
    """A random GPT-2 of 2 layers, 4 heads, d_model 64, 128 positions, GPT-2's tokenizer."""
    import torch

    from lmscope.engine.loading import save_model
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers.gpt2 import gpt2_tokenizer

    if not (folder / "lmscope.json").is_file():
        torch.manual_seed(0)
        config = GPTConfig(vocab_size=50257, n_ctx=128, n_embd=64, n_layer=2, n_head=4)
        save_model(GPT(config), folder, tokenizer=gpt2_tokenizer(), meta={"name": "small-gpt2"})
    return folder


def char_lstm(folder: Path) -> Path:
    import torch

    from lmscope.engine.loading import save_model
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer

    if not (folder / "lmscope.json").is_file():
        torch.manual_seed(0)
        net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=10, layers=2))
        meta = {"name": "tiny-lstm", "training": {"corpus": "tinyshakespeare"}}
        save_model(net, folder, tokenizer=CharTokenizer(CHARS), meta=meta)
    return folder


@contextmanager
def served(model: Path, lstm: Path, startup_s: float = 120):
    """``lmscope serve`` with ``model`` (also to compare with) and ``lstm``; its base URL."""
    args = ["--model", str(model), "--compare", str(model), "--rnn", str(lstm)]
    args += ["--max-wait", "10", "--cache-mb", "64"]
    with serve_process(args, startup_s=startup_s) as (url, _):
        yield url


def schemathesis_run(url: str, workdir: Path, budget_s: int, seed: int = 16, examples=25):
    """Run schemathesis on ``url`` with every check; (exit code, report dict, output)."""
    config = workdir / "schemathesis.toml"
    config.write_text(CONFIG)
    report = workdir / "schemathesis-report.json"
    cmd = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run"]
    cmd += [f"{url}/openapi.json", "--checks", "all", "--mode", "all"]
    cmd += ["--phases", "examples,coverage,fuzzing,stateful", "--max-time", str(budget_s)]
    cmd += ["--max-examples", str(examples), "--workers", "1", "--seed", str(seed)]
    cmd += ["--request-timeout", "30", "--report", "json", "--report-json-path", str(report)]
    cmd += ["--no-color"]
    done = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=budget_s + 300)
    data = json.loads(report.read_text()) if report.is_file() else {}
    return done.returncode, data, done.stdout + done.stderr


def totals(report: dict) -> dict:
    """The figures of a run worth keeping."""
    cases = report.get("test_cases", {})
    ops = report.get("operations", {})
    warnings = {k: v for k, v in report.get("warnings", {}).items() if v}
    return {
        "version": report.get("schemathesis_version"),
        "seconds": round(report.get("running_time", 0.0), 1),
        "operations": ops.get("tested", 0),
        "cases": cases.get("generated", 0),
        "failures": cases.get("unique_failures", 0) + cases.get("errored", 0),
        "phases": {k: v.get("status") for k, v in report.get("phases", {}).items()},
        "warnings": warnings,
        "exit_code": report.get("exit_code"),
    }


def run(budget_s: int = 60, seed: int = 16, model: Path | None = None, log=print) -> dict:
    """A whole run in a temporary folder: the figures, and the limits the schema leaves."""
    with tempfile.TemporaryDirectory(prefix="lmscope-schemathesis-") as tmp:
        work = Path(tmp)
        model = model or small_gpt2(work / "small-gpt2")
        with served(model, char_lstm(work / "tiny-lstm")) as url:
            code, report, output = schemathesis_run(url, work, budget_s, seed)
    result = {**totals(report), "seed": seed, "budget_s": budget_s, "exit_code": code}
    result["model_dependent"] = list(MODEL_DEPENDENT)
    if code != 0:  # the failures' descriptions, not a replayed body's megabyte of escapes
        lines = (line if len(line) < 300 else line[:300] + " ..." for line in output.splitlines())
        result["output_tail"] = "\n".join(lines)[-6000:]
    log(f"schemathesis: {result['cases']} cases, {result['failures']} failures")
    return result
