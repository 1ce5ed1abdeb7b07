"""Cost per packet-hop as the number of flows grows (the target: within 1.5x of the 50-flow figure
up to 100,000 flows), with set-up time and peak memory for each.

Each size is the benchmark's dumbbell (bench/grids-net2: half Reno, half Vegas alpha 100 /
beta 105, 1500-byte packets) with N pairs, the bottleneck's rate and buffer scaled with N (155
Mbit/s and 6,711 packets per 50 flows), run twice in a fresh interpreter: for 1 ms (the set-up)
and for the measured duration. ns per packet-hop = (wall - set-up) / packet-hops.

A size below 5,000 flows simulates `duration x 5000 / N` seconds (the 50-flow run is the
benchmark's 200 s at the default 2 s), so that every size does about as many packet-hops (the
bottleneck scales with N): a 2 s run of 50 flows takes 7 ms, too short to be the figure the
others are divided by.

    python scripts/bench_scale.py [--sizes 50,500,5000,20000,100000] [--duration 2] [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from vegaslab.bench import PEAK_RSS_CODE  # the benchmark's peak-memory reader

# The boundary `vegaslab.run` uses (`vegaslab.core.run_core`: meta as JSON, every table and time
# series as Arrow columns, the normalised scenario's text), not a JSON document, whose decoding
# in Python was most of the set-up time and peak memory at 100,000 flows (168 MB of JSON).
# pyarrow is imported before the clock starts, as `vegaslab run` imports it while it simulates.
CHILD = PEAK_RSS_CODE + r"""
import json, sys, time
import pyarrow
from vegaslab.core import run_core
text, overrides = sys.argv[1], json.loads(sys.argv[2])
t0 = time.perf_counter()
run = run_core(text, "scale", 1, overrides, normalized=True)
meta = run.meta
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "peak_rss_bytes": peak_rss_bytes(), "packet_hops": meta["packet_hops"],
                  "events": meta["events"]}))
"""


def scenario(n: int) -> str:
    half = n // 2
    rate = 155e6 * n / 50
    limit = max(1, round(6711 * n / 50))
    return f"""
[run]
duration = "1s"
seed = 1

[dumbbell]
pairs = {n}
access = {{ bandwidth = "100Mbps", delay = "1ms" }}
egress = {{ bandwidth = "100Mbps", delay = "1ms" }}
bottleneck = {{ bandwidth = "{rate:.0f}bps", delay = "1.5ms", queue = {{ kind = "droptail", limit = {limit} }} }}

[monitor]
cwnd = false
throughput = false

[[flows]]
pairs = "1-{half}"
cc = "reno"
tcp = {{ window = 10000, packet_size = 1500 }}

[[flows]]
pairs = "{half + 1}-{n}"
cc = "vegas"
params = {{ alpha = 100, beta = 105 }}
tcp = {{ window = 10000, packet_size = 1500 }}
"""


#: Sizes below this simulate proportionally longer (module documentation).
SAME_WORK_FLOWS = 5000


def child(text: str, duration: str, timeout: float) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, text, json.dumps([f"run.duration={duration}"])],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50,500,5000,20000,100000")
    ap.add_argument("--duration", type=float, default=2.0,
                    help="simulated seconds from 5,000 flows on; smaller sizes proportionally longer (README: 2)")
    ap.add_argument("--timeout", type=float, default=900.0, help="wall seconds per run")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rows, base = [], None
    print(f"{'flows':>7} {'set-up s':>9} {'run s':>8} {'packet-hops':>12} {'ns/hop':>7} {'x 50-flow':>9} {'peak MB':>8}")
    for n in (int(x) for x in args.sizes.split(",")):
        text = scenario(n)
        duration = args.duration * max(1.0, SAME_WORK_FLOWS / n)
        try:
            setup = child(text, "1ms", args.timeout)
            run = child(text, f"{duration:g}s", args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{n:>7} timed out after {args.timeout:.0f} s")
            rows.append({"flows": n, "error": "timeout"})
            continue
        if "error" in setup or "error" in run:
            print(f"{n:>7} failed: {setup.get('error') or run.get('error')}")
            rows.append({"flows": n, "error": setup.get("error") or run.get("error")})
            continue
        ns = (run["wall_s"] - setup["wall_s"]) * 1e9 / max(run["packet_hops"], 1)
        base = base or ns
        rows.append({"flows": n, "duration_s": duration, "setup_s": setup["wall_s"], "run_s": run["wall_s"], "packet_hops": run["packet_hops"],
                     "ns_per_packet_hop": ns, "vs_50": ns / base, "peak_rss_bytes": run["peak_rss_bytes"]})
        print(f"{n:>7} {setup['wall_s']:>9.2f} {run['wall_s']:>8.2f} {run['packet_hops']:>12,} {ns:>7.0f} "
              f"{ns / base:>9.2f} {run['peak_rss_bytes'] / 1e6:>8.0f}", flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"duration_s": args.duration, "rows": rows, "time": time.time()}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
