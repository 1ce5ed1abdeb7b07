"""The ``vegaslab`` command line: run | sweep | reproduce | bench.

Every subcommand has ``--help`` with examples. Exit status: 0 ok, 1 simulation failed,
2 bad input (scenario, file, arguments, output directory), 130 interrupted (Ctrl-C).

Errors are one line on stderr, ``vegaslab: <file or option>: <what is wrong>``, never a Python
traceback (set ``VEGASLAB_DEBUG=1`` to get one for an unexpected error); a usage error prints
the usage of the (sub)command it was made on first. Output directories are checked before
anything is simulated, and written all or nothing (:func:`vegaslab.outdir.output_dir`).

Conventions, all in :class:`_Console`: ``-q`` prints errors only, ``-v`` adds
per-run detail on stderr; ``run --json`` and ``reproduce --json`` print one JSON document on
stdout (docs/cli.md) and send the human text to stderr; progress bars are drawn only when
stderr is a terminal; a closed stdout (``vegaslab run x | head -1``) stops the printing, not
the command.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import vegaslab
from ..simulation import MAX_SEED
from ..errors import ScenarioError, VegaslabError
from .. import interrupts

#: Monitors ``vegaslab run`` switches on for its plots when the scenario (with its ``--set``
#: overrides) leaves them unset; the queue plot's default is :func:`_bottleneck_queues`.
PLOT_MONITORS = ("monitor.cwnd=true", "monitor.throughput=true")
#: Exit status after stdout was closed under a command that had not finished printing (the
#: status a shell reports for a process ended by SIGPIPE, 128 + 13).
EXIT_BROKEN_PIPE = 141
#: Exit status after Ctrl-C (SIGINT; 128 + 2, as a shell reports a process it ended).
EXIT_INTERRUPTED = interrupts.EXIT_INTERRUPTED
#: The benchmark scenario, relative to the built-in catalog (vegaslab/catalog_data/).
BENCH_SCENARIO = "bench/grids-net2.toml"
BOTTLENECK = "R1->R2"

_FORMATTER = argparse.RawDescriptionHelpFormatter


class _Console:
    """Where the command line's words go, set once from ``-q``/``-v``/``--json``.

    One small switchboard instead of ``print`` calls that each decide. :meth:`result` is the human
    output (summaries, tables, "wrote ..."): stdout, or stderr under ``--json`` (stdout then
    carries only the JSON document), nothing under ``-q``. :meth:`detail` is ``-v``'s per-run
    detail, on stderr. :meth:`error` always prints. :meth:`document` writes the ``--json``
    document, also under ``-q``.

    A reader that goes away (``vegaslab run x | head -1``) is not an error of the command:
    on ``BrokenPipeError`` stdout is pointed at /dev/null (the pattern the Python docs give
    for SIGPIPE) and the command goes on, so a run still writes its output directory and
    exits 0."""

    QUIET, NORMAL, VERBOSE = 0, 1, 2

    def __init__(self) -> None:
        self.reset()

    def reset(self, level: int = 1, json_mode: bool = False) -> None:
        self.level = level
        self.json = json_mode
        self.documented = False
        self.last_error: str | None = None

    def _write(self, stream, text: str) -> None:
        try:
            stream.write(text + "\n")
            stream.flush()
        except BrokenPipeError:
            _silence(stream)

    def result(self, text: str | Callable[[], str] = "") -> None:
        """Print a result; ``text`` may be a callable that makes it, called only when printed
        (a 20,000-flow summary took 1.5 s to format, wasted under ``-q``)."""
        if self.level >= self.NORMAL:
            self._write(sys.stderr if self.json else sys.stdout, text() if callable(text) else text)

    def detail(self, text: str) -> None:
        if self.level >= self.VERBOSE:
            self._write(sys.stderr, text)

    def warning(self, text: str) -> None:
        """Something the user should know about the results (not an error; ``text`` starts with
        "warning:"): stderr, unless -q."""
        if self.level >= self.NORMAL:
            self._write(sys.stderr, f"vegaslab: {text}")

    def error(self, text: str) -> None:
        self.last_error = text.removeprefix("vegaslab: ")
        self._write(sys.stderr, text)

    def document(self, doc: dict) -> None:
        self.documented = True
        self._write(sys.stdout, json.dumps(_jsonable(doc), indent=2, allow_nan=False))

    def progress(self, args: argparse.Namespace) -> bool:
        """Draw progress bars? Not under ``-q`` or ``--no-progress``, and only on a terminal:
        a redirected stderr (a log file, a pipe) gets no ``\\r`` frames."""
        if self.level < self.NORMAL or getattr(args, "no_progress", False):
            return False
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False


_out = _Console()


def _silence(stream) -> None:
    """Point the file descriptor of ``stream`` at /dev/null (its reader is gone)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): drop it
        pass


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and NaN/infinity as ``null``, so the
    document is strict JSON (docs/cli.md)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    try:  # pandas' NA and NaT
        import pandas as pd

        if pd.isna(value):
            return None
    except (ImportError, TypeError, ValueError):
        pass
    return str(value)


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as the usage of the (sub)command the error was made on, then
    one line (``vegaslab: argument --seed: ...``); exit 2.

    Each sub-parser rejects the arguments it does not know itself (argparse would leave them
    to the top-level parser, whose usage says nothing about ``run``'s options)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(2, f"vegaslab: {message} (see `{self.prog} --help`)\n")


def _add_verbosity(p: argparse.ArgumentParser, *, top: bool) -> None:
    """``-q``/``-v``, on the top-level parser and every sub-parser (so that both
    ``vegaslab -q run x`` and ``vegaslab run x -q`` work); a sub-parser's default is
    SUPPRESS, so it does not undo the top-level's."""
    default = {} if top else {"default": argparse.SUPPRESS}
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="print errors only", **default)
    g.add_argument("-v", "--verbose", action="store_true",
                   help="also print per-run detail (monitors, files, timings) on stderr", **default)


