"""``vegaslab compare --kernel``: a scenario in the simulator and in the kernel, side by side (root);
``vegaslab compare --suite``: the standing comparison suite, each case's kernel runs stored and
reusable.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .console import console
from .options import FORMATTER, add_set, add_stack, resolve_scenario, stack_of, wrap


def _runs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, got {text!r}") from None
    if not 1 <= n <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, got {n}")
    return n


def add_parser(sub) -> None:
    """The ``compare`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "compare", formatter_class=FORMATTER,
        help="run a scenario (or the comparison suite) in the simulator and in the kernel, side by side (root)",
        description=wrap("Run the scenario in the simulator and on the namespace testbed (`vegaslab "
                    "testbed run`) and write an HTML report: cwnd, RTT and throughput overlaid per flow, "
                    "and a table of throughput, mean RTT and retransmissions with kernel / simulator "
                    "ratios. Give the Vegas-family flows flavour = \"linux\" (the kernel versions' twin). A flow "
                    "with cc = { bpf = \"algo.bpf.o\" } runs that same object on both sides. "
                    "With --suite, run every case of the comparison suite instead: each case several "
                    "times on the kernel (stored in the output directory) and once in the simulator, "
                    "judged per flow against the kernel's run-to-run range (docs/testbed.md, \"The "
                    "comparison suite\")."),
        epilog="""examples:
  sudo vegaslab compare examples/kernel/b-vegas-reno.toml --kernel --out out/compare-b
  sudo vegaslab compare examples/kernel/bpf-cubic.toml --kernel --out out/compare-bpf-cubic
  sudo vegaslab compare --suite --out out/compare
  vegaslab compare --suite --reuse-kernel out/compare --sim-set 'flows[*].tcp.linux.prr=false' --out out/compare-no-prr""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID", nargs="?", help="the scenario (not with --suite)")
    p.add_argument("--kernel", action="store_true",
                   help="compare with the kernel (the only comparison so far; required without --suite)")
    p.add_argument("--suite", nargs="?", const="", metavar="MANIFEST",
                   help="run the comparison suite (default manifest: examples/kernel/suite/cases.toml)")
    p.add_argument("--runs", type=_runs, help="--suite: kernel runs per case (default: 5)")
    p.add_argument("--cases", metavar="A,B", help="--suite: only these cases (comma-separated names)")
    p.add_argument("--reuse-kernel", nargs="?", const="", metavar="DIR",
                   help="--suite: read the kernel runs a previous suite stored in DIR (default: --out) "
                        "instead of running the kernel; needs no root")
    p.add_argument("--sim-set", dest="sim_overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="--suite: override a scenario field in the simulator only (repeatable); "
                        "'flows[*].KEY=VALUE' sets it on every flow of every case, e.g. "
                        "--sim-set 'flows[*].tcp.linux.sack=false'")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="report directory (default: out/compare-<scenario stem>, "
                                                "with --suite out/compare)")
    add_stack(p)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    from ..testbed.suite import SuiteError

    if args.suite is not None:
        return _cmd_suite(args)
    for given, name in ((args.cases, "--cases"), (args.reuse_kernel, "--reuse-kernel"),
                        (args.sim_overrides, "--sim-set"), (args.runs, "--runs")):
        if given is not None and given != []:
            raise SuiteError(f"{name}: only with --suite")
    if args.scenario is None or not args.kernel:
        raise SuiteError("compare: give a scenario and --kernel, or --suite")
    from ..testbed.compare import compare

    path = resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"compare-{path.stem}"
    c = compare(path, overrides=list(args.overrides), out=out, stack=stack_of(args))
    console.result(c.table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    console.result(f"\nwrote {c.report}")
    return 0


def _cmd_suite(args) -> int:
    from ..testbed.suite import DEFAULT_MANIFEST, DEFAULT_RUNS, SuiteError, read_cases, run_suite, select
    from ..testbed.suite_report import flows_frame, status_text

    if args.scenario is not None:
        raise SuiteError("compare --suite: the cases come from the manifest; give no scenario")
    if args.runs is not None and args.reuse_kernel is not None:
        raise SuiteError("--runs: not with --reuse-kernel (the stored kernel runs are used)")
    out = Path(args.out) if args.out else Path("out") / "compare"
    reuse = None if args.reuse_kernel is None else Path(args.reuse_kernel or out)
    cases = select(read_cases(args.suite or DEFAULT_MANIFEST), args.cases.split(",") if args.cases else None)

    def progress(c) -> None:
        console.detail(f"{c.case.name}: {c.verdict if c.status == 'ran' else status_text(c)} "
                       f"({c.kernel_runs} kernel runs, {c.kernel_wall_s:.0f} s)")

    result = run_suite(cases, out=out, runs=args.runs or DEFAULT_RUNS, overrides=args.overrides, sim_overrides=args.sim_overrides,
                       stack=stack_of(args), reuse_kernel=reuse, progress=progress)
    table = flows_frame(result)[["case", "flow", "sim_mbps", "kernel_mbps_min", "kernel_mbps_max", "kernel_mbps_mean",
                                 "sim_rtt_ms", "kernel_rtt_ms_mean", "sim_retx", "kernel_retx_mean", "verdict"]]
    console.result(table.to_string(index=False, float_format=lambda x: f"{x:.2f}", na_rep=""))
    for c in result.cases:
        if c.status != "ran":
            console.result(f"{c.case.name}: {status_text(c)}")
    console.result(f"\nwall time {result.wall_s:.0f} s; wrote {result.report}")
    return 0 if all(c.verdict in ("pass", "flag") for c in result.cases) else 1
