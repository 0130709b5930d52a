"""What each lab table and plot shows: titles, explanations and verdicts, as catalog texts.

Every section gets a title, a fixed explanation and a verdict. The verdict is written from
the measured rows, so the sentence a reader takes away always quotes the numbers in the same
file. Nothing here is a sentence: each text is a catalog id (``lab.…``) with its values
(``say``), kept in result.json as data and rendered in the reader's language when shown
(``lmscope.lab.results.shown``); a verdict of several sentences is a list of them.
"""

from __future__ import annotations

import math
import statistics

from lmscope.lab.results import (
    cell_text,
    format_bytes,
    format_cell,
    format_seconds,
    say,
    sentences,
)

SERIAL_DEPTH_TITLE = say("lab.serial-depth.title")
MEMORY_WALL_TITLE = say("lab.memory-wall.title")
RACE_TITLE = say("lab.race.title")

# Where the lesson's figures need correcting: said next to the measurements they concern (the
# memory wall, serial depth) and on the /why page.
FLASH = say("lab.note.flash")
SCAN_DEPTH = say("lab.note.scan-depth")

# The sections whose title and explanation are fixed texts: lab.<section>.title, .explain
# (ids made of parts: lmscope.lab.catalog_ids lists them)
SECTIONS = (
    "depth",
    "python-timing",
    "equivalence",
    "vector",
    "scans",
    "torch-sweep",
    "stability",
    "attention",
    "limits",
    "kv-cache",
    "race-speed",
    "race-loss",
)
METHODS = ("naive", "sdpa", "lstm")  # the memory wall's, as its limits table says them
DEVICES = ("cpu", "cuda")  # as the tables say them; cuda:1 is a name
METHOD_CELLS, DEVICE_CELLS = "lab.method.{}", "lab.device.{}"  # their ids (tables.json's too)


def _fixed(key: str, then=None, **values) -> tuple[dict, list]:
    """Section ``key``'s title and explanation (lab.<key>.title, .explain), ``values`` filling
    the explanation, ``then`` a note said after it."""
    title, explain = (".".join(("lab", key, part)) for part in ("title", "explain"))
    return say(title), sentences(say(explain, **values), then)


def _section(title, explain, verdict, clock: str = "wall") -> dict:
    return {"title": title, "explain": _with_note(explain, clock), "verdict": verdict}


def _times(v: float) -> dict:
    """A ratio as its table shows it (three significant digits): 135,114×, 48.2×, 6.20×."""
    return say("lab.times", times=format_cell(v, "ratio").rstrip("×"))


def _faster(ratio: float) -> dict:
    """How many times faster the second of two timings is (time of the first over it), or
    slower when the ratio is below 1: 6.2× faster, 1.5× slower."""
    if ratio >= 1:
        return say("lab.faster", times=format_cell(ratio, "ratio").rstrip("×"))
    return say("lab.slower", times=format_cell(1 / ratio, "ratio").rstrip("×"))


def clock_note(clock: str) -> dict | None:
    """What the times mean when they are not elapsed time."""
    return say("lab.note.cpu-time") if clock == "cpu" else None


def _with_note(explain, clock: str) -> list:
    return sentences(explain, clock_note(clock))


def _none() -> dict:
    return say("lab.none-measured")


# --- noise: a verdict is read only from timings whose repeats agree (lmscope.lab.timing) -----
SPREAD_LIMIT = 10  # percent; lmscope.lab.timing.MAX_SPREAD


def steady(row: dict, key: str | None = None) -> bool:
    """Whether a row's timings (or its timing ``key``) were steady; rows written before spreads
    were measured count as steady."""
    if key is None:
        return row.get("steady", True)
    return (row.get("timings") or {}).get(key, {}).get("steady", True)


