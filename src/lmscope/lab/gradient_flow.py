"""How gradients fade with distance: vanilla RNN vs LSTM vs GRU vs a Transformer (char GPT).

For each model: read sequences of ``max_k + 1`` characters, take the loss at the last
position (predicting the character after it), and measure the norm of its gradient with
respect to the input embedding k steps back, for k = 1 .. max_k, averaged over sequences.

    recurrent   dL/dx_{t-k} passes through k steps of the recurrence: a product of k Jacobians.
                Vanilla RNN: W_hh^T diag(tanh') each step, so it shrinks (or grows) by roughly
                a constant factor per step. LSTM: the cell path multiplies by the forget gate
                f, GRU by the update gate z; where they sit near 1 the gradient survives.
    Transformer every position reaches the last one through attention in each layer: the path
                length is O(1), whatever k is, so the curve stays flat.

All four models get an input embedding of the same width and about the same number of
parameters (the GPT's count is the target; each recurrent model's hidden size is chosen to
match it). The measurement runs in float64, so tiny gradients show as tiny numbers rather
than zeros. Models are either fresh (``state="init"``: lmscope's own initialisation) or
trained for a few hundred steps with lmscope's trainer on the same corpus (``"trained"``).
"""

from __future__ import annotations

import copy
import math
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from lmscope import i18n
from lmscope.data import load_corpus
from lmscope.engine.loading import load
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import GradientFlowConfig
from lmscope.lab.plots import Panel, Series, machine_words, plot_words, save_panels
from lmscope.lab.progress import stage
from lmscope.lab.results import (
    LANGS,
    Column,
    Result,
    Section,
    format_cell,
    hardware_info,
    say,
    sentences,
    shown,
)
from lmscope.lab.sizes import matched_hidden
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer
from lmscope.train import TrainConfig, train
from lmscope.train.adapters import RNN_DEFAULTS

# the models as tables, verdicts and figures name them: a catalog text, or a name
LABELS = {
    "rnn": say("lab.model.vanilla-rnn"),
    "lstm": "LSTM",
    "gru": "GRU",
    "gpt": say("lab.model.char-gpt"),
}
COLORS = {"rnn": "#d62728", "lstm": "#1f77b4", "gru": "#2ca02c", "gpt": "#9467bd"}
TABLE_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
EXPERIMENT = "gradient-flow"


# --- the models -----------------------------------------------------------------------------


def build_models(cfg: GradientFlowConfig, vocab_size: int) -> dict:
    """Fresh models: the GPT first, then recurrent ones matched to its parameter count."""
    torch.manual_seed(cfg.seed)
    gpt_config = GPTConfig(
        vocab_size=vocab_size,
        n_ctx=cfg.max_k + 1,
        n_embd=cfg.embed,
        n_layer=cfg.gpt_layers,
        n_head=cfg.gpt_heads,
    )
    models = {"gpt": GPT(gpt_config)}
    target = models["gpt"].num_params()
    for arch in ("rnn", "lstm", "gru"):
        hidden = matched_hidden(arch, vocab_size, cfg.rnn_layers, target, embed=cfg.embed)
        config = CharRNNConfig(
            vocab_size=vocab_size, cell=arch, hidden=hidden, layers=cfg.rnn_layers, embed=cfg.embed
        )
        torch.manual_seed(cfg.seed)
        models[arch] = CharRNN(config)
    return {a: models[a].eval() for a in cfg.archs}


def train_models(cfg: GradientFlowConfig, fresh: dict, workdir: Path, progress=None) -> dict:
    """Train each model of ``fresh`` (for its shape) ``cfg.train_iters`` steps with lmscope's
    trainer on ``cfg.data``, with the family's usual settings; return the trained models."""
    models = {}
    advance = stage(progress, i18n.text("lab.progress.training", steps=cfg.train_iters), len(fresh))
    for arch, net in fresh.items():
        common = dict(
            data=cfg.data,
            tokenizer="char",  # the same vocabulary as the fresh models: the corpus's characters
            iters=cfg.train_iters,
            eval_every=0,
            sample_every=0,
            seed=cfg.seed,
            out=str(workdir / arch),
            device="cpu",
            embed=cfg.embed,
        )
        if arch == "gpt":
            c = net.config
            tc = TrainConfig(
                arch="gpt",
                layers=c.n_layer,
                heads=c.n_head,
                dim=c.n_embd,
                context=c.n_ctx,
                batch=8,
                **common,
            )
        else:
            settings = {**RNN_DEFAULTS, "layers": net.config.layers, "dim": net.config.hidden}
            tc = TrainConfig(arch=arch, **settings, **common)
        train(tc, overwrite=True, progress=False, log=lambda _: None)
        models[arch] = load(workdir / arch).net  # in eval mode
        advance(arch)
    return models


