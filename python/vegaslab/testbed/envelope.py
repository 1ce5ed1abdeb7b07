"""The testbed's operating envelope on this machine: the highest bottleneck rate it holds.

The htb shaper and the user-space delay line share the machine's cores with the flows' own
processes, so above some rate the bottleneck no longer drains at its rate: the queue empties
now and then although the load would keep it standing, and a run measures the host instead
of the congestion control (on a 2-core VM, 100 Mbit/s carried 90-93 of 96.5 Mbit/s with the
queue empty in 4-10% of samples, while 50 Mbit/s held; docs/testbed.md).

:func:`measure` (``vegaslab testbed envelope``, ``make testbed-envelope``) finds it: a step
search upward over rates, each step a bulk load (four kernel cubic flows, 20 ms RTT, a buffer
of two bandwidth-delay products, so that even all four halving at once leaves a standing
queue) through the bottleneck. A rate is *held* when the carried rate is within 2% of the
shaped rate and the queue is empty in under 1% of the samples after the warm-up; a failed
rate is tried once more (a spell of the host), and the search stops at the second failure.
The result, with the machine it was measured on, goes to a JSON file
(``out/testbed-envelope.json`` of the repository by default, or ``VEGASLAB_TESTBED_ENVELOPE``).

Every testbed run checks its bottleneck's rate against that file first
(:func:`check_rates`): beyond the envelope it warns and runs (docs/decisions.md says why it
does not refuse); without a file it says so, once per process, and runs. The check is logic
on a file (tested with made-up files); the measurement is the host's and is never asserted.
"""
from __future__ import annotations

import json
import os
import platform
import socket
import sys
import time
from pathlib import Path

from .errors import TestbedError

__all__ = ["DEFAULT_PATH", "CRITERIA", "RATES_MBPS", "held", "machine", "assess", "check_rates", "measure",
           "write"]

#: Where the envelope is read from and written to unless told otherwise.
DEFAULT_PATH = Path(os.environ.get("VEGASLAB_TESTBED_ENVELOPE",
                                   Path(__file__).resolve().parents[3] / "out" / "testbed-envelope.json"))
#: What "held" means: the carried IP rate at least this share of the shaped rate, and the
#: queue empty in at most this share of the samples after the warm-up.
CRITERIA = {"min_carried_ratio": 0.98, "max_empty_fraction": 0.01}
#: The rates tried, in Mbit/s, upward, to the delay line's ceiling (about 500 Mbit/s on two
#: cores, docs/testbed.md).
RATES_MBPS = (10, 20, 30, 40, 50, 60, 70, 80, 100, 120, 150, 200, 250, 300, 400, 500)
#: The bulk load of a step.
LOAD = {"flows": 4, "cc": "cubic", "one_way_delay_ms": 10, "buffer_bdp": 2, "min_buffer_pkts": 50}
_PAYLOAD, _IP_PACKET = 1448, 1500  # the kernel's segments on a 1500-byte MTU with timestamps
_warned_missing: set[str] = set()


def held(rate_bps: float, carried_bps: float, empty_fraction: float) -> bool:
    """Whether one step held its rate (:data:`CRITERIA`)."""
    return (carried_bps >= CRITERIA["min_carried_ratio"] * rate_bps
            and empty_fraction <= CRITERIA["max_empty_fraction"])


