"""lmscope lab recall: the task generator (right answers, no ambiguous distractors, seeds),
the state-size arithmetic against real models, the corpus the trainer reads, the answers-only
loss, the verdict rule (overlapping intervals are too close to call), and a seconds-long run
through the CLI (result.json, plots, lab show)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lmscope.cli import main
from lmscope.lab.recall import experiment, texts
from lmscope.lab.recall import models as recall_models
from lmscope.lab.recall.config import RecallConfig
from lmscope.lab.recall.task import (
    ALPHABET,
    CHANCE,
    FILLER,
    PAD,
    POSITIONS,
    QUERY,
    SYMBOLS,
    TaskShape,
    kv_cache_bytes,
    make_examples,
    rnn_state_bytes,
    tokens_read,
    wilson,
)
from lmscope.lab.results import SCHEMA, read_result, shown
from tiers import slow_work

# A test-only setting: one tiny size, a short task, a few steps; seconds, not minutes.
TINY = ["--quick", "--sizes", "16", "--steps", "40", "--items", "3", "--distance", "6"]
TINY += ["--test-examples", "24", "--batch", "8", "--threads", "1"]


# --- the task -------------------------------------------------------------------------------
def test_alphabets_are_disjoint_and_make_the_vocabulary():
    parts = [SYMBOLS, POSITIONS, FILLER, QUERY, PAD]
    assert sum(len(p) for p in parts) == len(set("".join(parts))) == len(ALPHABET)
    assert pytest.approx(1 / 26) == CHANCE


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_answer_is_the_symbol_at_the_asked_position(seed):
    shape = TaskShape(max_items=8, max_distance=20, queries=4)
    ex = make_examples(shape, 300, seed)
    assert ex.codes.shape == (300, shape.length) == (300, 8 + 20 + 12)
    for i in range(len(ex)):
        line, p, n = ex.text(i), int(ex.items[i]), int(ex.distance[i])
        assert 1 <= p <= 8 and 0 <= n <= 20
        assert set(line[:p]) <= set(SYMBOLS)
        assert set(line[p : p + n]) <= set(FILLER)
        queries = line[p + n :].rstrip(PAD)
        asked = [queries[j : j + 3] for j in range(0, len(queries), 3)]
        assert len(asked) == min(p, 4) and set(line[p + n + len(queries) :]) <= {PAD}
        digits = [q[1] for q in asked]
        assert len(set(digits)) == len(digits)  # each position asked once
        for mark, digit, answer in asked:
            assert mark == QUERY and int(digit) < p and answer == line[int(digit)]
        # the scored answer: the first query's, at answer_at, its digit just before
        at = int(ex.answer_at[i])
        assert at == p + n + 2 and line[at] == chr(ex.answer[i]) == asked[0][2]
        assert line[at - 2] == QUERY and line[at - 1] == asked[0][1]


def test_distractors_never_hold_a_query_pattern():
    """Before the first query only symbols and filler occur: no '?', no position digit, no
    padding; so the digit a query names has exactly one meaning, the list's slot."""
    shape = TaskShape(max_items=10, max_distance=40)
    ex = make_examples(shape, 500, 3)
    for i in range(len(ex)):
        before = ex.text(i)[: int(ex.answer_at[i]) - 2]
        assert not set(before) & set(POSITIONS + QUERY + PAD)
        assert not set(before[int(ex.items[i]) :]) & set(SYMBOLS)  # filler holds no symbol


def test_seeds_reproduce_examples_and_fixed_cells_hold():
    shape = TaskShape(max_items=6, max_distance=16)
    a, b = make_examples(shape, 50, [4, 2]), make_examples(shape, 50, [4, 2])
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.answer, b.answer)
    assert not np.array_equal(a.codes, make_examples(shape, 50, [4, 3]).codes)
    fixed = make_examples(shape, 40, 0, items=5, distance=16)
    assert set(fixed.items) == {5} and set(fixed.distance) == {16}
    assert set(fixed.answer_at) == {5 + 16 + 2}
    assert fixed.lines() == "".join(fixed.text(i) for i in range(40))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_items": 11}, "at most 10 symbols"),
        ({"max_items": 0}, "max_items must be a whole number >= 1"),
        ({"max_distance": -1}, "max_distance must be a whole number >= 0"),
        ({"queries": 0}, "queries must be a whole number >= 1"),
    ],
)
def test_bad_task_shapes_are_refused(kwargs, message):
    from lmscope.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=message):
        TaskShape(**kwargs)