# --- the measurement --------------------------------------------------------------------------


def embedding_grads(net, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """||dL/dx_t|| for every position t of every sequence: [B, T]. L is the cross-entropy at
    the last position (summed over the batch, so each sequence gets its own gradient)."""
    if isinstance(net, CharRNN):  # x is its input embedding
        if net.embedding is None:
            raise InvalidInputError("error.lab.gradients.no-embedding")
        x = net.embedding(ids).detach().requires_grad_(True)
        out, _ = net.rnn(x)
        logits = net.head(out[:, -1])
    else:  # a GPT: x is the token embedding, what the probe hook_embed records
        leaf = {}

        def make_leaf(module, inputs, output):
            # a module hook, not a probe hook: probes switch attention to its float32
            # explicit path, and this measurement stays in float64 end to end
            leaf["x"] = output.detach().requires_grad_(True)
            return leaf["x"]

        handle = net.wte.register_forward_hook(make_leaf)
        try:
            logits = net(ids, last_only=True)[0][:, -1]
        finally:
            handle.remove()
        x = leaf["x"]
    loss = F.cross_entropy(logits, targets, reduction="sum")
    (grad,) = torch.autograd.grad(loss, x)
    return grad.norm(dim=-1)


def sample_sequences(ids: np.ndarray, length: int, count: int, seed: int) -> np.ndarray:
    """``count`` windows of ``length + 1`` ids (the extra one is the target), at seeded
    random offsets."""
    if len(ids) < length + 2:
        raise InvalidInputError(
            "error.lab.gradients.short-text", have=len(ids), k=length - 1, need=length + 1
        )
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(ids) - length - 1, size=count)
    return np.stack([ids[s : s + length + 1] for s in starts])


def measure(models: dict, windows: np.ndarray, batch_size: int, progress=None) -> dict:
    """Mean gradient norm at k = 1 .. T-1 steps back, per model: arch -> float64 [max_k]."""
    curves = {}
    advance = stage(progress, i18n.text("lab.progress.gradients"), len(models))
    for arch, net in models.items():
        net64 = copy.deepcopy(net).double().eval()
        total = None
        for lo in range(0, len(windows), batch_size):
            chunk = torch.as_tensor(windows[lo : lo + batch_size], dtype=torch.long)
            norms = embedding_grads(net64, chunk[:, :-1], chunk[:, -1]).sum(dim=0)
            total = norms if total is None else total + norms
        mean = (total / len(windows)).numpy()
        curves[arch] = mean[::-1][1:].copy()  # k = 1 .. T-1: position T-1-k
        advance(arch)
    return curves


# --- the experiment -----------------------------------------------------------------------------


