"""``vegaslab sweep``: a scenario's ``[sweep]`` into a resumable results store (docs/sweep-format.md).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Sequence

from ..errors import ScenarioError, VegaslabError
from .console import EXIT_INTERRUPTED, console, one_line, say
from .options import FORMATTER, add_set, bad_scheduler, jobs_arg, resolve_scenario, store_error_status, wrap


def add_parser(sub) -> None:
    """The ``sweep`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "sweep", formatter_class=FORMATTER,
        help="run a scenario's [sweep] (axes x seeds) into a resumable results store",
        description=wrap("Expand the [sweep] table of a scenario file (docs/sweep-format.md) into its runs, "
                    "compute the ones the results store DIR lacks on Dask (a local cluster, or --scheduler), "
                    "and print what ran. Re-running computes only what is missing; --dry-run and --status "
                    "compute nothing."),
        epilog="""examples:
  vegaslab sweep study.toml --dry-run          # the plan: runs, how many stored, estimated time
  vegaslab sweep study.toml                    # into out/sweep-<scenario id>
  vegaslab sweep study.toml --set sweep.seeds=3 --jobs 2 --out out/study
  vegaslab sweep study.toml --status           # stored / missing / failed
  vegaslab sweep study.toml --plot throughput_bps:alpha --flow f1
  vegaslab sweep study.toml --scheduler tcp://10.0.0.1:8786

The store's layout (Parquet, readable by pandas and DuckDB) is in docs/store-format.md;
in Python, vegaslab.sweep(...) returns the tidy results, to_xarray() and plot().
--plot METRIC:PARAM writes DIR/METRIC-vs-PARAM.png: the mean over seeds and its 95%
Student-t confidence interval. Exit status 1 when a run failed (the others are stored).""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID",
                   help="scenario file with a [sweep] table, or a catalog id")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="results store (default: out/sweep-<scenario id>)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, "
                        "else a local cluster); 'synchronous' runs in this process")
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
    from ..sweeps.results import (SweepResults, default_out, describe_plan, format_estimate, load_sweep, run_sweep,
                                  sweep_status)

    plots = _plot_requests(args.plot)
    path = resolve_scenario(args.scenario)
    sw = load_sweep(path, list(args.overrides))
    out = Path(args.out) if args.out else default_out(sw.scenario_id)
    names = [prm.name for prm in sw.plan.params]
    for metric, param in plots:  # before anything runs
        if param not in names:
            raise ScenarioError(f"--plot {metric}:{param}: {param!r} is not a swept parameter of {sw.source}; "
                                f"the parameters are {', '.join(names) or '(none)'}")
    try:
        if args.dry_run or args.status:
            st = sweep_status(sw, out)
            if args.dry_run:
                for line in describe_plan(sw):
                    console.result(line)
                console.result(f"store {out}: {st.stored} of {st.runs} runs already stored, {st.todo} to compute")
                from ..sweeps.engine import default_workers

                workers = args.jobs or (None if (args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS"))
                                        else default_workers())
                console.result(format_estimate(st, workers))
            else:
                console.result(f"{sw.source}: {st.runs} runs in store {out}: stored {st.stored}, missing {st.missing}, "
                      f"failed {st.failed}")
                for msg in st.errors[:5]:
                    console.result(f"  failed: {one_line(msg)}")
            return 0
        if bad_scheduler(args):
            return 2
        ex = run_sweep(sw, out, scheduler=args.scheduler, workers=args.jobs, progress=console.progress(args))
    except StoreError as exc:  # an unusable or busy --out (2), or a commit that failed (1)
        say(exc)
        return store_error_status(exc)
    console.result(f"{sw.source}: {len(ex.outcomes)} runs: ran {ex.ran}, already stored {ex.stored}, failed {ex.failed} "
          f"in {ex.wall_s:.1f} s ({ex.executor}); store: {out}")
    if ex.interrupted:  # as for reproduce: the finished runs are stored, the rest is not an error
        console.error(f"vegaslab: interrupted; {ex.ran} finished runs are stored, run the same command to go on")
        return EXIT_INTERRUPTED
    seen: set[str] = set()
    for o in ex.outcomes:
        if o.status == "failed":
            msg = one_line(o.error.splitlines()[0] if o.error else o.spec.label)
            if msg not in seen:
                seen.add(msg)
                console.error(f"  FAILED {msg}")
    if plots:
        res = SweepResults(sw, out, ex)
        for metric, param in plots:
            try:
                written = res.save_plot(metric, param, flow=args.flow)
            except VegaslabError as exc:
                raise ScenarioError(f"--plot {metric}:{param}: {exc}") from None
            console.result(f"wrote {written}")
    return 1 if ex.failed or ex.interrupted else 0
