"""``python -m vegaslab``: the same command line as ``vegaslab``."""

from vegaslab.cli import entry

entry()
