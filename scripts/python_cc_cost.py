#!/usr/bin/env python3
"""The cost of a Python controller: the simulation's wall time (``meta.wall_time_s``) per packet-hop of the same scenario with every
flow on the native Rust Reno and on a Python Reno (``vegaslab.Controller``, the hooks written out
as in tests/python_controllers.py), the median of ``--repeat`` runs each, alternating so that a
slow spell of the machine touches both alike. Prints both and their ratio; ``--json`` prints them
as JSON. Results are identical (checked), only the time differs.

    PYTHONPATH=tests python scripts/python_cc_cost.py [--scenario FILE|ID] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import vegaslab

PY_RENO = "py:python_controllers:Reno"


def timed(scenario: str, cc: str, flows: int) -> tuple[float, int, list]:
    """(the core's wall seconds, packet-hops, goodputs) of one run with every flow entry on ``cc``."""
    overrides = [f"flows[{i}].cc={cc}" for i in range(flows)]
    res = vegaslab.run(scenario, overrides=overrides)
    return float(res.meta["wall_time_s"]), int(res.meta["packet_hops"]), list(res.flows["goodput_bps"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", default="va-reroute", help="scenario file or catalog id (default va-reroute)")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    path = Path(args.scenario)
    if not path.is_file():
        from vegaslab.study.catalog import builtin_dir

        path = builtin_dir() / f"{args.scenario}.toml"
    flows = len(vegaslab.load_scenario(path).get("flows", []))
    walls: dict[str, list[float]] = {"reno": [], PY_RENO: []}
    hops: dict[str, int] = {}
    goodput: dict[str, list] = {}
    for _ in range(args.repeat):
        for cc in walls:
            wall, hops[cc], goodput[cc] = timed(args.scenario, cc, flows)
            walls[cc].append(wall)
    if goodput["reno"] != goodput[PY_RENO]:
        raise SystemExit(f"the Python Reno's goodput differs from the native one's: {goodput}")
    ns = {cc: statistics.median(w) * 1e9 / hops[cc] for cc, w in walls.items()}
    report = {"scenario": args.scenario, "repeat": args.repeat, "packet_hops": hops["reno"],
              "ns_per_packet_hop": ns, "python_over_native": ns[PY_RENO] / ns["reno"]}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.scenario}: {hops['reno']:,} packet-hops per run, median of {args.repeat}")
        for cc, v in ns.items():
            print(f"  {cc:28s} {v:8.0f} ns per packet-hop")
        print(f"  a Python Reno costs {report['python_over_native']:.1f}x the native Reno per packet-hop")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