def _seed(text: str) -> int:
    """``--seed``: the core's range of ``run.seed``, 0 .. 2**63-1."""
    try:
        value = int(text, 0) if text.strip().lower().startswith("0x") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 2**63-1 ({MAX_SEED}), got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"must be from 0 to 2**63-1 ({MAX_SEED}, the range of run.seed), got {text}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


#: Most rounds ``vegaslab bench --repeat`` runs.
MAX_BENCH_REPEAT = 100


def _repeat(text: str) -> int:
    """``bench --repeat``: 1 .. MAX_BENCH_REPEAT rounds."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_BENCH_REPEAT}, got {text!r}") from None
    if not 1 <= value <= MAX_BENCH_REPEAT:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_BENCH_REPEAT}, got {text}")
    return value


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=88)


class _VersionAction(argparse.Action):
    """``--version``: the package version and the compiled core's (imported only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        core = vegaslab.core_version()
        print(f"vegaslab {vegaslab.__version__} (core {core or 'not built'})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one sub-parser per command."""
    parser = _Parser(
        prog="vegaslab",
        description=_wrap("Packet-level simulation of TCP Vegas and its variants, with paper reproductions."),
        formatter_class=_FORMATTER,
        epilog="""examples:
  vegaslab run va-reroute
  vegaslab run va-reroute --set 'flows[0].cc=newreno' --out out/reroute-newreno
  vegaslab sweep study.toml --dry-run
  vegaslab reproduce --list
  vegaslab reproduce va-buffer
  vegaslab bench --duration 20s --no-ns2

Scenario format: docs/scenario-format.md. Results tables: docs/results-format.md.
Output conventions (-q, -v, --json): docs/cli.md.
Run `vegaslab COMMAND --help` for each command's options.""",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the package and core versions and exit")
    _add_verbosity(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run", formatter_class=_FORMATTER,
        help="run one scenario, print its summary, write tables and plots",
        description=_wrap("Run one scenario file, print the per-flow summary, and write every results "
                    "table as Parquet (no CSV unless --csv), meta.json and PNG plots (cwnd, "
                    "throughput, queue) to DIR."),
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
throughput per sample bin and its running mean; queue.png, the busiest monitored queues. With
more than 12 flows, the cwnd plot leaves out ssthresh and the throughput plot draws the running
means alone; every sample is in series_flows.parquet.""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID",
                   help="scenario file, or a catalog id such as va-reroute (vegaslab reproduce --list)")
    _add_set(p)
    p.add_argument("--seed", type=_seed, metavar="N", help="random seed (overrides run.seed), 0 .. 2**63-1")
    p.add_argument("--out", metavar="DIR", help="output directory (default: out/<scenario stem>)")
    p.add_argument("--no-plots", action="store_true", help="write tables only; leave the monitors off")
    p.add_argument("--csv", action="store_true",
                   help="also write each table as CSV (the same rows and columns as its Parquet file); "
                        "without it, Parquet only")
    p.add_argument("--trace", action="append", default=[], metavar="LINK|FLOW",
                   help="write a per-packet trace of this link direction ('R1->R2': quote it) or flow "
                        "(repeatable; 'all' for every one) into DIR/trace.tr, ns-2's format "
                        "(docs/scenario-format.md, \"Packet traces\")")
    p.add_argument("--trace-format", choices=("ns2", "pcap"), default="ns2",
                   help="with --trace: ns-2's text format (default) or pcap (DIR/trace.pcap)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (output directory, files, flows, wall time, "
                        "versions; docs/cli.md) and the summary on stderr")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "sweep", formatter_class=_FORMATTER,
        help="run a scenario's [sweep] (axes x seeds) into a resumable results store",
        description=_wrap("Expand the [sweep] table of a scenario file (docs/sweep-format.md) into its runs, "
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
    _add_set(p)
    p.add_argument("--out", metavar="DIR", help="results store (default: out/sweep-<scenario id>)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, "
                        "else a local cluster); 'synchronous' runs in this process")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
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

    p = sub.add_parser(
        "reproduce", formatter_class=_FORMATTER,
        help="run catalog experiments in parallel, compare with the papers, write an HTML report",
        description=_wrap("Run every variant and seed of the chosen catalog entries on Dask, over local cores "
                    "or an existing cluster (--scheduler), the engine `vegaslab sweep` uses (finished runs "
                    "are kept in the results store DIR/store/ and reused), compare with the published "
                    "numbers, check each entry's claims, and write DIR/index.html (a self-contained "
                    "report), DIR/summary.md, DIR/summary.csv and DIR/results/ (Parquet tables)."),
        epilog=f"""examples:
  vegaslab reproduce --list                # entries and papers, with their numbers of runs
  vegaslab reproduce                       # {' '.join(_default_ids())}
  vegaslab reproduce vegas-a --quick       # every entry of the Vegas-A paper, shortened
  vegaslab reproduce --all --jobs 2 --out report
  vegaslab reproduce va-file va-buffer --seed 2 --out out/seed2
  vegaslab reproduce va-buffer --json -q   # the verdicts as one JSON document (docs/cli.md)

Names are entry ids (a file's meta.id or stem) or paper names (meta.paper: vegas-a, adavegas,
vegas-grids, vegas-lte, rovegas); --list shows them. The catalog ships inside the package
($VEGASLAB_CATALOG names a directory of your own instead); the format is in
docs/catalog-format.md. Exit status 1 when a run failed (the others still ran and the report
is written); a claim that fails is a finding, not an error.""",
    )
    p.add_argument("ids", nargs="*", metavar="PAPER|ID",
                   help=f"entry ids or paper names (default: {' '.join(_default_ids())})",
                   default=_DefaultIds(_default_ids()))
    p.add_argument("--all", dest="all_entries", action="store_true", help="every entry of the catalog")
    p.add_argument("--list", dest="list_entries", action="store_true",
                   help="list the entries (all, or the named ones) by paper with their numbers of runs; run nothing")
    p.add_argument("--quick", action="store_true",
                   help="apply each entry's [meta.quick] (shorter runs, fewer seeds) for a first look")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
                   help="worker processes of the local cluster (default: the number of cores); with --scheduler, "
                        "how many workers to wait for")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, "
                        "else a local cluster); its workers need only `pip install vegaslab`")
    p.add_argument("--out", metavar="DIR", default="out/reproduce", help="output directory (default: %(default)s)")
    p.add_argument("--seed", type=_seed, metavar="N",
                   help="run every variant once with this seed (0 .. 2**63-1) instead of the entry's seeds")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (none is drawn when stderr "
                                                              "is not a terminal)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (per entry the published and our numbers and "
                        "the claims' verdicts, the report's path; docs/cli.md), the rest on stderr")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser(
        "bench", formatter_class=_FORMATTER,
        help="benchmark the simulator (and ns-2, if installed) on grids network 2",
        description=_wrap("Run the benchmark scenario (the catalog's bench/grids-net2: 50-pair dumbbell, "
                    "155 Mbit/s bottleneck, 25 Reno + 25 Vegas flows, 200 s) in a child process and "
                    "print wall time, events/s, bottleneck packets per wall-second, peak memory and "
                    "the Reno/Vegas throughput split; then the whole `vegaslab run` command on it, "
                    "tables only and with the default plots (wall time from start to exit); then, "
                    "with --ns2 and `ns` on PATH, the same scenario in ns-2 and the ratios of the "
                    "wall times."),
        epilog="""examples:
  vegaslab bench                           # full 200 s, with ns-2 if available
  vegaslab bench --duration 20 --no-ns2    # a quick look
  vegaslab bench --out out/bench           # also writes out/bench/bench.json""",
    )
    p.add_argument("--ns2", action=argparse.BooleanOptionalAction, default=True,
                   help="also run ns-2 when `ns` is on PATH (default: on)")
    p.add_argument("--end-to-end", action=argparse.BooleanOptionalAction, default=True,
                   help="also time `vegaslab run --no-plots` and `vegaslab run` (default plots) on the "
                        "scenario, each a fresh process, and give their ratios to ns-2 (default: on)")
    p.add_argument("--repeat", metavar="N", type=_repeat, default=3,
                   help="rounds of measurements, each command once per round; each command's "
                        f"median is reported and the ratios are of medians (default: 3; 1-{MAX_BENCH_REPEAT})")
    p.add_argument("--duration", metavar="S", help="override run.duration, e.g. 20 or 20s")
    p.add_argument("--scenario", metavar="FILE.toml|ID",
                   help="benchmark scenario file or catalog id (default: the built-in catalog's bench/grids-net2)")
    _add_set(p)
    p.add_argument("--out", metavar="DIR", help="write bench.json here")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "kernel", formatter_class=_FORMATTER,
        help="register, list and unregister the BPF congestion controls in this kernel (root)",
        description=_wrap("The kernel versions of the simulator's Linux flavour (Vegas, Vegas-A, AdaVegas, "
                    "Vegas_1, Vegas_8) as BPF struct_ops congestion controls named vl_*. Parameters take "
                    "the names of a scenario's params table and are checked by the same reader. Needs "
                    "root, the kernel's BTF, clang and bpftool (scripts/install-bpf.sh)."),
        epilog="""examples:
  sudo vegaslab kernel register vegas-a --set alpha=2 --set beta=4
  sudo vegaslab kernel list
  sudo vegaslab kernel unregister vl_vegas_a""",
    )
    ksub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    k = ksub.add_parser("register", help="register (or replace) one algorithm")
    k.add_argument("cc", choices=sorted(_kernel_algorithms()), help="the scenario's cc name")
    k.add_argument("--set", dest="params", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter as in the scenario's params table, e.g. --set alpha=2")
    k.set_defaults(func=cmd_kernel_register)
    k = ksub.add_parser("list", help="the registered struct_ops congestion controls")
    k.set_defaults(func=cmd_kernel_list)
    k = ksub.add_parser("unregister", help="unregister one by its kernel name (vl_...)")
    k.add_argument("name")
    k.set_defaults(func=cmd_kernel_unregister)

    p = sub.add_parser(
        "testbed", formatter_class=_FORMATTER,
        help="run a scenario with real TCP between network namespaces (root)",
        description=_wrap("Build the scenario's network from namespaces (sender, router, receiver), "
                    "shape its one shared bottleneck with htb + pfifo, delay every path with a TUN "
                    "delay line, run its TCP flows with the kernel's congestion controls (reno, "
                    "cubic, and vegaslab's BPF Vegas family in the Linux flavour), sample them every "
                    "10 ms and write the same tables as `vegaslab run`. Dumbbells and chains; other "
                    "shapes are refused with the reason."),
        epilog="""examples:
  sudo vegaslab testbed run va-reroute --set run.duration=30s --out out/tb-reroute""",
    )
    tsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    t = tsub.add_parser("run", help="run one scenario on the testbed")
    t.add_argument("scenario", metavar="FILE.toml|ID")
    _add_set(t)
    t.add_argument("--out", metavar="DIR", help="output directory (default: out/testbed-<scenario stem>)")
    _add_stack(t)
    t.set_defaults(func=cmd_testbed_run)

    p = sub.add_parser(
        "robustness", formatter_class=_FORMATTER,
        help="how robust are the papers' conclusions? run the sensitivity studies",
        description=_wrap("Run the robustness studies (docs/robustness-format.md): for each, one claim of a "
                    "catalog entry is judged per seed at every level of the assumptions the paper leaves "
                    "open, one at a time and in pairs, on the engine `reproduce` uses (the runs go into "
                    "DIR/store/, shared with `reproduce --out DIR`; a second call recomputes nothing). "
                    "Each study's default set-up also runs in ns-2.35 (first seed; cached in DIR/store/ns2/) "
                    "where the bridge can express it. Writes DIR/robustness/<entry>.json and a figure per "
                    "factor, DIR/robustness.md (every study saved in DIR: the verdict table, a sentence and a "
                    "table per study), and updates the section \"How robust are the papers' conclusions?\" "
                    "of DIR/index.html when `reproduce` wrote one there."),
        epilog="""examples:
  vegaslab robustness                          # every built-in study, into out/reproduce
  vegaslab robustness va-buffer --jobs 2
  vegaslab robustness --studies my-studies/ --out out/mine
  vegaslab robustness my-study.toml --out out/mine

Every study file is checked, and every run it plans resolved by the simulator, before anything
runs: a bad one exits 2 naming its file and field. A study's verdict is "robust", "holds only
under a narrow set-up" or "not reproducible with any plausible set-up"; "error" when a run
failed or a claim could not be judged (exit 1).""",
    )
    p.add_argument("ids", nargs="*", metavar="ID|FILE.toml",
                   help="entries whose studies to run, or study files (default: every study)")
    p.add_argument("--studies", metavar="DIR", help="a directory of study files (default: the built-in ones)")
    p.add_argument("--out", metavar="DIR", default="out/reproduce", help="output directory (default: %(default)s)")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
                   help="worker processes of the local cluster (default: the number of cores)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="an existing Dask scheduler, e.g. tcp://host:8786; 'synchronous' runs in this process")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-ns2", action="store_true", help="skip the ns-2.35 runs of the default set-ups")
    p.set_defaults(func=cmd_robustness)

    p = sub.add_parser(
        "compare", formatter_class=_FORMATTER,
        help="run a scenario in the simulator and in the kernel, side by side (root)",
        description=_wrap("Run the scenario in the simulator and on the namespace testbed (`vegaslab "
                    "testbed run`) and write an HTML report: cwnd, RTT and throughput overlaid per flow, "
                    "and a table of throughput, mean RTT and retransmissions with kernel / simulator "
                    "ratios. Give the Vegas-family flows flavour = \"linux\" (the kernel versions' twin)."),
        epilog="""examples:
  sudo vegaslab compare examples/kernel/b-vegas-reno.toml --kernel --out out/compare-b""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID")
    p.add_argument("--kernel", action="store_true", required=True,
                   help="compare with the kernel (the only comparison so far; required)")
    _add_set(p)
    p.add_argument("--out", metavar="DIR", help="report directory (default: out/compare-<scenario stem>)")
    _add_stack(p)
    p.set_defaults(func=cmd_compare)
    _verbosity_everywhere(parser)
    return parser


def _verbosity_everywhere(parser: argparse.ArgumentParser) -> None:
    """``-q``/``-v`` on every sub-parser, nested ones (``kernel register``) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                _add_verbosity(sub, top=False)
                _verbosity_everywhere(sub)


def cmd_compare(args) -> int:
    from ..testbed.compare import compare

    path = _resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"compare-{path.stem}"
    c = compare(path, overrides=list(args.overrides), out=out, stack=_stack(args))
    _out.result(c.table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    _out.result(f"\nwrote {c.report}")
    return 0


def cmd_testbed_run(args) -> int:
    from ..outdir import check_output_dir, output_dir
    from ..testbed.run import run as testbed_run

    path = _resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"testbed-{path.stem}"
    check_output_dir(out)
    res = testbed_run(path, overrides=list(args.overrides), stack=_stack(args))
    with output_dir(out) as tmp:
        written = _show_and_write(res, tmp, out)
    _say_written(written, out)
    return 0


def _kernel_algorithms():
    from ..kernel import ALGORITHMS

    return ALGORITHMS


def _param_value(text: str):
    """A --set value: an integer, a number, or else the string itself."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def cmd_kernel_register(args) -> int:
    from .. import kernel

    params = {}
    for item in args.params:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise kernel.KernelError(f"--set: expected KEY=VALUE, got {item!r}")
        params[key.strip()] = _param_value(value.strip())
    _out.result(str(kernel.register(args.cc, **params)))
    return 0


def cmd_kernel_list(args) -> int:
    from .. import kernel

    for name in kernel.registered():
        _out.result(name)
    return 0


def cmd_kernel_unregister(args) -> int:
    from .. import kernel

    kernel.unregister(args.name)
    return 0


def _add_stack(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", dest="stack", action="append", default=[], metavar="NAME=on|off",
                   help="switch a kernel TCP behaviour for the testbed run (repeatable): sack, delayed_ack "
                        "(default: on, as Linux); e.g. --stack delayed_ack=off makes the receiver ACK every "
                        "segment, as the simulator's sink does")


def _stack(args):
    from ..testbed.stack import Stack

    return Stack.parse(args.stack)


def _add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field (repeatable), e.g. --set 'flows[0].cc=newreno' "
                        "(quoted: brackets are shell patterns)")


class _DefaultIds(list):
    """The default of ``reproduce``'s names, told apart from the same names typed out: ``--list``
    without names lists the whole catalog, not the three default entries."""


def _default_ids() -> Sequence[str]:
    from ..study.defaults import DEFAULT_IDS  # not vegaslab.catalog: 14 ms more per command

    return DEFAULT_IDS


def _resolve_scenario(name: str) -> Path:
    """A scenario file path, or the file of a catalog entry with that id."""
    p = Path(name)
    if p.exists():  # a file (read errors are reported when it is read) or a directory
        if p.is_dir():
            raise ScenarioError(f"{p}: is a directory, not a scenario file")
        return p
    from ..study.catalog import load_entry

    try:
        return load_entry(name).path
    except KeyError:
        raise FileNotFoundError(f"{name}: no such scenario file and no catalog entry with that id") from None


# ---------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    from ..outdir import check_output_dir, output_dir

    # A run does no linear algebra, and OpenBLAS's threads, started when numpy is imported,
    # spin for a while on the second core (about 0.07 s of CPU per run on a 2-core machine).
    # A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    t0 = time.perf_counter()
    path = _resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / path.stem
    check_output_dir(out)  # before the simulation, not after it
    added = [] if args.no_plots else plot_monitors(path, args.overrides)
    if added:
        _out.detail(f"monitors switched on for the plots: {', '.join(added)}")
    # The added monitors come first, so a --set of the same field would still win (it cannot
    # happen: only fields nobody set are added).
    overrides = [*added, *args.overrides, *_trace_overrides(args)]
    # No pandas: printing the summary, writing the tables (vegaslab.columns), drawing the
    # figures (vegaslab.plots) and --json's flows (Results.table_records) read the core's columns.
    ahead = _ImportAhead("vegaslab.results", "pyarrow.parquet", "importlib.metadata",
                         *(() if args.no_plots else ("vegaslab.plots",)))
    trace_error = None
    try:
        # The run directory in the making (swapped in whole at the end) also takes the packet
        # trace, so nothing is written beside it or anywhere else.
        with output_dir(out) as tmp:
            try:
                res = vegaslab.run(path, seed=args.seed, overrides=overrides, progress=_out.progress(args),
                                   trace_dir=tmp)
            except vegaslab.TraceError as exc:  # the run stands: write it, then fail
                res, trace_error = exc.results, str(exc).replace(str(tmp), str(out))
                res.meta["trace"]["error"] = str(res.meta["trace"]["error"]).replace(str(tmp), str(out))
            written = _show_and_write(res, tmp, out, plots=None if args.no_plots else ahead.module("vegaslab.plots"),
                                      csv=args.csv)
    finally:
        ahead.join()
    _say_written(written, out)
    if trace_error is not None:
        _out.error(f"vegaslab: {_one_line(trace_error)} (the run's tables were written to {out}/)")
        return 1
    wall_s = time.perf_counter() - t0
    _out.detail(f"wall time {wall_s:.2f} s, of which the simulation {res.meta.get('wall_time_s') or 0:.3g} s")
    if args.json:
        _out.document(_run_document(res, path, out, written, added, wall_s))
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


class _ImportAhead:
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


def _say_written(written: Sequence[Path], out: Path) -> None:
    """``wrote N files to OUT/``, and each file with ``-v``."""
    _out.result(f"\nwrote {len(written)} files to {out}/")
    for f in written:
        _out.detail(f"  {out / Path(f).name}")


def _show_and_write(res, tmp: Path, out: Path, *, plots: Any = None, csv: bool = False) -> list[Path]:
    """Print a run's summary; write its tables (with CSV copies if ``csv``), meta.json (with
    provenance) and, given ``plots`` (the imported :mod:`vegaslab.plots`), its plots into
    ``tmp``, the temporary directory that replaces ``out`` once all are written
    (:func:`vegaslab.outdir.output_dir`).

    The plots are started before the tables are written: with a second core idle, the
    costliest figure is drawn in a forked process meanwhile (:func:`vegaslab.plots.start_plots`);
    a figure that cannot be drawn is a one-line :class:`vegaslab.plots.PlotError`, and an
    error while writing stops the children before the temporary directory is removed."""
    _out.result(res.format_table)
    warning = res.window_warning()
    if warning is not None:
        _out.warning(warning)
    if plots is None:
        return res.write_files(tmp, csv=csv)
    with plots.start_plots(res, tmp) as pending:
        written = res.write_files(tmp, csv=csv)
        return written + pending.finish()


# ---------------------------------------------------------------------- sweep


def _plot_requests(items: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        metric, sep, param = item.partition(":")
        if not sep or not metric.strip() or not param.strip():
            raise ScenarioError(f"--plot: must be METRIC:PARAM, e.g. throughput_bps:alpha, got {item!r}")
        out.append((metric.strip(), param.strip()))
    return out


def _store_error_status(exc: BaseException) -> int:
    """The exit status of a store error (docs/cli.md): 1 when a commit could not be written
    (disk full: the runs failed), else 2 (the store is not one this version can use, is
    locked by another writer, or holds something planted: bad input)."""
    from ..sweeps.store import StoreWriteError

    return 1 if isinstance(exc, StoreWriteError) else 2


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweeps.store import StoreError
    from ..sweeps.results import (SweepResults, default_out, describe_plan, format_estimate, load_sweep, run_sweep,
                                  sweep_status)

    plots = _plot_requests(args.plot)
    path = _resolve_scenario(args.scenario)
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
                    _out.result(line)
                _out.result(f"store {out}: {st.stored} of {st.runs} runs already stored, {st.todo} to compute")
                from ..sweeps.engine import default_workers

                workers = args.jobs or (None if (args.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS"))
                                        else default_workers())
                _out.result(format_estimate(st, workers))
            else:
                _out.result(f"{sw.source}: {st.runs} runs in store {out}: stored {st.stored}, missing {st.missing}, "
                      f"failed {st.failed}")
                for msg in st.errors[:5]:
                    _out.result(f"  failed: {_one_line(msg)}")
            return 0
        if _bad_scheduler(args):
            return 2
        ex = run_sweep(sw, out, scheduler=args.scheduler, workers=args.jobs, progress=_out.progress(args))
    except StoreError as exc:  # an unusable or busy --out (2), or a commit that failed (1)
        _say(exc)
        return _store_error_status(exc)
    _out.result(f"{sw.source}: {len(ex.outcomes)} runs: ran {ex.ran}, already stored {ex.stored}, failed {ex.failed} "
          f"in {ex.wall_s:.1f} s ({ex.executor}); store: {out}")
    if ex.interrupted:  # as for reproduce: the finished runs are stored, the rest is not an error
        _out.error(f"vegaslab: interrupted; {ex.ran} finished runs are stored, run the same command to go on")
        return EXIT_INTERRUPTED
    seen: set[str] = set()
    for o in ex.outcomes:
        if o.status == "failed":
            msg = _one_line(o.error.splitlines()[0] if o.error else o.spec.label)
            if msg not in seen:
                seen.add(msg)
                _out.error(f"  FAILED {msg}")
    if plots:
        res = SweepResults(sw, out, ex)
        for metric, param in plots:
            try:
                written = res.save_plot(metric, param, flow=args.flow)
            except VegaslabError as exc:
                raise ScenarioError(f"--plot {metric}:{param}: {exc}") from None
            _out.result(f"wrote {written}")
    return 1 if ex.failed or ex.interrupted else 0


def _chosen_studies(args: argparse.Namespace) -> list:
    """The studies to run: each ``FILE.toml`` given, and the studies of ``--studies`` (or the
    built-in ones) for each entry id given (all of them when none is); every study file read
    and checked (:class:`vegaslab.robustness.StudyError`, a ``ValueError`` for an unknown id)."""
    from ..study import robustness as rb

    files = [a for a in args.ids if a.endswith(".toml")]
    ids = [a for a in args.ids if not a.endswith(".toml")]
    chosen = [rb.load_study(f) for f in files]
    if ids or not files:
        studies = rb.list_studies(args.studies)
        known = {s.entry for s in studies}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ValueError(f"no study for {unknown[0]!r} (studies: {', '.join(sorted(known)) or 'none'})")
        chosen += [s for s in studies if not ids or s.entry in ids]
    rb.one_study_per_entry(chosen)
    return chosen


def cmd_robustness(args: argparse.Namespace) -> int:
    from ..study import robustness as rb
    from .. import safe_io
    from ..outdir import check_output_dir
    from ..report.robustness import splice
    from ..sweeps.store import StoreError

    # Every study file is read and planned (the core resolves every run) before anything runs
    # or is written: a bad one stops the command with its file and field (exit 2).
    try:
        studies = _chosen_studies(args)
        plans = [rb.plan(st) for st in studies]
    except (rb.StudyError, ValueError) as exc:
        _say(exc)
        return 2
    if _bad_scheduler(args):
        return 2
    out = Path(args.out)
    check_output_dir(out, replace=False)
    try:
        out.mkdir(parents=True, exist_ok=True)
        directory = safe_io.make_dir(out, "robustness")
        safe_io.make_dir(out, "store")  # a link planted as DIR/store is refused, not followed
    except safe_io.UnsafePathError as exc:
        _say(exc)
        return 2
    results = []
    for st, p in zip(studies, plans):
        try:
            r = rb.run_study(st, out / "store", n_jobs=args.jobs, scheduler=args.scheduler,
                             progress=_out.progress(args), planned=p)
        except StoreError as exc:
            _say(exc)
            return _store_error_status(exc)
        if not args.no_ns2:
            rb.check_ns2(r, out / "store")
        results.append(r)
        summary = rb.summary(r, rb.figure(r, directory))
        rb.save_summary(summary, directory)
        d = r.default
        ns2 = f"; ns-2.35: {rb.ns2_cell(summary)}" if r.ns2 is not None else ""
        _out.result(f"{st.entry}: {r.verdict} (at our default: {d.status}, {d.holds}/{d.seeds} seeds); "
                    f"{r.runs} runs, {r.computed} computed in {r.wall_s:.1f} s{ns2}")
    saved = rb.load_summaries(directory)
    for message in rb.problems(saved, directory):
        _out.warning(f"warning: {message}")
    report = safe_io.write_file(out, "robustness.md", rb.markdown(saved))
    _out.result(f"wrote {report} ({sum('set_aside' not in s for s in saved)} studies)")
    page = out / "index.html"
    if page.exists() or page.is_symlink():
        try:
            _out.result(f"updated {page}" if splice(page, saved) else
                        f"{page} predates the robustness section: run `vegaslab reproduce --out {out}` again to add it")
        except safe_io.ForeignFileError as exc:
            _out.warning(f"warning: {exc}; its robustness section was not updated")
    return 1 if any(r.verdict == "error" for r in results) else 0


def _bad_scheduler(args: argparse.Namespace) -> bool:
    """Say so (one line, naming ``--scheduler`` or ``DASK_SCHEDULER_ADDRESS``) and return
    True when the scheduler address cannot be one: a usage error, found before anything runs
    or is written. A well-formed address nobody answers at fails later, in seconds (exit 1)."""
    from ..sweeps.engine import EngineError, check_scheduler

    try:
        check_scheduler(args.scheduler, "--scheduler")
    except EngineError as exc:
        _say(exc)
        return True
    return False


# ---------------------------------------------------------------------- reproduce


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ..reproduction import reproduce
    from ..study.catalog import resolve
    from ..outdir import check_output_dir
    from ..sweeps.store import StoreError

    if args.list_entries:
        return _list_entries(args)
    try:  # fail fast, before any run, on an unknown id or paper
        entries = resolve(args.ids, all_entries=args.all_entries)
    except KeyError as exc:
        _out.error(f"vegaslab: {exc.args[0]}")
        return 2
    if _bad_scheduler(args):
        return 2
    check_output_dir(args.out, replace=False)
    t0 = time.perf_counter()
    try:
        table = reproduce(args.ids, args.out, seed=args.seed, quick=args.quick, jobs=args.jobs,
                          all_entries=args.all_entries, progress=_out.progress(args), scheduler=args.scheduler,
                          echo=_out.result)
    except StoreError as exc:  # DIR/store unusable or busy (2), or a commit that failed (1), as in sweep
        _say(exc)
        return _store_error_status(exc)
    code = 1 if (table["metric"] == "(run failed)").any() else 0
    runs = table.attrs.get("runs", {})
    _out.detail(f"runs: {runs.get('ran', 0)} ran, {runs.get('cached', 0)} found in {Path(args.out) / 'store'}, "
                f"{runs.get('failed', 0)} failed, of {runs.get('total', 0)}; "
                f"{table.attrs.get('wall_s', time.perf_counter() - t0):.1f} s")
    if args.json:
        _out.document(_reproduce_document(entries, table, Path(args.out), code))
    return code


#: The comparison columns ``reproduce --json`` gives per row (catalog.REPRODUCE_COLUMNS less
#: the entry, which is the row's key).
_COMPARISON_KEYS = ("run", "metric", "published", "ours", "std", "n", "ratio", "note")


def _reproduce_document(entries, table, out: Path, code: int) -> dict:
    """``vegaslab reproduce --json`` (docs/cli.md): per entry, the published-vs-ours rows and
    the claims' verdicts; where the report is."""
    verdicts = table.attrs.get("verdicts", [])
    docs = []
    for e in entries:
        rows = table[table["entry"] == e.id]
        comparisons = [{k: r.get(k) for k in _COMPARISON_KEYS} for r in rows.to_dict(orient="records")]
        failed = any(c["metric"] == "(run failed)" for c in comparisons)
        docs.append({
            "id": e.id,
            "title": e.title,
            "paper": e.paper,
            "status": "run failed" if failed else "ok",
            "comparisons": comparisons,
            "claims": [{"text": v["text"], "expr": v["expr"], "verdict": v["status"], "detail": v["detail"]}
                       for v in verdicts if v["entry"] == e.id],
        })
    report = out / "index.html"
    return {
        "command": "reproduce",
        "out": str(out),
        "report": str(report) if report.is_file() else None,
        "summary": str(out / "summary.md") if (out / "summary.md").is_file() else None,
        "runs": table.attrs.get("runs", {}),
        "wall_s": table.attrs.get("wall_s"),
        "exit_status": code,
        "entries": docs,
        "vegaslab_version": vegaslab.__version__,
        "core_version": vegaslab.core_version(),
    }


def _list_entries(args: argparse.Namespace) -> int:
    """``reproduce --list``: every entry (or the named ids and papers), grouped by paper."""
    from ..study.catalog import catalog_dir, format_listing, list_entries, resolve

    named = bool(args.ids) and not isinstance(args.ids, _DefaultIds) and not args.all_entries
    try:
        entries = resolve(args.ids) if named else list_entries()
    except KeyError as exc:
        _out.error(f"vegaslab: {exc.args[0]}")
        return 2
    if not entries:
        raise FileNotFoundError(f"{catalog_dir()}: no catalog entries (*.toml) in this directory")
    _out.result(format_listing(entries, where=catalog_dir()))
    if args.json:
        _out.document({"command": "reproduce --list", "catalog": str(catalog_dir()),
                       "entries": [{"id": e.id, "paper": e.paper, "title": e.title, "path": str(e.path),
                                    "runs": e.run_count(), "quick_runs": e.run_count(quick=True)}
                                   for e in entries]})
    return 0


# ---------------------------------------------------------------------- bench

# Peak memory of the child itself. On Linux, ru_maxrss survives fork+exec (a child starts with
# its parent's high-water mark), so read VmHWM, which exec resets; elsewhere fall back to it.
_PEAK_RSS = r"""
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

_VEGASLAB_CHILD = _PEAK_RSS + r"""
import json, sys, time
from vegaslab import _core
path, overrides = sys.argv[1], json.loads(sys.argv[2])
text = open(path, encoding="utf-8").read()
baseline = peak_rss_bytes()
t0, c0 = time.perf_counter(), time.process_time()
doc = json.loads(_core.run_scenario(text, path, None, overrides, None))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
doc.pop("series", None)
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
from vegaslab import _core
from vegaslab.cli import plot_monitors
from vegaslab.results import TABLES, Results
path, overrides = sys.argv[1], json.loads(sys.argv[2])
text = open(path, encoding="utf-8").read()
monitored = ["run.duration=10s", *plot_monitors(Path(path), overrides), *overrides, "run.sample_interval=1ms"]
meta, tables, series, _ = _core.run_scenario_tables(text, path, None, monitored, None)
t0, c0 = time.perf_counter(), time.process_time()
res = Results.from_tables(meta, tables, series)
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
_NS2_CHILD = _PEAK_RSS + r"""
import json, resource, sys, time
try:
    from vegaslab.ns2 import run_scenario
except ImportError as exc:
    print(json.dumps({"error": f"vegaslab.ns2 is not available: {exc}"})); sys.exit(0)
from vegaslab.cli import _children_cpu
path, overrides = sys.argv[1], json.loads(sys.argv[2])
baseline = peak_rss_bytes()
t0, c0 = time.perf_counter(), _children_cpu()
doc = run_scenario(path, overrides=overrides, trace=False)
wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": peak_rss_bytes(resource.RUSAGE_CHILDREN),
                  "baseline_rss_bytes": baseline, "doc": doc}, default=str))
"""


def _child_env() -> dict[str, str]:
    """The environment of a benchmark's child interpreter: this one's, with this vegaslab first
    on the import path (a checkout's, not another installed one)."""
    env = dict(os.environ)
    pkg_root = str(Path(vegaslab.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    return env


def _child(code: str, path: Path, overrides: list[str]) -> dict:
    """Run ``code`` in a fresh interpreter (so its peak memory is its own); parse its JSON."""
    proc = subprocess.run([sys.executable, "-c", code, str(path), json.dumps(overrides)],
                          capture_output=True, text=True, env=_child_env())
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
        t0, c0 = time.perf_counter(), _children_cpu()
        proc = subprocess.run(argv, capture_output=True, text=True, env=_child_env())
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise VegaslabError(f"benchmark command `vegaslab run {' '.join(options)}` failed (exit {proc.returncode}): {tail}")
        files = sorted(f.name for f in out.iterdir())
    return {"wall_s": wall, "cpu_s": cpu, "files": files}


def _children_cpu() -> float:
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


def bench(scenario: Path, overrides: list[str], *, ns2: bool = True, end_to_end: bool = True,
          repeat: int = 1, echo=print) -> dict[str, Any]:
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
    its own; the ratios are given for both."""
    doc = vegaslab.load_scenario(scenario)
    cc_of = {str(f.get("name", f"flow{i}")): str(f.get("cc", "reno")) for i, f in enumerate(doc.get("flows", []))}
    report: dict[str, Any] = {"scenario": str(scenario), "overrides": overrides, "flows": len(cc_of), "repeat": repeat}
    echo(f"benchmark {scenario} ({len(cc_of)} flows{', ' + ' '.join(overrides) if overrides else ''}"
         f"{f', {repeat} rounds' if repeat > 1 else ''})")
    report["ns2"] = None
    if not ns2:
        report["ns2_skipped"] = "--no-ns2"
    elif not _which("ns"):
        report["ns2_skipped"] = "`ns` is not on PATH"
    rounds: dict[str, list[Any]] = {"vegaslab": [], "ns2": [], "results_to_pandas": [],
                                    **{key: [] for key, _, _ in END_TO_END}}
    for _ in range(repeat):
        child = _child(_VEGASLAB_CHILD, scenario, overrides)
        if "error" in child:
            raise VegaslabError(f"vegaslab benchmark run failed: {child['error']}")
        rounds["vegaslab"].append(child)
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


def cmd_bench(args: argparse.Namespace) -> int:
    if args.scenario:
        scenario = _resolve_scenario(args.scenario)
    else:  # the built-in catalog's, even with $VEGASLAB_CATALOG set: the published benchmark
        from ..study.catalog import builtin_dir

        scenario = builtin_dir() / BENCH_SCENARIO
    if not scenario.is_file():
        raise FileNotFoundError(f"{scenario}: benchmark scenario not found")
    if args.out:
        from ..outdir import check_output_dir

        check_output_dir(args.out, replace=False)
    overrides = list(args.overrides)
    if args.duration:
        overrides.append(f"run.duration={args.duration}")
    report = bench(scenario, overrides, ns2=args.ns2, end_to_end=args.end_to_end, repeat=args.repeat, echo=_out.result)
    if args.out:
        from ..safe_io import write_file

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        written = write_file(out, "bench.json", json.dumps(report, indent=2) + "\n")
        _out.result(f"wrote {written}")
    return 0


# ---------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vegaslab`` command; returns the exit status.

    Ctrl-C anywhere in the command ends it with :data:`EXIT_INTERRUPTED` (130) and one line,
    ``vegaslab: interrupted``: also when the ``KeyboardInterrupt`` was dropped on the way (a
    Ctrl-C the command saw, :func:`vegaslab.interrupts.command`, is 130 whatever the
    subcommand returned) and when it came while arguments were parsed."""
    _out.reset()
    with interrupts.command() as ctrl_c:
        try:
            code = _main(argv)
        except KeyboardInterrupt:
            code = _interrupted()
        if ctrl_c.is_set() and code != EXIT_INTERRUPTED:
            code = _interrupted()
    return code


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    level = _out.QUIET if args.quiet else _out.VERBOSE if args.verbose else _out.NORMAL
    _out.reset(level, json_mode=bool(getattr(args, "json", False)))
    with warnings.catch_warnings():
        # The library's warnings (a file set aside, say) as the command's own one-line warnings.
        warnings.showwarning = _show_warning
        code = _dispatch(args)
    if _out.json and not _out.documented:  # a script still gets a document to parse
        _out.document({"command": args.command, "error": _out.last_error, "exit_status": code})
    return code


def _interrupted() -> int:
    """Say "interrupted" (once per command) and return its exit status."""
    if not (_out.last_error or "").startswith("interrupted"):
        _out.error("vegaslab: interrupted")
    return EXIT_INTERRUPTED


def _dispatch(args: argparse.Namespace) -> int:
    """Run the subcommand; every error becomes one line on stderr and an exit status."""
    from ..outdir import OutputDirError
    from ..safe_io import ForeignFileError, UnsafePathError

    try:
        return args.func(args)
    except (ScenarioError, FileNotFoundError, OutputDirError, UnsafePathError, ForeignFileError) as exc:
        _say(exc)
        return 2
    except VegaslabError as exc:
        _say(exc)
        return 1
    except BrokenPipeError:  # a closed pipe that a write outside _Console ran into
        _silence(sys.stdout)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return _interrupted()
    except OSError as exc:  # e.g. the disk filled up while writing results
        where = f"{exc.filename}: " if exc.filename else ""
        _out.error(f"vegaslab: {where}{exc.strerror or exc}")
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, a traceback on request
        if os.environ.get("VEGASLAB_DEBUG"):
            raise
        _out.error(f"vegaslab: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
              f"(set VEGASLAB_DEBUG=1 for a traceback, and please report it)")
        return 1


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """``warnings.showwarning`` while a command runs: a library warning as one line,
    ``vegaslab: warning: ...`` (dropped under ``-q``), without the source location."""
    _out.warning(f"warning: {_one_line(str(message))}")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def entry() -> None:
    """The ``vegaslab`` console command (and ``python -m vegaslab``): :func:`main`, then an
    immediate exit.

    When :func:`main` returns, everything the command writes is closed (files in ``with`` blocks,
    stores committed, a Dask cluster's workers closed or bound to end with this process), so the
    interpreter's teardown, which frees pandas, matplotlib and the results (0.1-0.3 s after a
    ``vegaslab run``, measured), is skipped: stdout and stderr are flushed and the process ends
    with ``os._exit``. Tests and library code call :func:`main`, which returns normally.

    A reader that closed stdout early (``vegaslab reproduce --list | head -1``) is handled
    as the Python docs recommend for SIGPIPE: stdout is pointed at /dev/null and no traceback
    is printed. :class:`_Console` does so where the command prints, and the command finishes
    (exit 0); a ``BrokenPipeError`` from anywhere else (argparse's help, the final flush)
    ends it here with 141, the status of a process ended by SIGPIPE.

    Ctrl-C: besides :func:`main`'s handling, the ``vegaslab`` program arms
    :func:`vegaslab.interrupts.enable_watchdog`, a last resort that ends a process still running
    :data:`vegaslab.interrupts.WATCHDOG_S` seconds after the first Ctrl-C with 130."""
    try:
        interrupts.enable_watchdog()
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:  # a Ctrl-C just before or after main's own handling
        code = _interrupted()
    except BrokenPipeError:
        _silence(sys.stdout)
        code = EXIT_BROKEN_PIPE
    except (OSError, ValueError):  # a closed stream
        code = 1
    try:
        sys.stderr.flush()
    except (OSError, ValueError, KeyboardInterrupt):
        pass
    os._exit(code)


def _say(exc: BaseException) -> None:
    """``vegaslab: <message>`` on one line; the message names the file (or option) first."""
    msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:  # raised by the OS, not by us
        msg = f"{exc.filename}: {exc.strerror}"
    _out.error(f"vegaslab: {_one_line(msg)}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
