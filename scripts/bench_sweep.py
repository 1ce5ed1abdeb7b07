#!/usr/bin/env python3
"""Benchmark of the sweep engine at scale. Not a test: it takes minutes.

    .venv/bin/python scripts/bench_sweep.py            # full: 40 x ~1.5 s runs, 10,000 x ~0.1 s runs
    .venv/bin/python scripts/bench_sweep.py --quick    # 8 x ~0.3 s runs, 200 x ~0.1 s runs (about a minute)
    .venv/bin/python scripts/bench_sweep.py --large-runs 2000

It measures, on fresh stores under out/bench-sweep/ (deleted first, so nothing is cached):

1. speed-up: the same sweep of 40 runs of 1-2 s each on a local Dask cluster of 1 worker,
   then of 2 workers; speed-up = wall(1) / wall(2) (target >= 1.8 on 2 cores);
2. engine overhead per run: (wall x workers - sum of the core's own simulation time) / runs,
   the cost of everything that is not simulating (cluster start, scheduling, normalising the
   scenario, building and committing the tables), charged against every worker slot; measured
   on each sweep (target <= 50 ms). The cluster's start-up (timed apart, starting and stopping
   an idle cluster) is a fixed cost per sweep, so it is also given without it ("without start");
   "worker-side" is a run's time in its worker beyond the simulation (normalising, tables);
3. scale: a sweep of --large-runs runs of ~0.1 s (default 10,000) completes, and reading its
   whole result (the flows and runs tables) into pandas, in a fresh process, takes < 2 s
   ("open" is SweepResults.open, which plans the sweep and resolves every run with the core;
   the rest reads the store). Each sweep's commits, and how many the compaction at the end of
   the sweep merged, are reported too.

Run durations are calibrated first: the simulated duration is scaled from one short run so
that a run's core time is near the target; the achieved mean is reported. Wall times are
measured around vegaslab.sweep() (cluster start-up included, as a user waits for it), and
the simulation time is the store's per-run ``sim_wall_s`` (the core's own clock), so the
overhead is everything a user pays beyond simulating. Prints a table and writes
out/bench-sweep/bench.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench-sweep"

# A 10 Mbit/s dumbbell shared by a Vegas and a Reno flow; the packet error rate makes every
# seed a different run. DURATION and the [sweep] are filled in per part.
SCENARIO = """
[meta]
id = "{id}"

[run]
duration = "{duration}s"

[dumbbell]
pairs = 2
access = {{ bandwidth = "100Mbps", delay = "2ms" }}
bottleneck = {{ bandwidth = "10Mbps", delay = "20ms", error_rate = 0.0005, queue = {{ kind = "droptail", limit = 50 }} }}

[[flows]]
name = "vegas"
from = "S1"
to = "D1"
cc = "vegas"
params = {{ alpha = 2, beta = 4 }}

[[flows]]
name = "reno"
from = "S2"
to = "D2"
cc = "reno"

[sweep]
seeds = {seeds}

[[sweep.axis]]
name = "buffer"
path = "dumbbell.bottleneck.queue.limit"
range = {{ start = 20, step = 1, stop = {stop} }}
"""


def scenario(sid: str, duration: float, runs: int, seeds: int = 10) -> str:
    seeds = min(seeds, runs)
    if runs % seeds:
        raise SystemExit(f"runs ({runs}) must be a multiple of {seeds}")
    points = runs // seeds
    return SCENARIO.format(id=sid, duration=f"{duration:.6g}", seeds=seeds, stop=20 + points - 1)


def calibrate(target_s: float) -> float:
    """Simulated seconds for a run whose core time is about ``target_s``."""
    from vegaslab.core import run_core

    probe = 20.0
    text = scenario("bench-calibrate", probe, 1, 1)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        run_core(text, "<bench>", 1, [])
        best = min(best, time.perf_counter() - t0)
    return max(0.5, probe * target_s / best)


def cluster_start_s(workers: int) -> float:
    """Wall time to start and stop the embedded local cluster with no run: the fixed cost of
    a sweep, reported apart so the per-run overhead can be given with and without it."""
    from vegaslab.sweeps.engine.cluster import connect

    t0 = time.perf_counter()
    with connect(None, workers, None):
        pass
    return time.perf_counter() - t0


def run_sweep(name: str, text: str, workers: int) -> dict:
    import vegaslab

    out = OUT / name
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    res = vegaslab.sweep(text, out=out, workers=workers)
    wall = time.perf_counter() - t0
    ex = res.execution
    runs = res.runs
    n = len(runs)
    sim = float(runs["sim_wall_s"].sum())
    worker = float(runs["wall_s"].sum())
    start = cluster_start_s(workers)
    return {
        "cluster_start_s": start,
        "steady_overhead_ms_per_run": 1000 * ((wall - start) * workers - sim) / n if n else None,
        "name": name, "workers": workers, "runs": n, "ran": ex.ran, "failed": ex.failed,
        "commits": ex.commits, "merged": ex.merged, "commits_left": len(list((out / "data").iterdir())),
        "wall_s": wall, "engine_wall_s": ex.wall_s,
        "mean_sim_s": sim / n if n else None,
        "mean_worker_s": worker / n if n else None,
        "overhead_ms_per_run": 1000 * (wall * workers - sim) / n if n else None,
        "worker_side_overhead_ms_per_run": 1000 * (worker - sim) / n if n else None,
        "store": str(out),
    }


READ = """
import sys, time, json
t0 = time.perf_counter()
import pandas, pyarrow  # noqa: F401  (imports timed apart from the read)
from vegaslab.sweeps.results import SweepResults
t1 = time.perf_counter()
res = SweepResults.open(sys.argv[1], out=sys.argv[2])
t_open = time.perf_counter()
flows = res.flows
runs = res.runs
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "read_s": t2 - t1, "open_s": t_open - t1, "flow_rows": len(flows), "run_rows": len(runs),
                  "flow_cols": flows.shape[1], "run_cols": runs.shape[1]}))
