"""Tags: the names that make a run's namespaces, interfaces, state files and cgroups unique on
the machine. A tag is ``vl``, the pid and a counter, both in base 36, so that a tag plus an
interface suffix fits Linux's 15-character interface names."""
from __future__ import annotations

import itertools
import os

__all__ = ["b36", "counter", "new_tag"]

#: One counter for the process, shared by networks and kernel sessions.
counter = itertools.count()


def b36(n: int) -> str:
    """``n`` (>= 0) in base 36, lower case."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def new_tag(kind: str = "") -> str:
    """A tag no other run of this machine holds: ``vl<pid>-<kind><counter>``."""
    return f"vl{b36(os.getpid())}-{kind}{b36(next(counter))}"