def too_noisy(where, rows: list[dict], clock: str = "wall") -> dict:
    """The sentence a verdict says instead of numbers where the machine was too noisy, or
    where too few repeats were taken to know (--repeats 1 or 2: no spread to judge by);
    ``where`` is a text or a name (N = 1,024)."""
    few = _too_few_repeats(rows)
    if few is not None:
        return say("lab.noise.few-repeats", where=where, few=few, min=MIN_REPEATS)
    spreads = [r.get("spread_pct") for r in rows]
    known = [x for x in spreads if x is not None]
    if known and len(known) == len(spreads):
        worst = say("lab.noise.up-to", pct=f"{max(known):.0f}")
    else:
        worst = say("lab.noise.too-much")
    said = "lab.noise.spread-cpu" if clock == "cpu" else "lab.noise.spread"
    return say(said, where=where, worst=worst, limit=SPREAD_LIMIT)


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


def _at_sizes(rows: list[dict]) -> str:
    return "N = " + ", ".join(f"{r['n']:,}" for r in rows)


# --- serial depth ------------------------------------------------------------------------------
def depth(rows: list[dict]) -> dict:
    verdict = _none()
    if rows:
        r = rows[-1]
        values = {"n": r["n"], "rounds": r["tree_depth"], "work": r["work"]}
        if r["tree_depth"]:
            verdict = say("lab.depth.verdict", ratio=f"{r['ratio']:,.0f}", **values)
        else:  # at N = 1 there is nothing to add: no rounds, and "1× shallower" says nothing
            verdict = say("lab.depth.verdict-flat", **values)
    return _section(*_fixed("depth", then=SCAN_DEPTH), verdict)


def python_timing(rows: list[dict], a: float, clock: str = "wall") -> dict:
    verdict = _none()
    calm = [r for r in rows if steady(r)]
    if calm:
        r = calm[-1]
        ratios = [x["ratio"] for x in calm]
        spread = None
        if len(calm) > 1:
            # the noisy sizes are named after this verdict; the range is over the others
            sizes = say("lab.steady-sizes" if len(calm) < len(rows) else "lab.sizes")
            spread = say(
                "lab.python-timing.spread",
                sizes=sizes,
                low=_times(min(ratios)),
                high=_times(max(ratios)),
            )
        verdict = sentences(
            say(
                "lab.python-timing.verdict",
                n=r["n"],
                recurrence=format_seconds(r["recurrence_s"]),
                reduction=format_seconds(r["reduction_s"]),
                faster=_faster(r["ratio"]),
                recurrence_ns=f"{r['recurrence_ns_per_item']:.0f}",
                reduction_ns=f"{r['reduction_ns_per_item']:.1f}",
            ),
            spread,
        )
    verdict = _with_noise(verdict, rows, bool(calm), clock)
    return _section(*_fixed("python-timing", a=f"{a:g}"), verdict, clock)


def _with_noise(verdict, rows: list[dict], any_calm: bool, clock: str = "wall"):
    """A verdict followed by the too-noisy sentence for its unsteady rows (alone, when no row
    was steady)."""
    noisy = [r for r in rows if not steady(r)]
    if not noisy:
        return verdict
    said = too_noisy(_at_sizes(noisy), noisy, clock)
    return sentences(verdict, said) if any_calm else said


def equivalence(rows: list[dict]) -> dict:
    verdict = _none()
    if rows:
        worst = max(max(r["hillis_steele_rel_diff"], r["blelloch_rel_diff"]) for r in rows)
        big = rows[-1]
        agree = (
            "lab.equivalence.all-agree"
            if all(r["equal"] for r in rows)
            else ("lab.equivalence.some-differ")
        )
        verdict = say(
            "lab.equivalence.verdict",
            head=say(agree, worst=f"{worst:.1e}"),
            n=big["n"],
            hillis_steele=big["hillis_steele_rounds"],
            blelloch=big["blelloch_rounds"],
        )
    return _section(*_fixed("equivalence"), verdict)


