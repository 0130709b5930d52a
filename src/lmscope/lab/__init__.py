"""The why-Transformers lab: experiments that measure the lesson's argument on real hardware.

- ``serial_depth``: recurrence vs reduction vs scans (depth, pure-Python and PyTorch timings)
- ``memory_wall``: peak memory and time of naive attention, fused attention and an LSTM
- ``gradient_flow``: how the gradient fades with distance in an RNN, LSTM, GRU and a GPT
- ``race``: a char LSTM and a char GPT of equal size train for the same time
- ``scans`` / ``linear_scan``: the prefix scans themselves, pure Python and PyTorch
- ``configs``: every experiment's settings (light: the CLI reads their defaults for --help)
- ``sizes``: recurrent models matched to a GPT's parameter count
- ``results`` / ``plots`` / ``texts``: the result file every experiment writes, its figures
  and its explanations and verdicts, as catalog texts said in the reader's language
"""

from lmscope.lab.results import read_result, shipped_dir, shipped_experiments

__all__ = ["read_result", "shipped_dir", "shipped_experiments"]
