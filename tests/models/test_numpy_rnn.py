"""min-char-rnn in NumPy: hand-written BPTT against centered differences, the "hello" example,
training, sampling and the minrnn command."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lmscope.cli import main
from lmscope.errors import InvalidInputError
from lmscope.models.numpy_rnn import (
    CLIP,
    PARAM_NAMES,
    MinCharRNN,
    Vocab,
    gradient_check,
    hello_demo,
    relative_error,
    train,
)

TEXT = "the cat sat on the mat. the dog sat on the log.\n" * 20


def _trained_a_little(hidden=12, seq=9, steps=40, seed=3):
    vocab = Vocab.from_text(TEXT)
    ids = vocab.encode(TEXT)
    model = MinCharRNN(len(vocab), hidden, seed=seed)
    h = model.zero_state()
    for k in range(steps):
        p = (k * seq) % (len(ids) - seq - 1)
        _, grads, h = model.loss_and_grads(ids[p : p + seq], ids[p + 1 : p + seq + 1], h)
        model.adagrad_step(grads, 0.1)
    return model, ids, h


@pytest.mark.parametrize("steps", [0, 40])  # at the tiny initial weights, and part-trained
def test_bptt_matches_centered_differences_on_every_entry_of_every_parameter(steps):
    model, ids, h = _trained_a_little(steps=steps)
    h0 = np.tanh(np.random.default_rng(0).standard_normal(model.hidden)) if steps == 0 else h
    results = gradient_check(model, ids[:9], ids[1:10], h0)
    assert set(results) == set(PARAM_NAMES)
    for name, result in results.items():
        assert result.checked == model.params[name].size  # every entry nudged
        assert result.rel_error < 1e-5, (name, result)


def test_gradient_check_catches_a_wrong_gradient(monkeypatch):
    model, ids, h = _trained_a_little()
    honest = MinCharRNN.loss_and_grads

    def off_by_a_bit(self, inputs, targets, h0):
        loss, grads, last = honest(self, inputs, targets, h0)
        grads["Whh"] = grads["Whh"] * 1.01  # a 1% error in the recurrent gradient
        return loss, grads, last

    monkeypatch.setattr(MinCharRNN, "loss_and_grads", off_by_a_bit)
    results = gradient_check(model, ids[:9], ids[1:10], h, per_param=20)
    assert results["Whh"].rel_error > 1e-3
    assert results["Why"].rel_error < 1e-5


def test_relative_error_is_zero_for_untouched_weights_and_symmetric():
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(np.array([1.0]), np.array([3.0])) == pytest.approx(0.5)
    assert relative_error(np.array([3.0]), np.array([1.0])) == pytest.approx(0.5)


def test_gradient_check_refuses_float32():
    model = MinCharRNN(4, 3, dtype=np.float32)
    with pytest.raises(InvalidInputError, match="float64"):
        gradient_check(model, [0, 1], [1, 2])


def test_the_hidden_state_tells_the_two_ls_of_hello_apart():
    steps, losses = hello_demo()
    assert [s.input for s in steps] == list("hell")
    assert [s.predicted for s in steps] == list("ello")
    assert steps[2].probs["l"] > 0.9 and steps[3].probs["o"] > 0.9  # same input "l", two answers
    assert losses[-1] < losses[0] / 50
    for step in steps:
        assert sum(step.probs.values()) == pytest.approx(1.0)


def test_training_lowers_the_smoothed_loss_and_carries_state_across_chunks():
    events = list(train(TEXT, iters=400, hidden=32, seq=10, sample_every=200, sample_length=30))
    assert events[-1].smooth_per_char < events[0].smooth_per_char - 0.15
    assert [e.position for e in events[:3]] == [0, 10, 20]  # consecutive chunks
    samples = [e for e in events if e.sample is not None]
    assert [e.iteration for e in samples] == [1, 200, 400]
    assert all(len(e.sample) == 30 and set(e.sample) <= set(TEXT) for e in samples)
    # Chunks walk the text and restart when it runs out (where the state resets).
    assert max(e.position for e in events) + 11 <= len(TEXT)
    assert 0 in [e.position for e in events[1:]]


def test_adagrad_clips_gradients_elementwise():
    model = MinCharRNN(3, 2)
    before = {k: p.copy() for k, p in model.params.items()}
    huge = {k: np.full_like(p, 1e6) for k, p in model.params.items()}
    model.adagrad_step(huge, lr=0.1)
    for name in PARAM_NAMES:
        assert np.allclose(model.memory[name], CLIP**2)
        # The first Adagrad step moves every weight by lr * g / |g| = lr, whatever |g|.
        assert np.allclose(before[name] - model.params[name], 0.1, atol=1e-6)


def test_training_is_reproducible_with_a_seed():
    a = [e.loss for e in train(TEXT, iters=30, hidden=8, seq=5, seed=4, sample_every=0)]
    b = [e.loss for e in train(TEXT, iters=30, hidden=8, seq=5, seed=4, sample_every=0)]
    assert a == b


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seq": 0}, "--seq"),
        ({"hidden": 0}, "--hidden"),
        ({"lr": 0.0}, "--lr"),
        ({"seq": 5000}, "one chunk"),
    ],
)
def test_bad_settings_fail_at_the_call(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        train(TEXT, **kwargs)  # no iteration needed


def test_cli_hello_prints_each_step(capsys):
    assert main(["minrnn", "--hello"]) == 0
    out = capsys.readouterr().out
    assert "P(o)" in out and "'o' (ok)" in out and "hidden state" in out


@pytest.mark.slow
def test_cli_gradcheck_passes(capsys):
    argv = ["minrnn", "--gradcheck", "--hidden", "10", "--seq", "6", "--checks", "0"]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    for name in PARAM_NAMES:
        assert name in out
    assert "FAIL" not in out and "all below 1e-5" in out


def test_cli_trains_on_a_file_and_prints_loss_and_samples(tmp_path, capsys):
    data = tmp_path / "text.txt"
    data.write_text(TEXT, encoding="utf-8")
    argv = ["minrnn", "--data", str(data), "--iters", "200", "--hidden", "16", "--seq", "8"]
    assert main([*argv, "--sample-every", "100", "--sample-length", "20", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "----- iter 100" in out and "----- iter 200" in out
    assert "done: 200 iterations" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--seq", "0"],
        ["--hidden", "0"],
        ["--data", "no-such-corpus"],
        ["--iters", "-1"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(["minrnn", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmscope: error:") and err.count("\n") == 1


def test_cli_hello_concludes_only_what_the_numbers_show(capsys):
    # one step has not learned it: no claim that the hidden state tells the l's apart
    assert main(["minrnn", "--hello", "--iters", "1"]) == 1
    out = capsys.readouterr().out
    assert "1 Adagrad step " in out and "1 Adagrad steps" not in out
    assert "tells them apart" not in out and "has not learned" in out, out
    assert "--iters" in out  # says how long it needs
    first, last = re.search(r"loss ([\d.]+) -> ([\d.]+) nats", out).groups()
    assert first != last  # the loss after training is measured, not the first one again
    assert main(["minrnn", "--hello"]) == 0
    assert "tells them apart" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--data", "small.txt"], "--data"),
        (["--seq", "3"], "--seq"),
        (["--sample-every", "5"], "--sample-every"),
    ],
)
def test_cli_hello_refuses_options_it_would_ignore(capsys, argv, flag):
    assert main(["minrnn", "--hello", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and "--hello" in err, err


def test_cli_short_text_error_reads_well(tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text("a")
    assert main(["minrnn", "--data", str(one), "--seq", "3"]) == 2
    err = capsys.readouterr().err
    assert "the text has 1 character;" in err and err.rstrip().endswith("."), err
    assert main(["minrnn", "--seq", "2000000", "--iters", "1"]) == 2
    err = capsys.readouterr().err
    assert "1,115,394 characters" in err and err.rstrip().endswith("."), err


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda m: Vocab(("a", "b")).decode([-1]), "outside the vocabulary"),  # was 'b'
        (lambda m: Vocab(("a", "b")).decode([5]), "outside the vocabulary"),
        (lambda m: Vocab(("a", "b")).encode(None), "must be a str"),
        (lambda m: MinCharRNN(4, 3, seed="x"), "seed must be"),
        (lambda m: m.step_probs(m.zero_state(), 99), "outside the vocabulary"),
        (lambda m: m.step_probs(m.zero_state(), 1, 0), "temperature"),  # was NaN probabilities
        (lambda m: m.step_probs(np.zeros(7), 1), "hidden state must have shape"),
        (lambda m: m.sample(m.zero_state(), 1, 3, np.random.default_rng(0), 1e-320), "too low"),
        (lambda m: m.sample(m.zero_state(), 1, 2.5, np.random.default_rng(0)), "sample length"),
        (lambda m: m.sample(m.zero_state(), 1, 2, np.random.default_rng(0), "1"), "a number"),
        (lambda m: m.loss_and_grads([1, 9], [1, 2], m.zero_state()), "character ids in 0..3"),
        (lambda m: m.loss_and_grads([1, 2], [1, -1], m.zero_state()), "character ids in 0..3"),
        (lambda m: gradient_check(m, [1, 2], [1, 2], per_param=0), "per_param"),
        (lambda m: gradient_check(m, [1, 2], [1, 2], delta=0), "delta"),
        (lambda m: gradient_check(m, [1, 2], [1, 2], h0=np.zeros(7)), "hidden state"),
        (lambda m: train("hello world hello", iters="x"), "--iters"),
        (lambda m: train("hello world hello", iters=float("nan")), "--iters"),
        (lambda m: train("hello world hello", lr=None), "--lr must be a number"),
        (lambda m: train("hello world hello", sample_every="x"), "--sample-every"),
        (lambda m: train("hello world hello", sample_length="5"), "sample length"),
        (lambda m: train("hello world hello", seed=-1), "seed must be"),
        (lambda m: train("hello world hello", model="x"), "must be a MinCharRNN"),
        (lambda m: hello_demo(iters="x"), "--iters"),
        (lambda m: hello_demo(lr=float("nan")), "--lr"),  # was NaN probabilities
    ],
)
def test_odd_arguments_through_the_python_api_are_one_line(call, expected):
    with pytest.raises(InvalidInputError, match=expected) as err:
        call(MinCharRNN(4, 3))
    assert "\n" not in str(err.value)


def _quietly(call):
    """Run ``call`` with NumPy's RuntimeWarnings turned into errors: none may leak."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


