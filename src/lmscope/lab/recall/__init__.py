"""``lmscope lab recall``: the fixed-size state, measured. An LSTM, a GRU and a GPT of equal
parameter count learn to recall a list of symbols after N filler characters.

The modules: ``task`` (the examples, and the intervals of an accuracy), ``config`` (the
settings), ``models`` (the models and their training), ``experiment`` (testing and the result
document: ``run_recall``), ``texts`` (the words; the fixed ones in ``texts.json``) and
``plots`` (the figures). This file imports none of them, so reading the settings (``lmscope
lab recall --help``) does not load torch.
"""
