"""Measurements of the testbed's timing on this host, apart from the tests of vegaslab's code.

How closely the delay line holds a delay, the rate htb drains a queue at, how the kernel's
Vegas keeps its queue on a busy machine: these are properties of the host as much as of the
testbed, so ``make test`` never passes or fails on them. ``make testbed-accuracy`` runs the
tests marked :func:`measurement` (``VEGASLAB_MEASURE_ACCURACY=1``); each one reports its numbers
with :func:`report`, beside the target docs/testbed.md gives for it, and fails only when it
cannot measure (a lost ping, a transfer that did not run). With ``VEGASLAB_ACCURACY_REPORT``
set, every number is also appended to that file as one JSON object per line;
``python tests/accuracy.py FILE`` prints those lines as a table.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

MEASURING = os.environ.get("VEGASLAB_MEASURE_ACCURACY") == "1"


def measurement(test):
    """Mark ``test`` as a measurement: selected by ``-m accuracy``, skipped unless measuring."""
    skip = pytest.mark.skipif(not MEASURING, reason="a measurement of this host's timing, not a test of "
                                                    "vegaslab's code: `make testbed-accuracy` runs it")
    return pytest.mark.accuracy(skip(test))


def report(what: str, value: float, unit: str, target: str, met: bool) -> None:
    """Print one measured number with its documented target and whether it was met; append it
    to the file named by ``VEGASLAB_ACCURACY_REPORT`` when that is set."""
    line = {"what": what, "value": float(value), "unit": unit, "target": target, "met": bool(met)}
    print(f"accuracy: {what}: {value:.4g} {unit} (target {target}: {'met' if met else 'MISSED'})")
    path = os.environ.get("VEGASLAB_ACCURACY_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def table(path: Path) -> str:
    """The reported numbers of ``path`` as a Markdown table, with a count of targets met."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = ["| measured | value | target | |", "|---|---|---|---|"]
    out += [f"| {r['what']} | {r['value']:.4g} {r['unit']} | {r['target']} | {'met' if r['met'] else 'MISSED'} |"
            for r in rows]
    out.append(f"\n{sum(r['met'] for r in rows)} of {len(rows)} numbers within their targets")
    return "\n".join(out)


if __name__ == "__main__":
    print(table(Path(sys.argv[1])))