# --- what each model holds ------------------------------------------------------------------
def test_state_sizes_are_the_real_models_state():
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.models.rnn import CharRNN, CharRNNConfig

    assert rnn_state_bytes("lstm", 60, 1) == 2 * 60 * 4
    assert rnn_state_bytes("gru", 71, 2) == 2 * 71 * 4
    assert kv_cache_bytes(2, 32, 10) == 2 * 2 * 32 * 10 * 4
    assert tokens_read(4, 16) == 4 + 16 + 2
    for cell, layers in (("lstm", 1), ("lstm", 2), ("gru", 1), ("gru", 3)):
        net = CharRNN(CharRNNConfig(vocab_size=46, cell=cell, hidden=24, layers=layers))
        state = net.initial_state(1)
        parts = state if isinstance(state, tuple) else (state,)
        held = sum(t.numel() * t.element_size() for t in parts)
        assert held == rnn_state_bytes(cell, 24, layers)
    gpt = GPT(GPTConfig(vocab_size=46, n_ctx=40, n_embd=32, n_layer=2, n_head=2))
    cache = gpt.new_cache()
    with torch.no_grad():
        gpt(torch.zeros(1, tokens_read(3, 9), dtype=torch.long), cache=cache)
    held = sum(t.numel() * t.element_size() for t in cache.keys + cache.values)
    assert held == kv_cache_bytes(2, 32, tokens_read(3, 9))


def test_model_plans_match_parameter_counts_and_memory():
    cfg = RecallConfig(sizes=(16, 32), items=4, distance=8)
    vocab, context = len(ALPHABET), TaskShape(4, 8).length
    plans = recall_models.model_shapes(cfg, vocab, context)
    assert [(p["size"], p["arch"]) for p in plans] == [
        (s, a) for s in (16, 32) for a in ("lstm", "gru", "gpt")
    ]
    from lmscope.models.rnn import param_count

    for plan in plans:
        target = recall_models.gpt_params(cfg, vocab, plan["size"], context)
        if plan["arch"] == "gpt":
            assert plan["state_bytes"] is None
            assert plan["kv_bytes_per_token"] == 2 * 2 * plan["size"] * 4
            assert recall_models.memory_at(plan, 4, 8) == plan["kv_bytes_per_token"] * (4 + 8 + 2)
        else:
            assert abs(param_count(plan["arch"], vocab, plan["dim"], 1) - target) / target < 0.05
            assert recall_models.memory_at(plan, 1, 0) == recall_models.memory_at(plan, 4, 8)


# --- intervals and verdicts -------------------------------------------------------------------
def test_wilson_interval():
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 400)[0] == 0.0 and 0 < wilson(0, 400)[1] < 0.01
    assert wilson(400, 400)[1] == 1.0 and 0.99 < wilson(400, 400)[0] < 1
    for correct in range(0, 31, 5):
        low, high = wilson(correct, 30)
        assert 0 <= low <= correct / 30 <= high <= 1


