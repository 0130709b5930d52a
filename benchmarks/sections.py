"""BENCHMARKS.md sections rendered from saved figures, for the scripts that only print tables
(bench_tokenizer, bench_web, bench_train) or whose section needs the run's machine (bench_model).

Every sentence with a number is built from the figures; ``notes`` saved with a result (what was
observed during the run, e.g. the machine's load) are printed as they are.
"""

from __future__ import annotations

import textwrap


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=100, break_on_hyphens=False, break_long_words=False)


def _num(x: float) -> str:
    """1e-3 rather than 0.001, as people write learning rates."""
    return f"{x:.0e}".replace("e-0", "e-") if 0 < x < 0.01 else f"{x:g}"


def _notes(result: dict) -> str:
    return " ".join(result.get("notes", []))


def _machine_words(m: dict) -> str:
    memory = f", {m['memory_gib']:g} GiB memory" if m.get("memory_gib") else ""
    return f"{m['cpu']}, {m['cores']} cores{memory}, torch {m['torch']}, Python {m['python']}"


def _load(entry: dict) -> str | None:
    start, end = entry["machine"].get("load_average"), entry.get("load_average_after")
    if not start:
        return None
    low = min(start[0], end[0]) if end else start[0]
    high = max(start[0], end[0]) if end else start[0]
    return f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{low:.1f}-{high:.1f}"


def header(machine: dict, date: str, note: str | None = None) -> str:
    lines = [
        "# Benchmarks",
        "",
        _wrap(
            "Every section below is rendered from the figures its script's `run()` returned, "
            "saved in `benchmarks/results/NAME.json`; ratios are against references measured "
            "in the same run. `python -m benchmarks` reruns them all and rewrites this page; "
            "`--only NAME` reruns one, `--render` rebuilds the page from the saved figures "
            "without running anything, `--quick` is a short smoke run (written to "
            "`benchmarks/results/quick/`)."
        ),
        "",
        _wrap(
            f"**Rendered** {date} on {_machine_words(machine)}; torch threads by default: "
            f"{machine['torch_threads']} (each section says what it used). Each section names "
            "the day and machine of its own run; on this shared machine other jobs' load "
            "inflates absolute times, so read ratios measured within one run."
        ),
    ]
    if note:
        lines += ["", _wrap(note)]
    return "\n".join(lines)


def run_line(entry: dict) -> str:
    load = _load(entry)
    where = _machine_words(entry["machine"])
    load_words = f"; load average {load}" if load else ""
    quick = " (a `--quick` smoke run)" if entry.get("quick") else ""
    return _wrap(f"_Run {entry['date']}{quick} on {where}{load_words}._")


def fallback(name: str, module_name: str, result: dict, module) -> str:
    """A section for a script without ``markdown()``: its own text report, or the figures."""
    import json

    report = getattr(module, "format_report", None) or getattr(module, "format_table", None)
    body = report(result) if report else json.dumps(result, indent=1)
    doc = (module.__doc__ or name).strip().splitlines()[0]
    return f"## {doc.rstrip('.')} (`benchmarks/{module_name}.py`)\n\n```\n{body}\n```"


# --- bench_model: its own table, plus the machine and a verdict from the rows --------------


