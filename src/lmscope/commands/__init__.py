"""One module per ``lmscope`` subcommand; see ``lmscope.cli``.

``lmscope --help`` imports every module here to build its parser, so their top-level imports
stay light: the standard library, rich, argparse helpers and settings (``lmscope.lab.configs``,
``lmscope.train.config``). What runs a model or an experiment (torch, matplotlib, uvicorn, the
engine, lab and interpret modules) is imported inside the function that needs it, marked
"lazy: see lmscope.commands". Check with ``python -X importtime -m lmscope --help``: no torch,
numpy or matplotlib in the list (once ``lmscope/__init__.py`` also loads its exports lazily).
"""

from lmscope.commands.wrapping import install as _break_chinese_lines

# the commands print with rich, which breaks lines at spaces only: a line holding Chinese
# breaks where Chinese may (every other line as rich breaks it), whichever command prints it
_break_chinese_lines()
