"""``vegaslab bench``: the command line of the speed benchmark (:mod:`vegaslab.bench` runs it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..bench import BENCH_SCENARIO, bench
from .console import console
from .options import FORMATTER, add_set, resolve_scenario, wrap


#: Most rounds ``vegaslab bench --repeat`` runs.
MAX_BENCH_REPEAT = 100


def repeat_arg(text: str) -> int:
    """``bench --repeat``: 1 .. MAX_BENCH_REPEAT rounds."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_BENCH_REPEAT}, got {text!r}") from None
    if not 1 <= value <= MAX_BENCH_REPEAT:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_BENCH_REPEAT}, got {text}")
    return value


def add_parser(sub) -> None:
    """The ``bench`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "bench", formatter_class=FORMATTER,
        help="benchmark the simulator (and ns-2, if installed) on grids network 2",
        description=wrap("Run the benchmark scenario (the catalog's bench/grids-net2: 50-pair dumbbell, "
                    "155 Mbit/s bottleneck, 25 Reno + 25 Vegas flows, 200 s) in a child process and "
                    "print wall time, events/s, bottleneck packets per wall-second, peak memory and "
                    "the Reno/Vegas throughput split; then the whole `vegaslab run` command on it, "
                    "tables only and with the default plots (wall time from start to exit); then, "
                    "with --ns2 and `ns` on PATH, the same scenario in ns-2 and the ratios of the "
                    "wall times; with --linux-stack, the core again with every flow on Linux's TCP "
                    "stack."),
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
    p.add_argument("--linux-stack", action=argparse.BooleanOptionalAction, default=True,
                   help="also run the core with every flow on Linux's TCP stack (Vegas-family flows in "
                        "their Linux flavour, the others with tcp.stack = \"linux\") and give its cost "
                        "per packet-hop beside the ns-2 stack's (default: on)")
    p.add_argument("--repeat", metavar="N", type=repeat_arg, default=3,
                   help="rounds of measurements, each command once per round; each command's "
                        f"median is reported and the ratios are of medians (default: 3; 1-{MAX_BENCH_REPEAT})")
    p.add_argument("--duration", metavar="S", help="override run.duration, e.g. 20 or 20s")
    p.add_argument("--scenario", metavar="FILE.toml|ID",
                   help="benchmark scenario file or catalog id (default: the built-in catalog's bench/grids-net2)")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="write bench.json here")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.scenario:
        scenario = resolve_scenario(args.scenario)
    else:  # the built-in catalog's, even with $VEGASLAB_CATALOG set: the published benchmark
        from ..scenario import builtin_dir

        scenario = builtin_dir() / BENCH_SCENARIO
    if not scenario.is_file():
        raise FileNotFoundError(f"{scenario}: benchmark scenario not found")
    if args.out:
        from ..outdir import check_output_dir

        check_output_dir(args.out, replace=False)
    overrides = list(args.overrides)
    if args.duration:
        overrides.append(f"run.duration={args.duration}")
    report = bench(scenario, overrides, ns2=args.ns2, end_to_end=args.end_to_end, linux_stack=args.linux_stack,
                   repeat=args.repeat, echo=console.result)
    if args.out:
        from ..safe_io import write_file

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        written = write_file(out, "bench.json", json.dumps(report, indent=2) + "\n")
        console.result(f"wrote {written}")
    return 0
