"""Fingerprints of simulation results, to show that a speed change kept every result
bit-identical (every golden, every differential test and the reproduce --all summary must stay
so).

Each line is one run: a SHA-256 of the core's whole result document (every table and time
series, the packet-hop count included, in the JSON form of docs/results-format.md) without the simulation's wall time and its event count,
with the scenario file's path relative to the catalog (so two checkouts compare), then the
event count on its own. Runs: the benchmark (bench/grids-net2, 200 s), a 2,000-pair
dumbbell from scripts/bench_scale.py (1 s) and, per catalog entry, its quick runs at their
first seed (every catalog entry but wf-net4's, which takes minutes; `--all` adds it).

    python scripts/result_fingerprints.py [--out FILE] [--all] [--only SUBSTRING]
    python scripts/result_fingerprints.py --compare A.txt B.txt

`meta.events` is left out of the hash and printed beside it. A change that removes
events (an express hop, say) changes that count and no result, so `--compare` reports results
and event counts separately; `--show RUN` prints one run's document for a field-by-field look.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from vegaslab.core import run_core
from vegaslab.study.catalog import builtin_dir, list_entries

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale  # noqa: E402  (the scale benchmark's dumbbell)

#: Catalog entries left out unless `--all` (minutes each).
SLOW = {"wf-net4"}


def document(text: str, source: str, seed: int | None, overrides: list[str]) -> dict:
    """The core's result document of one run (its JSON form, rebuilt from the Arrow tables the
    core hands over: ``CoreRun.document``), without its wall time."""
    doc = run_core(text, source, seed, overrides).document()
    meta = doc.get("meta", {})
    meta.pop("wall_time_s", None)
    # The scenario's path as the core records it, relative to the catalog: two checkouts (a
    # worktree beside main) then fingerprint the same results alike.
    if isinstance(meta.get("source"), str) and meta["source"].startswith(f"{builtin_dir()}/"):
        meta["source"] = meta["source"][len(f"{builtin_dir()}/"):]
    return doc


def fingerprint(doc: dict) -> tuple[str, object]:
    """The hash of ``doc`` without its event count, and the event count."""
    meta = dict(doc.get("meta", {}))
    events = meta.pop("events", None)
    text = json.dumps({**doc, "meta": meta}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16], events


def runs(include_slow: bool):
    """(label, scenario text, source name, seed, overrides) of every fingerprinted run."""
    bench = builtin_dir() / "bench" / "grids-net2.toml"
    yield "bench/grids-net2", bench.read_text(), str(bench), None, []
    yield "dumbbell-2000-1s", bench_scale.scenario(2000), "dumbbell-2000", 1, ["run.duration=1s"]
    for entry in list_entries():
        if entry.id in SLOW and not include_slow:
            continue
        seed = entry.seeds(quick=True)[0]
        for spec in entry.runs(quick=True):
            yield f"{entry.id}/{spec.name}", spec.scenario_path.read_text(), str(spec.scenario_path), seed, list(spec.overrides)


def compare(a: Path, b: Path) -> int:
    """Print the runs whose results or event counts differ; exit status 1 when any results
    differ or a run is in one file only (event counts alone do not fail)."""
    def read(p: Path) -> dict[str, tuple[str, str]]:
        return {label: (digest, events) for label, digest, events in
                (line.split() for line in p.read_text().splitlines() if line.strip())}
    left, right = read(a), read(b)
    both = sorted(left.keys() & right.keys())
    differ = [k for k in both if left[k][0] != right[k][0]]
    events = [k for k in both if left[k][0] == right[k][0] and left[k][1] != right[k][1]]
    missing = sorted(left.keys() ^ right.keys())
    for k in differ:
        print(f"results differ: {k}")
    for k in events:
        print(f"same results, {left[k][1]} -> {right[k][1]}: {k}")
    for k in missing:
        print(f"in one file only: {k}")
    print(f"{len(both) - len(differ)} identical results ({len(events)} with other event counts), "
          f"{len(differ)} different, {len(missing)} unmatched")
    return 1 if differ or missing else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="write the fingerprints here as well as to stdout")
    ap.add_argument("--all", action="store_true", help="include the slow catalog entries (wf-net4)")
    ap.add_argument("--only", help="only runs whose label contains this")
    ap.add_argument("--show", help="print the document of the run with this label (no wall time)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two fingerprint files")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    lines = []
    for label, text, source, seed, overrides in runs(args.all):
        if args.show and label != args.show:
            continue
        if args.only and args.only not in label:
            continue
        doc = document(text, source, seed, overrides)
        if args.show:
            print(json.dumps(doc, sort_keys=True, indent=1))
            return 0
        digest, events = fingerprint(doc)
        line = f"{label} {digest} events={events}"
        print(line, flush=True)
        lines.append(line)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
