"""The recall experiment's words: its title, the fixed explanations (in texts.json) and
the verdicts written from the measured numbers, in English and Chinese.

The verdict rule respects noise. Each accuracy is a count out of a finite test set and comes
with its 95% Wilson interval; one model is called ahead of another only where the two
intervals do not overlap, and "too close to call" otherwise.
"""

from __future__ import annotations

from lmscope.lab.recall.task import CHANCE, tokens_read
from lmscope.lab.results import bilingual as bi
from lmscope.lab.results import fixed_texts, format_bytes, package_json

TITLE = bi(
    "Recall after a distance: can a fixed-size state hold the past?",
    "隔一段距离之后的回忆：固定大小的状态装得下过去吗？",
)
AHEAD, BEHIND, CLOSE = "ahead", "behind", "too close to call"


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def accuracy_text(accuracy: float, low: float, high: float) -> str:
    return f"{pct(accuracy)} [{100 * low:.0f}–{100 * high:.0f}%]"


def compare(a: dict, b: dict) -> str:
    """AHEAD when a's interval lies wholly above b's, BEHIND when wholly below, else CLOSE."""
    if a["low"] > b["high"]:
        return AHEAD
    if a["high"] < b["low"]:
        return BEHIND
    return CLOSE


def above_chance(row: dict) -> bool:
    return row["low"] > CHANCE


def _cell(row: dict) -> dict:
    keys = ("arch", "model", "items", "distance", "accuracy", "low", "high", "memory_bytes")
    return {k: row[k] for k in keys}


def _slice(rows: list[dict], size: int, x_key: str) -> dict:
    """Per size: every model at the hardest cell (the largest x), the GPT against each
    recurrent model there, and each model's change from the easiest cell to the hardest."""
    mine = [r for r in rows if r["size"] == size]
    first, last = min(r[x_key] for r in mine), max(r[x_key] for r in mine)
    at = {r["arch"]: r for r in mine if r[x_key] == last}
    start = {r["arch"]: r for r in mine if r[x_key] == first}
    gpt = at["gpt"]
    return {
        "from": first,
        "to": last,
        "hardest": {a: _cell(r) for a, r in at.items()},
        "easiest": {a: _cell(r) for a, r in start.items()},
        "gpt_vs": {a: compare(gpt, r) for a, r in at.items() if a != "gpt"},
        "change": {a: compare(at[a], start[a]) for a in at},
    }


def summarise(plans: list[dict], rows: dict[str, list[dict]], cfg) -> dict:
    """The numbers the verdicts quote (kept in the result, for pages)."""
    sizes = list(dict.fromkeys(p["size"] for p in plans))
    return {
        "chance": CHANCE,
        "steps": cfg.steps,
        "batch": cfg.batch,
        "sizes": sizes,
        "params": {str(p["size"]) + ":" + p["arch"]: p["params"] for p in plans},
        "cut_short": [
            {"size": p["size"], "arch": p["arch"], "steps": p["steps"]}
            for p in plans
            if p.get("stopped_by_budget")
        ],
        "longest": {
            "items": cfg.items,
            "distance": cfg.distance,
            "tokens": tokens_read(cfg.items, cfg.distance),
        },
        "distance": {str(s): _slice(rows["distance"], s, "distance") for s in sizes},
        "amount": {str(s): _slice(rows["amount"], s, "items") for s in sizes},
    }


def plot_title(key: str, params: dict, lang: str = "en") -> str:
    """The title line of figure ``key`` (distance, amount, memory) in ``lang``: its words are
    in plot_texts.json with every other figure's."""
    task = params["task"]
    text = package_json("plot_texts.json")["recall"][f"title_{key}"][lang]
    return text.format(max_items=task["max_items"], max_distance=task["max_distance"])


# --- sections ------------------------------------------------------------------------------------
def _fixed(key: str, then: dict | None = None) -> tuple[dict, dict]:
    """Section ``key``'s title and explanation: their words are in texts.json."""
    return fixed_texts("recall/texts.json", key, then)


def _section(title: dict, explain: dict, verdict: dict | None) -> dict:
    return {"title": title, "explain": explain, "verdict": verdict}


def _size_words(size: int, s: dict) -> tuple[str, str]:
    n = s["params"].get(f"{size}:gpt")
    count = f"{n / 1000:.0f}k parameters each" if n else "equal parameter counts"
    count_zh = f"每个约 {n / 1000:.0f}k 参数" if n else "参数量相同"
    return f"Size d{size} ({count})", f"规模 d{size}（{count_zh}）"