def vector(rows: list[dict], clock: str = "wall", a: float = 0.9) -> dict:
    verdict = _none()
    calm = [r for r in rows if steady(r)]
    if calm:
        r = calm[-1]
        verdict = say(
            "lab.vector.verdict",
            n=r["n"],
            hidden=r["hidden"],
            lists=f"{r['lists_growth']:.0f}",
            lists_us=f"{r['lists_us_per_step']:.1f}",
            numpy=f"{r['numpy_growth']:.1f}",
            numpy_us=f"{r['numpy_us_per_step']:.2f}",
        )
    verdict = _with_noise(verdict, rows, bool(calm), clock)
    return _section(*_fixed("vector", a=f"{a:g}"), verdict, clock)


def scans(rows: list[dict], passed: int, trials: int) -> dict:
    verdict = _none()
    if rows:
        r = rows[-1]
        serial = max(1, r["serial_work"])
        all_equal = all(x["hillis_steele_equal"] and x["blelloch_equal"] for x in rows)
        verdict = say(
            "lab.scans.verdict",
            n=r["n"],
            serial_depth=r["serial_depth"],
            hs_depth=r["hillis_steele_depth"],
            hs_work=r["hillis_steele_work"],
            hs_times=f"{r['hillis_steele_work'] / serial:.1f}",
            bl_depth=r["blelloch_depth"],
            bl_work=r["blelloch_work"],
            bl_times=f"{r['blelloch_work'] / serial:.1f}",
            equal=say("lab.scans.all-equal" if all_equal else "lab.scans.not-all-equal"),
            passed=passed,
            trials=trials,
        )
    return _section(*_fixed("scans"), verdict)


def _leaves_floor(shape: dict, n_max: int) -> dict:
    """Where a curve leaves its fixed-cost floor, and how it grows after that."""
    if shape["knee_n"] is None:
        return say("lab.floor.stays", n=n_max)
    if shape["knee_n"] >= n_max:  # the last point: nothing is known about "after that"
        return say("lab.floor.at-top", n=n_max)
    tail = shape["slope_after_knee"]
    if tail is None:
        grows = say("lab.floor.rises")
    elif tail >= 0.6:
        grows = say("lab.floor.grows", slope=f"{tail:.2f}")
    else:
        grows = say("lab.floor.slower", slope=f"{tail:.2f}")
    marginal = shape.get("marginal_s")
    if not marginal or marginal <= 0:
        return say("lab.floor.leaves", knee=shape["knee_n"], grows=grows)
    return say(
        "lab.floor.leaves-then",
        knee=shape["knee_n"],
        grows=grows,
        extra=format_seconds(marginal),
    )


# the PyTorch sweep's curves as its verdict names them
_CURVES = {
    "loop": say("lab.torch-sweep.loop"),
    "sum": "x.sum()",
    "chunked": say("lab.torch-sweep.chunked"),
    "assoc": say("lab.torch-sweep.assoc"),
}


