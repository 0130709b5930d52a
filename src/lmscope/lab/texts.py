"""What each lab table and plot shows, in English and Chinese.

Every section gets a title, a fixed explanation and a verdict. The verdict is written from
the measured rows, so the sentence a reader takes away always quotes the numbers in the same
file. Titles and explanations, the words that do not depend on the measurements, are data in
texts.json ({placeholders} for the settings they quote); verdicts are written here. Both keep
the two languages side by side.
"""

from __future__ import annotations

import functools
import math
import re
import statistics

from lmscope.lab.results import bilingual as bi
from lmscope.lab.results import (
    fixed_texts,
    format_bytes,
    format_cell,
    format_seconds,
    package_json,
)

SERIAL_DEPTH_TITLE = bi(
    "Why Transformers: serial depth of recurrences vs parallel reductions and scans",
    "为什么是 Transformer：循环的串行深度 vs 并行归约与扫描",
)
MEMORY_WALL_TITLE = bi(
    "Why Transformers: the O(N²) memory wall of attention, and the KV cache",
    "为什么是 Transformer：注意力的 O(N²) 显存墙与 KV 缓存",
)


# Where the lesson's figures need correcting: said next to the measurements they concern (the
# memory wall, serial depth) and on the /why page.
FLASH = bi(
    " The lesson says fused kernels such as Flash Attention “hide the constant, not the "
    "scaling”. That is half right, and the two halves are different costs: the memory of "
    "attention is O(N) with them (the score matrix is never stored, as the SDPA peak here "
    "shows), while its computation stays O(N²) (every query still meets every earlier key). "
    "What Flash Attention does not change is the time.",
    "课程说 Flash Attention 这类融合 kernel“隐藏了常数，没有改变增长率”。这只说对了一半，"
    "而且两半说的是两种不同的代价：用了它们，注意力的显存是 O(N)（分数矩阵从不完整保存，"
    "这里 SDPA 的峰值就是证明），计算量仍是 O(N²)（每个查询仍要和前面每个键相乘）。"
    "Flash Attention 改变不了的是耗时。",
)
SCAN_DEPTH = bi(
    " The lesson's figure is wrong here: it gives a parallel scan a depth of O(1). No "
    "parallel algorithm can combine N numbers with two-input additions in fewer than log2 N "
    "rounds, so the depth is log2 N (and so is that of attention's weighted sum over N "
    "positions, a reduction): far shallower than the recurrence's N, but not constant.",
    "课程在这里的数字是错的：它说并行扫描的深度是 O(1)。用两两相加的方式合并 N 个数，任何"
    "并行算法都至少需要 log2 N 轮，所以深度是 log2 N（注意力对 N 个位置的加权求和也是一次"
    "归约，深度同样是 log2 N）：比循环的 N 浅得多，但不是常数。",
)

# What ``lmscope lab`` and ``lmscope race`` print around a result's tables.
CLI = {
    "wrote": bi("wrote {path} and its plots", "已写入 {path} 及其图表"),
    "plot": bi("plot: {file}", "图：{file}"),
    "drew": bi("drew {count} figure files in {folder}", "已在 {folder} 画出 {count} 个图文件"),
    "plots in": bi("plots and result.json in {folder}", "图表和 result.json 在 {folder}"),
    "yes": bi("yes", "是"),
    "no": bi("NO", "否"),
}


# --- the words result files keep in English only: table headers and text cells ---------------
@functools.cache
def _zh_words() -> tuple[dict, re.Pattern, list[tuple[re.Pattern, str, bool]]]:
    words = package_json("zh_words.json")  # the /why page gets the same file via /api/lab
    cells = [  # JavaScript's $1 is Python's \g<1>
        (re.compile(pattern), re.sub(r"\$(\d)", r"\\g<\1>", zh), how == "whole")
        for pattern, zh, how in words["cells"]
    ]
    return words["headers"], re.compile(words["same_headers"]), cells


def zh_header(label: str) -> str:
    """A table header in Chinese (itself when it reads the same, or has no entry yet)."""
    headers, same, _ = _zh_words()
    return label if same.fullmatch(label) else headers.get(label, label)


def zh_cell(text: str) -> str:
    """A text cell in Chinese: a model's name and shape, why a run stopped."""
    out = text
    for pattern, zh, whole in _zh_words()[2]:
        new = pattern.sub(zh, out)
        if whole and new != out:
            return new
        out = new
    return out


def _fixed(key: str, then: dict | None = None, **values) -> tuple[dict, dict]:
    """Section ``key``'s title and explanation: their words are in texts.json."""
    return fixed_texts("texts.json", key, then, **values)


def _section(title, explain, verdict, clock: str = "wall") -> dict:
    return {"title": title, "explain": _with_note(explain, clock), "verdict": verdict}


def _count(n: int, one: str, many: str) -> str:
    """1 step, 2 steps: a count with its noun (Chinese has no plural: pass the same word)."""
    return f"{n:,} {one if n == 1 else many}"


def _faster(ratio: float, zh: bool = False) -> str:
    """How many times faster the second of two timings is (time of the first over it), or
    slower when the ratio is below 1: 6.2× faster, 1.5× slower (快 6.2 倍, 慢 1.5 倍)."""
    if ratio >= 1:
        return f"快 {_times(ratio, zh=True)}" if zh else f"{_times(ratio)} faster"
    return f"慢 {_times(1 / ratio, zh=True)}" if zh else f"{_times(1 / ratio)} slower"


def _times(v: float, zh: bool = False) -> str:
    """A ratio as its table shows it (three significant digits): 135,114×, 48.2×, 6.20× (in
    Chinese: 6.20 倍)."""
    number = format_cell(v, "ratio").rstrip("×")
    return f"{number} 倍" if zh else f"{number}×"


def clock_note(clock: str) -> dict:
    """What the times mean when they are not elapsed time."""
    if clock != "cpu":
        return bi("", "")
    return bi(
        " Times are the CPU time of the measuring process on one thread: on a machine shared "
        "with other jobs they leave out the time it waited for a core, and they equal "
        "elapsed time on an idle machine.",
        "时间为测量进程在单线程上消耗的 CPU 时间：在与其他任务共享的机器上，它不计入等待 CPU "
        "的时间；在空闲机器上它与实际经过的时间相同。",
    )


