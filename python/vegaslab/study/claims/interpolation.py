"""``{name}`` in strings and references, filled in from comprehension variables: the strict
replacement of ``str.format`` (the package docstring, "Safety")."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from .budgets import MAX_STRING
from .errors import ClaimError, over_budget
from .shown import fmt

_FIELD = re.compile(r"\{([^{}]*)\}")
_VARIABLE = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def check_template(text: str, what: str) -> None:
    """Every ``{...}`` in ``text`` must be ``{name}``; no other brace may appear."""
    for m in _FIELD.finditer(text):
        if not _VARIABLE.match(m.group(1)):
            raise ClaimError(f"{what}: {{{m.group(1)}}}: only {{name}} of a comprehension variable can be "
                             "filled in (no attributes, indexes, conversions or format specs)")
    rest = _FIELD.sub("", text)
    if "{" in rest or "}" in rest:
        raise ClaimError(f"{what}: a brace that is not part of {{name}}")


def interpolate(template: str, env: Mapping[str, Any], what: str = "template") -> str:
    """Fill each ``{name}`` in ``template`` with ``str(env[name])``: the strict replacement of
    ``str.format``, which would follow ``{x.attr}`` and ``{x[key]}`` into any object. ``name``
    must be a key of ``env`` holding a string or a finite number (a float with an integral value
    shows as an integer, ``200.0`` -> ``200``); the result is at most :data:`MAX_STRING`
    characters. Raises :class:`ClaimError` otherwise."""
    check_template(template, what)

    def one(m: re.Match) -> str:
        name = m.group(1)
        if name not in env:
            raise ClaimError(f"{what}: {{{name}}} is not a comprehension variable here")
        v = env[name]
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ClaimError(f"{what}: {{{name}}} is {fmt(v)}; only a string or a number can be filled in")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise ClaimError(f"{what}: {{{name}}} is {fmt(v)}")
            if v.is_integer() and abs(v) < 1e16:
                v = int(v)
        s = str(v)
        if len(s) > MAX_STRING:
            raise over_budget(f"{what}: {{{name}}} is longer than {MAX_STRING:,} characters")
        return s

    out = _FIELD.sub(one, template)
    if len(out) > MAX_STRING:
        raise over_budget(f"{what}: the filled-in text is longer than {MAX_STRING:,} characters")
    return out