def torch_sweep(rows: list[dict], shapes: dict, a: float, clock: str = "wall") -> dict:
    verdicts = []
    for device, shape in shapes.items():
        mine = [r for r in rows if r["device"] == device]
        if not mine:
            continue
        big = mine[-1]
        n = big["n"]
        loop, total = shape["loop"], shape["sum"]
        err = f"{max(max(r['chunked_rel_err'], r['assoc_rel_err']) for r in mine):.1e}"
        # a curve is described only when every one of its points was steady
        calm = {key: all(steady(r, key) for r in mine) for key in _CURVES}
        gpu = device.startswith("cuda")
        said = []
        if calm["loop"] and loop["slope_all"] is None:  # one size: no slope to read
            said.append(
                say(
                    "lab.torch-sweep.loop-one-size",
                    n=n,
                    time=format_seconds(big["loop_s"]),
                    per_step=format_seconds(loop["per_item_s"]),
                )
            )
        elif calm["loop"]:
            linear = loop["slope_all"] > 0.85
            said.append(
                say(
                    "lab.torch-sweep.loop-grows",
                    how=say("lab.torch-sweep.linearly" if linear else "lab.torch-sweep.steadily"),
                    slope=f"{loop['slope_all']:.2f}",
                    per_step=format_seconds(loop["per_item_s"]),
                    time=format_seconds(big["loop_s"]),
                    n=n,
                )
            )
        if calm["sum"]:
            said.append(
                say(
                    "lab.torch-sweep.sum-floor",
                    floor=format_seconds(total["floor_s"]),
                    cost=say("lab.torch-sweep.call-gpu" if gpu else "lab.torch-sweep.call"),
                    leaves=_leaves_floor(total, n),
                )
            )
        if calm["chunked"]:
            said.append(
                say(
                    "lab.torch-sweep.chunked-floor",
                    floor=format_seconds(shape["chunked"]["floor_s"]),
                    leaves=_leaves_floor(shape["chunked"], n),
                )
            )
        if calm["loop"] and calm["sum"] and calm["chunked"]:
            said.append(
                say(
                    "lab.torch-sweep.compared",
                    n=n,
                    than_sum=_faster(1 / big["loop_over_sum"]),
                    than_chunked=_faster(1 / big["loop_over_chunked"]),
                    err=err,
                )
            )
        else:
            said.append(say("lab.torch-sweep.same-states", err=err))
        noisy = [key for key in _CURVES if not calm[key]]
        if noisy:
            points = [r for r in mine if any(not steady(r, key) for key in noisy)]
            where = say(
                "lab.torch-sweep.noisy-where",
                sizes=", ".join(f"{r['n']:,}" for r in points),
                curves=listed([_CURVES[key] for key in noisy]),
            )
            said.append(too_noisy(where, points, clock))
        verdicts.append(say("lab.torch-sweep.on-device", device=device_name(device), said=said))
    return _section(*_fixed("torch-sweep", a=f"{a:g}"), verdicts or _none(), clock)


def device_name(device: str):
    """A device as its table's column says it: cpu, cuda (CPU, CUDA in Chinese), cuda:1."""
    return cell_text(device, {"cells": DEVICE_CELLS})


def listed(items: list) -> dict | str:
    """Names or texts in a row: a, b, c (、 in Chinese)."""
    if len(items) == 1:
        return items[0]
    return say("lab.list", first=listed(items[:-1]), then=items[-1])


def stability(rows: list[dict], a: float, block: int, probe: int = 1 << 20) -> dict:
    """The verdict on the closed form for the learner's own ``a``; the table's other rows are
    the usual decays, never quoted in its place."""
    if a == 0:  # not in the table: a^-s is a division by zero from the first step
        return _section(*_fixed("stability"), say("lab.stability.zero"))
    if abs(a) == 1:  # not in the table either: every power of a is ±1
        said = "lab.stability.alternating" if a < 0 else "lab.stability.unit"
        return _section(*_fixed("stability"), say(said, a=f"{a:g}"))
    mine = next((r for r in rows if r["a"] == a and r["dtype"] == "float32"), None)
    if mine is None:
        return _section(*_fixed("stability"), _none())
    if mine["breaks_at"] is None:
        verdict = say("lab.stability.finite", a=f"{a:g}", probe=probe, block=block)
    else:
        verdict = say("lab.stability.breaks", a=f"{a:g}", n=mine["breaks_at"], block=block)
    return _section(*_fixed("stability"), verdict)


# --- memory wall ------------------------------------------------------------------------------
def _slope(n0: int, y0: float, n1: int, y1: float) -> float:
    return math.log(y1 / y0) / math.log(n1 / n0)


def _took(row: dict, method: str, message_id: str, noisy=""):
    """``method``'s time at ``row`` said by ``message_id`` ({time}), or ``noisy`` when its
    repeats disagreed: an unsteady time is not quoted."""
    if not steady(row, method):
        return noisy
    return say(message_id, time=format_seconds(row[f"{method}_s"]))


