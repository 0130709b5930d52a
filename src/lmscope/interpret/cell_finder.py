"""The interpretable-cell finder: which units track quotes, line position, brackets...?

For every unit of every layer (by default the LSTM's cell state c and hidden state h, or h
alone for RNNs and GRUs) and every feature of ``lmscope.interpret.features``:

- Pearson r between the unit's value after each character and the feature there;
- for binary features, the best single threshold: "unit > t" or "unit < t" predicts the
  feature, with t and the direction chosen for the best F1 on one part of the text.

Honesty first: the text is cut in two contiguous parts. Units are ranked, and thresholds
chosen, on the first part (``select_fraction`` of the characters); every score reported is
measured on the second, held-out part, which played no part in the choice. The selection-part
scores are kept too (``r_select``, ``f1_select``) so an over-fitted choice shows.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from lmscope import i18n
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.formats.atomic import writing
from lmscope.interpret.features import FEATURES, compute_features, feature_set_for
from lmscope.interpret.neurons import NeuronRun

SCHEMA = "lmscope.neurons.cells/1"
SELECT_FRACTION = 0.5
TOP = 5
MIN_POSITIVES = 5  # a binary feature needs this many positives in each part to be scored
COLUMN_BLOCK = 256  # columns sorted at once: bounds memory on long texts


@dataclass
class UnitScore:
    kind: str  # h, c, ... (see lmscope.interpret.neurons.KINDS)
    layer: int
    unit: int
    r: float  # Pearson r on the held-out part
    r_select: float  # on the selection part
    # binary features only: the rule "value > threshold" (direction ">") or "<" predicts 1
    threshold: float | None = None
    direction: str | None = None
    precision: float | None = None  # held-out
    recall: float | None = None
    f1: float | None = None
    f1_select: float | None = None

    @property
    def label(self) -> str:
        return f"{self.layer}:{self.unit} {self.kind}"


@dataclass
class FeatureResult:
    name: str
    kind: str  # binary | continuous
    description: dict[str, str]  # in every language of the catalog: en, zh, pseudo...
    stats: dict  # positives (binary) or mean and spread (continuous) in each part
    best: list[UnitScore] = field(default_factory=list)  # ranked on the selection part
    strongest_r: UnitScore | None = None  # the unit with the largest |r_select|
    note: str | None = None  # why a feature could not be scored
    note_data: dict | None = None  # the same, as data: code "rare" or "constant", part...


@dataclass
class CellReport:
    model: str
    arch: str
    layers: int
    hidden: int
    kinds: list[str]
    chars_read: int
    chars_skipped: int
    select_chars: int
    heldout_chars: int
    features: list[FeatureResult]
    source: str = ""

    def feature(self, name: str) -> FeatureResult:
        for f in self.features:
            if f.name == name:
                return f
        raise InvalidInputError("error.cells.no-feature", name=repr(name))

    def to_dict(self) -> dict:
        body = asdict(self)
        body["schema"] = SCHEMA
        return _finite(body)

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n")
        return path

    def __repr__(self) -> str:
        # the dataclass repr printed every feature's ten best units (7,000 characters)
        found = [
            f"{f.name} {f.strongest_r.label} r={f.strongest_r.r:+.3f}"
            if f.strongest_r is not None
            else f"{f.name} not scored"
            for f in self.features
        ]
        return (
            f"CellReport(model={self.model!r}, {self.arch} {self.layers} x {self.hidden}, "
            f"{self.chars_read:,} characters; strongest unit per feature, held-out r: "
            f"{'; '.join(found)})"
        )

    def headline(self, name: str) -> str:
        """One line: the unit with the largest |r| on the selection part, and its r on the
        held-out part (not the best held-out r: another unit may score higher there)."""
        return feature_headline(self.feature(name))


def feature_headline(f: FeatureResult, lang: str | None = None) -> str:
    """``CellReport.headline`` of one feature, in ``lang`` (default: the current language):
    the unit chosen on the selection part and its held-out r, or why it was not scored."""
    s = f.strongest_r
    if s is not None:
        return i18n.text(
            "report.neurons.chosen-on-first-part",
            lang,
            name=f.name,
            unit=s.label,
            signed=f"{s.r:+.3f}",
        )
    why = note_text(f.note_data, lang) if f.note_data else (f.note or "")
    return i18n.text("report.neurons.not-scored-why", lang, name=f.name, why=why)


def note_text(data: dict, lang: str | None = None) -> str:
    """Why a feature was not scored (``FeatureResult.note_data``), said in ``lang``."""
    part = i18n.text(
        "report.neurons.selection" if data["part"] == "selection" else "report.neurons.held-out",
        lang,
    )
    if data["code"] == "rare":
        return i18n.text(
            "report.neurons.too-few-characters-with",
            lang,
            part=part,
            positives=data["positives"],
            total=data["total"],
        )
    return i18n.text("report.neurons.it-does-not-vary", lang, part=part, value=f"{data['value']:g}")


def _finite(value):
    """NaN has no JSON spelling: None instead."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


