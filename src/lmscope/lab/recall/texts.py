"""The recall experiment's words: its title, the fixed explanations and the verdicts written
from the measured numbers, as catalog texts (``lab.recall.…``, see ``lmscope.lab.texts``).

The verdict rule respects noise. Each accuracy is a count out of a finite test set and comes
with its 95% Wilson interval; one model is called ahead of another only where the two
intervals do not overlap, and "too close to call" otherwise.
"""

from __future__ import annotations

from lmscope.lab.recall.task import CHANCE, tokens_read
from lmscope.lab.results import format_bytes, say, sentences

TITLE = say("lab.recall.title")
AHEAD, BEHIND, CLOSE = "ahead", "behind", "too close to call"
SECTIONS = ("distance", "amount", "models")  # lab.recall.<section>.title, .explain


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


def plot_title(key: str, params: dict):
    """The title line of figure ``key`` (distance, amount, memory): a catalog text."""
    task = params["task"]
    if key == "distance":
        return say(
            "lab.plot.recall.title-distance",
            max_items=task["max_items"],
            max_distance=task["max_distance"],
        )
    return say(
        "lab.plot.recall.title-amount" if key == "amount" else "lab.plot.recall.title-memory"
    )


# --- sections ------------------------------------------------------------------------------------
def _fixed(key: str, then=None) -> tuple[dict, list]:
    """Section ``key``'s title and explanation (lab.recall.<key>.title, .explain)."""
    title, explain = (".".join(("lab", "recall", key, part)) for part in ("title", "explain"))
    return say(title), sentences(say(explain), then)


def _section(title, explain, verdict) -> dict:
    return {"title": title, "explain": explain, "verdict": verdict}


def _size_words(size: int, s: dict) -> dict:
    n = s["params"].get(f"{size}:gpt")
    if n:
        return say("lab.recall.size-params", size=str(size), thousands=f"{n / 1000:.0f}")
    return say("lab.recall.size-equal", size=str(size))


_CHANGE = {
    AHEAD: "lab.recall.change.rose",
    BEHIND: "lab.recall.change.fell",
    CLOSE: "lab.recall.change.noise",
}
_VS = {AHEAD: "lab.recall.vs.ahead", BEHIND: "lab.recall.vs.behind", CLOSE: "lab.recall.vs.close"}


def _slice_verdict(key: str, s: dict) -> list:
    said = []
    for size in s["sizes"]:
        cut = s[key][str(size)]
        hard, easy = cut["hardest"], cut["easiest"]
        gpt = hard["gpt"]
        if key == "distance":
            fixed = say("lab.recall.with-items", items=gpt["items"])
        else:
            fixed = say("lab.recall.with-distance", distance=gpt["distance"])
        parts = [say("lab.recall.the-gpt", shown=_accuracy(gpt))]
        for a in hard:
            if a == "gpt":
                continue
            r = hard[a]
            said_vs = "lab.recall.rival" if above_chance(r) else "lab.recall.rival-chance"
            parts.append(
                say(said_vs, model=r["model"], shown=_accuracy(r), vs=say(_VS[cut["gpt_vs"][a]]))
            )
        changes = [
            say(
                _CHANGE[cut["change"][a]],
                model=easy[a]["model"],
                start=pct(easy[a]["accuracy"]),
                end=pct(hard[a]["accuracy"]),
            )
            for a in hard
        ]
        said.append(
            say(
                "lab.recall.slice-distance" if key == "distance" else "lab.recall.slice-amount",
                head=_size_words(size, s),
                to=cut["to"],
                start=cut["from"],
                fixed=fixed,
                accuracies=_listed(parts),
                changes=_listed(changes, "lab.and-then"),
                memory=_memory_words(easy, hard),
            )
        )
    return said


def _accuracy(row: dict) -> str:
    return accuracy_text(row["accuracy"], row["low"], row["high"])


