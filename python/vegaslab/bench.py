"""The speed benchmark (``vegaslab bench``, ``make bench``): the core on the benchmark scenario in
a child interpreter (its own peak memory), the whole ``vegaslab run`` command end to end, the
results' conversion to pandas, and ns-2 on the same scenario when installed; medians over
interleaved rounds (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .errors import VegaslabError
from .scenario import load_scenario


__all__ = ["bench", "END_TO_END", "BENCH_SCENARIO", "PEAK_RSS_CODE", "children_cpu"]


#: The benchmark scenario, relative to the built-in catalog (vegaslab/catalog_data/).
BENCH_SCENARIO = "bench/grids-net2.toml"


BOTTLENECK = "R1->R2"


# Peak memory of the child itself. On Linux, ru_maxrss survives fork+exec (a child starts with
# its parent's high-water mark), so read VmHWM, which exec resets; elsewhere fall back to it.
PEAK_RSS_CODE = r"""
def peak_rss_bytes(who=None):
    import resource, sys
    if who is None:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        who = resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
"""


# The core's run through the results boundary (`vegaslab.core.run_core`: the tables as Arrow
# columns). pyarrow is imported before the baseline is read, as the interpreter's own: the
# peak's growth past the baseline is the run's.
_VEGASLAB_CHILD = PEAK_RSS_CODE + r"""
import json, sys, time
import pyarrow
from vegaslab.core import run_core
path, overrides = sys.argv[1], json.loads(sys.argv[2])
text = open(path, encoding="utf-8").read()
baseline = peak_rss_bytes()
t0, c0 = time.perf_counter(), time.process_time()
run = run_core(text, path, None, overrides)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
doc = run.document(series=False)
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": peak_rss_bytes(), "baseline_rss_bytes": baseline,
                  "doc": doc}))
"""


# The results boundary (target: 480,000 rows at 1 ms sampling to pandas in under 0.3 s): the
# benchmark's first 10 s (a --duration given to bench wins) with the monitors `vegaslab run`
# adds for its plots, sampled every 1 ms (510,000 rows at 50 flows), then the time from
# the core's typed columns to a `Results` holding every table and series as DataFrames (pandas
# imported before: importing it is the command's start, not the conversion). `Results` builds
# its frames when they are first read, so every one is read inside the timed span.
_RESULTS_CHILD = r"""
import json, sys, time
from pathlib import Path
import pandas
from vegaslab.cli.run import plot_monitors
from vegaslab.core import run_core
from vegaslab.results import TABLES, Results
path, overrides = sys.argv[1], json.loads(sys.argv[2])
text = open(path, encoding="utf-8").read()
monitored = ["run.duration=10s", *plot_monitors(Path(path), overrides), *overrides, "run.sample_interval=1ms"]
core_run = run_core(text, path, None, monitored)  # the Arrow batches, imported by pyarrow without a copy
t0, c0 = time.perf_counter(), time.process_time()
res = Results._from_core(core_run)
frames = {name: getattr(res, name) for name in TABLES}
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
assert all(isinstance(f, pandas.DataFrame) for f in frames.values())
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "series_rows": len(frames["series_flows"]) + len(frames["series_queues"]),
                  "table_rows": sum(len(frames[t]) for t in ("flows", "queues", "links", "udp"))}))
"""


# ns-2 runs in a grandchild (`ns`); RUSAGE_CHILDREN's maxrss is its peak, or this Python's RSS
# at fork time if that was larger, so the number is an upper bound. Its CPU time is the `ns`
# process's alone (the only child the bridge starts; the bridge's own Python work, writing the
# script and reading ns-2's output, is this process's and not counted).
_NS2_CHILD = PEAK_RSS_CODE + r"""
import json, resource, sys, time
try:
    from vegaslab.ns2 import run_scenario
except ImportError as exc:
    print(json.dumps({"error": f"vegaslab.ns2 is not available: {exc}"})); sys.exit(0)
from vegaslab.bench import children_cpu
path, overrides = sys.argv[1], json.loads(sys.argv[2])
baseline = peak_rss_bytes()
t0, c0 = time.perf_counter(), children_cpu()
doc = run_scenario(path, overrides=overrides, trace=False)
wall, cpu = time.perf_counter() - t0, children_cpu() - c0
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": peak_rss_bytes(resource.RUSAGE_CHILDREN),
                  "baseline_rss_bytes": baseline, "doc": doc}, default=str))