def _with_note(explain: dict, clock: str) -> dict:
    note = clock_note(clock)
    return {lang: explain[lang] + note[lang] for lang in explain}


def _none(en: str = "No sizes were measured.", zh: str = "没有测量任何规模。") -> dict:
    return bi(en, zh)


# --- noise: a verdict is read only from timings whose repeats agree (lmscope.lab.timing) -----
SPREAD_LIMIT = 10  # percent; lmscope.lab.timing.MAX_SPREAD


def steady(row: dict, key: str | None = None) -> bool:
    """Whether a row's timings (or its timing ``key``) were steady; rows written before spreads
    were measured count as steady."""
    if key is None:
        return row.get("steady", True)
    return (row.get("timings") or {}).get(key, {}).get("steady", True)


def too_noisy(
    where_en: str, where_zh: str, rows: list[dict], clock: str = "wall"
) -> tuple[str, str]:
    """The sentence a verdict says instead of numbers where the machine was too noisy, or
    where too few repeats were taken to know (--repeats 1 or 2: no spread to judge by)."""
    few = _too_few_repeats(rows)
    if few is not None:
        return (
            f"No verdict at {where_en}: only {few} repeat{'s' if few != 1 else ''} there, and "
            f"it takes {MIN_REPEATS} to tell a steady timing from a noisy one, so the table "
            f"shows what was measured, but no verdict or trend is read from it. Run again "
            f"with --repeats {MIN_REPEATS} or more.",
            f"无法在{where_zh}处下结论：那里只有 {few} 次重复，而判断计时是否稳定至少需要 "
            f"{MIN_REPEATS} 次，所以表中列出的是实测值，但不据此下结论或读出趋势。请加上 "
            f"--repeats {MIN_REPEATS} 或更多重跑。",
        )
    spreads = [r.get("spread_pct") for r in rows]
    known = [x for x in spreads if x is not None]
    if known and len(known) == len(spreads):
        worst_en, worst_zh = f"up to {max(known):.0f}%", f"高达 {max(known):.0f}%"
    else:
        worst_en, worst_zh = "too much", "过大"
    return (
        f"The machine was too noisy for a verdict at {where_en}: the repeats there spread "
        f"{worst_en} (interquartile range over median; a verdict needs {SPREAD_LIMIT}% or less), "
        "so the table shows what was measured, but no verdict or trend is read from it. Run "
        "again on a quieter machine"
        + ("." if clock == "cpu" else ", or with --clock cpu --threads 1."),
        f"机器太忙，无法在{where_zh}处下结论：那里各次重复的离散度{worst_zh}（四分位距除以"
        f"中位数；下结论要求不超过 {SPREAD_LIMIT}%），所以表中列出的是实测值，但不据此下结论"
        "或读出趋势。请在更空闲的机器上重跑"
        + ("。" if clock == "cpu" else "，或加上 --clock cpu --threads 1。"),
    )


MIN_REPEATS = 3  # lmscope.lab.timing.MIN_STEADY_REPEATS: fewer say nothing about a spread


def _too_few_repeats(rows: list[dict]) -> int | None:
    """The fewest repeats behind an unknown spread, when that is why there is no verdict:
    every unsteady row's timings lack a spread and have fewer than MIN_REPEATS repeats."""
    counts = [
        t["repeats"]
        for r in rows
        for t in (r.get("timings") or {}).values()
        if not t.get("steady", True) and t.get("spread") is None and "repeats" in t
    ]
    known = [r.get("spread_pct") for r in rows if r.get("spread_pct") is not None]
    if counts and not known and max(counts) < MIN_REPEATS:
        return min(counts)
    return None


def _at_sizes(rows: list[dict]) -> tuple[str, str]:
    sizes = ", ".join(f"{r['n']:,}" for r in rows)
    return f"N = {sizes}", f" N = {sizes} "


# --- serial depth ------------------------------------------------------------------------------
def depth(rows: list[dict]) -> dict:
    verdict = _none()
    if rows:
        r = rows[-1]
        n, t = r["n"], r["tree_depth"]
        # at N = 1 there is nothing to add: no rounds, and "1× shallower" says nothing
        by_en = f": {r['ratio']:,.0f}× shallower," if t else ","
        by_zh = f"：浅了 {r['ratio']:,.0f} 倍，" if t else "，"
        verdict = bi(
            f"At N = {n:,} the recurrence is {_count(n, 'dependent step', 'dependent steps')} "
            f"deep and the tree reduction {_count(t, 'round', 'rounds')}{by_en} for the same "
            f"{_count(r['work'], 'addition', 'additions')}. Each doubling of N adds N steps to "
            "the recurrence and one round to the tree.",
            f"N = {n:,} 时，循环有 {n:,} 个前后依赖的步骤，树形归约只要 {t} 轮{by_zh}"
            f"而加法同样是 {r['work']:,} 次。N 每翻一倍，循环多出 N 步，树只多一轮。",
        )
    return _section(
        *_fixed("depth", then=SCAN_DEPTH),
        verdict,
    )