def run_gradient_flow(cfg: GradientFlowConfig, out_dir: str | Path, progress=None) -> Result:
    """Measure every state and model, write result.json and the plots to ``out_dir``."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    out_dir = Path(out_dir)
    corpus = load_corpus(cfg.data)
    # the trainer's own choice for tokenizer="char": every character of the corpus
    tokenizer = CharTokenizer.from_text(corpus.text)
    ids = np.array(tokenizer.encode(corpus.split(0.1)[1]), dtype=np.int64)  # validation text
    sections, params_by_state = [], {}
    for state in cfg.states:
        models = build_models(cfg, tokenizer.vocab_size)
        if state == "trained":
            with tempfile.TemporaryDirectory(prefix="lmscope-gradflow-") as work:
                models = train_models(cfg, models, Path(work), progress)
        windows = sample_sequences(ids, cfg.max_k + 1, cfg.batches * cfg.batch_size, cfg.seed)
        curves = measure(models, windows, cfg.batch_size, progress)
        counts = {a: sum(p.numel() for p in m.parameters()) for a, m in models.items()}
        sizes = {a: _size_text(a, m) for a, m in models.items()}
        params_by_state[state] = {"params": counts, "sizes": sizes}
        sections.append(flow_section(state, curves, counts, sizes, cfg))
    hardware = hardware_info(["cpu"])
    params = {
        "max_k": cfg.max_k,
        "data": cfg.data,
        "embed": cfg.embed,
        "gpt_layers": cfg.gpt_layers,
        "gpt_heads": cfg.gpt_heads,
        "rnn_layers": cfg.rnn_layers,
        "sequences": cfg.batches * cfg.batch_size,
        "batches": cfg.batches,
        "batch_size": cfg.batch_size,
        "states": list(cfg.states),
        "train_iters": cfg.train_iters if "trained" in cfg.states else None,
        "archs": list(cfg.archs),
        "seed": cfg.seed,
        "dtype": "float64",
        "models": params_by_state,
        **cfg.extra,
    }
    result = Result(experiment=EXPERIMENT, title=TITLE, params=params, hardware=hardware)
    result.sections = sections
    plot_result(result.to_dict(), out_dir)
    result.write(out_dir)
    return result


def _size_text(arch: str, net) -> dict:
    """A model's shape, as a result file's text."""
    c = net.config
    if arch == "gpt":
        return say("lab.shape.gpt", layers=c.n_layer, heads=c.n_head, width=c.n_embd)
    return say("lab.shape.rnn-embed", layers=c.layers, hidden=c.hidden, embed=c.embed)


def decay_rate(curve: np.ndarray) -> float:
    """The average factor per step back: (norm at k=max / norm at k=1) ** (1 / (max - 1))."""
    first, last = float(curve[0]), float(curve[-1])
    if len(curve) < 2 or first <= 0:
        return float("nan")
    if last <= 0:
        return 0.0
    return math.exp(math.log(last / first) / (len(curve) - 1))


def flow_section(state: str, curves: dict, counts: dict, sizes: dict, cfg) -> Section:
    ks = list(range(1, cfg.max_k + 1))
    shown_ks = [k for k in TABLE_KS if k <= cfg.max_k] + (
        [cfg.max_k] if cfg.max_k not in TABLE_KS else []
    )
    rows = []
    for arch, curve in curves.items():
        row = {
            "model": LABELS[arch],
            "arch": arch,
            "size": sizes[arch],
            "params": counts[arch],
            "per_step": decay_rate(curve),
            "last_over_first": float(curve[-1] / curve[0]) if curve[0] > 0 else None,
        }
        for k in shown_ks:
            row[f"k{k}"] = float(curve[k - 1])
        rows.append(row)
    columns = [
        Column("model", say("lab.column.model"), "text"),
        Column("params", say("lab.column.params"), "int"),
        *[Column(f"k{k}", f"k={k}", "sci") for k in shown_ks],
        Column("last_over_first", f"k={cfg.max_k} / k=1", "sci"),
        Column("per_step", say("lab.column.per-step"), "float"),
    ]
    data = {
        "k": ks,
        "norm": {a: [float(v) for v in c] for a, c in curves.items()},
        "relative": {
            a: [float(v / c[0]) if c[0] > 0 else None for v in c] for a, c in curves.items()
        },
        "labels": {a: LABELS[a] for a in curves},
    }
    return Section(
        key=state,
        title=STATE_TITLES[state],
        explain=explain(state, cfg),
        columns=columns,
        rows=rows,
        verdict=verdict(rows, cfg.max_k),
        plot=f"gradient-flow-{state}",
        data=data,
    )


def plot_result(doc: dict, out_dir: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Draw every state's figure from a result document (the curves its sections keep), so a
    saved result can be drawn again; in every language of ``langs``."""
    for section in doc["sections"]:
        if section.get("plot") and section.get("data"):
            for lang in langs:
                plot_section(section, doc["hardware"], out_dir, lang)