def _fake(intervals: dict[str, tuple[float, float, float]], key: str = "distance"):
    """A summary for one size whose hardest cell has the given (accuracy, low, high)."""
    plans, rows = [], {"distance": [], "amount": []}
    for arch, model in (("lstm", "LSTM"), ("gru", "GRU"), ("gpt", "GPT")):
        plans.append({"size": 32, "arch": arch, "model": model, "params": 28_000, "steps": 1500})
        plans[-1] |= (
            {"state_bytes": None, "kv_bytes_per_token": 512}
            if arch == "gpt"
            else {"state_bytes": 480 if arch == "lstm" else 284, "kv_bytes_per_token": None}
        )
        for x in (0, 32):
            acc, low, high = intervals[arch] if x == 32 else (0.9, 0.85, 0.94)
            row = {"size": 32, "arch": arch, "model": model, "accuracy": acc, "low": low}
            row |= {"high": high, "memory_bytes": 480 if arch != "gpt" else 100 * (x + 6)}
            row |= {"items": 4, "distance": x} if key == "distance" else {"items": x, "distance": 8}
            rows[key].append(row)
    rows["amount" if key == "distance" else "distance"] = rows[key]
    return texts.summarise(plans, rows, RecallConfig())


def test_overlapping_intervals_are_too_close_to_call():
    s = _fake({"gpt": (0.55, 0.48, 0.62), "lstm": (0.50, 0.43, 0.57), "gru": (0.2, 0.15, 0.25)})
    assert s["distance"]["32"]["gpt_vs"] == {"lstm": "too close to call", "gru": "ahead"}
    verdict = texts.distance_section([], s)["verdict"]
    assert "the LSTM 50% [43–57%] (too close to call)" in shown(verdict, "en")
    assert "the GRU 20% [15–25%] (the GPT is ahead)" in shown(verdict, "en")
    assert shown(verdict, "en").startswith("Mixed at the longest distance")
    assert "难分高下" in shown(verdict, "zh")


def test_a_clear_win_and_a_tie_everywhere():
    s = _fake({"gpt": (1.0, 0.99, 1.0), "lstm": (0.3, 0.25, 0.35), "gru": (0.02, 0.01, 0.05)})
    verdict = shown(texts.distance_section([], s)["verdict"], "en")
    assert verdict.startswith("At the longest distance, the GPT recalled more than every")
    assert "no better than chance" in verdict  # the GRU's interval reaches 1/26
    assert "the LSTM fell (90% → 30%)" in verdict and "GPT grew from" in verdict
    tie = _fake({a: (0.5, 0.45, 0.55) for a in ("gpt", "lstm", "gru")}, key="amount")
    verdict = texts.amount_section([], tie)["verdict"]
    assert shown(verdict, "en").startswith(
        "With the longest list, the GPT and the recurrent models are"
    )
    assert "too close to call" in shown(verdict, "en") and "难分高下" in shown(verdict, "zh")


def test_models_verdict_names_the_memory_and_a_model_the_budget_stopped():
    s = _fake({a: (0.5, 0.45, 0.55) for a in ("gpt", "lstm", "gru")})
    plans = [{"size": 32, "arch": a, "model": m} for a, m in (("lstm", "LSTM"), ("gru", "GRU"))]
    plans.append({"size": 32, "arch": "gpt", "model": "GPT", "kv_bytes_per_token": 512})
    plans[0]["state_bytes"], plans[1]["state_bytes"] = 480, 284
    verdict = texts.models_section(plans, s)["verdict"]
    # RecallConfig's longest example: 8 symbols, 32 filler, "?" and the digit: 42 characters
    assert "the LSTM holds 480 B, the GRU holds 284 B whatever it has read" in shown(verdict, "en")
    assert "to 21 KiB (45× the larger state) at the longest example" in shown(verdict, "en")
    assert shown(verdict, "en").startswith("Every model trained 1,500 steps of 32 examples")
    s["cut_short"] = [{"size": 32, "arch": "gru", "steps": 900}]
    verdict = texts.models_section(plans, s)["verdict"]
    assert "the time budget stopped the GRU d32 after 900" in shown(verdict, "en")
    assert "第 900 步" in shown(verdict, "zh")


def test_compare_is_symmetric():
    a, b = {"low": 0.6, "high": 0.7}, {"low": 0.2, "high": 0.3}
    assert texts.compare(a, b) == "ahead" and texts.compare(b, a) == "behind"
    assert texts.compare(a, {"low": 0.7, "high": 0.8}) == "too close to call"


