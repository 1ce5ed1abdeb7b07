"""``vegaslab run``: one scenario, its summary, tables and plots (docs/cli.md).
"""

from __future__ import annotations

import argparse
import importlib
import os
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import vegaslab

from ..errors import ScenarioError
from ..figure_formats import FORMATS
from .console import console, one_line
from .options import FORMATTER, add_set, resolve_scenario, seed_arg, wrap


#: Monitors ``vegaslab run`` switches on for its plots when the scenario (with its ``--set``
#: overrides) leaves them unset; the queue plot's default is :func:`_bottleneck_queues`.
PLOT_MONITORS = ("monitor.cwnd=true", "monitor.throughput=true")


def add_parser(sub) -> None:
    """The ``run`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "run", formatter_class=FORMATTER,
        help="run one scenario, print its summary, write tables and plots",
        description=wrap("Run one scenario file, print the per-flow summary, and write every results "
                    "table as Parquet (no CSV unless --csv), meta.json and plots (cwnd, "
                    "throughput, queue; PNG unless --format) to DIR."),
        epilog="""examples:
  vegaslab run va-reroute                      # a catalog id (vegaslab reproduce --list)
  vegaslab run my.toml                         # or a scenario file
  vegaslab run my.toml --set run.duration=50s --set 'flows[1].params.alpha=2'
  vegaslab run my.toml --seed 7 --out out/seed7 --no-plots
  vegaslab run my.toml --csv                   # also <table>.csv beside each <table>.parquet
  vegaslab run my.toml --json -q               # one JSON document on stdout (docs/cli.md)

--set uses the override syntax of docs/scenario-format.md: dotted paths with list indices,
values parsed as TOML when possible (numbers, booleans, arrays), otherwise strings. Quote
a --set with brackets ('flows[0]...') so that the shell does not expand it.

Monitors: the scenario's [monitor] table is used as written. For the plots, a monitor it
leaves unset (and --set does not set) is switched on: monitor.cwnd, monitor.throughput and,
when neither monitor.queues nor monitor.all_queues is given, monitor.queues = the slowest
link's two directions (the bottleneck). --no-plots adds none.

Plots: cwnd.png, each flow's cwnd (and its ssthresh dashed); throughput.png, each flow's
throughput averaged over the last --throughput-window seconds and its running mean; queue.png,
the busiest monitored queues, with a RED queue's average and thresholds. Each is titled with
the scenario's [meta] title and marks the run's events (links down, delay changes, flows starting
and ending); the legend sits beside the plot, one entry per algorithm beyond 8 flows. With
more than 12 flows, the cwnd plot leaves out ssthresh and the throughput plot draws the running
means alone; every sample is in series_flows.parquet.""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID",
                   help="scenario file, or a catalog id such as va-reroute (vegaslab reproduce --list)")
    add_set(p)
    p.add_argument("--seed", type=seed_arg, metavar="N", help="random seed (overrides run.seed), 0 .. 2**63-1")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<scenario stem>)")
    p.add_argument("--no-plots", action="store_true", help="write tables only; leave the monitors off")
    p.add_argument("--format", choices=FORMATS, default="png",
                   help="the plots' file format (default png; pdf and svg are vector figures for a paper)")
    p.add_argument("--throughput-window", type=_seconds, default=1.0, metavar="SECONDS",
                   help="the throughput plot's averaging window in seconds, drawn beside the running mean "
                        "(default 1)")
    p.add_argument("--csv", action="store_true",
                   help="also write each table as CSV (the same rows and columns as its Parquet file); "
                        "without it, Parquet only")
    p.add_argument("--trace", action="append", default=[], metavar="LINK|FLOW",
                   help="write a per-packet trace of this link direction ('R1->R2': quote it) or flow "
                        "(repeatable; 'all' for every one) into DIR/trace.tr, ns-2's format "
                        "(docs/scenario-format.md, \"Packet traces\")")
    p.add_argument("--trace-format", choices=("ns2", "pcap"), default="ns2",
                   help="with --trace: ns-2's text format (default) or pcap (DIR/trace.pcap: a capture at "
                        "the link direction's first node, or at each flow's sender, with data and ACKs)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (output directory, files, flows, wall time, "
                        "versions; docs/cli.md) and the summary on stderr")
    p.set_defaults(func=cmd_run)


