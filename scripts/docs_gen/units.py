"""The ``units`` block: each unit kind, its base unit and the suffixes the core's parser accepts,
read from the core's message for an unknown unit so that the table cannot drift from the
parser."""

from __future__ import annotations

import re

from .keymap import SchemaMapError
from .scenarios import app_scenario, base_scenario, scenario_error, with_value
from .values import cell


#: The units table: (kind, base unit, a field of that kind in a scenario, example). The accepted
#: suffixes are the core's own list (``vegaslab_sim::units``), read from its message for an
#: unknown unit, so the table cannot drift from what the parser accepts.
_UNIT_FIELDS = [
    ("time", "s", "run.duration", base_scenario(), '`"20ms"`'),
    ("bandwidth", "bit/s", "links[0].bandwidth", base_scenario(), '`"1.5Mbps"`'),
    ("size", "bytes", "flows[0].app.size", app_scenario({"kind": "file", "size": "1MB"}), '`"10MB"`'),
]


def render_units() -> str:
    lines = ["| kind | base unit | accepted suffixes (the core's list) | example |", "|---|---|---|---|"]
    for kind, base, path, scenario, example in _UNIT_FIELDS:
        err = scenario_error(with_value(path, "1 zz_unit", scenario))
        m = re.search(r"accepted: (.*)\)$", err.reason) if err is not None else None
        if m is None:
            raise SchemaMapError(f"units: no list of accepted {kind} units in the core's message for {path}: "
                                 f"{getattr(err, 'reason', 'accepted')!r}")
        suffixes = ", ".join(f"`{u.strip()}`" for u in m.group(1).split(","))
        lines.append(f"| {kind} | {base} | {cell(suffixes)} | {example} |")
    return "\n".join(lines)