# --- the trainer's view of the task -----------------------------------------------------------
def test_the_corpus_splits_into_whole_examples_per_stream(tmp_path, monkeypatch):
    from lmscope.data import StreamBatches, load_corpus, train_val_split

    cfg = RecallConfig(steps=20, batch=4, items=3, distance=5)
    shape = recall_models.task_shape(cfg)
    path, fraction = recall_models.write_corpus(cfg, shape, tmp_path)
    text = load_corpus(str(path)).text
    train, _ = train_val_split(text, fraction)
    tok = recall_models.char_tokenizer()
    assert tok.chars == tuple(sorted(set(text)))  # what the trainer builds from the corpus
    expected = make_examples(shape, 4 * 21, [cfg.seed, 1])
    stream = StreamBatches(np.array(tok.encode(train)), 4, shape.length)
    assert len(stream) == 20  # steps chunks per stream: no example is read twice
    for step in range(3):
        x, _ = next(stream)
        for row in range(4):
            assert tok.decode(x[row].tolist()) == expected.text(row * 21 + step)


def test_answers_only_loss_counts_the_answers_alone():
    from lmscope.train import get_adapter

    tok = recall_models.char_tokenizer()
    query = tok.encode(QUERY)[0]
    adapter = recall_models.AnswersOnly(get_adapter("gru"), query)
    assert adapter.arch == "recall-gru" and adapter.stateful is False
    config = adapter.model_config(recall_models.train_config(
        RecallConfig(), {"arch": "gru", "layers": 1, "heads": 1, "dim": 16}, "x", 0.1, 20, "o"
    ), tok.vocab_size)  # fmt: skip
    net = adapter.build(config)
    ex = make_examples(TaskShape(3, 4), 6, 0)
    ids = experiment.encode(ex, tok)
    x, y = ids[:, :-1], ids[:, 1:]
    logits, loss, state = adapter.forward(net, x, y, None)
    mask = recall_models.answer_positions(x, query)
    assert int(mask.sum()) == sum(min(int(p), 4) for p in ex.items) and state is None
    assert all(tok.decode([int(t)]) in SYMBOLS for t in y[mask])
    assert loss.item() == pytest.approx(F.cross_entropy(logits[mask], y[mask]).item())


# --- the whole experiment -----------------------------------------------------------------------
@pytest.fixture(scope="module")
@slow_work
def recalled(tmp_path_factory):
    """One tiny run through the CLI: (result file, what --json printed, out folder)."""
    out = tmp_path_factory.mktemp("recall-out")
    cache = tmp_path_factory.mktemp("recall-cache")
    threads = torch.get_num_threads()
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LMSCOPE_CACHE", str(cache))
        try:
            with contextlib.redirect_stdout(printed):
                assert main(["lab", "recall", *TINY, "--out", str(out), "--json"]) == 0
        finally:
            torch.set_num_threads(threads)
    return read_result(out), json.loads(printed.getvalue()), out