_CHANGE_ZH = {AHEAD: "上升", BEHIND: "下降", CLOSE: "差别在误差之内"}
_CHANGE_EN = {AHEAD: "rose", BEHIND: "fell", CLOSE: "stayed within the noise"}
_VS_EN = {AHEAD: "the GPT is ahead", BEHIND: "the GPT is behind", CLOSE: "too close to call"}
_VS_ZH = {AHEAD: "GPT 领先", BEHIND: "GPT 落后", CLOSE: "差距在误差之内，难分高下"}


def _slice_verdict(key: str, s: dict) -> tuple[list[str], list[str]]:
    en, zh = [], []
    var, var_zh = ("N", "N") if key == "distance" else ("P", "P")
    for size in s["sizes"]:
        cut = s[key][str(size)]
        hard, easy = cut["hardest"], cut["easiest"]
        gpt = hard["gpt"]
        fixed = (
            f"P = {gpt['items']} symbols"
            if key == "distance"
            else f"distance N = {gpt['distance']}"
        )
        fixed_zh = (
            f"P = {gpt['items']} 个符号" if key == "distance" else f"距离 N = {gpt['distance']}"
        )
        head_en, head_zh = _size_words(size, s)
        rivals = [a for a in hard if a != "gpt"]
        parts_en = [f"the GPT {accuracy_text(gpt['accuracy'], gpt['low'], gpt['high'])}"]
        parts_zh = [f"GPT {accuracy_text(gpt['accuracy'], gpt['low'], gpt['high'])}"]
        for a in rivals:
            r = hard[a]
            shown = accuracy_text(r["accuracy"], r["low"], r["high"])
            chance = "" if above_chance(r) else ", no better than chance"
            chance_zh = "" if above_chance(r) else "，不比瞎猜好"
            parts_en.append(f"the {r['model']} {shown} ({_VS_EN[cut['gpt_vs'][a]]}{chance})")
            parts_zh.append(f"{r['model']} {shown}（{_VS_ZH[cut['gpt_vs'][a]]}{chance_zh}）")
        en.append(
            f"{head_en}: at {var} = {cut['to']} with {fixed}, "
            + ", ".join(parts_en)
            + f". From {var} = {cut['from']} to {cut['to']}: "
            + "; ".join(
                f"the {easy[a]['model']} {_CHANGE_EN[cut['change'][a]]} "
                f"({pct(easy[a]['accuracy'])} → {pct(hard[a]['accuracy'])})"
                for a in hard
            )
            + f". Memory held at the answer: {_memory_words(easy, hard)}."
        )
        zh.append(
            f"{head_zh}：在 {var_zh} = {cut['to']}、{fixed_zh} 时，"
            + "，".join(parts_zh)
            + f"。从 {var_zh} = {cut['from']} 到 {cut['to']}："
            + "；".join(
                f"{easy[a]['model']} {_CHANGE_ZH[cut['change'][a]]}"
                f"（{pct(easy[a]['accuracy'])} → {pct(hard[a]['accuracy'])}）"
                for a in hard
            )
            + f"。作答时持有的内存：{_memory_words(easy, hard, zh=True)}。"
        )
    return en, zh


def _memory_words(easy: dict, hard: dict, zh: bool = False) -> str:
    parts = []
    for a in hard:
        before, after = easy[a]["memory_bytes"], hard[a]["memory_bytes"]
        if before == after:
            fixed = "固定" if zh else "fixed at"
            parts.append(f"{hard[a]['model']} {fixed} {format_bytes(after)}")
        else:
            grows = "从 {} 增长到 {}" if zh else "grew from {} to {}"
            parts.append(
                f"{hard[a]['model']} " + grows.format(format_bytes(before), format_bytes(after))
            )
    return ("，" if zh else ", ").join(parts)


def _overall(key: str, s: dict) -> tuple[str, str]:
    """One sentence over every size and rival: did the GPT win where it was hardest?"""
    outcomes = [o for size in s["sizes"] for o in s[key][str(size)]["gpt_vs"].values()]
    where = "at the longest distance" if key == "distance" else "with the longest list"
    where_zh = "在最长距离上" if key == "distance" else "在最长的列表上"
    if all(o == AHEAD for o in outcomes):
        return (
            f"{where.capitalize()}, the GPT recalled more than every recurrent model of its "
            "size (the 95% intervals do not overlap).",
            f"{where_zh}，GPT 的回忆准确率高于同规模的每一个循环模型（95% 区间不重叠）。",
        )
    if all(o == CLOSE for o in outcomes):
        return (
            f"{where.capitalize()}, the GPT and the recurrent models are too close to call "
            "(their 95% intervals overlap).",
            f"{where_zh}，GPT 与循环模型的差距在误差之内，难分高下（95% 区间重叠）。",
        )
    won, close, lost = (sum(o == k for o in outcomes) for k in (AHEAD, CLOSE, BEHIND))
    return (
        f"Mixed {where}: of {len(outcomes)} GPT-against-RNN comparisons the GPT is ahead in "
        f"{won}, behind in {lost}, and {close} are too close to call (overlapping 95% "
        "intervals).",
        f"{where_zh}结果不一：{len(outcomes)} 组 GPT 与 RNN 的比较中，GPT 领先 {won} 组，"
        f"落后 {lost} 组，{close} 组差距在误差之内（95% 区间重叠）。",
    )