def model(result: dict, entry: dict) -> str:
    from benchmarks import bench_model

    rows, generation = result["rows"], result["generation"]

    def ratios(what: str, dtype: str) -> str:
        found = [r["ratio"] for r in rows if r["what"] == what and r["dtype"] == dtype]
        return f"{min(found):.2f}x-{max(found):.2f}x" if len(found) > 1 else f"{found[0]:.2f}x"

    missed = [
        f"{r['what']} {r['dtype']} at {r['tokens']} tokens" for r in rows if r["holds"] is False
    ]
    missed += [g["what"] for g in result["generation_goals"] if not g["holds"]]
    verdict = "Every goal holds" if not missed else f"Goals missed: {'; '.join(missed)}"
    f32, bf16 = generation
    verdict += (
        f". Over transformers in the same precision: float32 forward {ratios('forward', 'float32')}"
        f", float32 trace {ratios('trace', 'float32')}, bfloat16 trace "
        f"{ratios('trace', 'bfloat16')} of its time; generation {f32['ratio']:.2f}x (float32) "
        f"and {bf16['ratio']:.2f}x (bfloat16) its tokens per second. bfloat16 generation runs "
        f"at {bf16['over_hf_float32']:.2f}x transformers' float32 tokens/s and float32 "
        f"generation at {f32['bandwidth_fraction']:.0%} of the memory limit "
        f"(bfloat16: {bf16['bandwidth_fraction']:.0%} of its own, half the bytes)."
    )
    m = entry["machine"]
    machine = (
        f"**Machine.** {m['cpu']}, {m['cores']} cores, torch {result['torch']} with "
        f"{result['threads']} thread{'s' if result['threads'] != 1 else ''}, Python "
        f"{m['python']}, {entry['date']}."
    )
    notes = _notes(result) or (
        f"Load average {_load(entry)} during the run." if _load(entry) else ""
    )
    same = [
        f"{g['dtype']}: {'the same' if g['same_as_transformers'] else 'different'}"
        for g in generation
    ]
    as_f32 = "the same as" if result["bf16_greedy_same_as_float32"] else "not all those of"
    notes += (
        f" Greedy generation gave transformers' `generate` tokens ({', '.join(same)}); "
        f"lmscope's bfloat16 tokens were {as_f32} its float32 ones."
    )
    if entry.get("quick"):
        machine += " A `--quick` smoke run."
    return "\n".join(
        [
            bench_model.markdown(result),
            "",
            _wrap(f"{machine} {notes}".strip()),
            "",
            _wrap(f"**Verdict.** {verdict}"),
            "",
            "Reproduce: `python -m benchmarks --only model` "
            "(or `python benchmarks/bench_model.py --markdown`).",
        ]
    )


# --- bench_tokenizer ----------------------------------------------------------------------

TOKENIZER_ROWS = {
    "lmscope_encode": "lmscope encode ({backend} backend)",
    "tiktoken_encode": "tiktoken encode",
    "reference_encode_cold": "lmscope pure-Python reference BPE, cold cache",
    "reference_encode_warm": "lmscope pure-Python reference BPE, warm cache",
    "lmscope_decode": "lmscope decode",
    "tiktoken_decode": "tiktoken decode",
}


def tokenizer(result: dict, entry: dict) -> str:
    speeds = result["mb_per_s"]
    lines = [
        "## Tokenizer throughput on Tiny Shakespeare (`benchmarks/bench_tokenizer.py`)",
        "",
        f"{result['megabytes']:.2f} MB of text, {result['tokens']:,} GPT-2 tokens, one core.",
        "",
        "| measure | MB/s | vs tiktoken |",
        "| --- | --- | --- |",
    ]
    for name, label in TOKENIZER_ROWS.items():
        base = speeds["tiktoken_decode" if name.endswith("decode") else "tiktoken_encode"]
        label = label.format(backend=result.get("backend", "?"))
        lines.append(f"| {label} | {speeds[name]:.2f} | {speeds[name] / base:.2f}x |")
    lines += [
        "",
        _wrap(
            "The fast path is tiktoken itself, built offline from the shipped GPT-2 files, so "
            "encoding runs at tiktoken's speed with identical ids; the pure-Python BPE is the "
            "reference the tests check tiktoken against and the one that explains merges. "
            "Reproduce: `python -m benchmarks --only tokenizer` (or "
            "`python benchmarks/bench_tokenizer.py`)."
        ),
    ]
    if "sentencepiece" in result:
        lines += ["", *_sentencepiece(result["sentencepiece"])]
    return "\n".join(lines)


SPM_ROWS = {
    "lmscope_encode_cold": "lmscope encode, the whole text, cold cache",
    "lmscope_encode": "lmscope encode, the whole text, warm cache",
    "tokenizers_encode": "tokenizers encode, the whole text",
    "lmscope_encode_lines": "lmscope encode, line by line, warm cache",
    "tokenizers_encode_lines": "tokenizers encode, line by line",
    "lmscope_decode": "lmscope decode",
    "tokenizers_decode": "tokenizers decode",
}


