"""The four comparisons of the simulator (Linux flavour) and the kernel: (a) one Vegas flow,
50 Mbit/s, 40 ms, 1 BDP; (b) Vegas against Reno, 20 Mbit/s, 40 ms, 1 BDP; (c) the rerouting
shape at 20 Mbit/s, RTT 40 -> 200 ms at 10 s, for Vegas and Vegas-A; (d) three Vegas flows with
RTTs 20/60/120 ms on 30 Mbit/s. Each writes a report under --out; the script prints one table
of every flow and the wall time. Needs root (make compare-kernel)."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from vegaslab.errors import VegaslabError
from vegaslab.testbed.compare import compare
from vegaslab.testbed.stack import Stack

ROOT = Path(__file__).resolve().parents[1] / "examples" / "kernel"
CASES = [
    ("a-one-vegas", "a-one-vegas.toml", []),
    ("b-vegas-reno", "b-vegas-reno.toml", []),
    ("c-reroute-vegas", "c-reroute.toml", ["flows[0].cc=vegas"]),
    ("c-reroute-vegas-a", "c-reroute.toml", ["flows[0].cc=vegas-a"]),
    ("d-three-rtts", "d-three-rtts.toml", []),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out/compare")
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="extra override for every case")
    ap.add_argument("--stack", action="append", default=[], metavar="NAME=on|off",
                    help="switch a kernel TCP behaviour (sack, delayed_ack) for every case")
    ap.add_argument("--cases", help="comma-separated subset of: " + ", ".join(c[0] for c in CASES))
    args = ap.parse_args(argv)
    try:
        stack = Stack.parse(args.stack)
    except VegaslabError as e:
        ap.error(str(e))
    cases = CASES
    if args.cases:
        wanted = args.cases.split(",")
        unknown = sorted(set(wanted) - {c[0] for c in CASES})
        if unknown:
            ap.error(f"--cases: unknown {', '.join(unknown)}")
        cases = [c for c in CASES if c[0] in wanted]
    started, tables = time.monotonic(), []
    for name, file, overrides in cases:
        c = compare(ROOT / file, overrides=[*overrides, *args.overrides], out=Path(args.out) / name, stack=stack)
        tables.append(c.table.assign(case=name))
        print(f"{name}: {c.report}", file=sys.stderr)
    table = pd.concat(tables)[["case", "flow", "cc", "sim_mbps", "kernel_mbps", "throughput_ratio",
                               "sim_rtt_ms", "kernel_rtt_ms", "rtt_ratio", "sim_retx", "kernel_retx", "kernel_acks_per_seg"]]
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\nwall time {time.monotonic() - started:.0f} s")
    (Path(args.out) / "summary.csv").write_text(table.to_csv(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