"""


def _child_env(*, one_blas_thread: bool = False) -> dict[str, str]:
    """The environment of a benchmark's child interpreter: this one's, with this vegaslab first
    on the import path (a checkout's, not another installed one). ``one_blas_thread``: numpy,
    which importing pyarrow loads, starts OpenBLAS's thread pool, whose threads spin for a while
    after they start; beside a measurement that begins right after the import, that spinning
    (about 45 ms on the benchmark) would count as the simulator's CPU time."""
    env = dict(os.environ)
    if one_blas_thread:
        env["OPENBLAS_NUM_THREADS"] = "1"
    pkg_root = str(Path(__file__).resolve().parents[1])  # the directory holding vegaslab/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    return env


def _child(code: str, path: Path, overrides: list[str]) -> dict:
    """Run ``code`` in a fresh interpreter (so its peak memory is its own); parse its JSON."""
    proc = subprocess.run([sys.executable, "-c", code, str(path), json.dumps(overrides)],
                          capture_output=True, text=True, env=_child_env(one_blas_thread=True))
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"child process failed (exit {proc.returncode}): {tail}", "stderr": proc.stderr}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": f"child process printed no result: {proc.stdout[-500:]!r}"}


def _split(flows: list[dict], cc_of: dict[str, str], key: str = "goodput_bps") -> dict[str, float]:
    """Sum of ``key`` per congestion-control family (reno-like vs vegas-like)."""
    by_index = list(cc_of.values())
    total: dict[str, float] = {}
    for i, f in enumerate(flows):
        cc = (f.get("cc") or cc_of.get(str(f.get("flow", f.get("name", ""))))
              or (by_index[i] if i < len(by_index) else "reno"))
        fam = "vegas" if "vegas" in str(cc) else "reno"
        total[fam] = total.get(fam, 0.0) + float(f.get(key) or 0.0)
    return total


def _bench_numbers(child: dict, cc_of: dict[str, str], wall_from_meta: bool) -> dict[str, Any]:
    doc = child["doc"]
    meta = doc.get("meta", {})
    wall = float(meta["wall_time_s"]) if wall_from_meta and meta.get("wall_time_s") else float(child["wall_s"])
    out: dict[str, Any] = {"wall_s": wall, "peak_rss_bytes": child["peak_rss_bytes"],
                           "python_rss_bytes": child["baseline_rss_bytes"]}
    if meta.get("events") is not None:
        out["events"] = int(meta["events"])
        out["events_per_s"] = meta["events"] / wall
    if meta.get("packet_hops") is not None:
        out["packet_hops"] = int(meta["packet_hops"])
    for q in doc.get("queues", []):
        if q.get("queue") == BOTTLENECK:
            out["bottleneck_departures"] = q["departed_pkts"]
            out["bottleneck_pkts_per_s"] = q["departed_pkts"] / wall
    out["goodput_bps"] = _split(doc.get("flows", []), cc_of)
    return out


