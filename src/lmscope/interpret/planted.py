"""A quote cell wired by hand: what an "inside quotes" unit can look like inside an LSTM.

``plant_quote_cell`` overwrites one unit's weights in layer 0 of a one-hot char LSTM so that
its cell state flips at every double quote and holds everywhere else:

    on '"':       i = 1, f = 0, g = tanh(-10 h + 1)   ->  c becomes minus the sign of h
                  (from c = 0, the bias tips it to +0.76: the first quote opens)
    otherwise:    i = 0, f = 1                        ->  c keeps its value
    always:       o = 1                               ->  h = tanh(c)

So after an opening quote c is positive and after the closing one negative: the unit computes
"inside quotes" exactly. The finder's tests check that it ranks such a unit first; the neuron
views show it in the same red/blue as a learned one.
"""

from __future__ import annotations

import torch

from lmscope.errors import InvalidInputError

SATURATE = 10.0  # a pre-activation this large makes a sigmoid 0 or 1 to 4.5e-5


@torch.no_grad()
def plant_quote_cell(net, quote_id: int, unit: int = 0) -> None:
    """Make ``unit`` of layer 0 of ``net`` (a one-hot ``CharRNN`` LSTM) a quote toggle."""
    c = net.config
    if c.cell != "lstm" or c.embed:
        raise InvalidInputError("error.neurons.plant-lstm")
    if not 0 <= unit < c.hidden or not 0 <= quote_id < c.vocab_size:
        raise InvalidInputError("error.neurons.plant-range")
    w_ih, w_hh = net.rnn.weight_ih_l0, net.rnn.weight_hh_l0
    b_ih, b_hh = net.rnn.bias_ih_l0, net.rnn.bias_hh_l0
    row = {gate: k * c.hidden + unit for k, gate in enumerate("ifgo")}  # PyTorch's gate order
    for r in row.values():
        w_ih[r].zero_()
        w_hh[r].zero_()
        b_ih[r] = 0.0
        b_hh[r] = 0.0
    b_ih[row["i"]], w_ih[row["i"], quote_id] = -SATURATE, 2 * SATURATE  # write on a quote only
    b_ih[row["f"]], w_ih[row["f"], quote_id] = SATURATE, -2 * SATURATE  # forget on a quote only
    w_hh[row["g"], unit], b_ih[row["g"]] = -SATURATE, 1.0  # the opposite of what it holds
    b_ih[row["o"]] = SATURATE  # always show the cell
