"""The check of docs/results-format.md's column tables: the columns a run that switches every
optional column on produces, against the columns each ``<!-- columns: TABLE -->`` table
describes. The descriptions are prose, so they are checked rather than generated."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from .paths import RESULTS_DOC


#: A run that produces every optional column: RED and linear RED queues (early/forced drops),
#: a link with packet errors (errors), a per-flow NPS entry (connections, open_connections,
#: late_acks), one flow of each algorithm family (their time-series variables), a UDP source,
#: and every monitor on.
COLUMNS_RUN = """
[run]
duration = "1s"
sample_interval = "100ms"
[[links]]
endpoints = ["S", "R"]
bandwidth = "10Mbps"
delay = "5ms"
error_rate = 0.01
[[links]]
endpoints = ["R", "D"]
bandwidth = "2Mbps"
delay = "5ms"
queue = { kind = "red", limit = 30, min = 3, max = 10 }
[[links]]
endpoints = ["R", "E"]
bandwidth = "2Mbps"
delay = "5ms"
queue = { kind = "red-linear", limit = 30, min = 3, max = 10 }
# Two equal-length paths S - P - T and S - Q - T for the second UDP source (meta.route_ties).
[[links]]
endpoints = ["S", "P"]
bandwidth = "10Mbps"
delay = "5ms"
[[links]]
endpoints = ["S", "Q"]
bandwidth = "10Mbps"
delay = "5ms"
[[links]]
endpoints = ["P", "T"]
bandwidth = "10Mbps"
delay = "5ms"
[[links]]
endpoints = ["Q", "T"]
bandwidth = "10Mbps"
delay = "5ms"
[aqt]
routers = ["R"]
[[flows]]
name = "va"
from = "S"
to = "D"
cc = "vegas-a"
[[flows]]
name = "ada"
from = "S"
to = "D"
cc = "adavegas"
[[flows]]
name = "v8"
from = "S"
to = "E"
cc = "vegas_8"
[[flows]]
name = "ro"
from = "S"
to = "E"
cc = "rovegas"
[[flows]]
name = "nps"
from = "S"
to = "D"
cc = "newreno"
app = { kind = "nps", mean_interarrival = "0.1s", mean_flow_size = "20KB", connection = "per-flow" }
[[flows]]
name = "file"
from = "S"
to = "D"
cc = "vegas"
app = "file"
file_size = "50KB"
[[udp]]
from = "D"
to = "S"
packet_size = 500
model = "cbr"
rate = "100kbps"
[[udp]]
from = "S"
to = "T"
packet_size = 500
model = "cbr"
rate = "100kbps"
[monitor]
cwnd = true
throughput = true
all_queues = true
"""


def produced_columns() -> dict[str, list[str]]:
    """Columns of every results table (and meta.json's keys) from an actual run written with
    ``Results.to_dir``."""
    import vegaslab
    from vegaslab.results import TABLES, Results

    res = vegaslab.run(COLUMNS_RUN)
    out = {name: list(getattr(res, name).columns) for name in TABLES}
    with tempfile.TemporaryDirectory() as tmp:
        res.to_dir(Path(tmp) / "run")
        meta = json.loads((Path(tmp) / "run" / "meta.json").read_text())
        back = Results.from_dir(Path(tmp) / "run")
    for name in TABLES:
        if list(getattr(back, name).columns) != out[name]:
            raise AssertionError(f"{name}: columns differ after to_dir/from_dir")
    out["meta.json"] = sorted(meta)
    out["provenance"] = sorted(meta["provenance"])
    return out


_COLUMNS_MARK = re.compile(r"<!-- columns: (\S+) -->")


def documented_columns(text: str) -> dict[str, list[str]]:
    """``<!-- columns: TABLE -->`` followed by a markdown table whose first cell names one or
    more columns in backticks: TABLE -> the names, in order."""
    out: dict[str, list[str]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _COLUMNS_MARK.search(line)
        if not m:
            continue
        names: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].startswith("|"):
            j += 1
        rows = []
        while j < len(lines) and lines[j].startswith("|"):
            rows.append(lines[j])
            j += 1
        for row in rows[2:]:  # header and separator
            first = row.strip("|").split("|")[0]
            names += re.findall(r"`([^`]+)`", first)
        out.setdefault(m.group(1), []).extend(names)
    return out


def results_mismatches(text: str, produced: dict[str, list[str]] | None = None) -> list[str]:
    """Every column ``produced`` (default: :func:`produced_columns`) that ``text`` does not
    document, and every documented column or table no run produces."""
    produced = produced if produced is not None else produced_columns()
    documented = documented_columns(text)
    problems = []
    for table, cols in produced.items():
        doc = documented.get(table)
        if doc is None:
            problems.append(f"{table}: no '<!-- columns: {table} -->' table in {RESULTS_DOC.name}")
            continue
        for c in cols:
            if c not in doc:
                problems.append(f"{table}.{c}: produced by a run but not documented")
        for c in doc:
            if c not in cols:
                problems.append(f"{table}.{c}: documented but not produced by a run")
    for table in documented:
        if table not in produced:
            problems.append(f"{table}: documented, but there is no such results table")
    return problems
