"""What the ns-2 bridge reads from the normalised scenario, checked, and the only forms in which
it reaches the script: numbers as Tcl literals the bridge printed itself (:func:`tcl_num`),
booleans as ``true``/``false`` (:func:`tcl_bool`), names reduced to characters inert in a ``#``
comment (:func:`comment_text`). Every check raises ``ValueError`` naming the field.

Why: no string from the scenario may ever stand in a code position of the script (the safety
rule of :mod:`vegaslab.ns2.translate`); a value that is not the number it claims to be stops
here.
"""
from __future__ import annotations

import math
import re

#: ns-2 binds these agent, queue and application values to C ``int``.
INT_MAX = 2**31 - 1

#: A plain decimal number: the only text :func:`tcl_num` writes, and what a hand-built model
#: may hold where the script writes a value verbatim (:mod:`vegaslab.ns2.script`).
NUMBER_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?")


def tcl_num(value, where: str) -> str:
    """A Tcl literal for a finite number from the document (full precision).

    Only ints and floats pass (bools, strings and everything else raise), and the text is
    checked once more to be a plain decimal number, so nothing else can reach the script.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: expected a finite number, got {value!r}")
        text = str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    else:
        text = str(value)
    if not NUMBER_TEXT.fullmatch(text):   # pragma: no cover - a guard, not a code path
        raise ValueError(f"{where}: cannot write {value!r} as a Tcl number")
    return text


def check_int(value, where: str, lo: int = 0, hi: int = INT_MAX) -> int:
    """A whole number in [lo, hi] (a float that is whole counts: the core stores windows as
    floats, ns-2 binds them to ``int``)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: ns-2 needs a whole number here, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{where}: ns-2 takes {lo}..{hi} here, got {value!r}")
    return value


def check_float(value, where: str, lo: float = 0.0) -> float:
    """A finite number, at least ``lo``, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    if value < lo:
        raise ValueError(f"{where}: must be >= {lo}, got {value!r}")
    return float(value)


def check_bool(value, where: str) -> bool:
    """``true`` or ``false`` (a JSON boolean, not a number)."""
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected true or false, got {value!r}")
    return value


def tcl_bool(value: bool) -> str:
    """The Tcl literal of a checked boolean."""
    return "true" if value else "false"


def secs(ns, where: str) -> float:
    """Seconds from the document's integer nanoseconds."""
    return check_int(ns, where, 0, 2**63 - 1) / 1e9


_COMMENT_SAFE = re.compile(r"[^A-Za-z0-9_.:>+-]")


def comment_text(name: str) -> str:
    """A name reduced to characters that are inert in a Tcl comment (no newline, backslash,
    brace, bracket, quote, ``$`` or ``;``); anything else becomes ``?``.  For people reading
    the script only: the results use the real names, kept in Python."""
    return _COMMENT_SAFE.sub("?", str(name))[:80]


def check_keys(obj, known, where: str) -> None:
    """Every key of ``obj`` must be one the bridge knows how to map (or knows to ignore): a
    field the core adds later must not be dropped silently."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an object, got {obj!r}")
    extra = sorted(set(obj) - set(known))
    if extra:
        raise ValueError(f"{where}.{extra[0]}: not supported by the ns-2 bridge "
                         f"(it knows {', '.join(sorted(known))})")


def check_list(value, where: str) -> list:
    """A JSON array."""
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    return value