def python_timing(rows: list[dict], a: float, clock: str = "wall") -> dict:
    verdict = _none()
    calm = [r for r in rows if steady(r)]
    if calm:
        r = calm[-1]
        ratios = [x["ratio"] for x in calm]
        n = r["n"]
        rec, red = format_seconds(r["recurrence_s"]), format_seconds(r["reduction_s"])
        spread_en = spread_zh = ""
        if len(calm) > 1:
            # the noisy sizes are named after this verdict; the range is over the others
            sizes_en, sizes_zh = (
                ("the steady sizes", "各个稳定的规模")
                if len(calm) < len(rows)
                else ("sizes", "各个规模")
            )
            lo, hi = _times(min(ratios)), _times(max(ratios))
            spread_en = (
                f" Both grow linearly with N; across {sizes_en} the ratio stays between {lo} "
                f"and {hi}."
            )
            lo, hi = _times(min(ratios), zh=True), _times(max(ratios), zh=True)
            spread_zh = f"两者都随 N 线性增长；在{sizes_zh}上，倍数保持在 {lo}到 {hi}之间。"
        verdict = bi(
            f"At N = {n:,}: the recurrence takes {rec}, sum()/len {red}, {_faster(r['ratio'])} "
            f"({r['recurrence_ns_per_item']:.0f} vs {r['reduction_ns_per_item']:.1f} ns "
            f"per number).{spread_en}",
            f"N = {n:,} 时：循环耗时 {rec}，sum()/len 耗时 {red}，{_faster(r['ratio'], zh=True)}"
            f"（每个数 {r['recurrence_ns_per_item']:.0f} ns 对 "
            f"{r['reduction_ns_per_item']:.1f} ns）。{spread_zh}",
        )
    verdict = _with_noise(verdict, rows, bool(calm), clock)
    return _section(
        *_fixed("python_timing", a=a),
        verdict,
        clock,
    )


def _with_noise(verdict: dict, rows: list[dict], any_calm: bool, clock: str = "wall") -> dict:
    """A verdict followed by the too-noisy sentence for its unsteady rows (alone, when no row
    was steady)."""
    noisy = [r for r in rows if not steady(r)]
    if not noisy:
        return verdict
    en, zh = too_noisy(*_at_sizes(noisy), noisy, clock)
    if not any_calm:
        return bi(en, zh)
    return bi(f"{verdict['en']} {en}", verdict["zh"] + zh)


def equivalence(rows: list[dict]) -> dict:
    verdict = _none()
    if rows:
        worst = max(max(r["hillis_steele_rel_diff"], r["blelloch_rel_diff"]) for r in rows)
        big = rows[-1]
        n = big["n"]
        if all(r["equal"] for r in rows):
            head_en = (
                "All states agree for every N and a tested "
                f"(largest relative difference {worst:.1e})"
            )
            head_zh = f"所有测试的 N 和 a 下，全部状态都一致（最大相对差 {worst:.1e}）"
        else:
            head_en = (
                f"Some states differ beyond rounding (largest relative difference {worst:.1e})"
            )
            head_zh = f"部分状态的差别超出了舍入误差（最大相对差 {worst:.1e}）"
        verdict = bi(
            f"{head_en}. At N = {n:,} the Hillis-Steele scan needs {big['hillis_steele_rounds']} "
            f"rounds and Blelloch's {big['blelloch_rounds']}, where the recurrence needs "
            f"{_count(n, 'step', 'steps')}.",
            f"{head_zh}。N = {n:,} 时，Hillis-Steele 扫描需要 {big['hillis_steele_rounds']} 轮，"
            f"Blelloch 扫描需要 {big['blelloch_rounds']} 轮，而循环需要 {n:,} 步。",
        )
    return _section(
        *_fixed("equivalence"),
        verdict,
    )


def vector(rows: list[dict], clock: str = "wall", a: float = 0.9) -> dict:
    verdict = _none()
    calm = [r for r in rows if steady(r)]
    if calm:
        r = calm[-1]
        n = r["n"]
        verdict = bi(
            f"At N = {n:,}, a {r['hidden']}-wide state costs {r['lists_growth']:.0f}× the "
            f"scalar time with Python lists ({r['lists_us_per_step']:.1f} µs per step): the "
            f"extra arithmetic is interpreted one number at a time. With NumPy it costs "
            f"{r['numpy_growth']:.1f}× ({r['numpy_us_per_step']:.2f} µs per step): each step is "
            "one call whose fixed overhead outweighs 64 multiply-adds. Either way the N steps "
            "still run one after another; a wider state makes each step dearer, never parallel.",
            f"N = {n:,} 时，{r['hidden']} 维状态用 Python 列表要花标量版本 "
            f"{r['lists_growth']:.0f} 倍的时间（每步 {r['lists_us_per_step']:.1f} µs）：多出来的"
            f"算术被逐个数地解释执行。用 NumPy 是 {r['numpy_growth']:.1f} 倍（每步 "
            f"{r['numpy_us_per_step']:.2f} µs）：每步是一次调用，其固定开销远超 64 次乘加。"
            "无论哪种，N 步仍然一步接一步；状态变宽只会让每一步更贵，而不会变成并行。",
        )
    verdict = _with_noise(verdict, rows, bool(calm), clock)
    return _section(
        *_fixed("vector", a=a),
        verdict,
        clock,
    )


def scans(rows: list[dict], passed: int, trials: int) -> dict:
    verdict = _none()
    if rows:
        r = rows[-1]
        n, serial = r["n"], max(1, r["serial_work"])
        all_equal = all(x["hillis_steele_equal"] and x["blelloch_equal"] for x in rows)
        eq_en = "Both equal the serial scan at every size" if all_equal else "Not all sizes match"
        eq_zh = "两者在每个规模上都与串行扫描结果相同" if all_equal else "并非所有规模都一致"
        verdict = bi(
            f"At N = {n:,}: the serial scan is {r['serial_depth']:,} steps deep. Hillis-Steele "
            f"needs {r['hillis_steele_depth']} rounds but {r['hillis_steele_work']:,} additions "
            f"({r['hillis_steele_work'] / serial:.1f}× the serial work); Blelloch needs "
            f"{r['blelloch_depth']} rounds and {r['blelloch_work']:,} additions "
            f"({r['blelloch_work'] / serial:.1f}×). {eq_en}, and {passed} of {trials} random "
            "inputs of random length pass (integers exactly, floats to 1e-9 relative).",
            f"N = {n:,} 时：串行扫描深 {r['serial_depth']:,} 步。Hillis-Steele 只要 "
            f"{r['hillis_steele_depth']} 轮，但要 {r['hillis_steele_work']:,} 次加法（串行的 "
            f"{r['hillis_steele_work'] / serial:.1f} 倍）；Blelloch 要 {r['blelloch_depth']} 轮、"
            f"{r['blelloch_work']:,} 次加法（{r['blelloch_work'] / serial:.1f} 倍）。{eq_zh}；"
            f"随机长度的随机输入 {trials} 组中有 {passed} 组通过（整数完全相等，浮点数相对误差"
            "在 1e-9 以内）。",
        )
    return _section(
        *_fixed("scans"),
        verdict,
    )


