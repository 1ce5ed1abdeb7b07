"""Suggestions for a misspelt name (a catalog entry id, a paper, a study): the known name
nearest to the one given, for an error message's ``(did you mean 'va-reroute'?)``.

The scenario's keys and units are suggested by the core (crates/vegaslab-sim
``scenario/spelling.rs``); the names here are Python's own (files of the catalog and of the
studies), so Python suggests them, by the standard library's :mod:`difflib` similarity.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["nearest", "did_you_mean", "SIMILARITY"]

#: Least :class:`difflib.SequenceMatcher` ratio of a suggestion: a name a letter or two away
#: from a known one is suggested (``va-rerout``: 0.95 to ``va-reroute``), a name that merely
#: shares the catalog's prefixes is not (``va-rerout``: 0.67 to ``va-leo``, which difflib's
#: default of 0.6 would suggest).
SIMILARITY = 0.8


def nearest(name: str, known: Iterable[str], similarity: float = SIMILARITY) -> str | None:
    """The known name most similar to ``name``, or None when none is similar enough
    (``similarity``, :data:`SIMILARITY` by default) or ``name`` is itself known."""
    choices = list(dict.fromkeys(known))
    if name in choices:
        return None
    found = difflib.get_close_matches(name, choices, n=1, cutoff=similarity)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str], similarity: float = SIMILARITY) -> str:
    """``" (did you mean 'va-reroute'?)"`` when a known name is near ``name``, else ``""``."""
    match = nearest(name, known, similarity)
    return f" (did you mean {match!r}?)" if match is not None else ""