# how memory_wall measured a peak (params["peak_method"]), as its catalog says it
PEAK_METHODS = {
    "peak resident set size, VmHWM, reset through /proc/self/clear_refs": "lab.peak-method.vmhwm",
    "CUDA max_memory_allocated": "lab.peak-method.cuda",
}


def peak_method(value: str):
    return say(PEAK_METHODS[value]) if value in PEAK_METHODS else value


def attention(rows: list[dict], params: dict, limits: list[dict]) -> dict:
    heads = params["heads"]
    said = []
    naive = [r for r in rows if r["naive_peak"]]
    sdpa = [r for r in rows if r["sdpa_peak"] is not None]
    lstm = [r for r in rows if r["lstm_peak"] is not None]
    if naive:
        r = naive[-1]
        said.append(
            say(
                "lab.attention.naive",
                n=r["n"],
                peak=format_bytes(r["naive_peak"]),
                times=f"{r['naive_over_theory']:.1f}",
                matrix=format_bytes(r["theory_bytes"]),
                heads=heads,
                median=f"{statistics.median(x['naive_over_theory'] for x in naive):.1f}",
            )
        )
    if sdpa:
        r = sdpa[-1]
        out_bytes = r["n"] * heads * params["d_head"] * params["batch"]
        out_bytes *= params["bytes_per_element"]
        growth = work = ""
        if len(sdpa) > 1 and sdpa[0]["sdpa_peak"] > 0 and r["sdpa_peak"] > 0:
            slope = _slope(sdpa[0]["n"], sdpa[0]["sdpa_peak"], r["n"], r["sdpa_peak"])
            growth = say("lab.attention.sdpa-growth", n=sdpa[0]["n"], slope=f"{slope:.2f}")
        before = next((x for x in sdpa if x["n"] * 2 == r["n"]), None)
        if before and steady(r, "sdpa") and steady(before, "sdpa") and before["sdpa_s"]:
            work = say(
                "lab.attention.sdpa-work",
                grew=f"{r['sdpa_s'] / before['sdpa_s']:.1f}",
                start=before["n"],
                end=r["n"],
            )
        said.append(
            say(
                "lab.attention.sdpa",
                backend=params.get("sdpa_backend") or "fused",
                n=r["n"],
                peak=format_bytes(r["sdpa_peak"]),
                less=f"{r['theory_bytes'] / max(r['sdpa_peak'], 1):,.0f}",
                own=f"{r['sdpa_peak'] / out_bytes:.1f}",
                took=_took(r, "sdpa", "lab.attention.sdpa-took"),
                growth=growth,
                work=work,
            )
        )
    if lstm:
        r = lstm[-1]
        # a noisy time is not quoted, but the sentence must still say what the LSTM did
        steps = say("lab.attention.lstm-steps", n=r["n"])
        said.append(
            say(
                "lab.attention.lstm",
                state=format_bytes(r["lstm_state_bytes"]),
                n=r["n"],
                peak=format_bytes(r["lstm_peak"]),
                took=_took(r, "lstm", "lab.attention.lstm-took", steps),
            )
        )
    noisy = [r for r in rows if not steady(r)]
    if noisy:  # the memory is measured once and is not noisy; only the times are withheld
        noise = too_noisy(_at_sizes(noisy), noisy, params.get("clock", "wall"))
        said.append(say("lab.attention.times", noise=noise))
    for x in limits:
        if x["first_not_fit"]:
            said.append(
                say(
                    "lab.attention.stopped",
                    method=method_name(x["method"]),
                    n=x["first_not_fit"],
                    budget=format_bytes(params["budget_bytes"]),
                )
            )
    return _section(
        *_fixed(
            "attention",
            then=FLASH,
            batch=params["batch"],
            d_head=params["d_head"],
            device=device_name(params["device"]),
            dtype=params["dtype"],
            heads=heads,
            peak_method=peak_method(params["peak_method"]),
        ),
        said or _none(),
        params.get("clock", "wall"),
    )