def _verdict(key: str, s: dict) -> dict:
    lead_en, lead_zh = _overall(key, s)
    en, zh = _slice_verdict(key, s)
    return bi(" ".join([lead_en, *en]), "".join([lead_zh, *zh]))


# How the accuracy tables are read; said after both of their explanations.
_RULE = bi(
    "Each accuracy is the share of first answers right out of the test examples, with its "
    "95% Wilson interval in brackets; one model is called ahead of another only where the "
    "intervals do not overlap. Chance is 1 in 26 (a guess among the symbols).",
    "每个准确率是测试样例中第一个回答正确的比例，方括号里是它的 95% Wilson 区间；只有两个"
    "区间不重叠时，才说一个模型领先另一个。瞎猜的准确率是 1/26（在 26 个符号里猜）。",
)


def distance_section(rows: list[dict], s: dict) -> dict:
    return _section(
        *_fixed("distance", then=_RULE),
        _verdict("distance", s),
    )


def amount_section(rows: list[dict], s: dict) -> dict:
    return _section(
        *_fixed("amount", then=_RULE),
        _verdict("amount", s),
    )


def models_section(plans: list[dict], s: dict) -> dict:
    steps, batch = s["steps"], s["batch"]
    en = (
        f"Every model trained {steps:,} steps of {batch} examples ({steps * batch:,} examples, "
        "the same ones in the same order)"
    )
    zh = f"每个模型训练 {steps:,} 步，每步 {batch} 个样例（共 {steps * batch:,} 个，顺序相同）"
    if s["cut_short"]:
        label = {(p["size"], p["arch"]): p["model"] for p in plans}
        cut = [(label[c["size"], c["arch"]], c["size"], c["steps"]) for c in s["cut_short"]]
        en = (
            f"Every model was to train {steps:,} steps of {batch} examples, but the time budget "
            + "stopped "
            + ", ".join(f"the {m} d{size} after {n:,}" for m, size, n in cut)
            + ", so it saw fewer examples than the others"
        )
        zh = (
            f"每个模型本应训练 {steps:,} 步，每步 {batch} 个样例，但时间预算让"
            + "，".join(f" {m} d{size} 在第 {n:,} 步" for m, size, n in cut)
            + "停下，它见到的样例比其他模型少"
        )
    longest = s["longest"]
    memory_en, memory_zh = [], []
    for size in s["sizes"]:
        mine = [p for p in plans if p["size"] == size]
        gpt = next(p for p in mine if p["arch"] == "gpt")
        fixed = [p for p in mine if p["arch"] != "gpt"]
        cache = gpt["kv_bytes_per_token"] * longest["tokens"]
        most = max(p["state_bytes"] for p in fixed)
        memory_en.append(
            f"d{size}: "
            + ", ".join(f"the {p['model']} holds {format_bytes(p['state_bytes'])}" for p in fixed)
            + f" whatever it has read, while the GPT's KV cache grows by "
            f"{format_bytes(gpt['kv_bytes_per_token'])} per character, to "
            f"{format_bytes(cache)} ({cache / most:.0f}× the larger state) at the longest example"
        )
        memory_zh.append(
            f"d{size}："
            + "，".join(f"{p['model']} 始终只有 {format_bytes(p['state_bytes'])}" for p in fixed)
            + f"；GPT 的 KV cache 每读一个字符增加 {format_bytes(gpt['kv_bytes_per_token'])}，"
            f"在最长的样例上达到 {format_bytes(cache)}（较大状态的 {cache / most:.0f} 倍）"
        )
    where = (
        f" The longest example asks its first question after {longest['tokens']} characters "
        f"(P = {longest['items']}, N = {longest['distance']})."
    )
    where_zh = (
        f"最长的样例在读完 {longest['tokens']} 个字符后提出第一个问题"
        f"（P = {longest['items']}，N = {longest['distance']}）。"
    )
    verdict = bi(
        en + ". " + "; ".join(memory_en) + "." + where,
        zh + "。" + "；".join(memory_zh) + "。" + where_zh,
    )
    return _section(
        *_fixed("models"),
        verdict,
    )
