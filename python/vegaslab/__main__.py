"""``python -m vegaslab``: the same command line as ``vegaslab``."""

from .cli import entry

entry()