"""


def read_back(text: str, out: str) -> dict:
    src = OUT / "large.toml"
    src.write_text(text)
    proc = subprocess.run([sys.executable, "-c", READ, str(src), out], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small version (about a minute)")
    ap.add_argument("--speedup-runs", type=int, default=None, help="runs of the speed-up sweep (default 40; quick 8)")
    ap.add_argument("--speedup-run-s", type=float, default=None, help="target core time of one run (default 1.5; quick 0.3)")
    ap.add_argument("--large-runs", type=int, default=None, help="runs of the scale sweep (default 10000; quick 200)")
    ap.add_argument("--large-run-s", type=float, default=0.1, help="target core time of one scale run (default 0.1)")
    ap.add_argument("--skip-large", action="store_true", help="only the speed-up and overhead part")
    a = ap.parse_args()
    n_speed = a.speedup_runs or (8 if a.quick else 40)
    t_speed = a.speedup_run_s or (0.3 if a.quick else 1.5)
    n_large = a.large_runs or (200 if a.quick else 10000)
    OUT.mkdir(parents=True, exist_ok=True)

    report: dict = {"cores": len(os.sched_getaffinity(0)), "quick": a.quick}
    d_speed = calibrate(t_speed)
    speed_text = scenario("bench-speedup", d_speed, n_speed, seeds=min(10, n_speed))
    print(f"speed-up sweep: {n_speed} runs of {d_speed:.0f} simulated s (target {t_speed} s each)", flush=True)
    one = run_sweep("speedup-1", speed_text, 1)
    two = run_sweep("speedup-2", speed_text, 2)
    report["speedup"] = {"one": one, "two": two, "duration_s": d_speed, "speedup": one["wall_s"] / two["wall_s"]}

    if not a.skip_large:
        d_large = calibrate(a.large_run_s)
        large_text = scenario("bench-large", d_large, n_large)
        print(f"scale sweep: {n_large} runs of {d_large:.1f} simulated s (target {a.large_run_s} s each)", flush=True)
        large = run_sweep("large", large_text, 2)
        large["read"] = read_back(large_text, large["store"])
        large["duration_s"] = d_large
        report["large"] = large

    rows = [("sweep", "workers", "runs", "failed", "commits (merged)", "mean sim s", "wall s", "cluster start s",
             "overhead ms/run", "without start", "worker-side ms/run")]
    for r in [one, two] + ([report["large"]] if "large" in report else []):
        rows.append((r["name"], str(r["workers"]), str(r["runs"]), str(r["failed"]),
                     f"{r['commits']} ({r['merged']})", f"{r['mean_sim_s']:.3f}",
                     f"{r['wall_s']:.1f}", f"{r['cluster_start_s']:.1f}",
                     f"{r['overhead_ms_per_run']:.1f}", f"{r['steady_overhead_ms_per_run']:.1f}", f"{r['worker_side_overhead_ms_per_run']:.1f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))
    sp = report["speedup"]["speedup"]
    print(f"speed-up, 2 workers vs 1: {sp:.2f}x (target >= 1.8)")
    worst = max(r["overhead_ms_per_run"] for r in [one, two] + ([report["large"]] if "large" in report else []))
    steady = max(r["steady_overhead_ms_per_run"] for r in [one, two] + ([report["large"]] if "large" in report else []))
    print(f"engine overhead per run: at most {worst:.1f} ms with the cluster's start-up, {steady:.1f} ms without "
          "(target <= 50)")
    if "large" in report:
        rd = report["large"]["read"]
        print(f"scale: {report['large']['runs']} runs stored ({report['large']['failed']} failed) in "
              f"{report['large']['wall_s']:.1f} s; reading them into pandas ({rd['flow_rows']} flow rows, "
              f"{rd['run_rows']} run rows): {rd['read_s']:.2f} s (target < 2; of which opening the sweep "
              f"{rd['open_s']:.2f} s; imports {rd['import_s']:.2f} s more)")
    (OUT / "bench.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {OUT / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
