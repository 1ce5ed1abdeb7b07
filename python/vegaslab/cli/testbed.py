"""``vegaslab testbed run``: a scenario with real TCP between network namespaces (root).
"""

from __future__ import annotations

from pathlib import Path

from .options import FORMATTER, add_set, add_stack, resolve_scenario, stack_of, wrap
from .run import say_written, show_and_write


def add_parser(sub) -> None:
    """The ``testbed`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "testbed", formatter_class=FORMATTER,
        help="run a scenario with real TCP between network namespaces (root)",
        description=wrap("Build the scenario's network from namespaces (sender, router, receiver), "
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
    add_set(t)
    t.add_argument("--out", metavar="DIR", help="output directory (default: out/testbed-<scenario stem>)")
    add_stack(t)
    t.set_defaults(func=cmd_testbed_run)


def cmd_testbed_run(args) -> int:
    from ..outdir import check_output_dir, output_dir
    from ..testbed.run import run as testbed_run

    path = resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"testbed-{path.stem}"
    check_output_dir(out)
    res = testbed_run(path, overrides=list(args.overrides), stack=stack_of(args))
    with output_dir(out) as tmp:
        written = show_and_write(res, tmp, out)
    say_written(written, out)
    return 0