def _sentencepiece(spm: dict) -> list[str]:
    from benchmarks.bench_tokenizer import spm_baseline

    speeds = spm["mb_per_s"]
    lines = [
        "### SentencePiece-style BPE (Llama 2's shape)",
        "",
        f"The same text in a vocabulary of {spm['vocab_size']:,} tokens, trained with Hugging "
        "Face `tokenizers` on the start of Tiny Shakespeare as the tests train theirs "
        f"(characters, `▁` for spaces, byte fallback; {spm['tokens']:,} tokens): lmscope's "
        "pure-Python BPE against `tokenizers` (Rust) reading the same tokenizer.json, one core.",
        "",
        "| measure | MB/s | vs tokenizers |",
        "| --- | --- | --- |",
    ]
    for name, label in SPM_ROWS.items():
        ratio = speeds[name] / speeds[spm_baseline(name)]
        lines.append(f"| {label} | {speeds[name]:.2f} | {ratio:.2f}x |")
    lines += [
        "",
        _wrap(
            "`tokenizers` runs BPE over the whole text as one word (its file has no "
            "pre-tokenizer split), so a long text costs it more than its length; lmscope cuts "
            "the text into words wherever no token spans a word boundary (checked once over "
            "the vocabulary) and caches each word, which gives the same ids. Its first pass "
            "over new text (cold) runs at "
            f"{speeds['lmscope_encode_cold'] / speeds['tokenizers_encode']:.2f}x the speed of "
            "`tokenizers`; once words repeat (warm, as when a page sends a prompt again, or "
            "line by line after the whole text) the cache answers most of them."
        ),
    ]
    return lines


# --- bench_web ----------------------------------------------------------------------------


def _values(value) -> list:
    return value if isinstance(value, list) else [value]


def _span(value, unit: str, digits: int = 0) -> str:
    """One figure, or a range when several runs were recorded."""
    if isinstance(value, list):
        low, high = min(value), max(value)
        if round(low, digits) != round(high, digits):
            return f"{low:.{digits}f}-{high:.{digits}f} {unit}"
        value = low
    return f"{value:.{digits}f} {unit}"


def web(result: dict, entry: dict) -> str:
    lines = [
        "## Web explainer response times (`benchmarks/bench_web.py`)",
        "",
        _wrap(
            "Server time of the first `/api/trace` response for a 32-token prompt (the prompt's "
            "tokens, every position's top predictions and the top logits for in-browser "
            "sampling), the same request again (served from the trace cache), the size of a "
            "64-token prompt's first response, and the browser's re-render time after a "
            "sampling control moves (performance marks in headless Chromium, no request made)."
        ),
        "",
        "| model | first 32-token response | cached | 64-token response size "
        "| re-render after a control change |",
        "| --- | --- | --- | --- | --- |",
    ]
    default = None
    for kind, row in result.items():
        if not isinstance(row, dict):
            continue
        label = row.get("label") or f"{row['model']} ({row['shape']})"
        browser = row.get("browser")
        render = (
            _span(browser["sampling_render_ms_median"], "ms", 1)
            + (" (median)" if not isinstance(browser["sampling_render_ms_median"], list) else "")
            if isinstance(browser, dict)
            else "not measured"
        )
        size = row["first_trace_64_bytes"]
        size = [s / 1024 for s in size] if isinstance(size, list) else size / 1024
        lines.append(
            f"| {label} | {_span(row['first_trace_32_server_ms'], 'ms')} | "
            f"{_span(row['cached_trace_32_server_ms'], 'ms')} | {_span(size, 'KB')} | {render} |"
        )
        if kind in ("default", "shakespeare-shaped") and default is None:
            default = row
    goals = []
    if default is not None:
        goals.append(
            "a 32-token prompt's first response under 100 ms server time on the default model "
            f"({_span(default['first_trace_32_server_ms'], 'ms')})"
        )
    renders = [
        v
        for row in result.values()
        if isinstance(row, dict) and isinstance(row.get("browser"), dict)
        for v in _values(row["browser"]["sampling_render_ms_median"])
    ]
    if renders:
        goals.append(
            "a sampling-control change re-rendered in under 50 ms "
            f"(about {round(sum(renders) / len(renders))} ms)"
        )
    big = result.get("gpt2-small")
    if isinstance(big, dict):
        goals.append(
            "a 64-token GPT-2 small prompt's first response under 300 KB "
            f"({_span([v / 1024 for v in _values(big['first_trace_64_bytes'])], 'KB')})"
        )
    if goals:
        text = "Goals: " + " and ".join(goals[:2]) + ("; " + goals[2] if len(goals) > 2 else "")
        lines += ["", _wrap(text + ".")]
    lines += _web_page(result)
    if result.get("notes"):
        lines += ["", _wrap(_notes(result))]
    lines += ["", "Reproduce: `python -m benchmarks --only web` (or `benchmarks/bench_web.py`)."]
    return "\n".join(lines)


