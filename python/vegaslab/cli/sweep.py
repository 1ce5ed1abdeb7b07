"""``vegaslab sweep``: a scenario's ``[sweep]`` into a resumable results store (docs/sweep-format.md).
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import vegaslab

from ..errors import ScenarioError, VegaslabError
from ..figure_formats import FORMATS
from .console import EXIT_INTERRUPTED, console, one_line, say
from .options import FORMATTER, add_set, bad_scheduler, jobs_arg, resolve_scenario, store_error_status, wrap


def add_parser(sub) -> None:
    """The ``sweep`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "sweep", formatter_class=FORMATTER,
        help="run a scenario's [sweep] (axes x seeds) into a resumable results store",
        description=wrap("Expand the [sweep] table of a scenario file (docs/sweep-format.md) into its runs, "
                    "compute the ones the results store DIR lacks (in this process while the sweep's estimated "
                    "work is small, on a local Dask cluster beyond, or on --scheduler), and print what ran. "
                    "Re-running computes only what is missing; --dry-run and --status compute nothing."),
        epilog="""examples:
  vegaslab sweep study.toml --dry-run          # the plan: runs, how many stored, estimated time
  vegaslab sweep study.toml                    # into out/sweep-<scenario id>
  vegaslab sweep study.toml --set sweep.seeds=3 --jobs 2 --out out/study
  vegaslab sweep study.toml --status           # stored / missing / failed
  vegaslab sweep study.toml --plot throughput_bps:alpha --flow f1 --format pdf
  vegaslab sweep study.toml --json -q          # one JSON document on stdout (docs/cli.md)
  vegaslab sweep study.toml --scheduler tcp://10.0.0.1:8786

The store's layout (Parquet, readable by pandas and DuckDB) is in docs/store-format.md;
in Python, vegaslab.sweep(...) returns the tidy results, to_xarray() and plot().
--plot METRIC:PARAM writes DIR/METRIC-vs-PARAM.png: the mean over seeds and its 95%
Student-t confidence interval, clipped to the metric's physical range (docs/sweep-format.md).
Exit status 1 when a run failed (the others are stored), 130 when Ctrl-C or SIGTERM stopped
the sweep (the finished runs are stored; the same command goes on).""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID",
                   help="scenario file with a [sweep] table, or a catalog id")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="results store (default: out/sweep-<scenario id>)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="where the runs go: an existing Dask scheduler, e.g. tcp://host:8786; 'synchronous' (this "
                        "process); 'local' (a local Dask cluster); default: $DASK_SCHEDULER_ADDRESS, else this "
                        "process while the estimated work is small and a local cluster beyond (docs/sweep-format.md)")
    p.add_argument("--jobs", "-j", type=jobs_arg, metavar="N",
                   help="worker processes of the local cluster (default: the number of cores); with --scheduler, "
                        "how many workers to wait for")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true",
                      help="print the plan, how many runs are stored and the estimated time; compute nothing")
    mode.add_argument("--status", action="store_true", help="print stored / missing / failed counts; compute nothing")
    p.add_argument("--plot", action="append", default=[], metavar="METRIC:PARAM",
                   help="after the sweep, write DIR/METRIC-vs-PARAM.png (repeatable), e.g. throughput_bps:alpha")
    p.add_argument("--flow", metavar="NAME", help="the flow a per-flow --plot metric is taken from")
    p.add_argument("--format", choices=FORMATS, default="png",
                   help="file format of the --plot figures (default: png)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (counts, executor, wall times, figures; docs/cli.md) "
                        "and the summary on stderr")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)


def _plot_requests(items: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        metric, sep, param = item.partition(":")
        if not sep or not metric.strip() or not param.strip():
            raise ScenarioError(f"--plot: must be METRIC:PARAM, e.g. throughput_bps:alpha, got {item!r}")
        out.append((metric.strip(), param.strip()))
    return out


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweeps.store import StoreError
    from ..sweeps.results import SweepResults, default_out, load_sweep

    t0 = time.perf_counter()
    plots = _plot_requests(args.plot)
    path = resolve_scenario(args.scenario)
    sw = load_sweep(path, list(args.overrides))
    out = Path(args.out) if args.out else default_out(sw.scenario_id)
    res = SweepResults(sw, out)
    for metric, param in plots:  # every name, before anything runs
        try:
            res.check_plot(metric, param, flow=args.flow)
        except VegaslabError as exc:
            raise ScenarioError(f"--plot {metric}:{param}: {exc}") from None
    try:
        if args.dry_run or args.status:
            return _plan_only(args, sw, out)
        if bad_scheduler(args):
            return 2
        from ..sweeps.results import run_sweep

        with _sigterm_as_interrupt():
            ex = run_sweep(sw, out, scheduler=args.scheduler, workers=args.jobs, progress=console.progress(args))
    except StoreError as exc:  # an unusable or busy --out (2), or a commit that failed (1)
        say(exc)
        return store_error_status(exc)
    console.result(f"{sw.source}: {len(ex.outcomes)} runs: ran {ex.ran}, already stored {ex.stored}, failed {ex.failed}"
                   + (f", interrupted {ex.interrupted_runs}" if ex.interrupted else "")
                   + f" in {ex.wall_s:.1f} s ({ex.executor}); store: {out}")
    failures: list[str] = []
    for o in ex.outcomes:
        if o.status == "failed":
            msg = one_line(o.error.splitlines()[0] if o.error else o.spec.label)
            if msg not in failures:
                failures.append(msg)
                console.error(f"  FAILED {msg}")
    written: list[Path] = []
    if ex.interrupted:  # as for reproduce: the finished runs are stored, the rest is not an error
        console.error(f"vegaslab: interrupted; {ex.ran} finished runs are stored, run the same command to go on")
        status = EXIT_INTERRUPTED
    else:
        res = SweepResults(sw, out, ex)
        for metric, param in plots:
            try:
                written.append(res.save_plot(metric, param, flow=args.flow, format=args.format))
            except VegaslabError as exc:
                raise ScenarioError(f"--plot {metric}:{param}: {exc}") from None
            console.result(f"wrote {written[-1]}")
        status = 1 if ex.failed else 0
    if args.json:
        console.document(_sweep_document(sw, out, ex, failures, written, status, time.perf_counter() - t0))
    return status


def _plan_only(args: argparse.Namespace, sw: Any, out: Path) -> int:
    """``--dry-run`` and ``--status``: what the store holds of the plan; nothing computed."""
    from ..sweeps.results import describe_engine, describe_plan, format_estimate, sweep_status

    st = sweep_status(sw, out)
    if args.dry_run:
        for line in describe_plan(sw):
            console.result(line)
        console.result(f"store {out}: {st.stored} of {st.runs} runs already stored, {st.todo} to compute")
        from ..sweeps.engine import default_workers

        workers = args.jobs or (None if (args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS"))
                                else default_workers())
        console.result(format_estimate(st, workers))
        console.result(describe_engine(st, args.scheduler, args.jobs or default_workers()))
    else:
        console.result(f"{sw.source}: {st.runs} runs in store {out}: stored {st.stored}, missing {st.missing}, "
                       f"failed {st.failed}")
        for msg in st.errors[:5]:
            console.result(f"  failed: {one_line(msg)}")
    if args.json:
        console.document({
            "command": "sweep --dry-run" if args.dry_run else "sweep --status",
            "scenario": str(sw.source), "out": str(out),
            "runs": {"total": st.runs, "stored": st.stored, "missing": st.missing, "failed": st.failed},
            "points": st.points, "seeds": st.seeds,
            "parameters": [{"name": p.name, "path": p.path, "type": p.type, "values": list(p.values)}
                           for p in sw.plan.params],
            "errors": list(st.errors),
            "estimated_compute_s": _seconds(st.estimate_s),
            "exit_status": 0,
        })
    return 0


def _seconds(value: float | None) -> float | None:
    """A wall time for the JSON document: to the millisecond (what was measured, not the
    float noise of sums)."""
    return None if value is None else round(float(value), 3)


def _sweep_document(sw: Any, out: Path, ex: Any, failures: list[str], written: list[Path], status: int,
                    wall_s: float) -> dict:
    """``vegaslab sweep --json`` (docs/cli.md)."""
    return {
        "command": "sweep",
        "scenario": str(sw.source),
        "out": str(out),
        "runs": {"total": len(ex.outcomes), "ran": ex.ran, "stored": ex.stored, "failed": ex.failed,
                 "interrupted": ex.interrupted_runs},
        "interrupted": bool(ex.interrupted),
        "failures": failures,
        "executor": ex.executor,
        "estimated_work_s": _seconds(ex.estimate_s),
        "runs_wall_s": _seconds(sum(o.wall_s for o in ex.outcomes if o.status == "ran")),
        "sweep_wall_s": _seconds(ex.wall_s),
        "wall_s": _seconds(wall_s),
        "figures": [str(p) for p in written],
        "exit_status": status,
        "vegaslab_version": vegaslab.__version__,
        "core_version": vegaslab.core_version(),
    }


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Meanwhile, SIGTERM (``kill``, a batch system's stop) stops the sweep as Ctrl-C does: the
    finished runs are committed, the rest reported as interrupted, exit status 130. Only in
    the main thread (the only one where a handler may be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def as_sigint(signum: int, frame: Any) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job): SIGTERM still stops the sweep
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, as_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
