"""Values as a verdict shows them: numbers, lists and strings in the report's form, texts cut to
:data:`~vegaslab.study.claims.budgets.MAX_TEXT`, and :class:`Shown`, a value with the expression
that computed it, numbers filled in."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from .budgets import MAX_SHOWN_ITEMS, MAX_STRING, MAX_TEXT
from .runs import RunRef


def fmt(v: Any) -> str:
    """A number as the report shows it: thousands separators from 1,000 on, else 4 significant
    digits; lists in brackets (at most :data:`MAX_SHOWN_ITEMS` items in all, then a count);
    booleans as true/false."""
    return _fmt(v, [MAX_SHOWN_ITEMS])


def _fmt(v: Any, left: list[int]) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        parts = []
        for i, x in enumerate(v):
            if left[0] <= 0:
                parts.append(f"… {len(v) - i:,} more")
                break
            left[0] -= 1
            parts.append(_fmt(x, left))
        return "[" + ", ".join(parts) + "]"
    if isinstance(v, str):
        return repr(v) if len(v) <= MAX_STRING else repr(v[:MAX_STRING]) + "…"
    if isinstance(v, RunRef):
        return f"run({v.variant!r})"
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return str(v)[:MAX_STRING] if isinstance(v, (int, float)) else type(v).__name__
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if abs(f) >= 1000:
        return f"{f:,.0f}"
    if f == int(f):
        return str(int(f))
    return f"{f:.4g}"


def cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def join(parts: Iterable[str], sep: str) -> str:
    """``sep.join(parts)``, stopping once the text is longer than :data:`MAX_TEXT`."""
    out: list[str] = []
    size = 0
    for p in parts:
        if size > MAX_TEXT:
            out.append("…")
            break
        out.append(p)
        size += len(p) + len(sep)
    return cut(sep.join(out))


@dataclass
class Shown:
    """A value and how it reads with the numbers filled in; ``leaf`` when the text is the value;
    ``src`` the references it was computed from (to name them when data is missing)."""

    value: Any
    text: str
    leaf: bool = True
    op: bool = False  # an arithmetic operation (parenthesised inside another)
    src: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.text = cut(self.text)

    def shown(self) -> str:
        if self.leaf or isinstance(self.value, bool):  # a statement reads as itself
            return self.text
        return cut(f"{self.text} = {fmt(self.value)}")


def sources(*vs: Shown) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for v in vs for s in v.src))


def from_sources(v: Shown) -> str:
    return f" (from {', '.join(v.src)})" if v.src else ""