@pytest.mark.parametrize(
    ("kwargs", "iteration"),
    [
        ({"lr": 1e308}, 1),  # the first sample's scores overflow at temperature 1
        ({"lr": 1e308, "sample_every": 0}, 2),  # the second loss is NaN
        ({"lr": 1.7e308, "sample_every": 0}, 1),  # the first step makes weights infinite
    ],
)
def test_a_diverging_learning_rate_stops_training_in_one_line(kwargs, iteration):
    # was numpy RuntimeWarnings, then "temperature 1 is too low" or NaN losses
    events = train(TEXT, iters=5, hidden=4, seq=9, **kwargs)
    with pytest.raises(InvalidInputError, match=f"iteration {iteration};.*smaller --lr") as err:
        _quietly(lambda: list(events))
    assert "\n" not in str(err.value) and "temperature" not in str(err.value)


@pytest.mark.parametrize("lr", [1e300, 1e10])
def test_a_loss_that_explodes_while_still_finite_is_divergence(lr):
    # at --lr 1e300 the loss climbed to 1e301 nats without a word: finite, but no model's
    events = train(TEXT, iters=5, hidden=4, seq=9, lr=lr, sample_every=0)
    with pytest.raises(InvalidInputError, match=r"the loss reached \S+ nats a character at"):
        _quietly(lambda: list(events))