def _leaves_floor(shape: dict, n_max: int) -> tuple[str, str]:
    """Where a curve leaves its fixed-cost floor, and how it grows after that."""
    if shape["knee_n"] is None:
        return (
            f"stays within 2× of its floor up to N = {n_max:,}, the largest size measured",
            f"直到测量的最大规模 N = {n_max:,} 都保持在底线的 2 倍以内",
        )
    if shape["knee_n"] >= n_max:  # the last point: nothing is known about "after that"
        return (
            f"stays on its floor until N = {n_max:,}, the largest size measured, where it "
            "rises above it",
            f"直到测量的最大规模 N = {n_max:,} 才高于底线",
        )
    tail = shape["slope_after_knee"]
    if tail is None:
        grows_en, grows_zh = "rises above it", "开始上升"
    elif tail >= 0.6:
        grows_en, grows_zh = (
            f"grows with N (log-log slope {tail:.2f})",
            f"随 N 增长（双对数斜率 {tail:.2f}）",
        )
    else:
        grows_en = f"rises more slowly than N (log-log slope {tail:.2f})"
        grows_zh = f"上升得比 N 慢（双对数斜率 {tail:.2f}）"
    marginal = shape.get("marginal_s")
    if not marginal or marginal <= 0:
        return (
            f"leaves its floor for good at N = {shape['knee_n']:,} and then {grows_en}",
            f"从 N = {shape['knee_n']:,} 起持续高于底线，此后{grows_zh}",
        )
    extra = format_seconds(marginal)
    return (
        f"leaves its floor for good at N = {shape['knee_n']:,} and then {grows_en}; at the top "
        f"of the range each extra number costs about {extra}",
        f"从 N = {shape['knee_n']:,} 起持续高于底线，此后{grows_zh}；在最大规模附近，每多一个数"
        f"约多花 {extra}",
    )


def torch_sweep(rows: list[dict], shapes: dict, a: float, clock: str = "wall") -> dict:
    verdicts_en, verdicts_zh = [], []
    names = {"loop": ("the loop", "循环"), "sum": ("x.sum()", "x.sum()")}
    names |= {
        "chunked": ("the chunked scan", "分块扫描"),
        "assoc": ("the associative scan", "结合律扫描"),
    }
    for device, shape in shapes.items():
        mine = [r for r in rows if r["device"] == device]
        if not mine:
            continue
        big = mine[-1]
        n = big["n"]
        loop, total = shape["loop"], shape["sum"]
        err = max(max(r["chunked_rel_err"], r["assoc_rel_err"]) for r in mine)
        # a curve is described only when every one of its points was steady
        calm = {key: all(steady(r, key) for r in mine) for key in names}
        gpu = device.startswith("cuda")
        floor_en = "one call into PyTorch" + (" plus a kernel launch" if gpu else "")
        floor_zh = "一次 PyTorch 调用" + ("加一次 kernel 启动" if gpu else "")
        en, zh = [], []
        if calm["loop"] and loop["slope_all"] is None:  # one size: no slope to read
            en.append(
                f"the loop takes {format_seconds(big['loop_s'])} at N = {n:,} "
                f"({format_seconds(loop['per_item_s'])} per step); one size only was measured, "
                "so no slope can be read from it."
            )
            zh.append(
                f"N = {n:,} 时循环耗时 {format_seconds(big['loop_s'])}（每步 "
                f"{format_seconds(loop['per_item_s'])}）；只测了一个规模，读不出斜率。"
            )
        elif calm["loop"]:
            linear = loop["slope_all"] > 0.85
            linear_en = "linearly from the smallest size" if linear else "steadily"
            linear_zh = "从最小规模起就线性增长" if linear else "稳定增长"
            en.append(
                f"the loop grows {linear_en} (log-log slope {loop['slope_all']:.2f}, "
                f"{format_seconds(loop['per_item_s'])} per step) and takes "
                f"{format_seconds(big['loop_s'])} at N = {n:,}."
            )
            zh.append(
                f"循环{linear_zh}（双对数斜率 {loop['slope_all']:.2f}，每步 "
                f"{format_seconds(loop['per_item_s'])}），N = {n:,} 时耗时 "
                f"{format_seconds(big['loop_s'])}。"
            )
        if calm["sum"]:
            sum_en, sum_zh = _leaves_floor(total, n)
            en.append(
                f"x.sum() starts on a floor of {format_seconds(total['floor_s'])}, the fixed "
                f"cost of {floor_en}, {sum_en}."
            )
            zh.append(
                f"x.sum() 从 {format_seconds(total['floor_s'])} 的底线开始，这是{floor_zh}的"
                f"固定开销，{sum_zh}。"
            )
        if calm["chunked"]:
            scan_en, scan_zh = _leaves_floor(shape["chunked"], n)
            chunk_floor = format_seconds(shape["chunked"]["floor_s"])
            en.append(
                "The chunked scan makes tens of small calls, so its floor is higher "
                f"({chunk_floor}); it {scan_en}."
            )
            zh.append(f"分块扫描要发起几十次小调用，所以底线更高（{chunk_floor}），它{scan_zh}。")
        if calm["loop"] and calm["sum"] and calm["chunked"]:
            en.append(
                f"At N = {n:,} the loop is {_faster(1 / big['loop_over_sum'])} than x.sum() "
                f"and {_faster(1 / big['loop_over_chunked'])} than the chunked scan, which "
                f"computes the same {_count(n, 'state', 'states')} (largest relative difference "
                f"{err:.1e})."
            )
            zh.append(
                f"N = {n:,} 时，循环比 x.sum() {_faster(1 / big['loop_over_sum'], zh=True)}，比分块"
                f"扫描{_faster(1 / big['loop_over_chunked'], zh=True)}，而分块扫描算出的是同样的 "
                f"{n:,} 个状态"
                f"（最大相对差 {err:.1e}）。"
            )
        else:
            en.append(
                f"Both scans compute the same states as the loop (largest relative difference "
                f"{err:.1e})."
            )
            zh.append(f"两种扫描算出的状态都与循环相同（最大相对差 {err:.1e}）。")
        noisy = [key for key in names if not calm[key]]
        if noisy:
            points = [r for r in mine if any(not steady(r, key) for key in noisy)]
            sizes = ", ".join(f"{r['n']:,}" for r in points)
            which_en = ", ".join(names[key][0] for key in noisy)
            which_zh = "、".join(names[key][1] for key in noisy)
            noise_en, noise_zh = too_noisy(
                f"N = {sizes} ({which_en})", f" N = {sizes}（{which_zh}）", points, clock
            )
            en.append(noise_en)
            zh.append(noise_zh)
        # the device as the table's column shows it: "CPU" in Chinese, not "cpu"
        verdicts_en.append(f"On {device}: " + " ".join(en))
        verdicts_zh.append(f"在 {zh_cell(device)} 上：" + "".join(zh))
    verdict = bi(" ".join(verdicts_en), "".join(verdicts_zh)) if verdicts_en else _none()
    return _section(
        *_fixed("torch_sweep", a=a),
        verdict,
        clock,
    )