def plot_section(section: dict, hw: dict, out_dir: Path, lang: str = "en") -> None:
    """One state's figure: the norms, and the norms relative to k = 1 (``section``: as the
    result document keeps it)."""
    say = plot_words(lang)
    data = section["data"]
    ks = data["k"]

    def label(arch: str) -> str:
        return shown(LABELS.get(arch, data["labels"][arch]), lang)

    def series(key: str) -> list:
        out = []
        for arch, ys in data[key].items():
            points = [(k, y) for k, y in zip(ks, ys, strict=True) if y is not None and y > 0]
            out.append(
                Series(
                    label(arch),
                    [k for k, _ in points],
                    [y for _, y in points],
                    color=COLORS[arch],
                    marker="",
                )
            )
        return out

    state = section["key"]
    axes = dict(x_unit="plain", y_unit="plain", logx=False)  # k on a linear axis, norms on a log
    save_panels(
        out_dir,
        section["plot"]["png"].removesuffix(".png"),
        [
            Panel(
                title=say("lab.plot.gradient-flow.norm-title"),
                xlabel=say("lab.plot.gradient-flow.norm-x"),
                ylabel=say("lab.plot.gradient-flow.norm-y"),
                series=series("norm"),
                **axes,
            ),
            Panel(
                title=say("lab.plot.gradient-flow.relative-title"),
                xlabel=say("lab.plot.gradient-flow.relative-x"),
                ylabel="norm(k) / norm(1)",
                series=series("relative"),
                **axes,
            ),
        ],
        suptitle=say("lab.plot.gradient-flow.title", state=STATE_TITLES[state]),
        footnote=machine_words(hw, lang),
        lang=lang,
    )


# --- texts --------------------------------------------------------------------------------------

TITLE = say("lab.gradient-flow.title")
STATE_TITLES = {
    "init": say("lab.gradient-flow.init"),
    "trained": say("lab.gradient-flow.trained"),
}


def explain(state: str, cfg) -> list:
    common = say(
        "lab.gradient-flow.explain",
        max_k=cfg.max_k,
        windows=cfg.batches * cfg.batch_size,
        data=cfg.data,
        embed=cfg.embed,
    )
    if state == "init":
        return sentences(common, say("lab.gradient-flow.explain-init"))
    trained = say(
        "lab.gradient-flow.explain-trained",
        steps=cfg.train_iters,
        data=cfg.data,
        window=cfg.max_k + 1,
    )
    return sentences(common, trained)


def verdict(rows: list[dict], max_k: int) -> list:
    """Which curve falls fastest and which stays flattest, from the measured numbers."""
    ranked = sorted(rows, key=lambda r: r["per_step"] if r["per_step"] == r["per_step"] else 0)
    fastest, flattest = ranked[0], ranked[-1]
    fast, flat = (format_cell(r["per_step"], "float") for r in (fastest, flattest))  # as tabled
    kept = None
    for r in rows:
        ratio = r["last_over_first"]
        part = say(
            "lab.gradient-flow.kept",
            model=_name(r),
            ratio=f"{ratio:.1e}" if ratio is not None else "0",
        )
        kept = part if kept is None else say("lab.and-then", first=kept, then=part)
    head = say("lab.gradient-flow.head", max_k=max_k, kept=kept)
    if len(rows) == 1:  # --models with one name: nothing to rank it against
        return [say("lab.gradient-flow.only-one", head=head, factor=fast)]
    said = [
        say(
            "lab.gradient-flow.ranked",
            head=head,
            fastest=_name(fastest),
            fast=fast,
            flattest=_name(flattest),
            flat=flat,
        )
    ]
    order = [r["arch"] for r in ranked]
    # the textbook's order runs from the vanilla RNN to the Transformer: judged only when the
    # run measured both ends
    if {"rnn", "gpt"} <= set(order):
        if order[0] == "rnn" and order[-1] == "gpt":
            said.append(say("lab.gradient-flow.textbook"))
        else:
            said.append(say("lab.gradient-flow.not-textbook"))
    return said


def _name(row: dict):
    """A row's model as the catalog says it (rows written before it kept English names)."""
    return LABELS.get(row["arch"], row["model"])