def _web_page(result: dict) -> list[str]:
    """The page itself (first load, the flow view's first frame, its step animation) and the
    "look inside" views on a long prompt, when the run measured them."""
    out = []
    for row in result.values():
        page = row.get("page") if isinstance(row, dict) else None
        if not isinstance(page, dict):
            continue
        kb = page["first_load_bytes"] / 1024
        out += [
            "",
            _wrap(
                f"The page on {row['model']}: the first load is {kb:.0f} KB over the wire (gzip; "
                f"{page['first_load_static_bytes'] / 1024:.0f} KB of HTML, CSS and JS modules, the "
                f"rest the first API answers; {page['first_load_requests']} requests; goal at "
                f"most 150 KB). The flow view's first frame comes {page['flow_first_frame_ms']:.0f}"
                f" ms after navigation starts and its real vectors {page['flow_vectors_ms']:.0f} "
                f"ms. A step change's animation ({page['step_changes']} changes, "
                f"{page['frames']} frames, rAF gaps with performance marks): median "
                f"{page['frame_ms_median']} ms, 95th percentile {page['frame_ms_p95']} ms, "
                f"longest {page['frame_ms_max']} ms, {_long_frames(page)}, about "
                f"{page['fps']:.0f} frames per second (goal: 60 fps, no frame over 32 ms)."
            ),
        ]
    big = result.get("gpt2-small")
    look = big.get("interpret") if isinstance(big, dict) else None
    if isinstance(look, dict):
        out += [
            "",
            _wrap(
                f"Look inside on GPT-2 small's shape with a {look['prompt_tokens']}-token prompt "
                f"(first answers, the prompt already traced): every head's pattern for the "
                f"ablation grid (`/api/heads`) {_span(look['heads_s'], 's', 2)}, the logit lens "
                f"(`/api/lens`, 12 positions) {_span(look['lens_s'], 's', 2)}; goal under 1 s."
            ),
        ]
    return out


# --- bench_train --------------------------------------------------------------------------


def train(result: dict, entry: dict) -> str:
    s, ref = result["settings"], result["reference"]
    precise = next(v for k, v in result.items() if k.startswith("val_loss_") and "batches" in k)
    batches = next(k for k in result if k.startswith("val_loss_") and "batches" in k)
    batches = batches.removeprefix("val_loss_").removesuffix("_batches")
    params = result.get("params_m", 0.81)
    dropout = f"dropout {s['dropout']}" if s["dropout"] else "no dropout"
    wall = result["wall_s"]
    evals = ", ".join(f"{e['val']:.3f} ({e['iteration']})" for e in result["evals"])
    meets = result["val_loss"] <= ref["val_loss"]
    gap = precise - ref["val_loss"]
    if meets and gap > 0:
        verdict = (
            f"On nanoGPT's own measure ({s['eval_iters']} evaluation batches) the run meets the "
            f"target: {result['val_loss']:.4f} <= {ref['val_loss']}. The steadier "
            f"{batches}-batch estimate is {precise:.4f}, {gap:.3f} above {ref['val_loss']}, so "
            'the honest reading is "on par with nanoGPT", not better.'
        )
    elif meets:
        verdict = (
            f"The run meets the target on both measures: {result['val_loss']:.4f} "
            f"({s['eval_iters']} batches) and {precise:.4f} ({batches} batches) <= "
            f"{ref['val_loss']}."
        )
    else:
        verdict = (
            f"The run misses the target: {result['val_loss']:.4f} ({s['eval_iters']} batches) "
            f"against nanoGPT's {ref['val_loss']}."
        )
    verdict += (
        " The model differs from nanoGPT's in small ways: its Linear and LayerNorm layers have "
        "biases (nanoGPT's config turns them off) and it uses GPT-2's tanh GELU."
    )
    hw = result["hardware"]
    machine = (
        f"**Machine.** {hw['cpu']}, {hw['cores']} cores; torch {hw['torch']} using "
        f"{hw['torch_threads']} threads; Python {hw['python']}; run on {result['date']}."
    )
    if entry.get("quick"):
        machine += f" A `--quick` smoke run ({s['iters']} iterations), not the reference run."
    notes = _notes(result) or (
        f"Load average {_load(entry)} during the run." if _load(entry) else ""
    )
    table = [
        "| | nanoGPT (reported) | lmscope |",
        "| --- | --- | --- |",
        f"| val loss, {s['eval_iters']} batches (how nanoGPT measures it) | "
        f"~{ref['val_loss']} | **{result['val_loss']:.4f}** |",
        f"| val loss, {batches} fixed batches (steadier) | | {precise:.4f} |",
        f"| train loss, {s['eval_iters']} batches | | {result['train_loss']:.4f} |",
        f"| wall time, evaluations included | ~{ref['minutes']} min | {wall:.0f} s "
        f"({wall / 60:.1f} min) |",
        f"| training throughput | | {result['tokens_per_s']:,.0f} tokens/s (mean over the run) |",
    ]
    return "\n".join(
        [
            "## Training: nanoGPT's Shakespeare-char run on a CPU (`benchmarks/bench_train.py`)",
            "",
            _wrap(
                "**Reference.** karpathy/nanoGPT's README gives a CPU recipe for "
                "`config/train_shakespeare_char.py` (`--device=cpu --compile=False "
                "--eval_iters=20 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 "
                "--n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0`) and reports "
                f"that it runs in about {ref['minutes']} minutes and reaches a validation loss of "
                f"about **{ref['val_loss']}**. `bench_train.py` trains with lmscope's trainer on "
                f"the same settings: character tokens, context {s['context']}, batch "
                f"{s['batch']}, {s['layers']} layers, {s['heads']} heads, {s['dim']} dims "
                f"({params:.2f}M parameters), {s['iters']} iterations, lr {_num(s['lr'])} with "
                f"{s['warmup']} warm-up steps and a cosine decay to {_num(s['min_lr'])}, AdamW "
                f"({s['beta1']}, {s['beta2']}), weight decay {s['weight_decay']} on matrices, "
                f"gradients clipped at {s['grad_clip']}, "
                f"{dropout}, seed {s['seed']}, evaluation every {s['eval_every']} steps over "
                f"{s['eval_iters']} batches."
            ),
            "",
            *table,
            "",
            _wrap(f"Validation loss at each evaluation ({s['eval_iters']} batches): {evals}."),
            "",
            _wrap(f"**Verdict.** {verdict}"),
            "",
            _wrap(f"{machine} {notes}".strip()),
            "",
            _wrap(
                "Reproduce: `python -m benchmarks --only train` (or `python "
                "benchmarks/bench_train.py`; add `--out DIR` to keep the checkpoint, `--json` "
                "for every figure); from Python, `benchmarks.bench_train.run()` returns them as "
                "a dict."
            ),
        ]
    )