# The memory wall's methods as a sentence names them (the code's names read as code in prose,
# and "naive" is no Chinese word); a name not listed is shown as it is.
def method_name(method: str):
    if method == "sdpa":
        return "scaled_dot_product_attention"
    names = {"naive": "lab.method-name.naive", "lstm": "lab.method-name.lstm"}
    return say(names[method]) if method in names else method


def limits(rows: list[dict], budget: int) -> dict:
    said = []
    for r in rows:
        name = method_name(r["method"])
        if r["first_not_fit"] and r["largest_fit"] is None:
            said.append(say("lab.limits.none-fit", method=name, n=r["first_not_fit"]))
        elif r["first_not_fit"]:
            said.append(
                say(
                    "lab.limits.stopped",
                    method=name,
                    largest=r["largest_fit"] or say("lab.none"),
                    n=r["first_not_fit"],
                )
            )
        else:
            said.append(say("lab.limits.all-fit", method=name, n=r["largest_fit"]))
    return _section(*_fixed("limits", budget=format_bytes(budget)), said or _none())


def kv_cache(rows: list[dict], dtypes) -> dict:
    verdict = _none()
    if rows:
        small, big = rows[0], rows[-1]
        d0 = dtypes[0]
        verdict = say(
            "lab.kv-cache.verdict",
            small=small["model"],
            small_bytes=small[f"per_token_{d0}"],
            dtype=d0,
            small_full=format_bytes(small[f"full_{d0}"]),
            context=small["n_ctx"],
            big=big["model"],
            big_bytes=big[f"per_token_{d0}"],
            big_full=format_bytes(big[f"full_{d0}"]),
        )
    return _section(*_fixed("kv-cache"), verdict)


# --- the race: LSTM vs GPT ---------------------------------------------------------------------
# the models as tables, verdicts and figures name them: a name, or a catalog text
MODELS = {"lstm": "LSTM", "gru": "GRU", "rnn": say("lab.model.vanilla-rnn"), "gpt": "GPT"}


def model_name(row: dict):
    """A row's model, by its architecture (rows written before the catalog kept English)."""
    return MODELS.get(row.get("arch"), row["model"])


def _clock(clock: str) -> dict:
    return say("lab.clock.cpu" if clock == "cpu" else "lab.clock.wall")


def _duration(seconds: float, unit_of: float | None = None) -> dict:
    """Minutes for long times, seconds for short ones: 2.1 min, 45 s. ``unit_of``: the
    shortest time in the same sentence, so all of them share one unit (minutes only when
    every one is long: 83.9 s and 143 s, not 1.4 min and 2.4 min)."""
    if min(seconds, unit_of if unit_of is not None else seconds) >= 120:
        return say("lab.minutes", minutes=f"{seconds / 60:.1f}")
    return say("lab.seconds", seconds=f"{seconds:.3g}")


def where(s: dict):
    """Where the race ran: the GPU's name, or the CPU and its threads (results before the
    catalog kept it as an English line: "CPU, 2 threads")."""
    said = s["where"]
    if isinstance(said, str) and said.startswith("CPU, "):
        said = say("lab.race.cpu-threads", threads=int(said.split()[1]))
    if s["clock"] == "cpu" and isinstance(said, dict) and said["id"] == "lab.race.cpu-threads":
        return say("lab.race.threads", **said["values"])  # "CPU time, 1 thread": CPU once
    return said