@pytest.mark.slow
def test_quick_run_writes_a_well_formed_result(recalled):
    doc, printed, out = recalled
    assert printed == doc
    json.dumps(doc, allow_nan=False)
    assert doc["schema"] == SCHEMA and doc["experiment"] == "recall"
    assert doc["hardware"]["cpu"] and doc["hardware"]["torch_threads"] == 1
    p = doc["params"]
    assert p["command"].startswith("lmscope lab recall --quick --sizes 16 --items 3")
    assert "--threads 1" in p["command"] and p["quick"] is True
    assert p["task"]["length"] == 3 + 6 + 9 and len(p["task"]["example"]) == 18
    models, distance, amount = doc["sections"]
    assert [s["key"] for s in doc["sections"]] == ["models", "distance", "amount"]
    assert [r["arch"] for r in models["rows"]] == ["lstm", "gru", "gpt"]
    for r in models["rows"]:
        assert r["steps"] == 40 or r["stopped_by_budget"]
        assert r["params"] > 0 and r["loss_end"] > 0
    # lists of 1..3 over 0..6: against N at P = 1 (half of 3, rounded down to a tested P),
    # against P at N = 0 (the tested N nearest half of 6 from below)
    cells = {k: [(r["items"], r["distance"]) for r in s["rows"] if r["arch"] == "lstm"]
             for k, s in (("distance", distance), ("amount", amount))}  # fmt: skip
    assert cells == {"distance": [(1, 0), (1, 4), (1, 6)], "amount": [(1, 0), (2, 0), (3, 0)]}
    for section in (distance, amount):
        for r in section["rows"]:
            assert r["total"] == 24 and 0 <= r["low"] <= r["accuracy"] <= r["high"] <= 1
            assert r["shown"].endswith("%]") and r["memory_bytes"] > 0
        assert shown(section["verdict"], "en") and shown(section["verdict"], "zh")
        for file in section["plot"].values():
            assert (out / file).stat().st_size > 1000
    assert (out / "recall-distance.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (out / "recall-amount.svg").read_text()[:500]


def test_lab_show_prints_a_saved_recall_result(recalled, capsys):
    _, _, out = recalled
    assert main(["lab", "show", str(out), "--lang", "zh"]) == 0
    printed = capsys.readouterr().out
    assert "回忆" in printed and "准确率 [95% 区间]" in printed  # headers in Chinese too


@pytest.mark.slow
def test_the_shipped_result_is_complete_and_shows(capsys):
    from lmscope.lab.results import shipped_dir

    folder = shipped_dir("recall")
    doc = read_result(folder)
    hw, params = doc["hardware"], doc["params"]
    assert hw["cpu"] and hw["cpu_cores"] and hw["torch"] and hw["date"]
    assert params["command"].startswith("lmscope lab recall") and params["run_s"] < 600
    models = doc["sections"][0]["rows"]
    assert {r["steps"] for r in models} == {params["steps"]}  # nobody stopped early
    for section in doc["sections"]:
        for lang in ("en", "zh"):
            said = [shown(section[part], lang) for part in ("title", "explain", "verdict")]
            assert all(said), (section["key"], lang)
        for kind in ("png", "svg"):
            assert (folder / section["plot"][kind]).stat().st_size > 5_000
    assert main(["lab", "show", "recall"]) == 0
    printed = capsys.readouterr().out
    assert "Recall after a distance" in printed and "memory at the answer" in printed


BAD = [
    (["--sizes", "20"], "must be a multiple of 16"),
    (["--sizes", "big"], "--sizes takes GPT widths as whole numbers"),
    (["--models", "lstm,gru"], "--models needs gpt and at least one of lstm, gru"),
    (["--models", "gpt,mamba"], "unknown model 'mamba'"),
    (["--items", "11"], "at most 10"),
    (["--distance", "-1"], "--distance must be a whole number >= 0"),
    (["--steps", "0"], "--steps must be a whole number >= 1"),
    (["--budget", "soon"], "is not a time"),
    (["--budget", "0"], "--budget must be above 0 seconds"),
    (["--lr", "0"], "--lr must be a number above 0"),
    (["--threads", "0"], "--threads must be >= 1"),
    (["--device", "tpu"], "unknown device"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_input_is_one_line(argv, message, capsys, tmp_path):
    code = main(["lab", "recall", *argv, "--out", str(tmp_path / "r")])
    out, err = capsys.readouterr()
    assert code == 2 and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_the_command_line_names_what_differs_from_the_defaults():
    assert experiment.command_line(RecallConfig(threads=1)) == "lmscope lab recall --threads 1"
    quick = RecallConfig.quick_settings(steps=100)
    assert experiment.command_line(quick) == "lmscope lab recall --quick --steps 100"
    cfg = RecallConfig(sizes=(16, 64), budget_s=None, lr=0.001)
    line = "lmscope lab recall --sizes 16,64 --lr 0.001 --budget none"
    assert experiment.command_line(cfg) == line
