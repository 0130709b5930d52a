"""One module per ``lmscope`` subcommand; see ``lmscope.cli``."""
