"""Property-based fuzzing of scenarios: mutate the catalog (and a few minimal hand-written
scenarios), run each mutant through the public API in a sandboxed worker process, and check
that nothing crashes, hangs, panics or returns a physically impossible result.

Test tooling, not part of the package (the wheel does not ship it). Used by ``tests/test_fuzz.py`` (a fixed seed and a small budget, part of ``make test``) and by
``scripts/fuzz.py`` (``make fuzz``: thousands of cases, counts, every failure written to disk).
hypothesis is needed only to *generate* cases (:func:`cases`); the worker and the checks need
nothing beyond vegaslab.

Decisions, and why:

- **Cases are data.** A case is a base scenario plus a list of mutation *ops* (``["set", path,
  value]``, ``["del", path]``, ``["chain", n]``, ...), ``--set`` overrides, a seed, side files
  (delay traces, FIFOs, symlinks) and the API to call. The TOML is rebuilt from them by
  :func:`build_toml`, so a failing case can be replayed and minimised (:func:`minimise` drops
  ops and overrides while the failure stays the same) and written out as text.
- **Every case runs in a worker subprocess** (``python tests/fuzzer.py --worker``) under
  ``RLIMIT_AS`` (4 GiB by default), so an abort on a failed allocation, a stack overflow
  (SIGSEGV/SIGABRT) or a ``MemoryError`` is *observed* instead of killing the test runner. The
  worker is persistent (startup costs ~1 s, a case ~10 ms) and restarted when it dies or hangs.
  Its stderr is redirected to a file per case, so panic text printed by Rust's panic hook is
  seen even when the panic itself was converted into an exception.
- **Hang vs. long run.** A run gets a progress callback; once a case has used its wall-time
  budget while simulated time still advances, the callback stops it (outcome ``stopped``: the
  simulator was responsive, the scenario is merely long). Only a worker that does not answer
  within ``timeout`` (set-up that never ends, a loop that never reaches its interrupt check) is
  a ``hang``.
- **Simulated time is capped** in every base (last start + 2 s, at most 5 s) so cases are fast;
  the duration ops put long durations back on purpose.
- **What counts as a failure** (categories): ``crash`` (worker killed by a signal, or
  MemoryError), ``hang``, ``panic`` (``panicked at`` / internal-error text in any message or on
  stderr), ``exception`` (any exception other than :class:`vegaslab.ScenarioError`),
  ``bad-error`` (a ScenarioError that does not name the file and a field) and ``impossible``
  (a result that breaks :func:`check_results`). ``ok``, ``stopped`` and ``scenario-error``
  pass.
"""

from __future__ import annotations

import copy
import json
import math
import os
import queue
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from vegaslab.scenario import builtin_dir

# The built-in catalog ships as package data (vegaslab/catalog_data/).
CATALOG = builtin_dir()

#: Outcome categories that pass.
PASSING = ("ok", "stopped", "scenario-error")
#: Outcome categories that are failures, in the order reports list them.
FAILING = ("crash", "hang", "panic", "exception", "bad-error", "impossible", "unsafe")

PANIC_MARKERS = ("panicked at", "internal simulator error", "internal error in the simulator core",
                 "RUST_BACKTRACE", "has overflowed its stack")

DEFAULT_MEMORY_LIMIT = 4 << 30
DEFAULT_TIMEOUT_S = 20.0
DEFAULT_BUDGET_S = 2.0

# ----------------------------------------------------------------------------- base scenarios