def _fmt_rate(v: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def _per_packet_hop(n: dict[str, Any], hops: int | None) -> None:
    """Packet-hops per second and ns per packet-hop from ``hops`` (comparable across
    simulators, unlike events)."""
    if hops:
        n["packet_hops_per_s"] = hops / n["wall_s"]
        n["ns_per_packet_hop"] = n["wall_s"] * 1e9 / hops


def _bench_lines(label: str, n: dict[str, Any]) -> list[str]:
    parts = [_wall_text(n)]
    if "ns_per_packet_hop" in n:
        parts.append(f"{_fmt_rate(n['packet_hops_per_s'], 'packet-hops/s')} ({n['ns_per_packet_hop']:.0f} ns per packet-hop)")
    if "events_per_s" in n:
        parts.append(f"{_fmt_rate(n['events_per_s'], 'events/s')}")
    if "bottleneck_pkts_per_s" in n:
        parts.append(f"bottleneck {_fmt_rate(n['bottleneck_pkts_per_s'], 'pkt/s')} (per wall-second)")
    parts.append(f"peak RSS {n['peak_rss_bytes'] / 1e6:.1f} MB "
                 f"(interpreter before the run {n['python_rss_bytes'] / 1e6:.1f} MB)")
    g = n["goodput_bps"]
    total = sum(g.values()) or 1.0
    split = ", ".join(f"{fam} {_fmt_rate(g.get(fam, 0.0), 'bit/s')} ({100 * g.get(fam, 0.0) / total:.1f}%)"
                      for fam in ("reno", "vegas"))
    return [f"{label:9s} " + ", ".join(parts), f"{'':9s} goodput: {split}"]


#: The commands ``vegaslab bench`` times end to end (the ratio to ns-2 a user meets, not only
#: the core's): key in bench.json, the command as printed, and its options beyond
#: ``vegaslab run SCENARIO --out DIR -q`` and the benchmark's ``--set`` overrides.
END_TO_END = (
    ("run_tables", "vegaslab run --no-plots", ["--no-plots"]),
    ("run_plots", "vegaslab run", []),
)


def _time_command(key: str, scenario: Path, overrides: list[str], options: list[str]) -> dict[str, Any]:
    """Wall time of one ``vegaslab run`` of the benchmark in a fresh interpreter, from its start
    to its exit, as a user would time it (interpreter start, imports, the run, the tables and
    plots written): ``python -m vegaslab`` (the console script's entry) with this interpreter,
    writing into a temporary directory removed afterwards; a command that fails raises, as a
    benchmark missing a number is not a benchmark."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix=f"vegaslab-bench-{key}-") as tmp:
        out = Path(tmp) / "out"
        argv = [sys.executable, "-m", "vegaslab", "run", str(scenario), "--out", str(out), "-q", *options]
        for o in overrides:
            argv += ["--set", o]
        t0, c0 = time.perf_counter(), children_cpu()
        proc = subprocess.run(argv, capture_output=True, text=True, env=_child_env())
        wall, cpu = time.perf_counter() - t0, children_cpu() - c0
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise VegaslabError(f"benchmark command `vegaslab run {' '.join(options)}` failed (exit {proc.returncode}): {tail}")
        files = sorted(f.name for f in out.iterdir())
    return {"wall_s": wall, "cpu_s": cpu, "files": files}


def children_cpu() -> float:
    """User + system CPU seconds of this process's children that have ended and been waited for."""
    import resource

    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def _median_of(runs: list[Any], wall) -> tuple[Any, list[float]]:
    """The run with the median wall time (the lower middle one of an even count), and every
    run's wall time in the order they ran."""
    walls = [wall(r) for r in runs]
    order = sorted(range(len(runs)), key=walls.__getitem__)
    return runs[order[(len(runs) - 1) // 2]], walls


def _median(values: list[float]) -> float:
    """The median (the lower middle value of an even count, as :func:`_median_of`)."""
    return sorted(values)[(len(values) - 1) // 2]


def _with_times(numbers: dict[str, Any], walls: list[float], cpus: list[float]) -> dict[str, Any]:
    """``numbers`` with every round's wall and CPU time and the median CPU time."""
    numbers["walls_s"] = walls
    numbers["cpu_s"] = _median(cpus)
    numbers["cpus_s"] = cpus
    return numbers


def _wall_text(n: dict[str, Any]) -> str:
    walls = n.get("walls_s") or [n["wall_s"]]
    cpus = n.get("cpus_s") or []
    if len(walls) == 1:
        text = f"wall {n['wall_s']:.3f} s"
        return text + (f", CPU {n['cpu_s']:.3f} s" if cpus else "")
    text = f"wall {n['wall_s']:.3f} s (median of {len(walls)}: {min(walls):.3f}-{max(walls):.3f} s)"
    return text + (f", CPU {n['cpu_s']:.3f} s ({min(cpus):.3f}-{max(cpus):.3f} s)" if cpus else "")


def _ratio_line(what: str, theirs: float, ours: dict[str, float]) -> str:
    """``ns-2's CPU time over ours: 10.5x (the core), ...``"""
    return f"ns-2's {what} time over ours: " + ", ".join(f"{theirs / v:.1f}x ({label})" for label, v in ours.items())


def _rounds_line(ratios: list[float]) -> str:
    """How far the rounds' own ratios spread: the machine's noise, beside the ratio of medians."""
    listed = " ".join(f"{r:.1f}" for r in ratios)
    return (f"ns-2's CPU time over the core's in each round: {listed} "
            f"(median {_median(ratios):.1f}x, {min(ratios):.1f}x-{max(ratios):.1f}x)")


def linux_stack_overrides(doc: dict) -> list[str]:
    """The overrides that run every flow of the scenario ``doc`` on Linux's stack: a Vegas-family
    flow takes its Linux flavour (whose default stack is Linux's), any other flow
    ``tcp.stack = "linux"``. The algorithms with a Linux flavour are the core registry's."""
    from . import registry

    flavoured = {a.name for a in registry.algorithms() if "linux" in (a.flavours or ())}
    out = []
    for i, f in enumerate(doc.get("flows", [])):
        if str(f.get("cc", "reno")) in flavoured:
            out.append(f"flows[{i}].params.flavour=linux")
        else:
            out.append(f"flows[{i}].tcp.stack=linux")
    return out


def bench(scenario: Path, overrides: list[str], *, ns2: bool = True, end_to_end: bool = True,
          linux_stack: bool = True, repeat: int = 1, echo=print) -> dict[str, Any]:
    """Run the benchmark (the core, then with ``end_to_end`` the ``vegaslab run`` commands of
    :data:`END_TO_END` and the results' conversion to pandas (``_RESULTS_CHILD``), then ns-2 if
    asked and available); return the numbers.

    With ``repeat`` > 1 the measurements run in ``repeat`` rounds, each round every command once
    in the same order, so a slow spell of the machine touches all of them alike; each command's
    numbers are those of its median run, its wall times all listed (``walls_s``), and the ratios
    are of medians. Each round's own ratio of ns-2's CPU time to the core's is listed too
    (``ns2_over_vegaslab_cpu_by_round``): on a shared machine their spread says how far one ratio
    of medians can be trusted.

    Two times per command (the core's target is a ratio in CPU time; a user meets wall time): the
    wall time and the CPU time (user + system) of the simulating process: the core's child
    interpreter around the run, the ``ns`` process, and each whole ``vegaslab run`` command with
    whatever it waited for (its import thread and plot process included, so its CPU time may
    exceed its wall time). ``cpu_s`` is the median of the rounds' CPU times (``cpus_s``), taken on
    its own; the ratios are given for both.

    With ``linux_stack`` the core also runs the scenario with every flow on Linux's TCP stack
    (:func:`linux_stack_overrides`), in the same rounds: ``linux_stack`` in the report, with its
    cost per packet-hop over the ns-2 stack's (``linux_over_ns2_stack_per_packet_hop``)."""
    doc = load_scenario(scenario)
    linux_overrides = [*overrides, *linux_stack_overrides(doc)] if linux_stack else []
    cc_of = {str(f.get("name", f"flow{i}")): str(f.get("cc", "reno")) for i, f in enumerate(doc.get("flows", []))}
    report: dict[str, Any] = {"scenario": str(scenario), "overrides": overrides, "flows": len(cc_of), "repeat": repeat}
    echo(f"benchmark {scenario} ({len(cc_of)} flows{', ' + ' '.join(overrides) if overrides else ''}"
         f"{f', {repeat} rounds' if repeat > 1 else ''})")
    report["ns2"] = None
    if not ns2:
        report["ns2_skipped"] = "--no-ns2"
    elif not _which("ns"):
        report["ns2_skipped"] = "`ns` is not on PATH"
    rounds: dict[str, list[Any]] = {"vegaslab": [], "ns2": [], "results_to_pandas": [], "linux_stack": [],
                                    **{key: [] for key, _, _ in END_TO_END}}
    for _ in range(repeat):
        child = _child(_VEGASLAB_CHILD, scenario, overrides)
        if "error" in child:
            raise VegaslabError(f"vegaslab benchmark run failed: {child['error']}")
        rounds["vegaslab"].append(child)
        if linux_stack:
            linux = _child(_VEGASLAB_CHILD, scenario, linux_overrides)
            if "error" in linux:
                raise VegaslabError(f"vegaslab benchmark run on Linux's stack failed: {linux['error']}")
            rounds["linux_stack"].append(linux)
        if end_to_end:
            for key, _, options in END_TO_END:
                rounds[key].append(_time_command(key, scenario, overrides, options))
            converted = _child(_RESULTS_CHILD, scenario, overrides)
            if "error" in converted:
                raise VegaslabError(f"benchmark of the results to pandas failed: {converted['error']}")
            rounds["results_to_pandas"].append(converted)
        if not report.get("ns2_skipped"):
            if not rounds["ns2"]:
                echo("running ns-2 on the same scenario ...")
            theirs = _child(_NS2_CHILD, scenario, overrides)
            if "error" in theirs:
                report["ns2_skipped"] = theirs["error"]
            else:
                rounds["ns2"].append(theirs)
    cpus = lambda runs: [float(r["cpu_s"]) for r in runs]  # noqa: E731
    child, walls = _median_of(rounds["vegaslab"], lambda c: float(c["wall_s"]))
    ours = _with_times(_bench_numbers(child, cc_of, wall_from_meta=False), walls, cpus(rounds["vegaslab"]))
    _per_packet_hop(ours, ours.get("packet_hops"))
    report["vegaslab"] = ours
    for line in _bench_lines("vegaslab", ours):
        echo(line)
    if linux_stack:
        linux, walls = _median_of(rounds["linux_stack"], lambda c: float(c["wall_s"]))
        on_linux = _with_times(_bench_numbers(linux, cc_of, wall_from_meta=False), walls, cpus(rounds["linux_stack"]))
        _per_packet_hop(on_linux, on_linux.get("packet_hops"))
        report["linux_stack"] = on_linux
        echo("every flow on Linux's TCP stack (tcp.stack = \"linux\"):")
        for line in _bench_lines("linux", on_linux):
            echo(line)
        if "ns_per_packet_hop" in on_linux and "ns_per_packet_hop" in ours:
            ratio = on_linux["ns_per_packet_hop"] / ours["ns_per_packet_hop"]
            report["linux_over_ns2_stack_per_packet_hop"] = ratio
            echo(f"{'':9s} Linux's stack costs {ratio:.1f}x the ns-2 stack's time per packet-hop")
    if end_to_end:
        report["end_to_end"] = {}
        for key, label, _ in END_TO_END:
            timed, walls = _median_of(rounds[key], lambda t: t["wall_s"])
            report["end_to_end"][key] = _with_times({"command": label, **timed}, walls, cpus(rounds[key]))
            echo(f"{'':9s} `{label}` end to end: {_wall_text(report['end_to_end'][key])} "
                 f"({len(timed['files'])} files written)")
        converted, walls = _median_of(rounds["results_to_pandas"], lambda c: float(c["wall_s"]))
        report["results_to_pandas"] = _with_times(converted, walls, cpus(rounds["results_to_pandas"]))
        echo(f"{'':9s} results to pandas ({converted['series_rows']:,} time-series rows, "
             f"{converted['table_rows']:,} table rows; the plots' monitors every 1 ms): "
             f"{_wall_text(report['results_to_pandas'])}")
    if rounds["ns2"] and not report.get("ns2_skipped"):
        theirs, walls = _median_of(rounds["ns2"], lambda c: float(c["doc"].get("meta", {}).get("wall_time_s") or c["wall_s"]))
        report["ns2"] = _with_times(_bench_numbers(theirs, cc_of, wall_from_meta=True), walls, cpus(rounds["ns2"]))
        # ns-2 counts no packet-hops without queue monitors on every link, which would slow
        # it; it runs the same scenario, so its work is taken as ours (the Reno/Vegas split
        # printed below shows whether the two runs did the same).
        _per_packet_hop(report["ns2"], ours.get("packet_hops"))
        report["ns2_over_vegaslab_wall"] = report["ns2"]["wall_s"] / ours["wall_s"]
        report["ns2_over_vegaslab_cpu"] = report["ns2"]["cpu_s"] / ours["cpu_s"]
        by_round = [a / b for a, b in zip(report["ns2"]["cpus_s"], ours["cpus_s"])]
        report["ns2_over_vegaslab_cpu_by_round"] = by_round
        for line in _bench_lines("ns-2", report["ns2"]):
            echo(line)
        e2e = report.get("end_to_end", {})
        for what, key in (("CPU", "cpu_s"), ("wall", "wall_s")):
            mine = {"the core": ours[key], **{f"`{t['command']}`": t[key] for t in e2e.values()}}
            echo(_ratio_line(what, report["ns2"][key], mine))
        if len(by_round) > 1:
            echo(_rounds_line(by_round))
        if e2e:
            report["ns2_over_end_to_end_wall"] = {k: report["ns2"]["wall_s"] / t["wall_s"] for k, t in e2e.items()}
            report["ns2_over_end_to_end_cpu"] = {k: report["ns2"]["cpu_s"] / t["cpu_s"] for k, t in e2e.items()}
    if report.get("ns2_skipped"):
        report["ns2"] = None
        echo(f"ns-2: skipped ({report['ns2_skipped']})")
    return report


def _which(name: str) -> str | None:
    from shutil import which

    return which(name)