# --- bench_load in another precision: its own section, then the float32 run beside it ---------


def load_beside_float32(result: dict, entry: dict, float32_name: str) -> str:
    """bench_load's section for a bfloat16 run, and a table of its throughput and p95 beside
    the float32 run of the same class (``results/<float32_name>.json``, saved by its own run)."""
    import json
    from pathlib import Path

    from benchmarks import bench_load

    text = bench_load.markdown(result)
    folder = Path(__file__).resolve().parent / "results"
    if entry.get("quick"):
        folder = folder / "quick"
    saved = folder / f"{float32_name}.json"
    if not saved.is_file():
        return text + f"\n\n(No float32 run saved in `{saved.name}` to compare with.)"
    other = json.loads(saved.read_text("utf-8"))
    runs = [("float32", other["result"], other["date"]), (result["dtype"], result, entry["date"])]
    rows = [
        "| precision | run | requests/s | generated tokens/s | errors | p95, all but generation "
        "| p50, all but generation | trace alone (p50) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r, date in runs:
        loaded = r["loaded"]
        views = loaded.get("latency_without_generation", loaded["latency"])
        trace = r["alone"]["by_kind"].get("trace", {})
        rows.append(
            f"| {name} | {date} | {loaded['requests_per_s']:.1f} | "
            f"{loaded['generated_tokens_per_s']:.1f} | {loaded['errors']} | "
            f"{views['p95_ms']:,.0f} ms | {views['p50_ms']:,.0f} ms | "
            f"{trace.get('p50_ms', float('nan')):,.0f} ms |"
        )
    words = _wrap(
        f"**Beside float32.** The same class, the same seed and the same server options, the "
        f"float32 figures from `benchmarks/results/{float32_name}.json` (its own run, so the "
        "machine's load may differ: each run names its load average). One forward pass at a "
        "time does the model work, so requests/s and generated tokens/s under load are the "
        "server's throughput."
    )
    return "\n".join([text, "", words, "", *rows])


def _long_frames(page: dict) -> str:
    """How many animation frames passed 32 ms, and how many of those were the page's own work."""
    over = page["frames_over_32ms"]
    if over == 0:
        return "none over 32 ms"
    return (
        f"{over} over 32 ms ({page.get('frames_over_32ms_own_work', '?')} of them with over 32 "
        "ms of the page's own work, script, style, layout and paint, by Chromium's long "
        "animation frame entries; the rest is time other processes had the CPU)"
    )