_MINIMAL_TOML = {
    "min-two-hop": """
[run]
duration = "2s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "1Mbps"
delay = "10ms"
[[links]]
endpoints = ["R1", "D1"]
bandwidth = "500kbps"
delay = "10ms"
queue = { kind = "droptail", limit = 10 }
[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
""",
    "min-udp-red": """
[run]
duration = "2s"
sample_interval = "100ms"
clock = "exact"
[[links]]
endpoints = ["A", "B"]
bandwidth = "2Mbps"
delay = "5ms"
error_rate = 0.01
queue = { kind = "red", limit = 25, min = 4, max = 8, max_p = 0.1, weight = 0.002 }
delay_schedule = [{ at = "1s", delay = "50ms" }]
[[flows]]
name = "file"
from = "A"
to = "B"
cc = "newreno"
app = "file"
file_size = "100KB"
tcp = { window = 50, packet_size = 1000 }
[[udp]]
name = "cbr"
from = "B"
to = "A"
packet_size = 500
model = "cbr"
rate = "500kbps"
[monitor]
cwnd = true
throughput = true
queues = ["A->B"]
""",
    "min-loss": """
[run]
duration = "2s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "2Mbps"
delay = "5ms"
queue_forward = { kind = "red", limit = 25, min = 4, max = 8 }
queue_reverse = { kind = "droptail", limit = 5 }
loss = { packets = [3, 0, 17, 40] }
loss_reverse = { every = 7, first = 2, burst = 2 }
[[flows]]
name = "f1"
from = "A"
to = "B"
cc = "reno"
[[flows]]
name = "f2"
from = "B"
to = "A"
cc = "vegas"
[[udp]]
name = "cbr"
from = "A"
to = "B"
packet_size = 500
model = "cbr"
rate = "500kbps"
""",
    "min-failure": """
[run]
duration = "2s"
[[links]]
endpoints = ["A", "R1"]
bandwidth = "10Mbps"
delay = "1ms"
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "1Mbps"
delay = "5ms"
down = [["0.5s", "0.8s"], ["1.2s", "1.25s"]]
loss = { every = 9 }
[[links]]
endpoints = ["R1", "R3"]
bandwidth = "1Mbps"
delay = "5ms"
[[links]]
endpoints = ["R3", "R2"]
bandwidth = "1Mbps"
delay = "5ms"
down = [["0.6s", "0.7s"]]
[[links]]
endpoints = ["R2", "B"]
bandwidth = "10Mbps"
delay = "1ms"
[[flows]]
name = "f1"
from = "A"
to = "B"
cc = "vegas"
app = { kind = "file", packets = 300 }
[[flows]]
name = "f2"
from = "B"
to = "A"
cc = "newreno"
""",
    "min-dumbbell": """
[run]
duration = "2s"
[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "1Mbps", delay = "5ms", queue = { kind = "droptail", limit = 20 } }
[[flows]]
pairs = "1-2"
cc = "vegas-a"
params = { alpha = 1, beta = 3 }
""",
    "min-lte-onoff": """
[run]
duration = "2s"
[lte]
enbs = 1
ues_per_enb = 2
server_link = { bandwidth = "100Mbps", delay = "2ms" }
enb_link = { bandwidth = "5Mbps", delay = "2ms" }
ue_link = { bandwidth = "1Mbps", delay = "2ms" }
[[flows]]
name = "ue{i}"
from = "server"
to = "UE{i}"
range = "1-2"
cc = "adavegas"
app = { kind = "onoff", mean_on = "0.5s", mean_off = "0.2s", shape = 1.5 }
""",
    "min-linux-cubic": """
[run]
duration = "2s"
[dumbbell]
pairs = 4
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "2Mbps", delay = "5ms", queue = { kind = "droptail", limit = 15 } }
[[flows]]
pairs = "1-1"
cc = "cubic"
params = { hystart_detect = 2, hystart_low_window = 4 }
[[flows]]
pairs = "2-2"
cc = "vegas-a"
params = { flavour = "linux", alpha = 2, beta = 4 }
[[flows]]
pairs = "3-3"
cc = "adavegas"
params = { flavour = "linux" }
[[flows]]
pairs = "4-4"
cc = "vegas_8"
params = { flavour = "linux" }
app = { kind = "onoff", mean_on = "0.3s", mean_off = "0.2s", shape = 1.5 }
""",
    "min-nps-per-flow": """
[run]
duration = "2s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "10Mbps"
delay = "2ms"
[[flows]]
name = "nps"
from = "S"
to = "D"
cc = "reno"
app = { kind = "nps", mean_interarrival = "0.1s", mean_flow_size = "20KB", connection = "per-flow" }
""",
}

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def _seconds(value: Any) -> float:
    """Seconds of a time quantity as the catalog writes them (for the duration cap only)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    for unit in sorted(_UNIT_SECONDS, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * _UNIT_SECONDS[unit]
    return float(text)


def _cap_duration(doc: dict) -> None:
    """Shorten run.duration to the last start + 2 s (at most 5 s after it, at least 0.5 s)."""
    starts = [0.0]
    for item in list(doc.get("flows", [])) + list(doc.get("udp", [])):
        try:
            starts.append(_seconds(item.get("start", 0)))
        except (TypeError, ValueError):
            pass
    try:
        duration = _seconds(doc["run"]["duration"])
    except (KeyError, TypeError, ValueError):
        return
    capped = min(duration, max(starts) + 2.0)
    doc["run"]["duration"] = f"{capped:g}s"
    for item in doc.get("flows", []) + doc.get("udp", []):
        stop = item.get("stop")
        if stop is not None and _seconds(stop) > capped:
            del item["stop"]


@dataclass
class Base:
    name: str
    doc: dict
    variant_overrides: list[list[str]]


_BASES: dict[str, Base] | None = None


def bases() -> dict[str, Base]:
    """Every base scenario by name: the catalog (without [meta] and [[variant]]; each keeps its
    variants' overrides, which a case may apply) and the minimal hand-written ones."""
    global _BASES
    if _BASES is not None:
        return _BASES
    import vegaslab

    try:
        import tomllib as toml
    except ModuleNotFoundError:  # pragma: no cover
        import tomli as toml  # type: ignore[no-redef]

    out: dict[str, Base] = {}
    catalog_files = sorted(CATALOG.glob("*.toml")) + sorted((CATALOG / "bench").glob("*.toml"))
    if not catalog_files:
        raise RuntimeError(f"no catalog scenarios under {CATALOG}: the fuzzer would test only its minimal bases")
    from vegaslab.study import catalog

    for path in catalog_files:
        doc = vegaslab.load_scenario(path)
        doc.pop("variant", None)
        # Variants through the catalog's loader, so a grid's points ([[variant.axis]]) count too.
        entry = catalog.load_entry(path) if path.parent == CATALOG else None
        variants = [list(catalog.variant_overrides(v)) for v in entry.variants] if entry else []
        doc.pop("meta", None)
        _cap_duration(doc)
        out[path.stem] = Base(path.stem, doc, variants)
    for name, text in _MINIMAL_TOML.items():
        out[name] = Base(name, toml.loads(text), [])
    _BASES = out
    return out


# ----------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One fuzz case (see the module docstring). ``files`` maps a name in the case directory
    to ``{"text": ...}``, ``{"fifo": true}``, ``{"symlink": target}`` or ``{"dir": true}``."""

    base: str
    ops: list = field(default_factory=list)
    overrides: list = field(default_factory=list)
    files: dict = field(default_factory=dict)
    seed: Any = None
    api: str = "run"

    def __repr__(self) -> str:  # hypothesis prints this for a falsifying example
        return (f"Case(base={self.base!r}, api={self.api!r}, seed={self.seed!r}, "
                f"ops={_short(self.ops)}, overrides={_short(self.overrides)}, files={_short(self.files)})")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> "Case":
        return cls(**doc)


def _short(value: Any, limit: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _get(doc: Any, path: list) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _resolve(doc: Any, path: list):
    """(container, last key) of a path, or None when the path no longer exists."""
    if not path:
        return None
    try:
        parent = _get(doc, path[:-1])
    except (KeyError, IndexError, TypeError):
        return None
    last = path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        return parent, last
    if isinstance(parent, list) and isinstance(last, int) and 0 <= last <= len(parent):
        return parent, last
    return None


def _chain(n: int) -> dict:
    links = [{"endpoints": [f"N{i}", f"N{i + 1}"], "bandwidth": "10Mbps", "delay": "0.1ms"} for i in range(n)]
    return {"links": links, "flows": [{"name": "f", "from": "N0", "to": f"N{n}", "cc": "reno"}]}


def _star(n: int) -> dict:
    links = [{"endpoints": ["hub", f"H{i}"], "bandwidth": "10Mbps", "delay": "1ms"} for i in range(n)]
    return {"links": links, "flows": [{"name": "f", "from": "H0", "to": f"H{n - 1}", "cc": "vegas"}]}


def apply_op(doc: dict, op: list) -> dict:
    """Apply one op to the scenario dict in place (an op whose path no longer exists is a
    no-op, so any subset of a case's ops replays). Returns the doc."""
    kind = op[0]
    if kind == "set":
        where = _resolve(doc, op[1])
        if where is None:
            return doc
        parent, last = where
        if isinstance(parent, list) and last == len(parent):
            parent.append(copy.deepcopy(op[2]))
        else:
            parent[last] = copy.deepcopy(op[2])
    elif kind == "del":
        where = _resolve(doc, op[1])
        if where is not None:
            parent, last = where
            if isinstance(parent, dict) and last in parent:
                del parent[last]
            elif isinstance(parent, list) and last < len(parent):
                del parent[last]
    elif kind == "rename":
        where = _resolve(doc, op[1])
        if where is not None and isinstance(where[0], dict) and where[1] in where[0]:
            parent, last = where
            parent[op[2]] = parent.pop(last)
    elif kind == "dup":  # append a copy of element op[2] of the array at op[1]
        try:
            arr = _get(doc, op[1])
        except (KeyError, IndexError, TypeError):
            return doc
        if isinstance(arr, list) and 0 <= op[2] < len(arr):
            arr.extend(copy.deepcopy(arr[op[2]]) for _ in range(op[3] if len(op) > 3 else 1))
    elif kind in ("chain", "star"):
        topo = _chain(op[1]) if kind == "chain" else _star(op[1])
        run = doc.get("run", {"duration": "1s"})
        doc.clear()
        doc.update({"run": run, **topo})
    elif kind == "many_flows":  # n copies of flows[0], renamed
        flows = doc.get("flows")
        if isinstance(flows, list) and flows and isinstance(flows[0], dict):
            first = flows[0]
            doc["flows"] = [{**copy.deepcopy(first), "name": f"m{i}"} for i in range(op[1])]
    return doc


def build_doc(case: Case) -> dict:
    doc = copy.deepcopy(bases()[case.base].doc)
    for op in case.ops:
        if op[0] != "text":
            apply_op(doc, op)
    return doc


def build_toml(case: Case) -> bytes:
    """The scenario file's bytes: the base, the dict ops, then the text ops."""
    import vegaslab

    text = vegaslab.to_toml(build_doc(case))
    for op in case.ops:
        if op[0] != "text":
            continue
        lines = text.split("\n")
        if op[1] == "dup_line" and lines:
            i = op[2] % len(lines)
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif op[1] == "insert":
            pos = op[2] % (len(text) + 1)
            text = text[:pos] + op[3] + text[pos:]
        elif op[1] == "truncate":
            text = text[: op[2] % (len(text) + 1)]
    data = text.encode("utf-8", "surrogatepass")
    if any(op[0] == "text" and op[1] == "bad_utf8" for op in case.ops):
        data = b"# \xff\xfe not UTF-8\n" + data
    return data


def write_case_dir(case: Case, directory: Path) -> Path:
    """Create the case's files in ``directory``; returns the scenario path."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, spec in case.files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if "text" in spec:
            target.write_text(spec["text"], encoding="utf-8", errors="surrogatepass")
        elif "bytes" in spec:
            target.write_bytes(bytes.fromhex(spec["bytes"]))
        elif spec.get("fifo"):
            os.mkfifo(target)
        elif "symlink" in spec:
            os.symlink(spec["symlink"], target)
        elif spec.get("dir"):
            target.mkdir(exist_ok=True)
    scenario = directory / "scenario.toml"
    scenario.write_bytes(build_toml(case))
    return scenario


# ----------------------------------------------------------------------------- value pools

EXTREME_NUMBERS = [0, -0.0, -1, 1, 0.5, 1e-9, 1e-300, 5e-324, -1e-300, 1e300, 1.7976931348623157e308,
                   math.nan, math.inf, -math.inf, 2**31, 2**32, 2**53 + 1, 2**63 - 1, -(2**63), 2**63,
                   2**64, 10**30]
NUMBER_TEXTS = ["0", "-0", "-1", "1e-300", "5e-324", "1e300", "1e999", "nan", "NaN", "inf", "-inf",
                "Infinity", "18446744073709551616", "9223372036854775807", "9223372036.854775807",
                "0.000000001", "1e-12", "1_000", "0x10", "+5", ".5", "5.", "1e", "", " 1", "1 ", "--1",
                "1.5.5", "١٢", "１０"]
UNITS = ["", " ", "ns", "us", "ms", "s", "min", "h", "y", "ps", "MS", "Ms", "mss", "µs", "bps", "kbps",
         "Kb", "Mbps", "Gbps", "Tbps", "B", "KB", "MB", "GB", "TB", "kB", "B/s", "%", "s\n", "s\x00",
         "ｓ", " s"]
NASTY_STRINGS = ["", " ", "a\nb", "a\rb", "\x00", "\x01\x02\x7f", "\t", "x\u2028y", "\x1b[31m",
                 "[exec sh -c {touch /tmp/vegaslab-fuzz-pwned}]", "$(touch /tmp/vegaslab-fuzz-pwned)",
                 "`id`", "; rm -rf /nonexistent", '"', "'", "{", "}", "\\", "$env(HOME)", "a b", "S1",
                 "D1", "R1->R2", "->", "{i}", "{i}{i}", "%s%n", "\ufeff", "\u540d\u524d", "e\u0301",
                 "x" * 100_000, "a\nputs [exec id]\n#", "\ud800"]
TYPE_SWAPS = ["1", 1, 1.5, True, False, [], [1, 2], ["a"], {}, {"a": 1}, "", "true", "1s", [[1]],
              [{"x": 1}]]
COUNTS = [0, -1, 1, 2, 1000, 30_000, 10**6, 10**7, 2**31, 2**32, 2**63 - 1, 2**64]
RANGES = ["0-0", "1-0", "5-1", "1-", "-", "a-b", "1-1", "1-1000", "1-30000", "1-10000000",
          "1-4294967296", "1-9223372036854775807", "1-18446744073709551616", "-1-5", "1--1", "1 - 3",
          "1-3,5", "1.5-2"]
DURATIONS = ["1e9s", "1e300s", "1e12s", "9223372036s", "9223372037s", "18446744074s", "1e6s",
             "1000s", "nan", "inf", "0s", "-1s", "1ns", "0.5ns", 1e9, 2**63 - 1, "584y"]
SAMPLE_INTERVALS = ["1ns", "0s", "1e-300s", "-1s", "nan", "0.1ns", "1us", "10us", 1e-9, 0]
OVERRIDE_VALUES = ["nan", "inf", "-inf", "-1", "0", "1e-300bps", "1e300", "18446744073709551616",
                   "9223372036854775808", '"a\\nb"', "[1,2]", "{a=1}", "", "true", "1e-300s",
                   "1e300s", "0ms", '"\\u0000"', "[", "{", "'", '"', "nan ms", "1ms 2ms",
                   "1979-05-27T07:32:00Z"]
MALFORMED_OVERRIDES = ["=", "", "x", "a..b=1", "flows[-1].cc=reno", "flows[18446744073709551616].cc=reno",
                       "flows[9223372036854775807].cc=reno", "flows[0.5].cc=x", "[0]=1", "flows[0=1",
                       "flows]0[=1", "run.duration=1s=2s", " run.duration = 1s ", "\x00=1",
                       "run.duration", "run.duration.x=1", "run[0]=1", "flows[0][0]=1", ".=1",
                       "run..=1", "flows[]=1", "flows[ 0 ].cc=reno", "flows[+0].cc=reno",
                       "run.\u202eduration=1s", "run.duration=\n", "links[0].endpoints[5]=X"]
TRACE_CONTENT = ["0 10ms\n1 20ms\n", "time,delay\n0,0.01\n0.5,0.05\n", "0 nan\n", "0 inf\n",
                 "0 -1ms\n", "nan 1ms\n", "0 18446744073709551616s\n", "0 584y\n", "0 1e300s\n",
                 "5 10ms\n1 10ms\n", "", "\n\n\n", "# only a comment\n", "0\n", "0 1ms 2ms 3ms\n",
                 "0 1ms\n" * 20_000, "x" * 200_000, "0 1ms\n\x00\x00\x00\n", "0;1ms\n0,2ms\n1 1e-300s\n",
                 "0 1ms\n9223372036 1ms\n9223372037 2ms\n"]
TRACE_PATHS = ["/dev/zero", "/dev/null", "/dev/urandom", "/", ".", "missing.csv", "trace.csv",
               "fifo.csv", "link.csv", "dir.csv", "../../../../etc/passwd", "", "\x00", "trace.csv\n",
               "/proc/self/mem", "~/trace.csv"]

#: A flow's compiled BPF object (`cc = { bpf = ... }`): where it is, what the file holds (hex), and
#: the table's other keys. The bytes are never a working object: the loader must refuse each in one
#: sentence on the flow's field, however the file is made.
BPF_PATHS = ["algo.bpf.o", "fifo.bpf.o", "link.bpf.o", "dir.bpf.o", "missing.bpf.o", "/dev/zero", "/dev/null",
             "/proc/self/mem", "", "\x00", "../../../../etc/passwd"]
BPF_CONTENT = ["", "7f454c46", "7f454c460201010000000000000000000100f700010000000000000000000000",
               "7f454c46" + "ff" * 60, "00" * 4096, "7f454c46020101" + "00" * 57 + "01" * 2000,
               "4c6f72656d20697073756d"]
BPF_OPTIONS = {"hz": [250, 100, 1000, 0, -1, 200, 2**63 - 1, "250", 1.5], "map": ["dctcp", "", "\x00", "x" * 300, 3],
               "engine": ["auto", "interpreter", "jit", "", 1]}

#: Values that are extreme but may well be accepted, by field name: these reach the simulation
#: itself (most other mutations are rejected by the reader, as they should be).
PLAUSIBLE = {
    "bandwidth": ["1bps", "1e-300bps", "1e-9bps", "0.001bps", "100Gbps", "1e15bps", "1e300bps", "1.7e308bps", 1],
    "rate": ["1bps", "1e-300bps", "100Gbps", "1e15bps", "1e300bps"],
    "delay": ["0ms", "0s", "1ns", "0.1ns", "1e-300s", "1000s", "1e6s", "9223372036s", "1e-9ms"],
    "limit": [0, 1, 2, 3, 100_000, 10**7, 2**32],
    "packet_size": [1, 2, 40, 41, 1500, 65_535, 10**6, 10**9],
    "header_bytes": [0, 1, 10**6],
    "ack_size": [0, 1, 10**6],
    "window": [1, 2, 10**6, 2**31],
    "window_init": [0, 1, 10**6],
    "error_rate": [0.0, 1e-300, 0.5, 0.999999, 0.9999999999999999],
    "every": [1, 2, 10**15, 10**15 + 1], "burst": [1, 7, 10**15],
    "start": ["0s", "1ns", "1.999999999s", "1e-300s"],
    "stop": ["1ns", "0.5s", "1e300s"],
    "file_size": ["1B", "0B", "1e12B", "1e15B", "1"],
    "alpha": [0, 1, 10**6, 2**31], "beta": [0, 1, 10**6, 2**31], "gamma": [0, 0.0, 1e-300, 10**6],
    "mean_on": ["1ns", "1us", "1e6s"], "mean_off": ["1ns", "1us", "1e6s"],
    "mean_interarrival": ["1ns", "1us", "1ms", "1e6s"], "mean_flow_size": ["1B", "1e12B", "1e15B"],
    "shape": [1.0000001, 1e300, 2], "flow_shape": [1.0000001, 1e300],
    "load": [0, 1e-300, 1, 0.999999],
    "max_p": [1e-300, 1.0], "weight": [1e-300, 1.0, "auto"], "min": [0, 1e6], "max": [1, 1e6],
    "probe_every": [1, 2**32], "option_bytes": [0, 10**6], "dupacks": [0, 1, 10**6], "max_burst": [1, 10**6],
    "tick": ["1ns", "1s", "1e-300s"], "min_rto": ["0s", "1ns", "1e6s"], "max_rto": ["1ns", "1e9s"],
    "initial_rto": ["1ns", "1e9s"], "interval": ["1ns", "1e-300s"],
    "sample_interval": ["1us", "10us", "1ms", "1e6s"], "at": ["0s", "1ns", "1e-300s", "1.999999999s"],
    "clock": ["ns2", "exact", "NS2", ""],
    "tie_order": ["ns2", "shuffled", "random", ""],
    "down": [[["0.1s", "0.2s"]], [["1ns", "2ns"]], [["1.999999999s", "1e6s"]], [], [["0s", "1s"]]],
    "packets": [1, 2**40, 10**12, 10**12 + 1],
    "pairs": [1, 200, 1000], "routers": [2, 1000], "enbs": [1, 100], "ues_per_enb": [1, 100],
}
SCALES = [0, 1e-9, 1e-6, 1e-3, 0.01, 0.5, 2, 100, 1e4, 1e6, 1e9, -1]

_NAME_KEYS = {"name", "id", "from", "to", "endpoints", "queues", "routers", "terminals", "hosts"}
_COUNT_KEYS = {"pairs", "range", "enbs", "ues_per_enb", "routers", "limit", "window", "window_init",
               "packet_size", "probe_every", "option_bytes", "dupacks", "max_burst", "header_bytes",
               "ack_size", "alpha", "beta", "gamma", "queue", "red_min", "red_max", "flows", "min", "max",
               "mean_pktsize", "seed"}
_QUANTITY = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?\s*([A-Za-z%/]*)\s*$", re.IGNORECASE)


def _paths(doc: Any, prefix: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """Every (path, value) in the doc, containers included, depth first."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield prefix + (k,), v
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield prefix + (i,), v
            yield from _paths(v, prefix + (i,))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _last_key(path: tuple) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return ""


def override_key(path: Iterable) -> str:
    """The ``--set`` key of a path: ``flows[0].tcp.window``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


# ----------------------------------------------------------------------------- hypothesis strategies


def cases(base_names: list[str] | None = None):
    """The hypothesis strategy of :class:`Case`. Needs hypothesis (a test dependency)."""
    from hypothesis import strategies as st

    names = sorted(bases()) if base_names is None else list(base_names)

    def pick(draw, seq):
        seq = list(seq)
        return seq[draw(st.integers(0, len(seq) - 1))]

    @st.composite
    def strategy(draw):
        base = bases()[pick(draw, names)]
        case = Case(base=base.name)
        doc = copy.deepcopy(base.doc)
        if base.variant_overrides and draw(st.booleans()):
            case.overrides.extend(pick(draw, base.variant_overrides))
        for _ in range(draw(st.integers(1, 4))):
            ops = _draw_ops(draw, pick, doc, case)
            case.ops.extend(ops)
            if any(_explosive(op) for op in ops):
                break  # walking a 50,000-link doc for the next op would cost seconds per case
            for op in ops:
                if op[0] != "text":
                    apply_op(doc, op)
        for _ in range(draw(st.integers(0, 2))):
            case.overrides.append(_draw_override(draw, pick, doc))
        # hypothesis favours the first and last entries: the common choice goes first
        case.seed = pick(draw, [None] * 16 + [0, -1, 2**63 - 1, 2**63, 2**64, True, 1.5, "1"])
        case.api = pick(draw, ["run"] * 6 + ["validate", "normalize"])
        return case

    return strategy()


def _explosive(op: list) -> bool:
    """Ops that make the doc huge: drawn last, so later draws never walk the huge doc."""
    return op[0] in ("chain", "star", "many_flows") or (op[0] == "dup" and op[3] > 1)


_OP_KINDS = (["plausible"] * 8 + ["scale"] * 4 + ["number"] * 4 + ["unit"] * 3 + ["delete"] * 2 + ["rename"] * 2 + ["dup"] * 2 + ["type"] * 2
             + ["name"] * 2 + ["count"] * 3 + ["sample"] + ["duration"] * 2 + ["trace"] * 2 + ["schedule"]
             + ["livelock", "chain", "star", "many_flows", "text", "known_key"] * 1 + ["algorithm"] * 3 + ["bpf"] * 2)


def _param_values(param) -> list:
    """Values worth trying for a declared parameter (``vegaslab.registry``): its defaults, its
    bounds and one step past them, its choices and one that is not, and a wrong type."""
    kind = param.kind
    values = [v for v in [param.default, *(param.default_by_flavour or {}).values()] if v is not None]
    if kind["type"] in ("number", "integer"):
        step = 1 if kind["type"] == "integer" else 0.5
        values += [kind["lo"], kind["hi"], kind["lo"] - step, kind["hi"] + step]
    elif kind["type"] == "choice":
        values += [*kind["values"], "no-such-choice"]
    else:
        values += [True, False]
    return values + ["x"]


def _draw_algorithm(draw, pick, doc: dict) -> list[list]:
    """One flow switched to a registered algorithm with one to three of its declared parameters
    set: the registry is the fuzzer's seed for algorithms, so a new one is fuzzed by being
    registered."""
    from vegaslab import registry

    flows = doc.get("flows") if isinstance(doc.get("flows"), list) else []
    if not flows:
        return []
    i = draw_index(draw, len(flows))
    algorithm = pick(draw, list(registry.algorithms()))
    params = {}
    for _ in range(draw_index(draw, 4) if algorithm.params else 0):
        param = pick(draw, list(algorithm.params))
        params[param.name] = pick(draw, _param_values(param))
    ops = [["set", ["flows", i, "cc"], algorithm.name]]
    if params:
        ops.append(["set", ["flows", i, "params"], params])
    return ops


def _vocabulary() -> dict[str, list]:
    """Every key the bases use with the values seen for it (for plausible misplacements)."""
    vocab: dict[str, list] = {}
    for b in bases().values():
        for path, value in _paths(b.doc):
            key = _last_key(path)
            if key and not isinstance(value, (dict, list)):
                vals = vocab.setdefault(key, [])
                if value not in vals and len(vals) < 8:
                    vals.append(value)
    return vocab


def _link_tables(doc: dict) -> list[tuple]:
    return [p for p, v in _paths(doc) if isinstance(v, dict) and ("bandwidth" in v or "delay" in v)]


def _draw_ops(draw, pick, doc: dict, case: Case) -> list[list]:
    kind = pick(draw, _OP_KINDS)
    if kind == "algorithm":
        return _draw_algorithm(draw, pick, doc)
    everything = list(_paths(doc))
    leaves = [(p, v) for p, v in everything if not isinstance(v, (dict, list))]
    if kind == "number":
        nums = [(p, v) for p, v in leaves if _is_number(v) or (isinstance(v, str) and _QUANTITY.match(v))]
        if not nums:
            return []
        path, value = pick(draw, nums)
        if _is_number(value):
            return [["set", list(path), pick(draw, EXTREME_NUMBERS)]]
        unit = _QUANTITY.match(value).group(3)
        return [["set", list(path), pick(draw, NUMBER_TEXTS) + unit]]
    if kind == "plausible":
        tables = [p for p, v in everything if isinstance(v, dict)]
        flows = [("flows", i) for i, _ in enumerate(doc.get("flows") or [])] if isinstance(doc.get("flows"), list) else []
        # an existing field, or a tcp field of a flow (they are mostly left at their defaults)
        fields = [(p, _last_key(p)) for p, v in leaves if _last_key(p) in PLAUSIBLE]
        if flows and draw_index(draw, 3) == 0:
            f = pick(draw, flows)
            key = pick(draw, ["window", "window_init", "packet_size", "header_bytes", "ack_size", "tick",
                              "min_rto", "max_rto", "initial_rto", "dupacks", "max_burst"])
            flow = _get(doc, list(f))
            if not isinstance(flow, dict) or not isinstance(flow.get("tcp", {}), dict):
                return []
            return [["set", list(f) + ["tcp"], {**(flow.get("tcp") or {}), key: pick(draw, PLAUSIBLE[key])}]]
        if not fields:
            return []
        path, key = pick(draw, fields)
        return [["set", list(path), pick(draw, PLAUSIBLE[key])]]
    if kind == "scale":
        nums = [(p, v) for p, v in leaves if _is_number(v) or (isinstance(v, str) and _QUANTITY.match(v))]
        if not nums:
            return []
        path, value = pick(draw, nums)
        factor = pick(draw, SCALES)
        if _is_number(value):
            new = value * factor
            return [["set", list(path), int(new) if isinstance(value, int) and abs(new) < 2**63 else new]]
        m = _QUANTITY.match(value)
        number = float(value[: m.start(3)] if m.group(3) else value)
        return [["set", list(path), f"{number * factor:g}{m.group(3)}"]]
    if kind == "unit":
        qs = [(p, v) for p, v in leaves if isinstance(v, str) and _QUANTITY.match(v)]
        if not qs:
            return []
        path, value = pick(draw, qs)
        m = _QUANTITY.match(value)
        number = value[: m.start(3)].strip() if m.group(3) else value.strip()
        return [["set", list(path), number + pick(draw, UNITS)]]
    if kind == "delete":
        if not everything:
            return []
        return [["del", list(pick(draw, everything)[0])]]
    if kind == "rename":
        keyed = [p for p, _ in everything if isinstance(p[-1], str)]
        if not keyed:
            return []
        path = pick(draw, keyed)
        key = path[-1]
        new = pick(draw, [key.upper(), key + "s", key[:-1], "", key + " ", "_" + key,
                          key.replace("_", "-"), key + "\n", "x" * 1000, "\x00"])
        return [["rename", list(path), new]]
    if kind == "dup":
        arrays = [(p, v) for p, v in everything if isinstance(v, list) and v]
        if not arrays:
            return []
        path, value = pick(draw, arrays)
        return [["dup", list(path), draw_index(draw, len(value)), pick(draw, [1, 1, 2, 1000])]]
    if kind == "type":
        if not everything:
            return []
        path = pick(draw, everything)[0]
        return [["set", list(path), pick(draw, TYPE_SWAPS)]]
    if kind == "name":
        named = [p for p, v in everything if isinstance(v, str) and _NAME_KEYS & {_last_key(p)}]
        named += [p for p, v in everything if isinstance(v, str) and len(p) >= 2 and _last_key(p[:-1]) in _NAME_KEYS
                  and p not in named]
        if not named:
            return []
        return [["set", list(pick(draw, named)), pick(draw, NASTY_STRINGS)]]
    if kind == "count":
        counted = [p for p, v in leaves if _last_key(p) in _COUNT_KEYS]
        flows = doc.get("flows") if isinstance(doc.get("flows"), list) else []
        choice = draw_index(draw, 3)
        if choice == 0 and flows:
            i = draw_index(draw, len(flows))
            return [["set", ["flows", i, pick(draw, ["range", "pairs"])], pick(draw, RANGES)]]
        if choice == 1 and flows and "dumbbell" not in doc and "lte" not in doc:
            return [["set", ["lte"], {"enbs": pick(draw, COUNTS), "ues_per_enb": pick(draw, COUNTS)}]]
        if not counted:
            return []
        path = pick(draw, counted)
        value = pick(draw, COUNTS + RANGES) if _last_key(path) in ("range", "pairs") else pick(draw, COUNTS)
        return [["set", list(path), value]]
    if kind == "sample":
        return [["set", ["run", "sample_interval"], pick(draw, SAMPLE_INTERVALS)],
                ["set", ["monitor"], {"cwnd": True, "throughput": True}]]
    if kind == "duration":
        ops = [["set", ["run", "duration"], pick(draw, DURATIONS)]]
        if draw_bool(draw):
            ops.append(["set", ["monitor"], {"cwnd": True, "throughput": True}])
        return ops
    if kind == "trace":
        tables = _link_tables(doc)
        if not tables:
            return []
        path = list(pick(draw, tables))
        name = pick(draw, TRACE_PATHS)
        if name == "trace.csv":
            case.files["trace.csv"] = {"text": pick(draw, TRACE_CONTENT)}
        elif name == "fifo.csv":
            case.files["fifo.csv"] = {"fifo": True}
        elif name == "link.csv":
            case.files["link.csv"] = {"symlink": "/dev/zero"}
        elif name == "dir.csv":
            case.files["dir.csv"] = {"dir": True}
        ops = [["set", path + ["delay_trace"], name]]
        if draw_bool(draw):
            ops.append(["del", path + ["delay_schedule"]])
        return ops
    if kind == "bpf":
        flows = doc.get("flows") or []
        if not isinstance(flows, list) or not flows:
            return []
        name = pick(draw, BPF_PATHS)
        if name == "algo.bpf.o":
            case.files[name] = {"bytes": pick(draw, BPF_CONTENT)}
        elif name == "fifo.bpf.o":
            case.files[name] = {"fifo": True}
        elif name == "link.bpf.o":
            case.files[name] = {"symlink": "/dev/zero"}
        elif name == "dir.bpf.o":
            case.files[name] = {"dir": True}
        table = {"bpf": name}
        for key, values in BPF_OPTIONS.items():
            if draw_bool(draw):
                table[key] = pick(draw, values)
        cc = table if draw_bool(draw) else f"bpf:{name}"
        i = draw_index(draw, len(flows))
        return [["set", ["flows", i, "cc"], cc], ["del", ["flows", i, "params"]]]
    if kind == "schedule":
        tables = _link_tables(doc)
        if not tables:
            return []
        path = list(pick(draw, tables))
        entries = [{"at": pick(draw, DURATIONS + ["1s", "0s"]), "delay": pick(draw, DURATIONS + ["1ms"])}
                   for _ in range(draw_index(draw, 3) + 1)]
        return [["set", path + ["delay_schedule"], entries]]
    if kind == "livelock":
        tables = _link_tables(doc)
        if not tables:
            return []
        ops = []
        for path in tables:
            ops += [["set", list(path) + ["bandwidth"], "100Gbps"], ["set", list(path) + ["delay"], "0ms"]]
            ops += [["del", list(path) + ["delay_schedule"]]]
        for i in range(len(doc.get("flows", []) or [])):
            ops.append(["set", ["flows", i, "tcp"], {"packet_size": pick(draw, [1, 0, 40]), "header_bytes": 0,
                                                      "vegas_headers": False, "syn": False, "ack_size": 1}])
        return ops[:200]
    if kind == "chain":
        return [["chain", pick(draw, [1, 2, 100, 5_000, 20_000, 50_000])]]
    if kind == "star":
        return [["star", pick(draw, [2, 100, 5_000, 40_000])]]
    if kind == "many_flows":
        return [["many_flows", pick(draw, [0, 100, 1_000, 20_000])]]
    if kind == "text":
        which = pick(draw, ["dup_line", "insert", "truncate", "bad_utf8"])
        if which == "insert":
            return [["text", "insert", draw_index(draw, 10_000), pick(draw, ["\x00", "\ufeff", "\r", "]", "[",
                                                                             "=", '"', "\n[run]\n", "\\"])]]
        if which == "bad_utf8":
            return [["text", "bad_utf8"]]
        return [["text", which, draw_index(draw, 10_000)]]
    if kind == "known_key":
        vocab = _vocabulary()
        tables = [p for p, v in everything if isinstance(v, dict)] + [()]
        path = pick(draw, tables)
        key = pick(draw, sorted(vocab))
        return [["set", list(path) + [key], pick(draw, vocab[key])]]
    return []


def draw_index(draw, n: int) -> int:
    from hypothesis import strategies as st

    return draw(st.integers(0, max(n - 1, 0)))


def draw_bool(draw) -> bool:
    from hypothesis import strategies as st

    return draw(st.booleans())


def _draw_override(draw, pick, doc: dict) -> str:
    kind = pick(draw, [4, 4, 0, 1, 2, 3, 0, 4, 4])
    if kind == 0:
        leaves = [p for p, v in _paths(doc) if not isinstance(v, (dict, list))]
        key = override_key(pick(draw, leaves)) if leaves else "run.duration"
        return f"{key}={pick(draw, OVERRIDE_VALUES)}"
    if kind == 1:
        depth = pick(draw, [100, 1_000, 50_000])
        return pick(draw, ["a." * depth + "b=1", "run" + ".x" * depth + "=1",
                           "flows[0]" + "[0]" * depth + "=1", "run." + "[0]." * depth + "x=1"])
    if kind == 2:
        return pick(draw, MALFORMED_OVERRIDES)
    if kind == 3:
        return f"run.duration={pick(draw, DURATIONS)}"
    # a plausible extreme through --set (the override path parses values as TOML)
    fields = [p for p, v in _paths(doc) if not isinstance(v, (dict, list)) and _last_key(p) in PLAUSIBLE]
    if not fields:
        return "run.sample_interval=1ms"
    path = pick(draw, fields)
    value = pick(draw, PLAUSIBLE[_last_key(path)])
    return f"{override_key(path)}={value}"


# ----------------------------------------------------------------------------- result checks


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def check_results(res) -> list[str]:
    """Impossible-result checks on a :class:`vegaslab.Results`; returns the violations.

    Physical bounds: a flow's or UDP source's received bytes all crossed a link into its
    destination, so throughput and goodput are at most the fastest such link's rate (the
    routing is static: one path per flow); utilisation is in [0, 1]; a queue never holds more
    than its limit. Bookkeeping: no NaN or infinity (only ``completion_time_s`` may be null,
    and the series' ``ssthresh_pkts``/``rtt_s``/algorithm variables when a flow has none), counts are
    non-negative, and packets are conserved as tests/test_core_properties.py checks them
    (sent = received + dropped + in flight per flow and UDP source; arrivals = departures +
    drops + backlog per queue, the backlog at most the most ever waiting; delivered <=
    received). Vectorised: a fuzz case may have 80,000 links."""
    import numpy as np

    bad: list[str] = []
    duration = res.meta.get("duration_s")
    if not _finite(duration) or float(duration) <= 0:
        bad.append(f"meta.duration_s is {duration!r}")
        duration = math.nan
    duration = float(duration)

    def first(table: str, frame, mask, what: str) -> None:
        """One message naming the first offending row (and how many there are)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.any():
            i = int(np.argmax(mask))
            more = f" (and {int(mask.sum()) - 1} more)" if mask.sum() > 1 else ""
            row = {k: (v.item() if hasattr(v, "item") else v) for k, v in frame.iloc[i].items()}
            bad.append(f"{table} {frame.iloc[i, 0]!r}: {what.format(row=row)}{more}")

    def numbers(table: str, frame, skip: tuple, nullable: tuple = ()) -> None:
        for col in frame.columns:
            if col in skip:
                continue
            values = pd_numeric(frame[col])
            if values is None:
                continue
            first(table, frame, np.isnan(values) & (col not in nullable), f"{col} is NaN/null")
            first(table, frame, np.isinf(values), f"{col} = {{row[{col}]!r}}")
            first(table, frame, values < 0, f"{col} = {{row[{col}]!r}} < 0")

    def ints(frame, *cols):
        return [pd_numeric(frame[c]) for c in cols]

    links = res.links
    numbers("link", links, ("link",))
    bw, util = ints(links, "bandwidth_bps", "utilisation_ratio")
    first("link", links, ~(bw > 0), "bandwidth_bps = {row[bandwidth_bps]!r}")
    first("link", links, ~((util >= 0) & (util <= 1 + 1e-9)),
          "utilisation_ratio = {row[utilisation_ratio]!r} (must be in [0, 1])")
    names = links["link"].astype(str)
    dst = names.str.split("->", n=1).str[1]
    good = bw > 0
    into = (links.assign(_dst=dst, _bw=bw)[good & dst.notna().to_numpy()].groupby("_dst")["_bw"].max().to_dict())
    max_rate = float(bw[good].max()) if good.any() else math.inf

    def bound(to_column) -> "np.ndarray":
        return np.array([into.get(str(t), max_rate) for t in to_column], dtype="float64")

    flows = res.flows
    if len(flows):
        # The core's optional columns (those beyond the documented FLOW_COLUMNS: per-flow
        # connection counts, the ns-2-flavour Vegas tie counts) are null on the rows they do
        # not apply to.
        from vegaslab.results import FLOW_COLUMNS

        optional = tuple(c for c in flows.columns if c not in FLOW_COLUMNS)
        numbers("flow", flows, ("flow", "cc", "from", "to"),
                nullable=("completion_time_s", "final_ssthresh_pkts", *optional))
        sent, rec, drop, infl, deliv = ints(flows, "sent_pkts", "received_pkts", "dropped_pkts",
                                            "in_flight_pkts", "delivered_pkts")
        first("flow", flows, sent != rec + drop + infl, "conservation: sent {row[sent_pkts]} != received "
              "{row[received_pkts]} + dropped {row[dropped_pkts]} + in flight {row[in_flight_pkts]}")
        first("flow", flows, deliv > rec, "delivered {row[delivered_pkts]} > received {row[received_pkts]}")
        (acked,) = ints(flows, "acked_pkts")
        first("flow", flows, acked > deliv, "acked at the sender {row[acked_pkts]} > delivered {row[delivered_pkts]}")
        limit = bound(flows["to"]) * (1 + 1e-9)
        for col in ("throughput_bps", "goodput_bps"):
            first("flow", flows, pd_numeric(flows[col]) > limit,
                  f"{col} = {{row[{col}]!r}} > the rate of the fastest link into {{row[to]!r}}")
        start, end = ints(flows, "start_s", "end_s")
        if math.isfinite(duration):
            first("flow", flows, ~((start >= 0) & (start <= end) & (end <= duration * (1 + 1e-9))),
                  f"start_s {{row[start_s]!r}} / end_s {{row[end_s]!r}} outside [0, {duration}]")
    udp = res.udp
    if len(udp):
        numbers("udp", udp, ("source", "model", "from", "to"))
        sent, rec, drop, infl = ints(udp, "sent_pkts", "received_pkts", "dropped_pkts", "in_flight_pkts")
        first("udp", udp, sent != rec + drop + infl, "conservation: sent {row[sent_pkts]} != received "
              "{row[received_pkts]} + dropped {row[dropped_pkts]} + in flight {row[in_flight_pkts]}")
        first("udp", udp, pd_numeric(udp["throughput_bps"]) > bound(udp["to"]) * (1 + 1e-9),
              "throughput_bps = {row[throughput_bps]!r} > the rate of the fastest link into {row[to]!r}")
    queues = res.queues
    limits: dict = {}
    if len(queues):
        numbers("queue", queues, ("queue", "kind"), nullable=("error_pkts", "early_dropped_pkts", "forced_dropped_pkts"))
        arr, dep, drops, backlog, loss, lim, mx, mean = ints(queues, "arrived_pkts", "departed_pkts", "dropped_pkts", "backlog_pkts",
                                                             "loss_ratio", "limit_pkts", "max_len_pkts", "mean_len_pkts")
        first("queue", queues, arr != dep + drops + backlog,
              "arrived_pkts {row[arrived_pkts]} != departed_pkts {row[departed_pkts]} + dropped_pkts {row[dropped_pkts]} + backlog_pkts {row[backlog_pkts]}")
        first("queue", queues, backlog > mx, "backlog_pkts {row[backlog_pkts]} > max_len_pkts {row[max_len_pkts]}")
        first("queue", queues, loss > 1, "loss_ratio = {row[loss_ratio]!r}")
        first("queue", queues, mx > lim, "max_len_pkts {row[max_len_pkts]} > limit_pkts {row[limit_pkts]}")
        first("queue", queues, mean > mx * (1 + 1e-9) + 1e-9, "mean_len_pkts {row[mean_len_pkts]} > max_len_pkts {row[max_len_pkts]}")
        limits = dict(zip(queues["queue"], lim))
    bad.extend(_check_series(res, duration, limits))
    return bad[:50]


def _check_series(res, duration: float, limits: dict) -> list[str]:
    import numpy as np

    bad: list[str] = []
    sf, sq = res.series_flows, res.series_queues
    for name, frame, strict in (("series_flows", sf, ("time_s", "active")),
                                ("series_queues", sq, ("time_s", "length_pkts"))):
        if frame is None or len(frame) == 0:
            continue
        for col in frame.columns:
            if col in ("flow", "queue"):
                continue
            values = pd_numeric(frame[col])
            if values is None:
                continue
            if np.isinf(values).any():
                bad.append(f"{name}.{col}: infinite values")
            if col in strict and np.isnan(values).any():
                bad.append(f"{name}.{col}: NaN/null values")
            # Throughput is null throughout when its monitor is off; a mix means a bin went NaN.
            if col == "throughput_bps" and np.isnan(values).any() and not np.isnan(values).all():
                bad.append(f"{name}.{col}: NaN/null in some bins")
            if col in ("time_s", "throughput_bps", "length_pkts", "cwnd_pkts", "rtt_s", "ssthresh_pkts") and (values < 0).any():
                bad.append(f"{name}.{col}: negative values")
        if _finite(duration) and "time_s" in frame.columns:
            t = pd_numeric(frame["time_s"])
            if t is not None and (t > duration * (1 + 1e-9)).any():
                bad.append(f"{name}.time_s: samples after the end of the run ({duration} s)")
    if len(sq) and limits:
        for qname, group in sq.groupby("queue"):
            lim = limits.get(qname)
            length = pd_numeric(group["length_pkts"])
            if lim is not None and length is not None and (length > lim).any():
                bad.append(f"series_queues {qname!r}: length above the limit {lim}")
    return bad


def pd_numeric(series):
    import numpy as np
    import pandas as pd

    try:
        return pd.to_numeric(series, errors="raise").astype("float64").to_numpy()
    except (TypeError, ValueError):
        return None if series.dtype == object else np.asarray(series, dtype="float64")


def _non_finite_numbers(doc: Any, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _non_finite_numbers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _non_finite_numbers(v, f"{path}[{i}]")
    elif isinstance(doc, float) and not math.isfinite(doc):
        out.append(f"{path} = {doc!r}")
    return out[:20]


# ----------------------------------------------------------------------------- the worker process


class _Budget(Exception):
    """Raised from the progress callback: the case used its wall-time budget while the
    simulation was still advancing."""


def _panic_text(text: str) -> str | None:
    for marker in PANIC_MARKERS:
        if marker in text:
            return marker
    return None


def _error_verdict(exc: BaseException, scenario: str) -> dict:
    import vegaslab

    message = str(exc)
    chain, cur = [], exc
    while cur is not None and len(chain) < 10:
        chain.append(f"{type(cur).__module__}.{type(cur).__name__}")
        cur = cur.__cause__ or cur.__context__
    out = {"type": f"{type(exc).__module__}.{type(exc).__name__}", "chain": chain,
           "message": message[:4000], "message_len": len(message)}
    cur = exc
    while cur is not None:
        if isinstance(cur, _Budget):
            return {**out, "status": "stopped"}
        if isinstance(cur, MemoryError):
            return {**out, "status": "crash", "why": "MemoryError"}
        cur = cur.__cause__ or cur.__context__
    marker = _panic_text(message)
    if marker:
        return {**out, "status": "panic", "why": f"panic text {marker!r} in the message"}
    if type(exc) is not vegaslab.ScenarioError:
        return {**out, "status": "exception", "why": f"{out['type']} is not a ScenarioError"}
    why = _bad_scenario_error(exc, scenario)
    if why:
        return {**out, "status": "bad-error", "why": why, "field": getattr(exc, "field", None),
                "kind": getattr(exc, "kind", None)}
    return {**out, "status": "scenario-error", "field": getattr(exc, "field", None),
            "kind": getattr(exc, "kind", None)}


def _bad_scenario_error(exc, scenario: str) -> str | None:
    """Why a ScenarioError's message fails to name the file (or the override that made it)
    and a field (None if it does).
    The field may be empty only for an error about the whole file (kind ``syntax``: the TOML
    itself or an override's shape; kind ``file``: not readable, not UTF-8)."""
    message = str(exc)
    fld, kind = getattr(exc, "field", None), getattr(exc, "kind", None)
    override = getattr(exc, "override", None)
    if override is not None:
        # An error an override made names the override first and the file last:
        # "override k=v: field: reason (applied to file)"; the field only when it is not k.
        prefix, suffix = f"override {override}: ", f" (applied to {scenario})"
        if not message.startswith(prefix) or not message.endswith(suffix):
            return "an override's error does not start with the override and end with the file"
        key = override.partition("=")[0].strip()
        if fld and fld != key and not message[len(prefix):].startswith(fld):
            return f"an override's error does not name its field {fld!r} after the override"
        return None
    prefix = scenario + ": "
    if not message.startswith(prefix):
        return "the message does not start with the scenario file's name"
    rest = message[len(prefix):]
    if fld:
        if not rest.startswith(fld):
            return f"the message does not name its field {fld!r} after the file"
        return None
    if fld is None and re.match(r"^[\w.\[\]-]+: \S", rest):  # raised by Python code: "file: field: ..."
        return None
    if kind in ("syntax", "file"):  # the TOML itself, an override's shape, an unreadable file
        return None
    return f"no field named (kind {kind!r})"


def _run_case(req: dict) -> dict:
    import vegaslab

    scenario = req["scenario"]
    api = req.get("api", "run")
    budget = float(req.get("budget_s", DEFAULT_BUDGET_S))
    t0 = time.monotonic()

    def progress(sim_s: float, total_s: float) -> None:
        if time.monotonic() - t0 > budget:
            raise _Budget(f"stopped after {budget} s of wall time at {sim_s} of {total_s} simulated s")

    try:
        if api == "validate":
            doc = vegaslab.validate(scenario, overrides=req["overrides"])
            bad = [] if isinstance(doc, dict) else [f"validate returned {type(doc).__name__}"]
            return {"status": "ok", "violations": bad + _non_finite_numbers(doc)}
        if api == "normalize":
            doc = vegaslab.normalize(scenario, seed=req.get("seed"), overrides=req["overrides"])
            bad = [] if isinstance(doc, dict) else [f"normalize returned {type(doc).__name__}"]
            return {"status": "ok", "violations": bad + _non_finite_numbers(doc)}
        res = vegaslab.run(scenario, seed=req.get("seed"), overrides=req["overrides"], progress=progress)
    except BaseException as exc:  # noqa: BLE001 - classifying every failure is the point
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return _error_verdict(exc, scenario)
    try:
        violations = check_results(res)
    except Exception as exc:  # noqa: BLE001 - a result the checks cannot read is itself suspect
        violations = [f"the results could not be checked: {type(exc).__name__}: {exc}"]
    return {"status": "ok", "violations": violations,
            "names": [str(n) for n in list(res.flows["flow"]) + list(res.udp["source"])][:100]}


def worker_main() -> None:
    """The worker loop: one JSON request per stdin line, one JSON verdict per line on the
    original stdout. fd 1 is pointed at stderr so that stray prints cannot corrupt the
    protocol; fd 2 goes to the case's own ``stderr.txt`` while the case runs."""
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    import vegaslab  # noqa: F401
    import vegaslab.results  # noqa: F401 - pandas, once
    import vegaslab._core  # noqa: F401

    saved_err = os.dup(2)
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        err_path = Path(req["scenario"]).parent / "stderr.txt"
        sys.stderr.flush()
        with open(err_path, "wb") as fh:
            os.dup2(fh.fileno(), 2)
        try:
            verdict = _run_fs_case(req) if "fs" in req else _run_case(req)
        finally:
            sys.stderr.flush()
            os.dup2(saved_err, 2)
        proto.write(json.dumps(verdict, default=str) + "\n")


# ----------------------------------------------------------------------------- the parent side


@dataclass
class Outcome:
    category: str           # ok, stopped, scenario-error, or one of FAILING
    detail: str = ""        # what went wrong (or the scenario error's message)
    violations: list = field(default_factory=list)
    stderr: str = ""
    wall_s: float = 0.0
    verdict: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.category in FAILING

    def signature(self) -> str:
        """A grouping key: the category and the gist of what went wrong, numbers and names
        blurred."""
        if self.category == "impossible":
            text = "; ".join(sorted({_blur(v) for v in self.violations}))[:300]
        elif self.category == "crash":
            text = self.detail.split(":")[0] + " " + _blur(_gist(self.stderr))
        elif self.category == "panic":
            text = _blur(_panic_line(self.detail + "\n" + self.stderr))
        else:
            text = _blur(self.detail)
        return f"{self.category}: {text[:300]}"


def _gist(stderr: str) -> str:
    """The telling line of a dead worker's stderr: the panic or allocation message."""
    for ln in stderr.splitlines():
        if any(m in ln for m in ("panicked at", "memory allocation", "overflowed", "Error", "error")):
            return ln[:300]
    return _last_line(stderr)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _panic_line(text: str) -> str:
    for ln in text.splitlines():
        if _panic_text(ln):
            return ln[:300]
    return text[:300]


def _blur(text: str) -> str:
    text = re.sub(r"/[^\s:'\"]*/scenario\.toml", "<scenario>", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "<str>", text)
    text = re.sub(r"\[\d+\]", "[i]", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text.strip()


class Worker:
    """A persistent worker subprocess (``python tests/fuzzer.py --worker``) under a memory
    limit; :meth:`run` gives one case's :class:`Outcome` and restarts the worker when it died
    or hung."""

    def __init__(self, workdir: str | os.PathLike | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 budget_s: float = DEFAULT_BUDGET_S, memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="vegaslab-fuzz-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.timeout_s = timeout_s
        self.budget_s = budget_s
        self.memory_limit = memory_limit
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue | None = None
        self.counter = 0
        self.restarts = 0

    def _limits(self) -> None:  # runs in the child before exec
        resource.setrlimit(resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def start(self) -> None:
        env = dict(os.environ, RUST_BACKTRACE="0", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=open(self.workdir / "worker-stderr.txt", "ab"),
            preexec_fn=self._limits, start_new_session=True, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._reader, args=(self.proc, self.lines), daemon=True).start()
        ready = self.lines.get(timeout=120)
        if ready is None or not json.loads(ready).get("ready"):
            raise RuntimeError(f"the fuzz worker did not start: {ready!r}")
        self.restarts += 1

    @staticmethod
    def _reader(proc: subprocess.Popen, lines: queue.Queue) -> None:
        for line in proc.stdout:
            lines.put(line.decode("utf-8", "replace"))
        lines.put(None)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(self, case: "Case | FsCase", keep_dir: bool = False) -> Outcome:
        self.counter += 1
        case_dir = self.workdir / f"case{self.counter}"
        if isinstance(case, FsCase):
            case_dir.mkdir(parents=True)
            scenario = case_dir / "scenario.toml"
            req = {"fs": case.to_json(), "home": str(case_dir), "root": str(self.workdir), "scenario": str(scenario)}
        else:
            scenario = write_case_dir(case, case_dir)
            req = {"scenario": str(scenario), "overrides": list(case.overrides), "seed": case.seed,
                   "api": case.api, "budget_s": self.budget_s}
        try:
            return self._run(req, scenario)
        finally:
            if not keep_dir:
                shutil.rmtree(case_dir, ignore_errors=True)

    def _run(self, req: dict, scenario: Path) -> Outcome:
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self.start()
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode("utf-8", "surrogatepass"))
            self.proc.stdin.flush()
            line = self.lines.get(timeout=self.timeout_s)
        except queue.Empty:
            self.stop()
            return Outcome("hang", f"no answer within {self.timeout_s:g} s (worker killed)",
                           stderr=_read(scenario.parent / "stderr.txt"), wall_s=time.monotonic() - t0)
        except BrokenPipeError:
            line = None
        wall = time.monotonic() - t0
        stderr = _read(scenario.parent / "stderr.txt")
        if line is None:
            code = self.proc.wait()
            self.proc = None
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}"
            return Outcome("crash", f"worker {how}: {_gist(stderr)}", stderr=stderr, wall_s=wall)
        verdict = json.loads(line)
        return classify(verdict, stderr, wall)


def _read(path: Path, limit: int = 20_000) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def classify(verdict: dict, stderr: str, wall: float) -> Outcome:
    status = verdict.get("status")
    marker = _panic_text(stderr)
    if marker and status not in ("crash",):
        return Outcome("panic", f"panic text {marker!r} on stderr; {verdict.get('message', '')}"[:2000],
                       stderr=stderr, wall_s=wall, verdict=verdict)
    if status == "ok":
        unsafe = [v for v in verdict.get("violations") or [] if v.startswith("unsafe:")]
        if unsafe:
            return Outcome("unsafe", unsafe[0], violations=unsafe, stderr=stderr, wall_s=wall, verdict=verdict)
        if verdict.get("violations"):
            return Outcome("impossible", verdict["violations"][0], violations=verdict["violations"],
                           stderr=stderr, wall_s=wall, verdict=verdict)
        return Outcome("ok", stderr=stderr, wall_s=wall, verdict=verdict)
    if status in ("stopped", "scenario-error"):
        return Outcome(status, verdict.get("message", ""), stderr=stderr, wall_s=wall, verdict=verdict)
    detail = f"{verdict.get('why', status)}: {verdict.get('message', '')}"
    return Outcome(status if status in FAILING else "exception", detail[:4000], stderr=stderr, wall_s=wall,
                   verdict=verdict)


# ----------------------------------------------------------------------------- reports and minimising


def describe(case: "Case | FsCase", outcome: Outcome, limit: int = 6000) -> str:
    """A failing case as text: what went wrong, the scenario TOML, the overrides (for a
    file-system case: the command and what was planted)."""
    if isinstance(case, StudyCase):
        return f"{outcome.category}: {outcome.detail[:2000]}\n--- study.toml\n" + build_study_toml(case).decode(
            "utf-8", "replace")[:limit]
    if isinstance(case, FsCase):
        return "\n".join([f"{outcome.category}: {outcome.detail[:2000]}",
                          *(f"  also: {v}" for v in outcome.violations[1:6]),
                          f"command: {case.command}, fresh: {case.fresh}, trace file: {case.trace_file[:100]!r}",
                          f"plants: {json.dumps(case.plants)[:limit]}",
                          *(["stderr: " + outcome.stderr.strip()[-1500:]] if outcome.stderr.strip() else [])])
    toml = build_toml(case).decode("utf-8", "replace")
    if len(toml) > limit:
        toml = toml[:limit] + f"\n# ... ({len(toml)} characters in all)\n"
    ov = [o if len(o) <= 300 else o[:300] + f"...({len(o)} chars)" for o in case.overrides]
    lines = [f"{outcome.category}: {outcome.detail[:2000]}"]
    lines += [f"  also: {v}" for v in outcome.violations[1:6]]
    lines += [f"api: {case.api}, seed: {case.seed!r}, base: {case.base}", f"overrides: {ov!r}"]
    if case.files:
        lines.append(f"files: {_short(case.files, 600)}")
    if outcome.stderr.strip():
        lines.append("stderr: " + outcome.stderr.strip()[-1500:])
    lines += ["--- scenario.toml", toml]
    return "\n".join(lines)


def minimise(case: Case, outcome: Outcome, worker: Worker, max_runs: int = 60) -> tuple[Case, Outcome]:
    """Greedily drop ops, overrides, the seed and files while the case fails with the same
    signature; returns the smallest case found and its outcome."""
    target = outcome.signature()
    best, best_out, runs = case, outcome, 0

    def attempt(candidate: Case):
        nonlocal runs
        runs += 1
        out = worker.run(candidate)
        return out if out.signature() == target else None

    changed = True
    while changed and runs < max_runs:
        changed = False
        for attr in ("ops", "overrides"):
            i = 0
            while i < len(getattr(best, attr)) and runs < max_runs:
                items = list(getattr(best, attr))
                del items[i]
                cand = Case(**{**asdict(best), attr: items})
                out = attempt(cand)
                if out is not None:
                    best, best_out, changed = cand, out, True
                else:
                    i += 1
        if best.seed is not None and runs < max_runs:
            cand = Case(**{**asdict(best), "seed": None})
            out = attempt(cand)
            if out is not None:
                best, best_out, changed = cand, out, True
    return best, best_out


def write_failure(directory: Path, index: int, case: Case, outcome: Outcome) -> Path:
    """Write one failing case to ``directory/<index>-<category>/``: scenario.toml (the exact
    bytes), its side files, case.json (ops, overrides, seed, api, outcome) and report.txt."""
    d = Path(directory) / f"{index:05d}-{outcome.category}"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    if isinstance(case, (FsCase, StudyCase)):
        (d / "case.json").write_text(json.dumps({type(case).__name__: case.to_json(), "outcome": asdict(outcome),
                                                 "signature": outcome.signature()}, indent=1, default=str) + "\n")
        (d / "report.txt").write_text(describe(case, outcome) + "\n", encoding="utf-8", errors="replace")
        return d
    scenario = write_case_dir(case, d)
    if outcome.stderr:
        (d / "stderr.txt").write_text(outcome.stderr, encoding="utf-8", errors="replace")
    (d / "case.json").write_text(json.dumps({"case": case.to_json(), "outcome": asdict(outcome),
                                             "signature": outcome.signature(),
                                             "replay": f"vegaslab.{case.api}({str(scenario)!r}, "
                                                       f"overrides={case.overrides!r})"},
                                            indent=1, default=str) + "\n")
    (d / "report.txt").write_text(describe(case, outcome) + "\n", encoding="utf-8", errors="replace")
    return d


# ============================================================================= study files
# Study files (docs/robustness-format.md, vegaslab.study.robustness) are a surface of their own,
# kept apart from the scenario cases above. A study case is a base study plus ops (the same
# "set"/"del"/"dup" ops, on the study's dict), written beside a one-entry catalog; it is loaded
# and planned in this process: planning resolves every run with the core but simulates
# nothing, so a case takes milliseconds and needs no worker. It passes when the study is
# planned (every run resolved, no two alike, outputs named by plain names) or refused with a
# StudyError naming the study file and a ``study`` field; anything else fails: another
# exception (a TypeError from a value of the wrong type), a StudyError that names no field,
# or a plan that breaks what planning promises (category ``impossible``).

#: The catalog entry every study case studies: min-two-hop with an id and a claim.
STUDY_ENTRY = "[meta]\nid = \"fuzz\"\n\n[[meta.claim]]\ntext = \"f1 delivers\"\nexpr = \"fuzz:f1.delivered_pkts > 0\"\n\n" \
              + _MINIMAL_TOML["min-two-hop"].replace('duration = "2s"', 'duration = "1s"')

#: The base study (valid: it plans 6 points x 4 seeds).
STUDY_BASE: dict = {"study": {
    "entry": "fuzz", "claim": "f1 delivers", "conclusion": "f1 delivers", "default_reason": "a test",
    "seeds": 4,
    "factor": [
        {"name": "bandwidth", "path": "links[1].bandwidth", "values": ["500kbps", "1Mbps", "2Mbps"],
         "default": "500kbps"},
        {"name": "delay", "levels": {"short": ["links[0].delay=10ms"], "long": ["links[0].delay=50ms"]},
         "default": "short"},
    ],
    "pair": [{"factors": ["bandwidth", "delay"]}],
}}

#: Values a study's fields are set to: wrong types, paths, ids and overrides a study file may
#: not use, levels the simulator refuses, duplicates.
STUDY_VALUES: dict[str, list] = {
    "entry": ["/etc/passwd", "../catalog/fuzz", "fuzz/../fuzz", "fuzz.toml", "", " ", "a" * 65, "nosuch",
              "fu zz", "-", "fuzz\n", 5, ["fuzz"]],
    "path": ["run.seed", " run.seed ", "run", "links[1].bandwdth", "links[1.bandwidth", "=", "a=b",
             "flows[0].tcp.window", "links[-1].bandwidth", "", "a." * 40 + "b"],
    "override": MALFORMED_OVERRIDES + ["run.seed=3", "run={seed=1}", "run = { seed = 1, duration = \"1s\" }",
                                       "links[0].delay=0ms", "links[1].bandwidth=0bps", "flows[0].tcp.window=0",
                                       "links[0].delay=10ms", "links[0].delay=0.01s"],
    "value": [0, -1, 0.0, math.nan, math.inf, "", " ", True, [1], {}, "0bps", "1Mbps", "500kbps", 1e300, "1e999bps"],
    "default": [[], {}, True, None, 0, "nosuch", "long", "500kbps", 500, ["short"]],
    "variants": [["fuzz", "fuzz"], ["nosuch"], [1], "fuzz", [], [""], ["fuzz"]],
    "pair": [5, [5], [{}], [{"factors": ["bandwidth", "bandwidth"]}], [{"factors": ["bandwidth"]}],
             [{"factors": ["bandwidth", "delay"]}, {"factors": ["delay", "bandwidth"]}],
             [{"factors": ["bandwidth", "delay"], "weight": 1}], [{"factors": [[], {}]}], "x"],
    "seeds": [3, 4, 1001, -4, 4.0, True, "4", [4]],
    "type": TYPE_SWAPS,
}


@dataclass
class StudyCase:
    """One study-file fuzz case: ops on :data:`STUDY_BASE` (see :func:`apply_op`)."""

    ops: list = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def build_study_toml(case: StudyCase) -> bytes:
    import vegaslab

    doc = copy.deepcopy(STUDY_BASE)
    for op in case.ops:
        apply_op(doc, op)
    return vegaslab.to_toml(doc).encode("utf-8", "surrogatepass")


def write_study_case(case: StudyCase, directory: Path) -> tuple[Path, Path]:
    """The case's study file and its catalog (with :data:`STUDY_ENTRY`) in ``directory``."""
    catalog = directory / "catalog"
    catalog.mkdir(parents=True, exist_ok=True)
    (catalog / "fuzz.toml").write_text(STUDY_ENTRY, encoding="utf-8")
    study = directory / "study.toml"
    study.write_bytes(build_study_toml(case))
    return study, catalog


def check_study_case(case: StudyCase, directory: Path) -> Outcome:
    """Load and plan the case's study (:func:`vegaslab.study.robustness.load_study`, ``plan``) and
    classify what happened (the section's comment says what passes)."""
    from vegaslab.study import robustness as rb

    study_path, catalog = write_study_case(case, Path(directory))
    t0 = time.monotonic()
    try:
        planned = rb.plan(rb.load_study(study_path), catalog)
    except rb.StudyError as exc:
        message = str(exc)
        named = re.match(re.escape(f"{study_path}: ") + r"(study\b[^:]*|cannot read|not TOML): ", message)
        return Outcome("scenario-error" if named else "bad-error", message[:4000], wall_s=time.monotonic() - t0)
    except Exception as exc:  # noqa: BLE001 - classifying every failure is the point
        return Outcome("exception", f"{type(exc).__name__}: {exc}"[:4000], wall_s=time.monotonic() - t0)
    violations = _study_plan_violations(planned)
    return Outcome("impossible" if violations else "ok", violations[0] if violations else "", violations,
                   wall_s=time.monotonic() - t0)


def _study_plan_violations(planned) -> list[str]:
    """What a plan must never hold: a run the core refused, two points or variants that run
    the same scenario, an entry or output name that is not a plain name."""
    from vegaslab.study import robustness as rb
    from vegaslab.safe_io import UnsafePathError, plain_name

    out = [f"{j.label}: planned with an error: {j.error}" for j in planned.jobs if j.error]
    first_seed = planned.study.seeds[0]
    keys = [j.key for j, (_, _, s) in zip(planned.jobs, planned.index) if s == first_seed]
    if len(set(keys)) != len(keys):
        out.append("two planned runs of the first seed resolve to the same scenario")
    entry = planned.study.entry
    try:
        plain_name(f"{entry}.json")
        plain_name(rb.figure_name(entry, 0))
    except UnsafePathError as exc:
        out.append(f"the outputs are not plain names: {exc}")
    if not rb.ENTRY_ID.fullmatch(entry):
        out.append(f"the entry {entry!r} is not a catalog id")
    return out


def study_cases():
    """The hypothesis strategy of :class:`StudyCase`: one to three ops, each setting a field of
    the base study to a value of :data:`STUDY_VALUES` (mostly one meant for that field),
    deleting a field, or duplicating a factor, a level or a pair."""
    from hypothesis import strategies as st

    def pick(draw, seq):
        seq = list(seq)
        return seq[draw(st.integers(0, len(seq) - 1))]

    def target(path: tuple) -> str:
        last = _last_key(path)
        if last in ("entry", "default", "variants", "pair", "seeds", "path"):
            return last
        if last == "values" or (len(path) > 4 and path[-2] == "values"):
            return "value"
        if "levels" in path:
            return "override"
        return "type"

    @st.composite
    def strategy(draw):
        case = StudyCase()
        doc = copy.deepcopy(STUDY_BASE)
        for _ in range(draw(st.integers(1, 3))):
            paths = [p for p, _ in _paths(doc)] + [("study", "variants"), ("study", "figure")]
            path = pick(draw, paths)
            kind = pick(draw, ["set"] * 6 + ["del", "dup"])
            if kind == "del":
                op = ["del", list(path)]
            elif kind == "dup":
                arrays = [p for p, v in _paths(doc) if isinstance(v, list) and v]
                if not arrays:
                    continue
                arr = pick(draw, arrays)
                op = ["dup", list(arr), draw(st.integers(0, len(_get(doc, list(arr))) - 1))]
            else:
                vocab = STUDY_VALUES[target(path)] if draw(st.integers(0, 4)) else STUDY_VALUES["type"]
                value = pick(draw, vocab)
                if target(path) == "override" and isinstance(_get_or_none(doc, path), list):
                    value = [value]
                op = ["set", list(path), value]
            case.ops.append(op)
            apply_op(doc, op)
        return case

    return strategy()


def _get_or_none(doc: Any, path: Iterable) -> Any:
    try:
        return _get(doc, list(path))
    except (KeyError, IndexError, TypeError):
        return None


# ============================================================================= files around a run
# The directories vegaslab writes and reads back (docs: vegaslab.safe_io): a run directory, a
# results store, a reproduce directory. A file-system case starts from a clean output of one
# command (made once per worker, then copied), plants things in it (links to files and
# directories outside, FIFOs, huge sparse files, deeply nested or wrongly shaped JSON, a file
# where a directory belongs, an empty directory where a file belongs), runs the command again
# in the worker and checks, besides the usual failure categories, that nothing outside the
# named directories was written or read: the sentinel files beside the output (``outside/``)
# are unchanged, their secret never reaches an output file, stdout or stderr, and no file was
# opened following a link to them or to a system file a plant named (Python's audit hook sees
# every open; the core opens no file in these directories). Categories: a planted file that
# reaches a write or read outside is ``unsafe``; an exit status other than 0 (the plant was
# harmless) or 2 (refused as bad input, naming it), or a traceback, is ``exception``.

#: What a case runs: ``run`` (a run directory with a trace), ``sweep`` (a store, a plot),
#: ``status`` (``sweep --status`` on a store), ``reproduce`` (a report directory and its store).
FS_COMMANDS = ("run", "sweep", "status", "reproduce")

#: Where things are planted, per command, relative to the output directory. ``{commit}`` is
#: replaced by the name of a commit directory of the store.
FS_PLANT_PATHS: dict[str, list[str]] = {
    "run": ["flows.parquet", "meta.json", "trace.tr", "queues.parquet", "series_flows.parquet", "job.json",
            "cwnd.png", "extra.tr"],
    "sweep": [".lock", "store.json", "data", "_tmp", "_quarantine", "data/{commit}", "data/{commit}/_commit.json",
              "data/{commit}/flows.parquet", "data/planted", "sweep-failures.json", "throughput_bps-vs-limit.png",
              "_tmp/x"],
    "reproduce": ["summary.md", "summary.csv", "index.html", "store", "results", "results/tiny",
                  "results/tiny/newreno/seed1", "results/tiny/newreno/seed1/job.json", "results/provenance.json",
                  "robustness", "robustness/tiny.json", "robustness/tiny-0.png", "robustness/other.json",
                  "store/.lock", "store/data", "store/data/{commit}/_commit.json", "store/store.json",
                  "robustness.md"],
}
FS_PLANT_PATHS["status"] = FS_PLANT_PATHS["sweep"]

#: System files a plant may point at: reading one is a read outside.
FS_SENSITIVE = ("/etc/passwd", "/etc/shadow", "/proc/self/environ", "/dev/zero")

_SUMMARY_LIKE = {"entry": "tiny", "claim": "c", "conclusion": "c", "verdict": "holds", "sentence": "s",
                 "points": [], "factors": [], "runs": 1}

#: A summary of the shape vegaslab writes (it passes the schema, so what reads it is reached).
_SUMMARY = {"entry": "tiny", "claim": "c", "conclusion": "<script>alert(1)</script> c", "default_reason": "r",
            "figure_expr": "", "figure_label": "", "verdict": "robust", "sentence": "s <b>",
            "factors": [{"name": "delay", "levels": ["short", "long"], "default": "short", "reason": ""}],
            "points": [{"label": "all defaults", "levels": {}, "holds": 4, "seeds": 4, "interval": [0.51, 1.0],
                        "status": "holds", "values": [700.0, 700.0, 700.0, 700.0], "errors": []}],
            "study_range": [700.0, 700.0], "runs": 8, "computed": 0, "wall_s": 0.5, "compute_s": 1.25, "ns2": None,
            "figures": ["tiny-0.png"]}

#: What may be planted (``kind``, argument).
FS_PLANTS: list[dict] = [
    {"link": "@victim"}, {"link": "@secret"}, {"link": "@dir"}, {"link": "@nowhere"},
    *({"link": p} for p in FS_SENSITIVE),
    {"fifo": True}, {"dir": True}, {"sparse": 200 << 20}, {"text": ""}, {"text": "not json {"},
    {"deep": 100_000}, {"deep": 70}, {"json": []}, {"json": {"format": "3"}}, {"json": 5},
    {"json": {"format": 3, "commit": "x", "runs": "all", "files": {"../../outside/victim.txt": {}}}},
    {"json": {**_SUMMARY_LIKE, "figures": ["/etc/passwd"]}},
    {"json": {**_SUMMARY_LIKE, "figures": ["../../outside/secret.txt"]}},
    {"json": {**_SUMMARY_LIKE, "figures": ["robustness/tiny-0.png", "tiny-0.png"]}},
    {"json": {**_SUMMARY_LIKE, "entry": "../../x"}},
    {"json": _SUMMARY}, {"json": {**_SUMMARY, "compute_s": 10**400}}, {"json": {**_SUMMARY, "runs": -1}},
    {"json": {**_SUMMARY, "points": [{**_SUMMARY["points"][0], "values": [1e308, -1e308]}]}},
    {"json": {**_SUMMARY, "figures": ["tiny-0.png"] * 1000}},
    {"json": {"key": "x" * 64}},
    {"remove": True},
]

#: Trace file names a scenario gives. ``@outside/NAME`` stands for an absolute path inside the
#: case's sentinel directory, so a write there is seen by the sentinel check (a fixed path such
#: as one in /tmp would be shared with every other run on the machine).
FS_TRACE_FILES = ["trace.tr", "t.tr", "../outside/victim.txt", "@outside/trace.tr", "sub/t.tr", ".t.tr",
                  "meta.json", "flows.parquet", "t.pcap", "x" * 300 + ".tr", "", "t.tr\n"]

FS_CATALOG_ENTRY = """
[meta]
id = "tiny"
title = "A <b>tiny</b> entry"
notes = "<script>alert(1)</script> [x](javascript:alert(1))"
[run]
duration = "0.5s"
""" + _MINIMAL_TOML["min-two-hop"].split("[run]")[1].split("\n", 2)[2] + """
[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }
published = { "f1.retransmitted_pkts" = 3 }
"""

FS_SWEEP = _MINIMAL_TOML["min-two-hop"].replace('duration = "2s"', 'duration = "0.5s"') + """
[sweep]
seeds = 2
[[sweep.axis]]
name = "limit"
path = "links[1].queue.limit"
values = [5, 20]
"""


@dataclass
class FsCase:
    """One file-system case: a command, what is planted where in its output, the trace file
    name (``run``), and whether the second run computes new runs (``fresh``)."""

    command: str
    plants: dict = field(default_factory=dict)
    trace_file: str = "trace.tr"
    fresh: bool = False

    def to_json(self) -> dict:
        return asdict(self)

    def __repr__(self) -> str:
        return f"FsCase({self.command!r}, plants={_short(self.plants)}, trace_file={self.trace_file[:60]!r}, fresh={self.fresh})"


def fs_cases():
    """The hypothesis strategy of :class:`FsCase`: a command, one to four plants at its paths,
    and for ``run`` a trace file name from :data:`FS_TRACE_FILES` (mostly a good one)."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        command = draw(st.sampled_from(FS_COMMANDS))
        paths = draw(st.lists(st.sampled_from(FS_PLANT_PATHS[command]), min_size=1, max_size=4, unique=True))
        plants = {p: draw(st.sampled_from(FS_PLANTS)) for p in paths}
        trace = draw(st.sampled_from(FS_TRACE_FILES)) if command == "run" and draw(st.integers(0, 3)) == 0 else "trace.tr"
        return FsCase(command, plants, trace, draw(st.booleans()))

    return strategy()


# -- the worker side

_FS_TEMPLATES: dict[str, Path] = {}
_FS_AUDIT: dict[str, Any] = {"on": False, "roots": (), "seen": []}


def _fs_audit_hook(event: str, args: tuple) -> None:
    """Record each open (and rename, remove, mkdir) that follows a link into the sentinel
    directory or to a sensitive system file while a file-system case runs."""
    if not _FS_AUDIT["on"] or event not in ("open", "os.rename", "os.remove", "os.mkdir", "os.rmdir",
                                             "shutil.rmtree", "os.link", "os.symlink"):
        return
    path = args[0] if args else None
    if isinstance(path, int) or path is None:
        return
    if event == "open" and len(args) > 2 and isinstance(args[2], int) and args[2] & os.O_NOFOLLOW:
        return  # a link there is refused, not followed
    try:
        name = os.fsdecode(path)
        if event == "open":  # follows every link on the way, the last one included
            real = os.path.realpath(name)
        else:  # acts on the last component itself: only the links on the way are followed
            real = os.path.join(os.path.realpath(os.path.dirname(name) or "."), os.path.basename(name))
    except (OSError, ValueError, TypeError):
        return
    if real.startswith(_FS_AUDIT["roots"]) or real in FS_SENSITIVE:
        _FS_AUDIT["seen"].append(f"{event} {os.fsdecode(path)} -> {real}")


def _fs_cli(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """``vegaslab.cli.main(argv)`` in this process with ``env`` set: exit status, stdout, stderr."""
    import contextlib
    import io

    from vegaslab import cli

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return code, out.getvalue(), err.getvalue()


def _fs_argv(command: str, home: Path, out: Path, fresh: bool) -> list[str]:
    extra = ["--set", "run.duration=0.6s"] if fresh else []
    if command == "run":
        return ["run", str(home / "scenario.toml"), "--out", str(out), "--no-plots", "-q", *extra]
    if command == "sweep":
        return ["sweep", str(home / "study.toml"), "--out", str(out), "--scheduler", "synchronous", "-q",
                "--plot", "throughput_bps:limit", *extra]
    if command == "status":
        return ["sweep", str(home / "study.toml"), "--out", str(out), "--status", *extra]
    return ["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "-q",
            *(["--seed", "2"] if fresh else [])]


def _fs_inputs(home: Path, trace_file: str, outside: Path | None = None) -> dict[str, str]:
    """The inputs of every command in ``home`` (a scenario with a trace, a sweep, a one-entry
    catalog); returns the environment the commands need. A trace file ``@outside/NAME`` becomes
    the absolute path of NAME in ``outside``, the sentinel directory."""
    if trace_file.startswith("@outside/") and outside is not None:
        trace_file = str(outside.resolve() / trace_file.removeprefix("@outside/"))
    (home / "cat").mkdir(parents=True, exist_ok=True)
    (home / "cat" / "tiny.toml").write_text(FS_CATALOG_ENTRY)
    (home / "study.toml").write_text(FS_SWEEP)
    scenario = _MINIMAL_TOML["min-two-hop"].replace('duration = "2s"', 'duration = "0.5s"')
    (home / "scenario.toml").write_text(scenario + f"\n[trace]\nfile = {json.dumps(trace_file)}\n")
    return {"VEGASLAB_CATALOG": str(home / "cat"), "DASK_SCHEDULER_ADDRESS": ""}


def _fs_template(command: str, root: Path) -> Path:
    """A clean output of ``command`` (made once per worker)."""
    if command not in _FS_TEMPLATES:
        home = root / f"template-{command}"
        shutil.rmtree(home, ignore_errors=True)
        env = _fs_inputs(home, "trace.tr")
        first = "sweep" if command == "status" else command
        code, _, err = _fs_cli(_fs_argv(first, home, home / "out", False), env)
        if code != 0:
            raise RuntimeError(f"the clean {command} output could not be made: {err.strip()[-500:]}")
        _FS_TEMPLATES[command] = home / "out"
    return _FS_TEMPLATES[command]


def _fs_plant(out: Path, rel: str, spec: dict, outside: Path) -> None:
    if "{commit}" in rel:
        data = out / rel.split("{commit}")[0]
        commits = sorted(p.name for p in data.iterdir() if p.is_dir() and not p.is_symlink()) if data.is_dir() else []
        if not commits:
            return
        rel = rel.replace("{commit}", commits[0])
    target = out / rel
    if not os.path.isdir(target.parent) or os.path.islink(target.parent):
        return  # its directory was planted over: nothing to put there
    if os.path.lexists(target):
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        else:
            os.unlink(target)
    if spec.get("remove"):
        return
    if "link" in spec:
        to = spec["link"]
        to = str(outside / {"@victim": "victim.txt", "@secret": "secret.txt", "@dir": "dir", "@nowhere": "nowhere"}[to]) \
            if to.startswith("@") else to
        os.symlink(to, target)
    elif spec.get("fifo"):
        os.mkfifo(target)
    elif spec.get("dir"):
        target.mkdir()
    elif "sparse" in spec:
        with open(target, "wb") as fh:
            fh.truncate(int(spec["sparse"]))
    elif "deep" in spec:
        target.write_text("[" * int(spec["deep"]) + "]" * int(spec["deep"]))
    elif "json" in spec:
        target.write_text(json.dumps(spec["json"]))
    elif "text" in spec:
        target.write_text(spec["text"])


def _fs_outside(outside: Path, token: str) -> dict[str, str]:
    """Make the sentinel directory; returns its listing with each file's content."""
    (outside / "dir").mkdir(parents=True)
    (outside / "victim.txt").write_text("keep me\n")
    (outside / "secret.txt").write_text(f"{token}\n")
    return _fs_snapshot(outside)


def _fs_snapshot(outside: Path) -> dict[str, str]:
    snap = {}
    for dirpath, dirnames, filenames in os.walk(outside):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(outside))
            snap[rel] = "dir" if p.is_dir() else p.read_text(errors="replace")
    return snap


def _fs_leaks(out: Path, token: str) -> list[str]:
    """Regular files under ``out`` (links and FIFOs not followed) that hold ``token``."""
    found = []
    for dirpath, _dirs, filenames in os.walk(out):
        for name in filenames:
            p = Path(dirpath) / name
            try:
                st = os.lstat(p)
                if not stat.S_ISREG(st.st_mode) or st.st_blocks == 0 and st.st_size > (1 << 20):
                    continue  # a link, FIFO, or a sparse file of zeros
                with open(p, "rb") as fh:
                    if token.encode() in fh.read(64 << 20):
                        found.append(str(p))
            except OSError:
                continue
    return found


def _run_fs_case(req: dict) -> dict:
    case = FsCase(**req["fs"])
    home = Path(req["home"])
    outside = home / "outside"
    token = f"VEGASLAB-FUZZ-SECRET-{os.getpid()}-{time.monotonic_ns()}"
    before = _fs_outside(outside, token)
    env = _fs_inputs(home, case.trace_file, outside)
    out = home / "out"
    shutil.copytree(_fs_template(case.command, Path(req["root"])), out, symlinks=True)
    for rel, spec in case.plants.items():
        _fs_plant(out, rel, spec, outside)
    if not _FS_AUDIT["roots"]:
        sys.addaudithook(_fs_audit_hook)
    _FS_AUDIT.update(on=True, roots=(str(outside.resolve()) + os.sep,), seen=[])
    try:
        code, stdout, stderr = _fs_cli(_fs_argv(case.command, home, out, case.fresh), env)
    except BaseException as exc:  # noqa: BLE001 - cli.main returns a status for every error
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return _error_verdict(exc, str(home / "scenario.toml"))
    finally:
        _FS_AUDIT["on"] = False
    violations = [f"unsafe: {what}" for what in _FS_AUDIT["seen"][:5]]
    if _fs_snapshot(outside) != before:
        violations.append("unsafe: the sentinel directory outside the output changed (a write through a planted link)")
    leaks = _fs_leaks(out, token) + [name for name, text in (("stdout", stdout), ("stderr", stderr)) if token in text]
    violations += [f"unsafe: the secret outside the output reached {where}" for where in leaks[:5]]
    if code not in (0, 2):  # a plant is bad input (2) or harmless (0); no run of these fails (1)
        return {"status": "exception", "why": f"exit status {code}", "message": stderr[-2000:]}
    if "Traceback" in stderr or "internal error" in stderr:
        return {"status": "exception", "why": "traceback or internal error", "message": stderr[-2000:]}
    return {"status": "ok", "violations": violations, "exit": code, "message": stderr[-500:]}


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker_main()
    else:
        print("usage: python tests/fuzzer.py --worker (the long run is scripts/fuzz.py)", file=sys.stderr)
        sys.exit(2)
