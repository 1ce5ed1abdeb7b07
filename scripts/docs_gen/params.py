"""The ``params`` block: one table per algorithm of the core's registry (:mod:`vegaslab.registry`),
each parameter's default (per flavour where the flavours differ), unit, allowed values, meaning
and source, as the algorithm declares them."""

from __future__ import annotations

import json
from typing import Any

from .values import cell


def _param_value(value: Any) -> str:
    return "`" + json.dumps(value) + "`"


def _param_default(param: Any, flavours: tuple[str, ...]) -> str:
    """The default, per flavour (in the algorithm's order) where the flavours differ."""
    if param.default_by_flavour is not None:
        groups: dict[str, list[str]] = {}
        for flavour in flavours:
            groups.setdefault(_param_value(param.default_by_flavour[flavour]), []).append(flavour)
        return ", ".join(f"{value} ({', '.join(fs)})" for value, fs in groups.items())
    return "none" if param.default is None else _param_value(param.default)


def _bound(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _param_allowed(kind: dict[str, Any]) -> str:
    if kind["type"] in ("number", "integer"):
        what = "a number" if kind["type"] == "number" else "a whole number"
        return f"{what} from {_bound(kind['lo'])} to {_bound(kind['hi'])}"
    if kind["type"] == "choice":
        return "one of " + ", ".join(f'`"{v}"`' for v in kind["values"])
    return "`true` or `false`"


def render_params() -> str:
    """One table per registered algorithm (``vegaslab.registry``, the core's declarations): each
    parameter's default (per flavour where it differs), unit, allowed values, meaning and source."""
    from vegaslab import registry

    lines: list[str] = []
    for a in registry.algorithms():
        lines += [f'*cc = "{a.name}"*: {cell(a.about)}', ""]
        if not a.params:
            lines += ["No params (the sender's settings are the `tcp` table's).", ""]
            continue
        lines += ["| field | default | unit | allowed | meaning | source |", "|---|---|---|---|---|---|"]
        for p in a.params:
            lines.append(f"| `flows[].params.{p.name}` | {cell(_param_default(p, a.flavours))} | {p.unit} | "
                         f"{cell(_param_allowed(p.kind))} | {cell(p.doc)} | {cell(p.cite)} |")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
