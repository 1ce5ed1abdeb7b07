"""What goes wrong with a store: one that cannot be used, one another process is writing, and a
commit that could not be written. Every message names the path it is about, so a user knows
which directory or file to look at."""

from __future__ import annotations

from ...errors import VegaslabError


class StoreError(VegaslabError):
    """A store directory that cannot be used (not a store, a newer format, not writable).
    The message names the path."""


class StoreLockedError(StoreError):
    """Another process is writing to the store (only one writer at a time)."""


class StoreWriteError(StoreError):
    """A commit could not be written (disk full, an I/O error). The message names the store,
    the runs and the file; every run committed before stays, and these count as missing."""


def gist(exc: BaseException) -> str:
    """An exception's message on one line, cut to 200 characters (for a message that names
    the file it is about)."""
    return " ".join(str(exc).split())[:200]
