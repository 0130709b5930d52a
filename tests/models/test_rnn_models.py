"""Char RNN/LSTM/GRU: the fused and stepwise paths agree, gates are exposed, char-rnn's init."""

from __future__ import annotations

import pytest
import torch

from lmscope.errors import InvalidInputError
from lmscope.models.rnn import CELLS, GATES, CharRNN, CharRNNConfig, param_count

V = 13


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny step-by-step ops


def _model(cell: str, layers: int = 3, hidden: int = 16, embed: int = 0, seed: int = 0):
    torch.manual_seed(seed)
    model = CharRNN(CharRNNConfig(V, cell, hidden, layers, dropout=0.2, embed=embed)).eval()
    with torch.no_grad():  # non-zero biases everywhere, so every term of the equations counts
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.2)
    return model


def _random_state(model: CharRNN, batch: int):
    state = model.initial_state(batch)
    if isinstance(state, tuple):
        return tuple(torch.randn_like(t) for t in state)
    return torch.randn_like(state)


def _parts(state):
    return state if isinstance(state, tuple) else (state,)


@pytest.mark.parametrize("embed", [0, 6])
@pytest.mark.parametrize("cell", CELLS)
def test_fused_and_stepwise_paths_agree_with_carried_state(cell, embed):
    model = _model(cell, embed=embed)
    ids = torch.randint(0, V, (4, 9))
    fused_state = step_state = _random_state(model, 4)
    for chunk in ids.split(3, dim=1):  # three chunks, state carried from one to the next
        fused_logits, _, fused_state = model(chunk, fused_state)
        step_logits, _, step_state, records = model.stepwise(chunk, step_state)
        torch.testing.assert_close(step_logits, fused_logits, atol=1e-5, rtol=1e-5)
        for a, b in zip(_parts(step_state), _parts(fused_state), strict=True):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
        assert len(records) == 3


@pytest.mark.parametrize("cell", CELLS)
def test_both_paths_give_the_same_gradients(cell):
    model = _model(cell, layers=2)
    ids, targets = torch.randint(0, V, (2, 6)), torch.randint(0, V, (2, 6))
    state = _random_state(model, 2)
    _, loss, _ = model(ids, state, targets)
    fused = torch.autograd.grad(loss, list(model.parameters()))
    _, loss, _, _ = model.stepwise(ids, state, targets)
    stepwise = torch.autograd.grad(loss, list(model.parameters()))
    for a, b in zip(stepwise, fused, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cell", CELLS)
def test_trace_records_every_gate_per_layer_as_time_by_hidden(cell):
    model = _model(cell, layers=2, hidden=8)
    logits, records, state = model.trace([1, 2, 3, 4, 5])
    assert logits.shape == (5, V)
    for layer, record in enumerate(records):
        assert record.layer == layer and record.cell == cell
        assert record.h.shape == (5, 8)
        assert tuple(record.gates) == GATES[cell]
        for gate in record.gates.values():
            assert gate.shape == (5, 8)
        assert (record.c is not None) == (cell == "lstm")
    torch.testing.assert_close(_parts(state)[0][:, 0], torch.stack([r.h[-1] for r in records]))


def test_lstm_record_obeys_the_cell_equations():
    model = _model("lstm", layers=1, hidden=8)
    _, (rec,), _ = model.trace([3, 1, 4, 1, 5, 9])
    assert float(rec.f.min()) > 0 and float(rec.f.max()) < 1  # sigmoid gates
    assert float(rec.g.abs().max()) < 1  # tanh candidate
    torch.testing.assert_close(rec.h, rec.o * rec.c.tanh())
    torch.testing.assert_close(rec.c[1:], rec.f[1:] * rec.c[:-1] + rec.i[1:] * rec.g[1:])


def test_gru_record_obeys_its_update():
    model = _model("gru", layers=1, hidden=8)
    _, (rec,), _ = model.trace([3, 1, 4, 1, 5])
    torch.testing.assert_close(rec.h[1:], (1 - rec.z[1:]) * rec.n[1:] + rec.z[1:] * rec.h[:-1])


def test_lstm_forget_gate_bias_starts_at_one_and_weights_at_char_rnn_range():
    model = CharRNN(CharRNNConfig(V, "lstm", 10, 2))
    for layer in range(2):
        b = getattr(model.rnn, f"bias_ih_l{layer}") + getattr(model.rnn, f"bias_hh_l{layer}")
        assert torch.equal(b[10:20], torch.ones(10))  # the forget block of i, f, g, o
        assert torch.equal(b[:10], torch.zeros(10)) and torch.equal(b[20:], torch.zeros(20))
    for name, p in model.named_parameters():
        if "bias" not in name:
            assert float(p.detach().abs().max()) <= 0.08


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("embed", [0, 5])
def test_param_count_matches_the_built_model(cell, embed):
    model = CharRNN(CharRNNConfig(V, cell, 7, 3, embed=embed))
    assert model.num_params() == param_count(cell, V, 7, 3, embed)


def test_dropout_acts_between_layers_only_in_training():
    model = _model("lstm", layers=2)
    assert model.rnn.dropout == pytest.approx(0.2)
    ids = torch.randint(0, V, (2, 5))
    torch.testing.assert_close(model(ids)[0], model(ids)[0])  # eval: deterministic
    model.train()
    torch.manual_seed(1)
    a = model(ids)[0]
    torch.manual_seed(2)
    assert not torch.allclose(a, model(ids)[0])


def test_loss_is_mean_cross_entropy():
    model = _model("gru", layers=1)
    ids, targets = torch.randint(0, V, (2, 4)), torch.randint(0, V, (2, 4))
    logits, loss, _ = model(ids, None, targets)
    expected = torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
    torch.testing.assert_close(loss, expected)


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"hidden": 0}, "hidden"),
        ({"layers": 0}, "layers"),
        ({"cell": "transformer"}, "unknown cell"),
        ({"dropout": 1.0}, "dropout"),
        ({"embed": -1}, "embed"),
    ],
)
def test_bad_config_is_one_clear_error(settings, match):
    with pytest.raises(InvalidInputError, match=match):
        CharRNNConfig(V, **settings)


def test_bad_state_or_ids_are_refused():
    model = _model("lstm", layers=2)
    with pytest.raises(InvalidInputError, match="state must be 2 tensor"):
        model(torch.zeros(1, 3, dtype=torch.long), torch.zeros(2, 1, 16))
    with pytest.raises(InvalidInputError, match="token ids"):
        model(torch.full((1, 3), V))
    with pytest.raises(InvalidInputError, match="non-empty"):
        model.trace([])