def _seconds(text: str) -> float:
    """A window in seconds, > 0 (argparse names the option on an error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def cmd_run(args: argparse.Namespace) -> int:
    from ..outdir import check_output_dir, output_dir

    # A run does no linear algebra, and OpenBLAS's threads, started when numpy is imported,
    # spin for a while on the second core (about 0.07 s of CPU per run on a 2-core machine).
    # A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    t0 = time.perf_counter()
    path = resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / path.stem
    check_output_dir(out)  # before the simulation, not after it
    added = [] if args.no_plots else plot_monitors(path, args.overrides)
    if added:
        console.detail(f"monitors switched on for the plots: {', '.join(added)}")
    # The added monitors come first, so a --set of the same field would still win (it cannot
    # happen: only fields nobody set are added).
    overrides = [*added, *args.overrides, *_trace_overrides(args)]
    # No pandas: printing the summary, writing the tables (vegaslab.columns), drawing the
    # figures (vegaslab.plots) and --json's flows (Results.table_records) read the core's columns.
    ahead = ImportAhead("vegaslab.results", "pyarrow.parquet", "importlib.metadata",
                         *(() if args.no_plots else ("vegaslab.plots",)))
    trace_error = None
    try:
        # The run directory in the making (swapped in whole at the end) also takes the packet
        # trace, so nothing is written beside it or anywhere else.
        with output_dir(out) as tmp:
            try:
                res = vegaslab.run(path, seed=args.seed, overrides=overrides, progress=console.progress(args),
                                   trace_dir=tmp)
            except vegaslab.TraceError as exc:  # the run stands: write it, then fail
                res, trace_error = exc.results, str(exc).replace(str(tmp), str(out))
                res.meta["trace"]["error"] = str(res.meta["trace"]["error"]).replace(str(tmp), str(out))
            written = show_and_write(res, tmp, out, plots=None if args.no_plots else ahead.module("vegaslab.plots"),
                                      csv=args.csv, plot_format=args.format, window_s=args.throughput_window)
    finally:
        ahead.join()
    say_written(written, out)
    if trace_error is not None:
        console.error(f"vegaslab: {one_line(trace_error)} (the run's tables were written to {out}/)")
        return 1
    wall_s = time.perf_counter() - t0
    console.detail(f"wall time {wall_s:.2f} s, of which the simulation {res.meta.get('wall_time_s') or 0:.3g} s")
    if args.json:
        console.document(_run_document(res, path, out, written, added, wall_s))
    return 0


def _trace_overrides(args: argparse.Namespace) -> list[str]:
    """The ``trace.*`` overrides of ``run --trace``: a name with ``->`` is a link direction,
    any other a flow, ``all`` everything. The file keeps its default name (``trace.tr`` or
    ``trace.pcap``) in the output directory."""
    if not args.trace:
        return []
    names = [] if "all" in args.trace else args.trace
    links = [n for n in names if "->" in n]
    flows = [n for n in names if "->" not in n]
    return [vegaslab.format_override("trace.links", links), vegaslab.format_override("trace.flows", flows),
            f"trace.format={args.trace_format}"]


def plot_monitors(path: Path, overrides: Sequence[str]) -> list[str]:
    """The ``monitor.*`` overrides ``vegaslab run`` adds for its plots: each monitor the scenario
    file's [monitor] table and the ``--set`` overrides leave unset.

    The scenario's monitors are the user's choice and are never overridden (docs/decisions.md,
    "`vegaslab run` adds monitors, never overrides them"). A field written in the file or by
    ``--set``, ``true`` or ``false``, is kept; an unset ``cwnd`` or ``throughput`` is switched on;
    when neither ``queues`` nor ``all_queues`` is given, the queues of the slowest link's two
    directions are monitored (the bottleneck, which is what the queue plot is for; every direction
    of every link would add a sampled queue per access link). A file that is not valid TOML gets
    nothing added: the run then reports its error as it would without the plots."""
    try:
        doc = vegaslab.load_scenario(path)
    except (ScenarioError, OSError):
        return []
    monitor = doc.get("monitor", {})
    if not isinstance(monitor, dict):
        return []  # the core reports the wrong type
    given = set(monitor)
    for item in overrides:
        key = item.partition("=")[0].strip()
        if key == "monitor":
            return []  # the whole table replaced: nothing to fill in
        if key.startswith("monitor."):
            given.add(key[len("monitor."):].split(".")[0].split("[")[0])
    added = [m for m in PLOT_MONITORS if m.split("=")[0][len("monitor."):] not in given]
    if not given & {"queues", "all_queues"}:
        queues = _bottleneck_queues(vegaslab.normalize(path, overrides=list(overrides)))
        if queues:
            added.append(vegaslab.format_override("monitor.queues", queues))
    return added


def _bottleneck_queues(normalized: dict) -> list[str]:
    """``"A->B"`` names of the link directions with the lowest bandwidth of the scenario."""
    nodes = normalized.get("nodes", [])
    directions = []
    for link in normalized.get("links", []):
        a, b = link["a"], link["b"]
        directions.append((link["forward"]["bandwidth_bps"], f"{nodes[a]}->{nodes[b]}"))
        directions.append((link["reverse"]["bandwidth_bps"], f"{nodes[b]}->{nodes[a]}"))
    if not directions:
        return []
    slowest = min(bw for bw, _ in directions)
    return [name for bw, name in directions if bw == slowest]


def _run_document(res, path: Path, out: Path, written: Sequence[Path], added: Sequence[str], wall_s: float) -> dict:
    """``vegaslab run --json`` (docs/cli.md)."""
    meta = res.meta
    return {
        "command": "run",
        "scenario": str(path),
        "out": str(out),
        "files": [str(out / Path(f).name) for f in written],
        "seed": meta.get("seed"),
        "duration_s": meta.get("duration_s"),
        "events": meta.get("events"),
        "sim_wall_s": meta.get("wall_time_s"),
        "wall_s": wall_s,
        "monitors_added": list(added),
        "flows": res.table_records("flows"),
        "vegaslab_version": vegaslab.__version__,
        "core_version": vegaslab.core_version(),
    }


class ImportAhead:
    """Import modules on a background thread, to be used later on the main thread.

    ``vegaslab run`` imports numpy and pyarrow (``vegaslab.results``, ``pyarrow.parquet``), and
    for its plots matplotlib (``vegaslab.plots``), about 0.1-0.4 s each, while the core
    simulates, which releases the GIL (``py.allow_threads`` in crates/vegaslab-py): the imports
    cost no wall time on a machine with a second core. Nothing the run computes depends on
    them. The thread swallows every exception; the main thread imports again where it needs a
    module (:meth:`module`, or a plain import, which waits for the thread's import to finish),
    and a failed import raises there as it would without the thread (Python does not keep a
    module that failed to import), so errors surface exactly as they would without it."""

    def __init__(self, *names: str) -> None:
        self.names = names
        self._thread = threading.Thread(target=self._load, name=f"vegaslab: import {', '.join(names)}", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        for name in self.names:
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - raised again on the main thread
                pass

    def join(self) -> None:
        self._thread.join()

    def module(self, name: str):
        self.join()
        return importlib.import_module(name)


def say_written(written: Sequence[Path], out: Path) -> None:
    """``wrote N files to OUT/``, and each file with ``-v``."""
    console.result(f"\nwrote {len(written)} files to {out}/")
    for f in written:
        console.detail(f"  {out / Path(f).name}")


def show_and_write(res, tmp: Path, out: Path, *, plots: Any = None, csv: bool = False, plot_format: str = "png",
                   window_s: float = 1.0) -> list[Path]:
    """Print a run's summary; write its tables (with CSV copies if ``csv``), meta.json (with
    provenance) and, given ``plots`` (the imported :mod:`vegaslab.plots`), its plots as
    ``plot_format`` files (the throughput plot averaged over ``window_s`` seconds) into ``tmp``,
    the temporary directory that replaces ``out`` once all are written
    (:func:`vegaslab.outdir.output_dir`).

    The plots are started before the tables are written: with a second core idle, the
    costliest figure is drawn in a forked process meanwhile (:func:`vegaslab.plots.start_plots`);
    a figure that cannot be drawn is a one-line :class:`vegaslab.plots.PlotError`, and an
    error while writing stops the children before the temporary directory is removed."""
    console.result(res.format_table)
    for warning in (res.window_warning(), res.route_tie_warning()):
        if warning is not None:
            console.warning(warning)
    if plots is None:
        return res.write_files(tmp, csv=csv)
    with plots.start_plots(res, tmp, format=plot_format, window_s=window_s) as pending:
        written = res.write_files(tmp, csv=csv)
        return written + pending.finish()