def stability(rows: list[dict], a: float, block: int, probe: int = 1 << 20) -> dict:
    """The verdict on the closed form for the learner's own ``a``; the table's other rows are
    the usual decays, never quoted in its place."""
    if a == 0:  # not in the table: a^-s is a division by zero from the first step
        return _section(
            *_fixed("stability"),
            bi(
                "With a = 0 the one-line closed form divides by a^s = 0 and is non-finite from "
                "the first step; the recurrence is then just h_t = x_t, so the chunked scan "
                "uses blocks of one step and carries nothing.",
                "a = 0 时，一行闭式要除以 a^s = 0，从第一步起就是非有限值；此时循环就是 "
                "h_t = x_t，所以分块扫描用一步长的块，不需要传递任何进位。",
            ),
        )
    if abs(a) == 1:  # not in the table either: every power of a is ±1
        signs_en = " with alternating signs" if a < 0 else ""
        signs_zh = "（符号交替）" if a < 0 else ""
        return _section(
            *_fixed("stability"),
            bi(
                f"With a = {a:g} every power a^s is ±1, so the one-line closed form is a plain "
                f"cumsum{signs_en} and never overflows; the blocks only matter for |a| < 1 "
                "(the rows of the table).",
                f"a = {a:g} 时，a^s 的每个幂都是 ±1，所以一行闭式就是普通的 cumsum{signs_zh}，"
                "永远不会溢出；只有 |a| < 1 时（表中各行）才需要分块。",
            ),
        )
    mine = next((r for r in rows if r["a"] == a and r["dtype"] == "float32"), None)
    if mine is None:
        return _section(*_fixed("stability"), _none())
    if mine["breaks_at"] is None:
        verdict = bi(
            f"With a = {a:g} in float32 the one-line closed form stays finite over all "
            f"{probe:,} positions probed: a^-s grows too slowly to overflow that soon. Blocks "
            f"of at most {block} steps keep it that way at any length.",
            f"a = {a:g}、float32 时，一行闭式在探测的全部 {probe:,} 个位置上都保持有限："
            f"a^-s 增长太慢，这么早还不会溢出。把块长限制在 {block} 步以内，任何长度都能如此。",
        )
    else:
        verdict = bi(
            f"With a = {a:g} in float32 the one-line closed form is already non-finite at "
            f"N = {mine['breaks_at']:,}. Blocks of at most {block} steps (fewer when |a| is "
            "small) keep every power in range, and the chunked scan then agrees with the loop "
            "to rounding at every N of the sweep.",
            f"a = {a:g}、float32 时，一行闭式在 N = {mine['breaks_at']:,} 就已出现非有限值。"
            f"把块长限制在 {block} 步以内（|a| 较小时更短）可以让所有幂都留在可表示范围内，"
            "这样分块扫描在计时的每个 N 上都与循环一致，差别只在舍入误差之内。",
        )
    return _section(
        *_fixed("stability"),
        verdict,
    )


# --- memory wall ------------------------------------------------------------------------------
def _slope(n0: int, y0: float, n1: int, y1: float) -> float:
    return math.log(y1 / y0) / math.log(n1 / n0)


def _took(
    row: dict, method: str, en: str, zh: str, noisy: tuple[str, str] = ("", "")
) -> tuple[str, str]:
    """``method``'s time at ``row`` put in the words ``en`` and ``zh`` ({time}), or the words
    ``noisy`` when its repeats disagreed: an unsteady time is not quoted."""
    if not steady(row, method):
        return noisy
    time = format_seconds(row[f"{method}_s"])
    return en.format(time=time), zh.format(time=time)


# how memory_wall measured a peak (params["peak_method"]), in Chinese
PEAK_METHOD_ZH = {
    "peak resident set size, VmHWM, reset through /proc/self/clear_refs": (
        "常驻内存峰值 VmHWM，经 /proc/self/clear_refs 重置"
    ),
    "CUDA max_memory_allocated": "CUDA 的 max_memory_allocated",
}


