"""Values as the docs show them: a default as one would write it in a scenario (``"20ms"``,
``"1.5Mbps"``, ``true``), and text made safe for a markdown table cell."""

from __future__ import annotations

import json
from typing import Any

from .keymap import Row, SchemaMapError


def fmt_number(x: float) -> str:
    """A number (or flag) as TOML writes it: whole numbers without a fraction."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int) or (isinstance(x, float) and x == int(x) and abs(x) < 1e15):
        return str(int(x))
    return repr(float(x))


def _fmt_time(seconds: float) -> str:
    ns = round(seconds * 1e9)
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % scale == 0:
            return f'"{ns // scale}{unit}"'
    return f'"{ns}ns"'


def _fmt_bandwidth(bps: float) -> str:
    for unit, scale in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale and (bps / scale) == round(bps / scale, 6):
            return f'"{fmt_number(round(bps / scale, 6))}{unit}"'
    return f'"{fmt_number(bps)}bps"'


def fmt_value(row: Row, value: Any, path: str) -> str:
    """A default as one would write it in the scenario."""
    if value is None:
        return row.none or "none"
    if row.unit == "time":
        seconds = value / 1e9 if path.endswith("_ns") else value
        return f"`{_fmt_time(seconds)}`"
    if row.unit == "bandwidth":
        return f"`{_fmt_bandwidth(value)}`"
    if isinstance(value, bool) and row.unit == "enum":  # a choice the document stores as a flag
        raise SchemaMapError(f"{row.key}: enum stored as a flag; map it")
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (int, float)):
        return f"`{fmt_number(value)}`"
    if isinstance(value, list) and not value:
        return "none" if row.none is None else row.none
    if isinstance(value, dict):
        if set(value) == {"fixed"}:  # RED weight
            return f"`{fmt_number(value['fixed'])}`"
        if value.get("kind") == "droptail":
            return f'`{{ kind = "droptail", limit = {value["limit"]} }}`'
    return f"`{json.dumps(value)}`"


def cell(text: str) -> str:
    """``text`` for a markdown table cell (a ``|`` would end the cell)."""
    return text.replace("|", "\\|")
