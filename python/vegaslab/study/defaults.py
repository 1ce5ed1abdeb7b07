"""The catalog's facts the command line needs before it runs anything, in a module with no
imports, so that building the argument parser (on every command) costs nothing; importing
``vegaslab.study.catalog`` instead measured 14 ms. ``vegaslab.study.catalog`` re-exports them."""
from __future__ import annotations

#: What ``vegaslab reproduce`` runs without names: the Vegas-A paper's three wired experiments.
DEFAULT_IDS = ("va-reroute", "va-file", "va-buffer")
