"""The catalog's facts the command line needs before it runs anything, kept free of heavy
imports (pandas) so that building the argument parser stays fast: ``vegaslab.catalog``
re-exports them."""
from __future__ import annotations

#: What ``vegaslab reproduce`` runs without names: the Vegas-A paper's three wired experiments.
DEFAULT_IDS = ("va-reroute", "va-file", "va-buffer")
