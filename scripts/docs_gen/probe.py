"""The core's word on each row of the map: its default (the value the core fills in), its
allowed values (the core's own error messages for absurd values), and the checks that hold the
map to the core.

:func:`check_and_describe` checks a table against the core (every key the core allows here has a
row, a probe value lands where the row reads, a required row is required, a row that follows
another key follows it) and returns what its generated rows show. A mismatch is a
:class:`~.keymap.SchemaMapError` naming the key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .keymap import Row, SchemaMapError, Table
from .paths import SCRIPT
from .scenarios import get_path, has_path, normalize, scenario_error, with_value, without
from .values import fmt_number, fmt_value


def _read(row: Row, doc: dict) -> Any:
    if row.read is None:
        return None
    return row.read(doc) if callable(row.read) else get_path(doc, row.read)


def _key_path(table: Table, row: Row) -> str:
    return f"{table.path}.{row.key}"


def allowed_keys(table: Table) -> list[str]:
    """The keys the core accepts in this table (from its "unknown field" message)."""
    err = scenario_error(with_value(f"{table.path}.zz_unknown", 1, table.scenario))
    if err is None or err.kind != "unknown-field":
        raise SchemaMapError(f"{table.title}: the core accepted an unknown key at {table.path}")
    m = re.search(r"allowed here: (.*)$", err.reason)
    if not m:
        raise SchemaMapError(f"{table.title}: no 'allowed here' list in {err.reason!r}")
    return [k.strip() for k in m.group(1).split(",")]


def _default_probe(row: Row, value: Any) -> Any:
    if row.probe is not None:
        return row.probe
    if row.unit == "bool":
        return not value
    if row.unit == "time":
        return "1.234s"
    if row.unit == "bandwidth":
        return "1.234Mbps"
    if row.unit == "probability":
        return 0.5
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) + 1
    raise SchemaMapError(f"{row.key}: give a probe value")


_GOT = re.compile(r",? got .*$")
#: A message that states only a numeric range ("must be >= 0 and < 1"), no other field's value.
_PURE_RANGE = re.compile(r"^must be [<>=]+ -?[\d.e+]+( \S+)?( and [<>=]+ -?[\d.e+]+( \S+)?)?$")


def _range_of(table: Table, row: Row) -> str:
    """What the core says the allowed values are: its messages for absurd values."""
    path = _key_path(table, row)
    if row.bad is not None:
        probes: list[Any] = row.bad
    elif row.unit in ("bool", "") or row.shown == "fixed":
        return ""
    elif row.unit == "enum":
        probes = ["zz-unknown"]
    else:
        probes = [-10**18, 10**18]
    reasons: list[str] = []
    for value in probes:
        err = scenario_error(with_value(path, value, table.scenario))
        if err is None or not (err.field == path or err.field.startswith(path + "[")):
            continue
        # A flow name is checked after {i} expansion: "gives the flow name "x"; names must be ...".
        reason = re.sub(r'^gives the flow name .*?; names (must be)', r"\1", err.reason)
        # A bound the message names but the core rejects means a half-open range
        # (error_rate: "between 0 and 1", yet 1 is refused): the refusal states it exactly.
        m = re.match(r"must be between (\S+) .*?and (\S+)", _GOT.sub("", reason))
        # (Not for counts: the largest dumbbell or LTE tree takes seconds to build.)
        if m and row.unit not in ("enum", "count"):
            for bound in m.groups():
                try:
                    x = float(bound)
                except ValueError:
                    continue
                bound_value = int(x) if x == int(x) and abs(x) < 1e15 else x
                e2 = scenario_error(with_value(path, bound_value, table.scenario))
                if e2 is not None and e2.field == path and _PURE_RANGE.match(_GOT.sub("", e2.reason)):
                    reason = e2.reason
        # "unknown ... (allowed: a, b), or <another form>": the list, and the other form after it.
        m = re.search(r"\(allowed: (.*)\)$", reason) or re.search(r"\(allowed: ([^()]*)\)(, or .*)$", reason)
        if m:
            reason = "one of " + "".join(m.groups())
        reason = _GOT.sub("", reason).strip().rstrip(";,")
        # "must be > min (3)": the other field's value is the probe scenario's, not a rule.
        reason = re.sub(r" \(-?[\d.]+( s)?\)", "", reason)
        if reason and reason not in reasons:
            reasons.append(reason)
    return "; ".join(reasons)


#: Choices the normalised document stores as a flag: flag value -> TOML spelling.
_FLAG_CHOICES = {"first": {True: "on", False: "off"}, "connection": {False: "shared", True: "per-flow"}}

_UNITS = {"time": "s", "bandwidth": "bit/s", "bytes": "bytes", "packets": "packets", "probability": "probability"}


@dataclass
class Generated:
    key: str
    default: str
    unit: str
    allowed: str
    doc: str = ""
    cite: str = ""


def check_and_describe(table: Table) -> list[Generated]:
    """Check the table's map against the core and return its rows, in order."""
    base_doc = normalize(table.scenario)
    listed = {r.key for r in table.rows}
    allowed = allowed_keys(table)
    missing = [k for k in allowed if k not in listed and k not in table.elsewhere]
    if missing:
        raise SchemaMapError(f"{table.title}: the core accepts {', '.join(missing)} at {table.path}, which "
                             f"{SCRIPT} does not document: add a Row (or an 'elsewhere' entry)")
    unknown = [r.key for r in table.rows if r.key not in allowed and r.shown != "fixed"]
    if unknown:
        raise SchemaMapError(f"{table.title}: {', '.join(unknown)} are no longer accepted at {table.path}")
    out = []
    for row in table.rows:
        path = _key_path(table, row)
        value = _read(row, base_doc)
        if row.required:
            if not has_path(table.scenario, path):
                raise SchemaMapError(f"{path}: marked required but the table's scenario does not give it")
            err = scenario_error(without(table.scenario, path))
            if err is None:
                raise SchemaMapError(f"{path}: marked required, but the core accepts the table without it ({err})")
            default = row.shown or "required"
        elif row.template is not None:
            if value != row.template.format(i=0):
                raise SchemaMapError(f"{path}: the default for entry 0 is {value!r}, not {row.template.format(i=0)!r}")
            default = '`"' + row.template.replace("{i}", "<i>") + '"` (i = the entry\'s index)'
        elif row.shown == "fixed":
            default = f"fixed: `{fmt_number(value)}`"
        elif row.shown is not None:
            default = row.shown
        elif row.follows is not None:
            default = f"= `{row.follows}`"
            other = f"{table.path}.{row.follows}"
            changed = normalize(with_value(other, _default_probe(row, value), table.scenario))
            if _read(row, changed) == value:
                raise SchemaMapError(f"{path}: said to follow {row.follows}, but it does not change with it")
        elif row.key in _FLAG_CHOICES:
            default = f'`"{_FLAG_CHOICES[row.key][value]}"`'
        else:
            if has_path(table.scenario, path):
                raise SchemaMapError(f"{path}: a default row whose scenario sets the key")
            default = fmt_value(row, value, row.read if isinstance(row.read, str) else "")
        # The map check: a non-default value must land where the row reads.
        if row.read is not None and row.checked and row.shown != "fixed" and row.key != "delay_trace":
            probe = _default_probe(row, value)
            err = scenario_error(with_value(path, probe, table.scenario))
            if err is not None:
                raise SchemaMapError(f"{path}: the probe value {probe!r} is rejected ({err}); give another probe")
            changed = normalize(with_value(path, probe, table.scenario))
            if _read(row, changed) == value:
                raise SchemaMapError(f"{path}: setting it to {probe!r} does not change {row.read!r}; the map is wrong")
        out.append(Generated(row.key, default, _UNITS.get(row.unit, ""), _range_of(table, row), row.doc, row.cite))
    return out