def _listed(items: list, joint: str = "lab.list"):
    out = items[0]
    for item in items[1:]:
        out = say(joint, first=out, then=item)
    return out


def _memory_words(easy: dict, hard: dict):
    parts = []
    for a in hard:
        before, after = easy[a]["memory_bytes"], hard[a]["memory_bytes"]
        if before == after:
            parts.append(
                say("lab.recall.memory-fixed", model=hard[a]["model"], bytes=format_bytes(after))
            )
        else:
            parts.append(
                say(
                    "lab.recall.memory-grew",
                    model=hard[a]["model"],
                    start=format_bytes(before),
                    end=format_bytes(after),
                )
            )
    return _listed(parts)


def _overall(key: str, s: dict) -> dict:
    """One sentence over every size and rival: did the GPT win where it was hardest?"""
    outcomes = [o for size in s["sizes"] for o in s[key][str(size)]["gpt_vs"].values()]
    said = _OVERALL[key]
    if all(o == AHEAD for o in outcomes):
        return say(said[AHEAD])
    if all(o == CLOSE for o in outcomes):
        return say(said[CLOSE])
    won, close, lost = (sum(o == k for o in outcomes) for k in (AHEAD, CLOSE, BEHIND))
    return say(said["mixed"], comparisons=len(outcomes), won=won, lost=lost, close=close)


_OVERALL = {
    "distance": {
        AHEAD: "lab.recall.distance.all-ahead",
        CLOSE: "lab.recall.distance.all-close",
        "mixed": "lab.recall.distance.mixed",
    },
    "amount": {
        AHEAD: "lab.recall.amount.all-ahead",
        CLOSE: "lab.recall.amount.all-close",
        "mixed": "lab.recall.amount.mixed",
    },
}


def _verdict(key: str, s: dict) -> list:
    return sentences(_overall(key, s), *_slice_verdict(key, s))


# How the accuracy tables are read; said after both of their explanations.
_RULE = say("lab.recall.rule")


def distance_section(rows: list[dict], s: dict) -> dict:
    return _section(*_fixed("distance", then=_RULE), _verdict("distance", s))


def amount_section(rows: list[dict], s: dict) -> dict:
    return _section(*_fixed("amount", then=_RULE), _verdict("amount", s))


def models_section(plans: list[dict], s: dict) -> dict:
    steps, batch = s["steps"], s["batch"]
    trained = say("lab.recall.trained", steps=steps, batch=batch, examples=steps * batch)
    if s["cut_short"]:
        label = {(p["size"], p["arch"]): p["model"] for p in plans}
        cut = [
            say(
                "lab.recall.cut-short",
                model=label[c["size"], c["arch"]],
                size=str(c["size"]),
                steps=c["steps"],
            )
            for c in s["cut_short"]
        ]
        trained = say("lab.recall.budget-stopped", steps=steps, batch=batch, stopped=_listed(cut))
    longest = s["longest"]
    memory = []
    for size in s["sizes"]:
        mine = [p for p in plans if p["size"] == size]
        gpt = next(p for p in mine if p["arch"] == "gpt")
        fixed = [p for p in mine if p["arch"] != "gpt"]
        cache = gpt["kv_bytes_per_token"] * longest["tokens"]
        most = max(p["state_bytes"] for p in fixed)
        holds = [
            say("lab.recall.holds", model=p["model"], bytes=format_bytes(p["state_bytes"]))
            for p in fixed
        ]
        memory.append(
            say(
                "lab.recall.memory",
                size=str(size),
                holds=_listed(holds),
                per_character=format_bytes(gpt["kv_bytes_per_token"]),
                cache=format_bytes(cache),
                times=f"{cache / most:.0f}",
            )
        )
    verdict = say(
        "lab.recall.models-verdict",
        trained=trained,
        memory=_listed(memory, "lab.and-then"),
        tokens=longest["tokens"],
        items=longest["items"],
        distance=longest["distance"],
    )
    return _section(*_fixed("models"), verdict)