def attention(rows: list[dict], params: dict, limits: list[dict]) -> dict:
    heads, dtype = params["heads"], params["dtype"]
    en, zh = [], []
    naive = [r for r in rows if r["naive_peak"]]
    sdpa = [r for r in rows if r["sdpa_peak"] is not None]
    lstm = [r for r in rows if r["lstm_peak"] is not None]
    if naive:
        r = naive[-1]
        ratio = statistics.median(x["naive_over_theory"] for x in naive)
        en.append(
            f"Naive attention at N = {r['n']:,} peaked at {format_bytes(r['naive_peak'])}, "
            f"{r['naive_over_theory']:.1f}× one score matrix ({format_bytes(r['theory_bytes'])}"
            f" for {heads} heads): the scores and their softmax both live at once (median "
            f"{ratio:.1f}× across sizes). Every doubling of N quadruples it."
        )
        zh.append(
            f"朴素注意力在 N = {r['n']:,} 时峰值为 {format_bytes(r['naive_peak'])}，是一份分数"
            f"矩阵（{heads} 个头共 {format_bytes(r['theory_bytes'])}）的 "
            f"{r['naive_over_theory']:.1f} 倍：分数和它的 softmax 同时存在（各规模中位数 "
            f"{ratio:.1f} 倍）。N 每翻一倍，它就变成四倍。"
        )
    if sdpa:
        r = sdpa[-1]
        backend = params.get("sdpa_backend") or "fused"
        out_bytes = r["n"] * heads * params["d_head"] * params["batch"]
        out_bytes *= params["bytes_per_element"]
        growth_en = growth_zh = ""
        if len(sdpa) > 1 and sdpa[0]["sdpa_peak"] > 0 and r["sdpa_peak"] > 0:
            slope = _slope(sdpa[0]["n"], sdpa[0]["sdpa_peak"], r["n"], r["sdpa_peak"])
            growth_en = f"; from N = {sdpa[0]['n']:,} its peak grew with log-log slope {slope:.2f}"
            growth_zh = f"；从 N = {sdpa[0]['n']:,} 起，它的峰值在双对数坐标上的斜率为 {slope:.2f}"
        work_en = work_zh = ""
        before = next((x for x in sdpa if x["n"] * 2 == r["n"]), None)
        if before and steady(r, "sdpa") and steady(before, "sdpa") and before["sdpa_s"]:
            grew = r["sdpa_s"] / before["sdpa_s"]
            work_en = (
                f": its time grew {grew:.1f}× from N = {before['n']:,} to {r['n']:,} "
                "(O(N²) work alone would make it 4×)"
            )
            work_zh = (
                f"：从 N = {before['n']:,} 到 {r['n']:,}，它的耗时变成了 {grew:.1f} 倍"
                "（单看 O(N²) 的计算量应为 4 倍）"
            )
        took_en, took_zh = _took(r, "sdpa", ", in {time}", "，耗时 {time}")
        en.append(
            f"scaled_dot_product_attention (backend {backend}) at N = {r['n']:,} peaked at "
            f"{format_bytes(r['sdpa_peak'])}, "
            f"{r['theory_bytes'] / max(r['sdpa_peak'], 1):,.0f}× less than one score matrix and "
            f"{r['sdpa_peak'] / out_bytes:.1f}× its own output (N × heads × d_head)"
            f"{took_en}{growth_en}. Memory O(N), but not work O(N): it still computes all "
            f"N²/2 scores, a tile at a time{work_en}."
        )
        zh.append(
            f"scaled_dot_product_attention（后端 {backend}）在 N = {r['n']:,} 时峰值为 "
            f"{format_bytes(r['sdpa_peak'])}，比一份分数矩阵小 "
            f"{r['theory_bytes'] / max(r['sdpa_peak'], 1):,.0f} 倍，约为它自身输出"
            f"（N × 头数 × d_head）的 {r['sdpa_peak'] / out_bytes:.1f} 倍{took_zh}{growth_zh}。"
            f"显存是 O(N)，计算量却不是：它仍要算出全部 N²/2 个分数，只是一块一块地算{work_zh}。"
        )
    if lstm:
        r = lstm[-1]
        # a noisy time is not quoted, but the sentence must still say what the LSTM did
        steps = ("still had to run", f"仍要走 {r['n']:,} 步")
        took_en, took_zh = _took(r, "lstm", "took {time}", "耗时 {time}", steps)
        en.append(
            f"The LSTM carries {format_bytes(r['lstm_state_bytes'])} of state at any N, and at "
            f"N = {r['n']:,} its measured peak above the inputs was "
            f"{format_bytes(r['lstm_peak'])} (resident memory is tracked in 4 KiB pages), but "
            f"it {took_en}, one step after another."
        )
        zh.append(
            f"LSTM 在任何 N 下都只携带 {format_bytes(r['lstm_state_bytes'])} 的状态；N = "
            f"{r['n']:,} 时，它在输入之外的实测峰值为 {format_bytes(r['lstm_peak'])}"
            f"（常驻内存按 4 KiB 页统计），但{took_zh}，因为它只能一步接一步地走。"
        )
    noisy = [r for r in rows if not steady(r)]
    if noisy:  # the memory is measured once and is not noisy; only the times are withheld
        noise_en, noise_zh = too_noisy(*_at_sizes(noisy), noisy, params.get("clock", "wall"))
        en.append(f"Times: {noise_en[0].lower()}{noise_en[1:]}")  # one sentence, not two
        zh.append(f"耗时：{noise_zh}")
    stops = [x for x in limits if x["first_not_fit"]]
    for x in stops:
        name_en, name_zh = method_names(x["method"])
        en.append(
            f"{name_en[0].upper()}{name_en[1:]} stopped at N = {x['first_not_fit']:,}: it did "
            f"not fit in the {format_bytes(params['budget_bytes'])} budget."
        )
        gap = " " if name_zh[-1].isascii() else ""  # "LSTM 在", "朴素注意力在"
        zh.append(
            f"{name_zh}{gap}在 N = {x['first_not_fit']:,} 处停止：超出了 "
            f"{format_bytes(params['budget_bytes'])} 的内存预算。"
        )
    verdict = bi(" ".join(en), "".join(zh)) if en else _none()
    return _section(
        *_fixed(
            "attention",
            then=FLASH,
            batch=params["batch"],
            d_head=params["d_head"],
            device=params["device"],
            device_zh=zh_cell(params["device"]),  # "CPU", as the tables write it
            dtype=dtype,
            heads=heads,
            peak_method=params["peak_method"],
            peak_method_zh=PEAK_METHOD_ZH.get(params["peak_method"], params["peak_method"]),
        ),
        verdict,
        params.get("clock", "wall"),
    )


def _n(value: int | None, missing: str) -> str:
    return f"{value:,}" if value else missing


# The memory wall's methods as a sentence names them (the code's names read as code in prose,
# and "naive" is no Chinese word); a name not listed is shown as it is.
METHOD_NAMES = {
    "naive": ("naive attention", "朴素注意力"),
    "sdpa": ("scaled_dot_product_attention", "scaled_dot_product_attention"),
    "lstm": ("the LSTM", "LSTM"),
}


