"""The documented input limits, each probed one past its value: the command that refuses it,
its exit status, the first line of its message, and the wall time and peak memory (the child
process's maximum resident set) it took to refuse. ``make limits`` prints the table and writes
it as JSON; docs/limits.md quotes a run of it.

A limit is answered fast when it is checked before the expensive work (the count of flows
before they are built, a sweep's size before it is expanded): the refusal should take well
under a second and little memory whatever the input's size. ``--at-limit`` also times two
inputs *at* a limit that take long by design (a 1,000,000-run sweep plan, by points and by
seeds), to keep the documentation of their cost true.

Usage: python scripts/limits_table.py [--out FILE.json] [--at-limit]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from vegaslab import _core

LINK = '[[links]]\nendpoints = ["S", "D"]\nbandwidth = "1Mbps"\ndelay = "10ms"\n'
FLOW = '[[flows]]\nfrom = "S"\nto = "D"\ncc = "vegas"\n'
BASE = '[run]\nduration = "1s"\n' + LINK + FLOW


@dataclass
class Probe:
    name: str          # the limit, as the docs name it
    limit: str         # its value
    make: Callable[[Path], list[str]]   # writes the input into a directory, returns the command's arguments


def _file(d: Path, name: str, text: str) -> str:
    (d / name).write_text(text)
    return str(d / name)


def _scenario_bytes(d: Path) -> list[str]:
    path = d / "big.toml"
    with open(path, "wb") as fh:   # a comment line, then a sparse tail: the size is what counts
        fh.write(BASE.encode())
        fh.truncate(int(_core.MAX_SCENARIO_BYTES) + 1)
    return ["run", str(path), "--out", str(d / "o")]


def _flow_tables(d: Path) -> list[str]:
    n = 2**20 + 1
    text = '[run]\nduration = "1s"\n' + LINK + "".join(f'[[flows]]\nname = "f{i}"\nfrom = "S"\nto = "D"\n'
                                                         f'cc = "reno"\n' for i in range(n))
    return ["run", _file(d, "flows.toml", text), "--out", str(d / "o")]


def _flow_group(d: Path) -> list[str]:
    return ["run", _file(d, "group.toml", '[run]\nduration = "1s"\n' + LINK +
                         f'[[flows]]\nname = "f{{i}}"\nfrom = "S"\nto = "D"\ncc = "reno"\nrange = "1-{2**20 + 1}"\n'),
            "--out", str(d / "o")]


def _link_tables(d: Path) -> list[str]:
    n = 2**20 + 1
    text = '[run]\nduration = "1s"\n' + "".join(f'[[links]]\nendpoints = ["A{i}", "B{i}"]\nbandwidth = "1Mbps"\n'
                                                 f'delay = "1ms"\n' for i in range(n)) + FLOW
    return ["run", _file(d, "links.toml", text), "--out", str(d / "o")]


def _udp_tables(d: Path) -> list[str]:
    n = 2**20 + 1
    text = BASE + "".join(f'[[udp]]\nname = "u{i}"\nfrom = "S"\nto = "D"\nrate = "1kbps"\n' for i in range(n))
    return ["run", _file(d, "udp.toml", text), "--out", str(d / "o")]


def _dumbbell_pairs(d: Path) -> list[str]:
    return ["run", _file(d, "db.toml", '[run]\nduration = "1s"\n[dumbbell]\npairs = 100001\n'
                         '[dumbbell.bottleneck]\nbandwidth = "1Mbps"\ndelay = "10ms"\n'
                         '[dumbbell.access]\nbandwidth = "10Mbps"\ndelay = "1ms"\n'
                         '[[flows]]\npairs = "1-2"\ncc = "reno"\n'), "--out", str(d / "o")]


def _sweep_runs(d: Path) -> list[str]:
    return ["sweep", _file(d, "sweep.toml", BASE + '[sweep]\nseeds = 1000\n[[sweep.axis]]\nname = "limit"\n'
                           'path = "links[0].queue.limit"\nrange = { start = 2, stop = 1002, step = 1 }\n'),
            "--out", str(d / "s"), "--dry-run"]


def _recorded(d: Path) -> list[str]:
    return ["run", _file(d, "rec.toml", BASE.replace('duration = "1s"', 'duration = "10000000s"\n'
                                                     'sample_interval = "1ms"') + "[monitor]\ncwnd = true\n"),
            "--out", str(d / "o"), "--no-plots"]


def _trace_lines(d: Path) -> list[str]:
    return ["run", _file(d, "tr.toml", BASE + "[trace]\nmax_lines = 5000001\n"), "--out", str(d / "o"), "--no-plots"]


def _loss_packets(d: Path) -> list[str]:
    packets = ", ".join(str(i) for i in range(100_001))
    return ["run", _file(d, "loss.toml", BASE.replace('delay = "10ms"\n', f'delay = "10ms"\nloss = {{ packets = [{packets}] }}\n')),
            "--out", str(d / "o"), "--no-plots"]


def _down_intervals(d: Path) -> list[str]:
    down = ", ".join(f'["{2 * i + 1}s", "{2 * i + 2}s"]' for i in range(10_001))
    return ["run", _file(d, "down.toml", BASE.replace('delay = "10ms"\n', f'delay = "10ms"\ndown = [{down}]\n')),
            "--out", str(d / "o"), "--no-plots"]


def _delay_trace_bytes(d: Path) -> list[str]:
    trace = d / "d.txt"
    with open(trace, "wb") as fh:
        fh.write(b"0 10ms\n")
        fh.truncate((64 << 20) + 1)
    return ["run", _file(d, "dt.toml", BASE.replace('delay = "10ms"\n', 'delay_trace = "d.txt"\n')),
            "--out", str(d / "o"), "--no-plots"]


def _override_nesting(d: Path) -> list[str]:
    return ["run", _file(d, "s.toml", BASE), "--out", str(d / "o"), "--no-plots",
            "--set", "run.x=" + "[" * 65 + "]" * 65]


def _override_steps(d: Path) -> list[str]:
    return ["run", _file(d, "s.toml", BASE), "--out", str(d / "o"), "--no-plots", "--set", ".".join(["a"] * 33) + "=1"]


def _name_length(d: Path) -> list[str]:
    return ["run", _file(d, "n.toml", BASE.replace('cc = "vegas"', f'cc = "vegas"\nname = "{"f" * 65}"')),
            "--out", str(d / "o"), "--no-plots"]


PROBES = [
    Probe("scenario text", "64 MiB", _scenario_bytes),
    Probe("flows, as [[flows]] tables", "2^20", _flow_tables),
    Probe("flows, as a range group", "2^20", _flow_group),
    Probe("links, as [[links]] tables", "2^20", _link_tables),
    Probe("UDP sources, as [[udp]] tables", "2^20", _udp_tables),
    Probe("dumbbell pairs", "100,000", _dumbbell_pairs),
    Probe("runs per sweep", "1,000,000", _sweep_runs),
    Probe("recorded series", "1 GiB", _recorded),
    Probe("packet trace lines", "5,000,000", _trace_lines),
    Probe("loss pattern packets", "100,000", _loss_packets),
    Probe("down intervals per link", "10,000", _down_intervals),
    Probe("delay trace file", "64 MiB", _delay_trace_bytes),
    Probe("override value nesting", "64", _override_nesting),
    Probe("override path parts", "32", _override_steps),
    Probe("names", "64 characters", _name_length),
]


def at_limit_probes() -> list[Probe]:
    def by_seeds(d: Path) -> list[str]:
        return ["sweep", _file(d, "sweep.toml", BASE + '[sweep]\nseeds = 1000\n[[sweep.axis]]\nname = "limit"\n'
                               'path = "links[0].queue.limit"\nrange = { start = 2, stop = 1001, step = 1 }\n'),
                "--out", str(d / "s"), "--dry-run"]

    def by_points(d: Path) -> list[str]:
        return ["sweep", _file(d, "sweep.toml", BASE + '[sweep]\nseeds = 1\n[[sweep.axis]]\nname = "limit"\n'
                               'path = "links[0].queue.limit"\nrange = { start = 2, stop = 1000001, step = 1 }\n'),
                "--out", str(d / "s"), "--dry-run"]

    return [Probe("sweep plan at the limit: 1,000 points x 1,000 seeds", "1,000,000 runs", by_seeds),
            Probe("sweep plan at the limit: 1,000,000 points x 1 seed", "1,000,000 runs", by_points)]


def measure(probe: Probe) -> dict:
    with tempfile.TemporaryDirectory(prefix="vegaslab-limits-") as tmp:
        args = probe.make(Path(tmp))
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "vegaslab", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp)
        out, err = proc.communicate()
        wall = time.perf_counter() - t0
        out, err = out.replace(tmp, "DIR"), err.replace(tmp, "DIR")
    import resource

    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # this probe's only (main forks per probe)
    message = next((line for line in err.splitlines() if line.strip()), out.strip().splitlines()[0] if out.strip() else "")
    return {"limit": probe.name, "value": probe.limit, "exit": proc.returncode, "wall_s": round(wall, 2),
            "peak_mb": round(peak_kb / 1024), "message": message[:200]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="also write the rows as JSON here")
    p.add_argument("--at-limit", action="store_true", help="also time the sweep plans at the 1,000,000-run limit")
    args = p.parse_args()
    probes = PROBES + (at_limit_probes() if args.at_limit else [])
    rows = []
    print("| limit | value | exit | wall s | peak MB | message |")
    print("|---|---|---:|---:|---:|---|")
    for probe in probes:
        # Each probe in its own process tree, so RUSAGE_CHILDREN's maximum is this probe's alone.
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.write(w, json.dumps(measure(probe)).encode())
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as fh:
            row = json.loads(fh.read())
        os.waitpid(pid, 0)
        rows.append(row)
        print(f"| {row['limit']} | {row['value']} | {row['exit']} | {row['wall_s']:.2f} | {row['peak_mb']} | "
              f"{row['message'].replace('|', '/')} |", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"when": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