def machine() -> dict:
    """What the envelope depends on: the host, its kernel, its cores and their model."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "kernel": platform.release(), "cpus": os.cpu_count(),
            "cpu_model": model, "python": platform.python_version()}


def assess(rates_bps: list[float], envelope: dict | None, here: dict) -> tuple[bool | None, str | None]:
    """Whether the bottleneck rates ``rates_bps`` (each direction that carries flows) are within
    the ``envelope`` (the envelope file's document) measured for the machine ``here``
    (:func:`machine`): (True, None) within; (False, warning) beyond it; (None, note) with no
    usable envelope (none, or measured on another machine: another host name or core count)."""
    if envelope is None:
        return None, ("no testbed envelope is recorded for this machine (run `vegaslab testbed envelope`, "
                      "or make testbed-envelope); running without checking the bottleneck's rate")
    try:
        limit = float(envelope["held_rate_bps"])
        theirs = envelope["machine"]
    except (KeyError, TypeError, ValueError):
        return None, "the testbed envelope file has no held_rate_bps and machine; running without the check"
    if (theirs.get("hostname"), theirs.get("cpus")) != (here.get("hostname"), here.get("cpus")):
        return None, (f"the testbed envelope was measured on {theirs.get('hostname')} ({theirs.get('cpus')} "
                      f"cores), not this machine ({here.get('hostname')}, {here.get('cpus')} cores); "
                      f"running without the check")
    over = [r for r in rates_bps if r > limit]
    if not over:
        return True, None
    return False, (f"the bottleneck's {max(over) / 1e6:g} Mbit/s is beyond this machine's testbed envelope "
                   f"({limit / 1e6:g} Mbit/s held, measured {envelope.get('measured', '?')}): the shaper or the "
                   f"delay line may not keep up, so the run may measure the host rather than the congestion "
                   f"control; lower the rate (e.g. --set) or measure the envelope again")


def read(path: Path) -> dict | None:
    """The envelope file's document, None when there is no file; :class:`TestbedError` naming
    the file when it is not a JSON object."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise TestbedError(f"{path}: cannot read the testbed envelope: {e.strerror}") from None
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise TestbedError(f"{path}: not a testbed envelope (invalid JSON: {e})") from None
    if not isinstance(doc, dict):
        raise TestbedError(f"{path}: not a testbed envelope (expected a JSON object)")
    return doc


def check_rates(rates_bps: list[float], path: Path = DEFAULT_PATH, *, stream=None) -> dict:
    """Check a run's bottleneck rates against the envelope file ``path`` before the run: print
    a warning beyond it, a note (once per process and file) without one; returns what
    ``meta["testbed"]["envelope"]`` records: the file, the rate it held and whether the run
    is within it (None: not checked)."""
    stream = sys.stderr if stream is None else stream
    doc = read(path)
    within, message = assess(rates_bps, doc, machine())
    if message is not None and (within is not None or str(path) not in _warned_missing):
        print(f"vegaslab: warning: {message}", file=stream)
        if within is None:
            _warned_missing.add(str(path))
    return {"file": str(path) if doc is not None else None,
            "held_rate_bps": (doc or {}).get("held_rate_bps") if within is not None else None,
            "within": within}


def _step(rate_bps: float, seconds: float, warmup_s: float, capture: bool) -> dict:
    """One step: the bulk load through a ``rate_bps`` bottleneck; what it carried and how often
    the queue was empty after the warm-up."""
    import tempfile

    from .flows import FlowSpec, run_flows
    from .network import Bottleneck, Host, Network

    delay = int(LOAD["one_way_delay_ms"] * 1e6)
    bdp = rate_bps * 2 * delay / 1e9 / (8 * _IP_PACKET)
    buffer = max(LOAD["min_buffer_pkts"], int(round(LOAD["buffer_bdp"] * bdp)))
    flows = [FlowSpec(name=f"bulk{i + 1}", src="s1", dst="r1", cc=LOAD["cc"], start_s=0.0)
             for i in range(LOAD["flows"])]
    hosts = [Host("s1", "sender"), Host("r1", "receiver")]
    with tempfile.TemporaryDirectory(prefix="vegaslab-envelope-") as tmp:
        with Network(hosts, Bottleneck(rate_bps, buffer, rate_bps, buffer),
                     {("s1", "r1"): delay, ("r1", "s1"): delay}) as net:
            t0 = net.start_time_ns() + 1_000_000_000
            if capture:
                from .capture import Capture

                with Capture(net.router_ns, {"forward": net.egress()["forward"]}, Path(tmp), queues={}):
                    raw = run_flows(net, flows, t0_ns=t0, duration_s=seconds)
            else:
                raw = run_flows(net, flows, t0_ns=t0, duration_s=seconds)
    warm_ns = warmup_s * 1e9
    acked = 0.0
    span = []
    for f in flows:
        rows = [r for r in raw["tcp_info"] if r["flow"] == f.name and r["t"] >= warm_ns]
        if len(rows) >= 2:
            acked += rows[-1]["bytes_acked"] - rows[0]["bytes_acked"]
            span.append((rows[-1]["t"] - rows[0]["t"]) / 1e9)
    carried = acked * 8 / (sum(span) / len(span)) * _IP_PACKET / _PAYLOAD if span else 0.0
    queue = [q["forward"] for q in raw["queues"] if q["t"] >= warm_ns]
    empty = sum(1 for q in queue if q == 0) / len(queue) if queue else 1.0
    return {"rate_bps": rate_bps, "buffer_pkts": buffer, "carried_bps": carried,
            "carried_ratio": carried / rate_bps, "queue_samples": len(queue), "empty_fraction": empty,
            "mean_queue_pkts": sum(queue) / len(queue) if queue else None,
            "held": held(rate_bps, carried, empty)}


def measure(rates_mbps=RATES_MBPS, *, seconds: float = 8.0, warmup_s: float = 3.0, capture: bool = True,
            progress=None) -> dict:
    """Step upward through ``rates_mbps`` (:mod:`this module <.envelope>`), each rate a
    ``seconds`` bulk load measured after ``warmup_s``; returns the envelope document:
    ``held_rate_bps`` (the highest rate held below the first rate that failed twice; 0 if the
    first failed), ``highest_rate_tried_bps`` (when the two are equal the envelope is at least
    that), the steps, the criteria, the load and the machine. Needs root."""
    from .network import check as network_check

    if not rates_mbps or any(not 1 <= r <= 500 for r in rates_mbps):
        raise TestbedError(f"rates: between 1 and 500 Mbit/s each (the delay line's ceiling), got {list(rates_mbps)}")
    if not 2 <= seconds <= 600 or not 0 <= warmup_s < seconds - 1:
        raise TestbedError(f"seconds: 2 to 600 with warmup_s at least 1 s shorter, got {seconds}, {warmup_s}")
    network_check()
    steps, best = [], 0.0
    for rate in sorted(rates_mbps):
        tries = []
        for _ in range(2):
            step = _step(rate * 1e6, seconds, warmup_s, capture)
            tries.append(step)
            if progress is not None:
                progress(step)
            if step["held"]:
                break
        steps.extend(tries)
        if not tries[-1]["held"]:
            break
        best = rate * 1e6
    return {"held_rate_bps": best, "highest_rate_tried_bps": max(rates_mbps) * 1e6,
            "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": machine(), "criteria": CRITERIA, "load": {**LOAD, "seconds": seconds, "warmup_s": warmup_s},
            "capture": capture, "steps": steps}


def write(doc: dict, path: Path = DEFAULT_PATH) -> Path:
    """Write the envelope document to ``path`` (its directory created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
