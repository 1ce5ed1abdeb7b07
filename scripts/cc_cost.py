#!/usr/bin/env python3
"""The cost of a congestion control that is not native Rust: the simulation's wall time
(``meta.wall_time_s``) per packet-hop of the same scenario with every flow on a native
controller and on its twin in another form, the median of ``--repeat`` runs each, alternating so
that a slow spell of the machine touches all alike. Prints each and its ratio to the native one;
``--json`` prints them as JSON.

The pairs (each on the stack its forms share):

- ``python``: the native Reno and a Python Reno (``vegaslab.Controller``, the hooks written out as
  in tests/python_controllers.py), on ns-2's stack; results must be identical.
- ``bpf-vegas``: the native Linux-flavour Vegas and the project's kernel Vegas object
  (``kernel/build/vl_vegas.bpf.o``), in the VM's JIT and its interpreter, on Linux's stack;
  results must be identical.
- ``bpf-cubic``: the native CUBIC and the kernel selftests' ``bpf_cubic`` object
  (``kernel/build/selftests/bpf_cubic.bpf.o``), JIT and interpreter, on Linux's stack; the two
  decide differently in documented ways (docs/bpf-objects.md), so only the cost is compared
  (the goodputs are printed).

    PYTHONPATH=tests python scripts/cc_cost.py [--scenario FILE|ID] [--repeat N] [--pairs python,bpf-vegas,bpf-cubic]

The objects come from ``make bpf``. Default scenario: the benchmark's (bench/grids-net2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import vegaslab

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "kernel" / "build"
LINUX = {"tcp.stack": "linux"}


def _bpf(path: Path, engine: str) -> dict:
    return {"bpf": str(path), "engine": engine}


#: pair -> (the native form, {label: the other forms}, their flow settings, whether results must match)
PAIRS: dict[str, tuple[str, dict, dict, bool]] = {
    "python": ("reno", {"py:python_controllers:Reno": "py:python_controllers:Reno"}, {"params": {}}, True),
    "bpf-vegas": ("vegas", {"vl_vegas.bpf.o (JIT)": _bpf(BUILD / "vl_vegas.bpf.o", "auto"),
                            "vl_vegas.bpf.o (interpreter)": _bpf(BUILD / "vl_vegas.bpf.o", "interpreter")},
                  {**LINUX, "params": {"flavour": "linux"}}, True),
    "bpf-cubic": ("cubic", {"bpf_cubic.bpf.o (JIT)": _bpf(BUILD / "selftests" / "bpf_cubic.bpf.o", "auto"),
                            "bpf_cubic.bpf.o (interpreter)": _bpf(BUILD / "selftests" / "bpf_cubic.bpf.o", "interpreter")},
                  {**LINUX, "params": {}}, False),
}


def overrides_for(cc, settings: dict, flows: int) -> dict:
    """Every flow entry on ``cc`` with ``settings``, its ``params`` table replaced (the
    scenario's own are for its own algorithms; a BPF object takes none)."""
    out: dict = {}
    for i in range(flows):
        out[f"flows[{i}].cc"] = cc
        for key, value in settings.items():
            out[f"flows[{i}].{key}"] = {} if key == "params" and isinstance(cc, dict) else value
    return out


def timed(scenario: str, overrides: dict) -> tuple[float, int, list]:
    """(the core's wall seconds, packet-hops, goodputs) of one run."""
    res = vegaslab.run(scenario, overrides=overrides)
    return float(res.meta["wall_time_s"]), int(res.meta["packet_hops"]), list(res.flows["goodput_bps"])


def measure(scenario: str, pair: str, flows: int, repeat: int) -> dict:
    native, others, settings, identical = PAIRS[pair]
    forms = {native: native, **others}
    walls: dict[str, list[float]] = {label: [] for label in forms}
    hops: dict[str, int] = {}
    goodput: dict[str, list] = {}
    for _ in range(repeat):
        for label, cc in forms.items():
            wall, hops[label], goodput[label] = timed(scenario, overrides_for(cc, settings, flows))
            walls[label].append(wall)
    if identical and any(goodput[label] != goodput[native] for label in others):
        raise SystemExit(f"{pair}: the goodputs differ from the native {native}'s: {goodput}")
    ns = {label: statistics.median(w) * 1e9 / hops[label] for label, w in walls.items()}
    return {"native": native, "packet_hops": hops[native], "ns_per_packet_hop": ns,
            "over_native": {label: ns[label] / ns[native] for label in others},
            "identical_results": identical,
            "mean_goodput_bps": {label: statistics.fmean(g) for label, g in goodput.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", default="bench/grids-net2", help="scenario file or catalog id (default: the benchmark)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--pairs", default=",".join(PAIRS), help=f"comma-separated, of {', '.join(PAIRS)}")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    pairs = [x for x in args.pairs.split(",") if x]
    unknown = [x for x in pairs if x not in PAIRS]
    if unknown:
        p.error(f"unknown pair {unknown[0]!r} (allowed: {', '.join(PAIRS)})")
    sys.path.insert(0, str(ROOT / "tests"))
    path = Path(args.scenario)
    if not path.is_file():
        from vegaslab.study.catalog import builtin_dir

        path = builtin_dir() / f"{args.scenario}.toml"
    flows = len(vegaslab.load_scenario(path).get("flows", []))
    report = {"scenario": args.scenario, "repeat": args.repeat,
              "pairs": {pair: measure(str(path), pair, flows, args.repeat) for pair in pairs}}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.scenario}: median of {args.repeat} runs each")
    for pair, r in report["pairs"].items():
        print(f"  {pair}: {r['packet_hops']:,} packet-hops per run")
        for label, v in r["ns_per_packet_hop"].items():
            ratio = r["over_native"].get(label)
            tail = f"  {ratio:.2f}x native" if ratio is not None else "  (native)"
            print(f"    {label:34s} {v:8.1f} ns per packet-hop{tail}   goodput {r['mean_goodput_bps'][label] / 1e6:.3f} Mbit/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