def test_an_ordinary_learning_rate_is_not_called_divergence():
    assert len(list(train(TEXT, iters=50, hidden=8, seq=9, lr=10.0, sample_every=0))) > 0


def test_hello_with_a_diverging_learning_rate_says_so():
    # was a table of NaN probabilities
    with pytest.raises(InvalidInputError, match=r"loss became nan at iteration 2;.*smaller --lr"):
        _quietly(lambda: hello_demo(lr=1e308))


@pytest.mark.parametrize("argv", [["--hello"], ["--data", "FILE", "--iters", "3", "--hidden", "4"]])
def test_cli_diverging_learning_rate_is_one_line(tmp_path, capsys, argv):
    data = tmp_path / "text.txt"
    data.write_text(TEXT, encoding="utf-8")
    argv = [str(data) if a == "FILE" else a for a in argv]
    assert _quietly(lambda: main(["minrnn", *argv, "--lr", "1e308", "--no-progress"])) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmscope: error:") and err.count("\n") == 1, err
    assert "--lr" in err and "temperature" not in err, err


def test_sampling_an_overflowing_model_at_temperature_1_blames_the_weights():
    model = MinCharRNN(4, 3)
    model.params["Why"][:] = 1e308
    model.params["Wxh"][:] = 1.0
    with pytest.raises(InvalidInputError, match="weights") as err:
        _quietly(lambda: model.sample(model.zero_state(), 1, 3, np.random.default_rng(0)))
    assert "temperature 1 is too low" not in str(err.value)