def method_names(method: str) -> tuple[str, str]:
    return METHOD_NAMES.get(method, (method, method))


def limits(rows: list[dict], budget: int) -> dict:
    en, zh = [], []
    for r in rows:
        zh_name = method_names(r["method"])[1]  # the English keeps the table's code name
        if r["first_not_fit"] and r["largest_fit"] is None:
            en.append(f"{r['method']}: not even N = {r['first_not_fit']:,} fit; it stopped there.")
            zh.append(f"{zh_name}：连 N = {r['first_not_fit']:,} 都放不下，就此停止。")
        elif r["first_not_fit"]:
            en.append(
                f"{r['method']}: largest N that fit {_n(r['largest_fit'], 'none')}, stopped at "
                f"N = {r['first_not_fit']:,}."
            )
            zh.append(
                f"{zh_name}：能放下的最大 N 为 {_n(r['largest_fit'], '无')}，在 N = "
                f"{r['first_not_fit']:,} 处停止。"
            )
        else:
            en.append(f"{r['method']}: every size fit, up to N = {r['largest_fit']:,}.")
            zh.append(f"{zh_name}：所有规模都放得下，直到 N = {r['largest_fit']:,}。")
    return _section(
        *_fixed("limits", budget=format_bytes(budget)),
        bi(" ".join(en), "".join(zh)) if en else _none(),
    )


def kv_cache(rows: list[dict], dtypes) -> dict:
    verdict = _none()
    if rows:
        small, big = rows[0], rows[-1]
        d0 = dtypes[0]
        verdict = bi(
            f"{small['model']} stores {small[f'per_token_{d0}']:,} bytes of keys and values "
            f"per token in {d0} ({format_bytes(small[f'full_{d0}'])} at its full "
            f"{small['n_ctx']:,}-token context); {big['model']} stores "
            f"{big[f'per_token_{d0}']:,} bytes per token ({format_bytes(big[f'full_{d0}'])}). "
            "Half precision halves every number. The cache grows linearly with the tokens "
            "kept, while an RNN's state does not grow at all.",
            f"{small['model']} 在 {d0} 下每个 token 存 {small[f'per_token_{d0}']:,} 字节的键和值"
            f"（满 {small['n_ctx']:,} token 上下文时共 {format_bytes(small[f'full_{d0}'])}）；"
            f"{big['model']} 每个 token 存 {big[f'per_token_{d0}']:,} 字节"
            f"（{format_bytes(big[f'full_{d0}'])}）。半精度让每个数字减半。缓存随保留的 token "
            "数线性增长，而 RNN 的状态根本不增长。",
        )
    return _section(
        *_fixed("kv_cache"),
        verdict,
    )


# --- the race: LSTM vs GPT ---------------------------------------------------------------------
RACE_TITLE = bi(
    "Why Transformers: the race — an LSTM and a GPT of equal size, same data, same time",
    "为什么是 Transformer：赛跑——参数量相同的 LSTM 与 GPT，相同数据、相同时间",
)
_CLOCK_WORDS = {
    "wall": ("elapsed time", "实际经过的时间"),
    "cpu": ("CPU time", "CPU 时间"),
}


def _duration(seconds: float, zh: bool = False, unit_of: float | None = None) -> str:
    """Minutes for long times, seconds for short ones: 2.1 min, 45 s (2.1 分钟, 45 秒).
    ``unit_of``: the shortest time in the same sentence, so all of them share one unit
    (minutes only when every one is long: 83.9 s and 143 s, not 1.4 min and 2.4 min)."""
    if min(seconds, unit_of if unit_of is not None else seconds) >= 120:
        return f"{seconds / 60:.1f} 分钟" if zh else f"{seconds / 60:.1f} min"
    return f"{seconds:.3g} 秒" if zh else f"{seconds:.3g} s"


def _where_zh(s: dict, clock_zh: str) -> str:
    """ "CPU 时间，1 个线程": the clock, then the device unless the clock already named it."""
    where = s.get("where_zh", s["where"])
    if s["clock"] == "cpu" and where.startswith("CPU，"):
        where = where[len("CPU，") :]
    return f"{clock_zh}，{where}"