# --- the scores -----------------------------------------------------------------------------


def pearson(acts: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each column of ``acts`` [T, N] with ``y`` [T]; 0 for constant columns."""
    return _Standardized(acts).r(y)


class _Standardized:
    """Columns centred and scaled to unit norm once, so each feature's r is one product."""

    def __init__(self, acts: np.ndarray):
        # float32 and in place: one copy of the part, not four (a 40k-character run of a
        # 2 x 384 LSTM is 60M values); means and norms are summed in float64
        a = np.array(acts, dtype=np.float32)
        a -= a.mean(axis=0, dtype=np.float64).astype(np.float32)
        norm = np.sqrt(np.einsum("ij,ij->j", a, a, dtype=np.float64)).astype(np.float32)
        np.divide(a, norm, out=a, where=norm > 1e-6)
        a[:, norm <= 1e-6] = 0
        self.z = a

    def r(self, y: np.ndarray) -> np.ndarray:
        b = y.astype(np.float64) - y.mean()
        norm = np.sqrt(b @ b)
        if norm <= 1e-12:
            return np.zeros(self.z.shape[1])
        return (self.z.T @ (b / norm).astype(np.float32)).astype(np.float64)


def best_thresholds(acts: np.ndarray, label_sets: dict[str, np.ndarray]) -> dict:
    """For each column and each labelling: the rule "value > t" or "value < t" that best
    predicts the labels (max F1). Returns name -> (threshold [N], direction [N] of +1 for
    '>' and -1 for '<', F1 [N]). Each column is sorted once for every labelling and both
    directions; cuts fall only between distinct values, so ties are never split."""
    n, t_len = acts.shape[1], acts.shape[0]
    out = {name: (np.zeros(n), np.ones(n), np.full(n, -1.0)) for name in label_sets}
    k = np.arange(t_len - 1, dtype=np.float32)[:, None]  # cut between sorted k and k + 1
    for lo in range(0, n, COLUMN_BLOCK):
        cols = slice(lo, lo + COLUMN_BLOCK)
        block = np.ascontiguousarray(acts[:, cols], dtype=np.float32)
        order = np.argsort(block, axis=0)  # ascending
        ranked = np.take_along_axis(block, order, axis=0)
        tied = ranked[:-1] == ranked[1:]
        cut = (ranked[:-1].astype(np.float64) + ranked[1:]) / 2
        idx = np.arange(ranked.shape[1])
        for name, labels in label_sets.items():
            thr, sign, f1 = out[name]
            hits = labels.astype(bool)
            positives = float(hits.sum())
            below = np.cumsum(hits[order], axis=0, dtype=np.int32)[:-1].astype(np.float32)
            # "< t" predicts the k + 1 smallest; "> t" the t_len - k - 1 largest
            for s, score in (
                (-1.0, 2 * below / (k + 1 + positives)),
                (1.0, 2 * (positives - below) / (t_len - k - 1 + positives)),
            ):
                score[tied] = -1.0
                best = score.argmax(axis=0)
                value = score[best, idx]
                better = value > f1[cols]
                f1[cols][better] = value[better]
                thr[cols][better] = cut[best, idx][better]
                sign[cols][better] = s
            # a constant column: predict everything
            const = f1[cols] < 0
            f1[cols][const] = 2 * positives / (t_len + positives)
            thr[cols][const] = ranked[-1, const] + 1.0
            sign[cols][const] = -1.0
    return out


def rule_scores(values: np.ndarray, labels: np.ndarray, threshold: float, direction: float):
    """(precision, recall, F1) of the rule on one column; 0 where undefined."""
    predicted = values > threshold if direction > 0 else values < threshold
    labels = labels.astype(bool)
    tp = float(np.sum(predicted & labels))
    p = tp / predicted.sum() if predicted.any() else 0.0
    r = tp / labels.sum() if labels.any() else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return float(p), float(r), float(f)  # plain floats, not numpy's, in every report


def _part_note(kind: str, y: np.ndarray, part: str) -> tuple[str, dict] | None:
    """Why a feature cannot be scored on one part: (one line in the current language, the same
    as data)."""
    data: dict | None = None
    if kind == "binary":
        positives = int(y.sum())
        if positives < MIN_POSITIVES or len(y) - positives < MIN_POSITIVES:
            data = {"code": "rare", "part": part, "positives": positives, "total": len(y)}
    elif y.std() == 0:
        data = {"code": "constant", "part": part, "value": float(y[0])}
    return (note_text(data), data) if data is not None else None


def rank_features(
    acts: np.ndarray,
    labels: list[tuple[str, int, int]],
    features: dict[str, np.ndarray],
    split: int,
    top: int = TOP,
) -> list[FeatureResult]:
    """Score every column of ``acts`` [T, N] against each feature [T]: choose on [:split],
    report on [split:]. ``labels[j]`` names column j as (kind, layer, unit)."""
    sel, held = slice(0, split), slice(split, None)
    z_sel, z_held = _Standardized(acts[sel]), _Standardized(acts[held])
    results, binary = [], {}
    for name, feature in features.items():
        meta = FEATURES[name]
        ys, yh = feature[sel], feature[held]
        if meta.kind == "binary":
            stats = {"positives_select": int(ys.sum()), "positives_heldout": int(yh.sum())}
        else:
            stats = {
                "mean_select": float(ys.mean()),
                "std_select": float(ys.std()),
                "mean_heldout": float(yh.mean()),
                "std_heldout": float(yh.std()),
            }
        said = {lang: i18n.text(meta.message, lang) for lang in i18n.LANGUAGES}
        result = FeatureResult(name, meta.kind, said, stats)
        results.append(result)
        why = _part_note(meta.kind, ys, "selection") or _part_note(meta.kind, yh, "held-out")
        if why:
            result.note, result.note_data = why
            continue
        r_sel, r_held = z_sel.r(ys), z_held.r(yh)

        def score(j: int, r_sel=r_sel, r_held=r_held) -> UnitScore:
            k, layer, unit = labels[j]
            return UnitScore(k, layer, unit, float(r_held[j]), float(r_sel[j]))

        result.strongest_r = score(int(np.abs(r_sel).argmax()))
        if meta.kind == "binary":
            binary[name] = (result, score, ys, yh)
        else:
            order = np.argsort(-np.abs(r_sel), kind="stable")[:top]
            result.best = [score(int(j)) for j in order]

    rules = best_thresholds(acts[sel], {name: b[2] for name, b in binary.items()})
    for name, (result, score, _, yh) in binary.items():
        thr, sign, f1_sel = rules[name]
        for j in np.argsort(-f1_sel, kind="stable")[:top]:
            s = score(int(j))
            p, r, f = rule_scores(acts[held, j], yh, thr[j], sign[j])
            s.threshold, s.direction = float(thr[j]), ">" if sign[j] > 0 else "<"
            s.precision, s.recall, s.f1, s.f1_select = p, r, f, float(f1_sel[j])
            result.best.append(s)
    return results


# characters each side of the split needs (units are chosen on one, scored on the other)
MIN_SIDE = 20


def shortest_text(select_fraction: float) -> int:
    """The fewest characters whose split at ``select_fraction`` leaves ``MIN_SIDE`` on each side."""
    n = 2 * MIN_SIDE
    while min(split := int(round(n * select_fraction)), n - split) < MIN_SIDE:
        n += 1
    return n


@checked_keywords
def find_cells(
    run: NeuronRun,
    *,
    features: str | list[str] | None = None,
    kinds: tuple[str, ...] | None = None,
    top: int = TOP,
    select_fraction: float = SELECT_FRACTION,
    source: str = "",
) -> CellReport:
    """Rank every unit of ``run`` against each feature of its text (see the module doc).
    ``features``: a set (``prose``, ``code``), names, or None for the set that suits the
    model's training corpus (``code`` for python-stdlib, else ``prose``)."""
    if not isinstance(run, NeuronRun):
        raise InvalidInputError("error.cells.run-type", type=type(run).__name__)
    if not 0 < select_fraction < 1:
        raise InvalidInputError(
            "error.value.open-fraction", name="select_fraction", got=str(select_fraction)
        )
    if top < 1:
        raise InvalidInputError("error.value.at-least", name="top", low=1, got=str(top))
    split = int(round(len(run) * select_fraction))
    if split < MIN_SIDE or len(run) - split < MIN_SIDE:
        raise InvalidInputError(
            "error.cells.text-too-short",
            n=len(run),
            need=shortest_text(select_fraction),
            side=MIN_SIDE,
            fraction=f"{select_fraction:g}",
        )
    acts, labels = run.matrix(kinds)
    # features describe the original text; keep the characters the model read
    if features is None:
        features = feature_set_for(run.corpus)
    values = {name: full[run.kept] for name, full in compute_features(run.text, features).items()}
    results = rank_features(acts, labels, values, split, top)
    return CellReport(
        model=run.model_name,
        arch=run.arch,
        layers=run.layers,
        hidden=run.hidden,
        kinds=sorted({k for k, _, _ in labels}, key="chzifgorn".index),
        chars_read=len(run),
        chars_skipped=len(run.skipped),
        select_chars=split,
        heldout_chars=len(run) - split,
        features=results,
        source=source,
    )
