"""The why-Transformers lab: experiments that measure the lesson's argument on real hardware.

- ``serial_depth``: recurrence vs reduction vs scans (depth, pure-Python and PyTorch timings)
- ``memory_wall``: peak memory and time of naive attention, fused attention and an LSTM
- ``scans`` / ``linear_scan``: the prefix scans themselves, pure Python and PyTorch
- ``results`` / ``plots``: the result file every experiment writes, and its figures
"""

from lmscope.lab.results import read_result, shipped_dir, shipped_experiments

__all__ = ["read_result", "shipped_dir", "shipped_experiments"]
