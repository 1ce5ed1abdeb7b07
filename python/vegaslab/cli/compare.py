"""``vegaslab compare --kernel``: a scenario in the simulator and in the kernel, side by side (root).
"""

from __future__ import annotations

from pathlib import Path

from .console import console
from .options import FORMATTER, add_set, add_stack, resolve_scenario, stack_of, wrap


def add_parser(sub) -> None:
    """The ``compare`` subcommand's parser, on the subparsers ``sub`` of ``vegaslab``."""
    p = sub.add_parser(
        "compare", formatter_class=FORMATTER,
        help="run a scenario in the simulator and in the kernel, side by side (root)",
        description=wrap("Run the scenario in the simulator and on the namespace testbed (`vegaslab "
                    "testbed run`) and write an HTML report: cwnd, RTT and throughput overlaid per flow, "
                    "and a table of throughput, mean RTT and retransmissions with kernel / simulator "
                    "ratios. Give the Vegas-family flows flavour = \"linux\" (the kernel versions' twin)."),
        epilog="""examples:
  sudo vegaslab compare examples/kernel/b-vegas-reno.toml --kernel --out out/compare-b""",
    )
    p.add_argument("scenario", metavar="FILE.toml|ID")
    p.add_argument("--kernel", action="store_true", required=True,
                   help="compare with the kernel (the only comparison so far; required)")
    add_set(p)
    p.add_argument("--out", metavar="DIR", help="report directory (default: out/compare-<scenario stem>)")
    add_stack(p)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args) -> int:
    from ..testbed.compare import compare

    path = resolve_scenario(args.scenario)
    out = Path(args.out) if args.out else Path("out") / f"compare-{path.stem}"
    c = compare(path, overrides=list(args.overrides), out=out, stack=stack_of(args))
    console.result(c.table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    console.result(f"\nwrote {c.report}")
    return 0
