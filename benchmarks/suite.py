"""Every benchmark in one place: how to run it (full and quick), where its figures are kept,
and how its BENCHMARKS.md section is rendered.

A run saves ``benchmarks/results/NAME.json`` (the figures ``run()`` returned, plus the machine
and the date) and BENCHMARKS.md is rebuilt from all saved results, so one benchmark can be
rerun, or one section re-rendered, without running the others.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import json
import os
import platform
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import sections

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
QUICK_RESULTS = RESULTS / "quick"
PAGE = ROOT / "BENCHMARKS.md"
CORPUS = ROOT / "src/lmscope/assets/corpora/tinyshakespeare/input.txt"


def _quick_text() -> str:
    """The first 100 KB of Tiny Shakespeare in a temporary file (the tokenizer's quick run)."""
    path = Path(tempfile.gettempdir()) / "lmscope-bench-quick.txt"
    path.write_text(CORPUS.read_text("utf-8")[:100_000], encoding="utf-8")
    return str(path)


@dataclass
class Benchmark:
    name: str
    module: str
    full: Callable[[], dict] = field(default=dict)  # keyword arguments of run()
    quick: Callable[[], dict] = field(default=dict)
    renderer: Callable | None = None  # (result, entry) -> markdown; default: module.markdown
    own_machine_line: bool = False  # the section already says where and when it ran

    def load(self):
        return importlib.import_module(f"benchmarks.{self.module}")

    def render(self, entry: dict) -> str:
        if self.renderer is not None:
            text = self.renderer(entry["result"], entry)
        else:
            module = self.load()
            render = getattr(module, "markdown", None)
            if render is None:
                text = sections.fallback(self.name, self.module, entry["result"], module)
            else:
                text = render(entry["result"])
        if not self.own_machine_line:
            text += "\n\n" + sections.run_line(entry)
        return text


def _no_log(text: str) -> None:
    pass


def _smollm2_class(dtype: str, quick: bool = False) -> dict:
    """bench_load's arguments for the class at SmolLM2 (a short smoke run with ``quick``)."""
    size = {"clients": 4, "seconds": 3, "reference_s": 1} if quick else {"reference_s": 20}
    # every core, as `lmscope serve` uses by default: the simulated class takes ~2% of one
    threads = os.cpu_count() or 1
    settings = {"model": "smollm2", "cache_mb": 1024, "dtype": dtype, "threads": threads}
    return {**settings, **size, "log": _no_log}


# Order of the sections in BENCHMARKS.md.
BENCHMARKS = [
    Benchmark(
        "model",
        "bench_model",
        quick=lambda: {"repeats": 1, "gen_tokens": 5},
        renderer=sections.model,
        own_machine_line=True,
    ),
    Benchmark(
        "smollm2",
        "bench_llama",
        quick=lambda: importlib.import_module("benchmarks.bench_llama").quick_settings(),
    ),
    Benchmark(  # issue 35: a mixture of experts' trace against transformers' forward pass
        "moe",
        "bench_moe",
        full=lambda: {"log": _no_log},
        quick=lambda: {"repeats": 1, "log": _no_log},
    ),
    Benchmark(  # issue 35: the real Gemma 3 270M, bench_llama's measures
        "gemma3",
        "bench_gemma3",
        quick=lambda: importlib.import_module("benchmarks.bench_gemma3").quick_settings(),
    ),
    Benchmark(  # issue 37: the patching grid against the same patching with hooks
        "patching",
        "bench_patching",
        full=lambda: {"log": _no_log},
        quick=lambda: {"repeats": 1, "log": _no_log},
    ),
    Benchmark(
        "tokenizer",
        "bench_tokenizer",
        quick=lambda: {"text_path": _quick_text(), "repeats": 1},
        renderer=sections.tokenizer,
    ),
    Benchmark(
        "web",
        "bench_web",
        quick=lambda: {"models": ("default",), "repeats": 1, "browser": False},
        renderer=sections.web,
    ),
    Benchmark("first-load", "bench_first_load"),  # issue 38: the explainer's requests
    Benchmark(
        "load",
        "bench_load",
        full=lambda: {"model": "shakespeare", "log": _no_log},
        quick=lambda: {
            "clients": 4,
            "seconds": 3,
            "reference_s": 1,
            "model": "shakespeare",
            "log": _no_log,
        },
    ),
    Benchmark(  # the same class at the real default model (the serve default's trace cache)
        "load-smollm2",
        "bench_load",
        full=lambda: _smollm2_class("float32"),
        quick=lambda: _smollm2_class("float32", quick=True),
    ),
    Benchmark(  # issue 17: the same class in bfloat16, beside the float32 run above
        "load-smollm2-bf16",
        "bench_load",
        full=lambda: _smollm2_class("bfloat16"),
        quick=lambda: _smollm2_class("bfloat16", quick=True),
        renderer=lambda result, entry: sections.load_beside_float32(result, entry, "load-smollm2"),
    ),
    Benchmark(  # the same class joining over 20 s, as a class opening the page does
        "load-smollm2-joining",
        "bench_load",
        full=lambda: {**_smollm2_class("float32"), "join_s": 20.0},
        quick=lambda: {**_smollm2_class("float32", quick=True), "join_s": 1.0},
    ),
    Benchmark(  # after the model, web and load runs it compares: run it after them
        "restructure",
        "restructure",
        full=lambda: {"log": _no_log},
        quick=lambda: {"ab_rounds": {"model": 0, "web": 0, "load": 0}, "log": _no_log},
    ),
    Benchmark(  # the class in one instant: bursts of heavy requests, before and after
        "burst",
        "burst",
        full=lambda: {"log": _no_log},
        quick=lambda: {
            "sizes": (20,),
            "tokens": 200,
            "before": None,
            "workers_size": None,
            "batch": False,
            "log": _no_log,
        },
    ),
    Benchmark(
        "fuzz",
        "bench_fuzz",
        full=lambda: {"log": _no_log},
        quick=lambda: {
            "api": 60,
            "tokenizer": 5,
            "sampling": 5,
            "trace": 3,
            "files": 5,
            "schemathesis_s": 20,
            "log": _no_log,
        },
    ),
    Benchmark(
        "train",
        "bench_train",
        full=lambda: {"log": _no_log},
        quick=lambda: {"iters": 40, "eval_every": 20, "log": _no_log},
        renderer=sections.train,
        own_machine_line=True,
    ),
    Benchmark(
        "rnn",
        "bench_rnn",
        full=lambda: {"log": _no_log},
        quick=lambda: {"budget_s": 2.0, "threads": 1, "log": _no_log},
    ),
    Benchmark(
        "race",
        "bench_race",
        full=lambda: {"log": _no_log},
        quick=lambda: {"budget_s": 2.0, "context": 64, "log": _no_log},
    ),
    Benchmark(
        "recall",
        "bench_recall",
        full=lambda: {"log": _no_log},
        quick=lambda: {"quick": True, "log": _no_log},
    ),
]
BY_NAME = {b.name: b for b in BENCHMARKS}


# --- the machine --------------------------------------------------------------------------


def machine() -> dict:
    """What the figures depend on: CPU, cores, memory, torch and its threads, load."""
    import torch

    cpu = platform.processor() or platform.machine()
    memory = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "torch": torch.__version__,
        "torch_threads": _default_threads(),
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


@functools.cache
def _default_threads() -> int:
    """torch's thread count when the suite first asked: its default, before a benchmark set
    its own (the page is rendered by the process that ran them)."""
    import torch

    return torch.get_num_threads()


# --- running and saving -------------------------------------------------------------------


def run_one(bench: Benchmark, *, quick: bool, results: Path, log=print) -> dict:
    """Run one benchmark and save its figures; returns the saved entry."""
    _default_threads()  # read before a benchmark's import or run sets its own
    kwargs = (bench.quick if quick else bench.full)()
    module = bench.load()
    before = machine()
    started = time.perf_counter()
    result = module.run(**kwargs)
    entry = {
        "name": bench.name,
        "script": f"benchmarks/{bench.module}.py",
        "quick": quick,
        "date": dt.date.today().isoformat(),
        "seconds": round(time.perf_counter() - started, 1),
        "machine": before,
        "load_average_after": machine()["load_average"],
        "arguments": {k: v for k, v in kwargs.items() if k != "log"},
        "result": result,
    }
    save(entry, results)
    log(f"{bench.name}: done in {entry['seconds']:.0f} s")
    return entry


def save(entry: dict, results: Path) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{entry['name']}.json"
    text = json.dumps(entry, indent=1, default=str, allow_nan=False)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def saved(results: Path) -> dict[str, dict]:
    found = {}
    for bench in BENCHMARKS:
        path = results / f"{bench.name}.json"
        if path.is_file():
            found[bench.name] = json.loads(path.read_text("utf-8"))
    return found


def run_all(names, *, quick: bool, results: Path, log=print) -> dict[str, str]:
    """Run the named benchmarks in order; a failure is reported and the rest still run.
    Returns name -> error line for the ones that failed."""
    failed = {}
    for bench in BENCHMARKS:
        if bench.name not in names:
            continue
        log(f"{bench.name}: running{' (quick)' if quick else ''} ...")
        try:
            run_one(bench, quick=quick, results=results, log=log)
        except Exception as err:  # one broken benchmark must not lose the others' figures
            failed[bench.name] = f"{type(err).__name__}: {err}".splitlines()[0][:300]
            log(f"{bench.name}: FAILED: {failed[bench.name]}")
            log(traceback.format_exc(limit=3))
    return failed


# --- the page -----------------------------------------------------------------------------


def render_page(results: Path, *, note: str | None = None) -> str:
    entries = saved(results)
    here = machine()
    parts = [sections.header(here, dt.date.today().isoformat(), note)]
    for bench in BENCHMARKS:
        if bench.name in entries:
            parts.append(bench.render(entries[bench.name]))
    return "\n\n".join(parts).rstrip() + "\n"


def write_page(results: Path, page: Path, *, note: str | None = None) -> Path:
    text = render_page(results, note=note)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return page