def race_speed(rows: list[dict], s: dict) -> dict:
    by = {r["arch"]: r for r in rows}
    rival, gpt = by[s["rival"]], by["gpt"]
    rival_zh = zh_cell(rival["model"])
    ratio, low, high = s["ratio"], *s["claim"]
    clock_en, clock_zh = _CLOCK_WORDS[s["clock"]]
    shortest = min(rival["epoch_s"], gpt["epoch_s"])
    measured_en = (
        f"At N = {s['context']} an epoch ({s['epoch_tokens']:,} characters) takes the "
        f"{rival['model']} {_duration(rival['epoch_s'], unit_of=shortest)} and the GPT "
        f"{_duration(gpt['epoch_s'], unit_of=shortest)} of {clock_en} ({s['where']})"
    )
    measured_zh = (
        f"N = {s['context']} 时，一个 epoch（{s['epoch_tokens']:,} 个字符）{rival_zh} 需要 "
        f"{_duration(rival['epoch_s'], True, shortest)}，GPT 需要 "
        f"{_duration(gpt['epoch_s'], True, shortest)}（{_where_zh(s, clock_zh)}）"
    )
    # epoch time = work per token / speed, so the ratio splits into these two factors
    work = gpt["flops_per_token"] / rival["flops_per_token"]
    why_en = (
        f" Per token the GPT does {work:.2f}× the {rival['model']}'s work (forward FLOPs) and "
        f"runs it at {gpt['gflops']:,.0f} GFLOP/s against the {rival['model']}'s "
        f"{rival['gflops']:,.0f}."
    )
    why_zh = (
        f"每个 token 上 GPT 的工作量（前向 FLOPs）是 {rival_zh} 的 {work:.2f} 倍，"
        f"运行速度为 {gpt['gflops']:,.0f} GFLOP/s，{rival_zh} 为 {rival['gflops']:,.0f}。"
    )
    if not s.get("steady", True):
        noisy = [r for r in rows if not r.get("steady", True)]
        which = ", ".join(f"the {r['model']}" for r in noisy)
        noise_en, noise_zh = too_noisy(
            f"{which}'s training steps",
            "、".join(zh_cell(r["model"]) for r in noisy) + " 的训练步骤",
            noisy,
            s["clock"],
        )
        verdict = bi(
            f"No verdict on the claim from this run. {noise_en} Per token the GPT does "
            f"{work:.2f}× the {rival['model']}'s work (forward FLOPs, counted, not timed).",
            f"这次运行不能对课程的说法下结论。{noise_zh}每个 token 上 GPT 的工作量（前向 FLOPs，"
            f"按公式计数而非计时）是 {rival_zh} 的 {work:.2f} 倍。",
        )
    elif s["held"] == "yes":
        beyond = ", more than the lesson's range" if ratio > high else ""
        beyond_zh = "，超出了课程给出的范围" if ratio > high else ""
        verdict = bi(
            f"The claim held on this hardware. {measured_en}: the GPT trains "
            f"{ratio:.2f}× faster per epoch (the lesson: {low:g}–{high:g}×){beyond}.{why_en}",
            f"在这台硬件上，课程的说法成立。{measured_zh}：GPT 每个 epoch 快 {ratio:.2f} 倍"
            f"（课程：{low:g}–{high:g} 倍）{beyond_zh}。{why_zh}",
        )
    elif s["held"] == "partly":
        verdict = bi(
            f"The claim held only in part on this hardware. {measured_en}: the GPT is faster "
            f"per epoch, but by {ratio:.2f}×, not the lesson's {low:g}–{high:g}×.{why_en}",
            f"在这台硬件上，课程的说法只部分成立。{measured_zh}：GPT 每个 epoch 确实更快，"
            f"但只快 {ratio:.2f} 倍，不到课程说的 {low:g}–{high:g} 倍。{why_zh}",
        )
    else:
        verdict = bi(
            f"The claim did not hold on this hardware. {measured_en}: the "
            f"{rival['model']} is {1 / ratio:.2f}× faster per epoch; the GPT runs at "
            f"{ratio:.2f}× the {rival['model']}'s speed instead of {low:g}–{high:g}× "
            f"faster.{why_en} The lesson's speed-up needs parallel hardware (see the "
            "explanation).",
            f"在这台硬件上，课程的说法不成立。{measured_zh}：{rival_zh} 每个 epoch 反而快 "
            f"{1 / ratio:.2f} 倍，GPT 的速度只有 {rival_zh} 的 {ratio:.2f} 倍，而不是快 "
            f"{low:g}–{high:g} 倍。{why_zh}课程所说的加速需要并行硬件（见说明）。",
        )
    return _section(
        *_fixed("race_speed", clock_en=clock_en, clock_zh=clock_zh),
        verdict,
        s["clock"],
    )


def race_loss(rows: list[dict], s: dict) -> dict:
    clock_en, clock_zh = _CLOCK_WORDS[s["clock"]]
    ends = {r["arch"]: r["val_loss"] for r in rows}
    names = {r["arch"]: r["model"] for r in rows}
    en_call, zh_call = _who_is_ahead(ends, names, s.get("val_margin"), when="at equal time")
    en = (
        f"After {_duration(s['budget_s'])} of {clock_en} each, the val loss is "
        f"{_losses(ends, names)} (lower is better): {en_call}."
    )
    zh = (
        f"各自训练 {_duration(s['budget_s'], True)}（{clock_zh}）之后，验证损失为 "
        f"{_losses(ends, names, True)}（越低越好）：相同时间下 {zh_call}。"
    )
    at = {a: v for a, v in s["val_at_common_tokens"].items() if v is not None and a in names}
    if len(at) > 1:  # every model that ran (results before this kept two)
        tokens = f"{s['common_tokens']:,}"
        en_call, zh_call = _who_is_ahead(at, names, s.get("val_margin"), learned=True)
        sep_en, sep_zh = ("; ", "；") if "close to call" in en_call else (", ", "，")
        en += f" At the same {tokens} tokens seen: {_losses(at, names)}{sep_en}{en_call}."
        zh += f"读过相同的 {tokens} 个 token 时：{_losses(at, names, True)}{sep_zh}{zh_call}。"
    return _section(
        *_fixed("race_loss"),
        bi(en, zh),
        s["clock"],
    )


def _losses(values: dict[str, float], names: dict[str, str], zh: bool = False) -> str:
    said = [f"{zh_cell(names[a]) if zh else names[a]} {v:.3f}" for a, v in values.items()]
    return ("，" if zh else ", ").join(said)


def _who_is_ahead(
    values: dict[str, float],
    names: dict[str, str],
    margin: float | None,
    learned: bool = False,
    when: str = "",
) -> tuple[str, str]:
    """Who has the lowest loss, or that the best two are too close to call: closer than
    ``margin`` (what a val loss moved over its last evaluation interval). ``when``: the
    English words that say at what (the Chinese sentence says it before)."""
    order = sorted(values, key=values.get)
    best, gap = order[0], values[order[1]] - values[order[0]]
    en_name, zh_name = names[best], zh_cell(names[best])
    if margin is not None and gap < margin:
        pair_en = f"the {names[order[0]]} and the {names[order[1]]}"
        pair_zh = f"{zh_cell(names[order[0]])} 和 {zh_cell(names[order[1]])}"
        return (
            f"{when + ' ' if when else ''}{pair_en} are too close to call (they differ by "
            f"{gap:.3f}, less than the {margin:.3f} a val loss moved over its last evaluation "
            "interval)",
            f"{pair_zh} 难分高下（相差 {gap:.3f}，小于验证损失在最后一个评估间隔内的变化 "
            f"{margin:.3f}）",
        )
    if learned:
        most = "more" if len(values) == 2 else "the most"
        most_zh = "更多" if len(values) == 2 else "最多"
        return (
            f"so per character read the {en_name} learned {most}",
            f"即按读过的字符算，{zh_name} 学到的{most_zh}",
        )
    return f"the {en_name} is ahead {when}".rstrip(), f"{zh_name} 领先"