def race_speed(rows: list[dict], s: dict) -> dict:
    by = {r["arch"]: r for r in rows}
    rival, gpt = by[s["rival"]], by["gpt"]
    ratio, low, high = s["ratio"], *s["claim"]
    shortest = min(rival["epoch_s"], gpt["epoch_s"])
    measured = say(
        "lab.race-speed.measured",
        context=s["context"],
        tokens=s["epoch_tokens"],
        rival=model_name(rival),
        rival_time=_duration(rival["epoch_s"], unit_of=shortest),
        gpt_time=_duration(gpt["epoch_s"], unit_of=shortest),
        clock=_clock(s["clock"]),
        where=where(s),
    )
    # epoch time = work per token / speed, so the ratio splits into these two factors
    work = f"{gpt['flops_per_token'] / rival['flops_per_token']:.2f}"
    why = say(
        "lab.race-speed.why",
        work=work,
        rival=model_name(rival),
        gpt_speed=f"{gpt['gflops']:,.0f}",
        rival_speed=f"{rival['gflops']:,.0f}",
    )
    claim = {"low": f"{low:g}", "high": f"{high:g}", "ratio": f"{ratio:.2f}"}
    if not s.get("steady", True):
        noisy = [r for r in rows if not r.get("steady", True)]
        which = listed([say("lab.race.the-model", model=model_name(r)) for r in noisy])
        noise = too_noisy(say("lab.race.training-steps", models=which), noisy, s["clock"])
        verdict = say("lab.race-speed.no-verdict", noise=noise, work=work, rival=model_name(rival))
    elif s["held"] == "yes":
        beyond = say("lab.race-speed.beyond") if ratio > high else ""
        verdict = say("lab.race-speed.held", measured=measured, beyond=beyond, why=why, **claim)
    elif s["held"] == "partly":
        verdict = say("lab.race-speed.partly", measured=measured, why=why, **claim)
    else:
        verdict = say(
            "lab.race-speed.not-held",
            measured=measured,
            rival=model_name(rival),
            inverse=f"{1 / ratio:.2f}",
            why=why,
            **claim,
        )
    return _section(*_fixed("race-speed", clock=_clock(s["clock"])), verdict, s["clock"])


def race_loss(rows: list[dict], s: dict) -> dict:
    ends = {r["arch"]: r["val_loss"] for r in rows}
    names = {r["arch"]: model_name(r) for r in rows}
    said = [
        say(
            "lab.race-loss.at-time",
            budget=_duration(s["budget_s"]),
            clock=_clock(s["clock"]),
            losses=_losses(ends, names),
            call=_who_is_ahead(ends, names, s.get("val_margin"), at_time=True),
        )
    ]
    at = {a: v for a, v in s["val_at_common_tokens"].items() if v is not None and a in names}
    if len(at) > 1:  # every model that ran (results before this kept two)
        call = _who_is_ahead(at, names, s.get("val_margin"), learned=True)
        close = call["id"] == "lab.race.too-close"
        said.append(
            say(
                "lab.race-loss.at-tokens-close" if close else "lab.race-loss.at-tokens",
                tokens=s["common_tokens"],
                losses=_losses(at, names),
                call=call,
            )
        )
    return _section(*_fixed("race-loss"), said, s["clock"])


def _losses(values: dict[str, float], names: dict) -> dict | str:
    return listed(
        [say("lab.race.loss", model=names[a], loss=f"{v:.3f}") for a, v in values.items()]
    )


def _who_is_ahead(
    values: dict[str, float],
    names: dict,
    margin: float | None,
    learned: bool = False,
    at_time: bool = False,
) -> dict:
    """Who has the lowest loss, or that the best two are too close to call: closer than
    ``margin`` (what a val loss moved over its last evaluation interval). ``at_time``: the
    losses after equal time (the English says so here; the Chinese sentence before)."""
    order = sorted(values, key=values.get)
    best, gap = order[0], values[order[1]] - values[order[0]]
    if margin is not None and gap < margin:
        return say(
            "lab.race.too-close-at-time" if at_time else "lab.race.too-close",
            first=names[order[0]],
            second=names[order[1]],
            gap=f"{gap:.3f}",
            margin=f"{margin:.3f}",
        )
    if learned:
        said = "lab.race.learned-more" if len(values) == 2 else "lab.race.learned-most"
        return say(said, model=names[best])
    return say("lab.race.ahead-at-time", model=names[best])
