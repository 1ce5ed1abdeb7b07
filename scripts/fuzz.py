#!/usr/bin/env python3
"""The long fuzz run (``make fuzz``): generate mutated scenarios with hypothesis, run each in a
sandboxed worker (tests/fuzzer.py), print the counts and write every failing case to disk.

    python scripts/fuzz.py --cases 10000 [--seed N] [--jobs 2] [--out out/fuzz] [--minimise]

Counts printed: cases, ok (including runs stopped while still progressing), scenario errors,
crashes, hangs, panics, other exceptions, bad error messages, impossible results. Each failing
case goes to ``OUT/<n>-<category>/`` (scenario.toml, side files, case.json, report.txt);
``OUT/summary.md`` groups the failures by cause with one (optionally minimised) reproducer
each, and ``OUT/counts.json`` holds the counts. Exit status 1 when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))  # the fuzzer is test tooling, not part of the package

import fuzzer as fuzz  # noqa: E402


def generate(n: int, seed: int, strategy=None) -> list:
    """n cases from a hypothesis strategy (the scenario cases by default), reproducibly for a
    seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list = []
    if n <= 0:
        return out

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(strategy if strategy is not None else fuzz.cases())
    def collect(case):
        out.append(case)

    collect()
    return out[:n]


def run_one(worker: "fuzz.Worker", case, scratch: Path) -> "fuzz.Outcome":
    """One case of any surface: a study case is loaded and planned here (no simulation), the
    others run in the sandboxed worker."""
    if isinstance(case, fuzz.StudyCase):
        directory = Path(tempfile.mkdtemp(prefix="study-", dir=scratch))
        try:
            return fuzz.check_study_case(case, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    return worker.run(case)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000, help="number of cases (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--out", default=str(ROOT / "out" / "fuzz"), help="failing cases go here")
    ap.add_argument("--timeout", type=float, default=fuzz.DEFAULT_TIMEOUT_S,
                    help="seconds without an answer before a case is a hang (default %(default)s)")
    ap.add_argument("--budget", type=float, default=fuzz.DEFAULT_BUDGET_S,
                    help="wall seconds after which a still-progressing run is stopped (default %(default)s)")
    ap.add_argument("--memory", type=float, default=fuzz.DEFAULT_MEMORY_LIMIT / 2**30,
                    help="RLIMIT_AS of a worker, GiB (default %(default)s)")
    ap.add_argument("--fs-share", type=float, default=0.15,
                    help="share of the cases that plant files in output directories (default %(default)s)")
    ap.add_argument("--study-share", type=float, default=0.05,
                    help="share of the cases that are study files (default %(default)s)")
    ap.add_argument("--minimise", action="store_true",
                    help="shrink one reproducer per failure group (drops ops and overrides)")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    print(f"generating {args.cases} cases (seed {args.seed}) ...", flush=True)
    n_fs = int(round(args.cases * args.fs_share))
    n_study = int(round(args.cases * args.study_share))
    cases = (generate(args.cases - n_fs - n_study, args.seed) + generate(n_fs, args.seed, fuzz.fs_cases())
             + generate(n_study, args.seed, fuzz.study_cases()))
    print(f"generated {len(cases)} in {time.monotonic() - t0:.1f} s ({n_fs} file-system, {n_study} study); "
          f"running on {args.jobs} workers", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="vegaslab-fuzz-studies-"))

    out_dir = Path(args.out)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)

    todo: queue.Queue = queue.Queue()
    for i, case in enumerate(cases):
        todo.put((i, case))
    results: dict[int, fuzz.Outcome] = {}
    lock = threading.Lock()
    done = [0]
    t1 = time.monotonic()

    def work() -> None:
        with fuzz.Worker(timeout_s=args.timeout, budget_s=args.budget,
                         memory_limit=int(args.memory * 2**30)) as w:
            while True:
                try:
                    i, case = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    outcome = run_one(w, case, scratch)
                except Exception as exc:  # noqa: BLE001 - the harness itself failed on this case
                    outcome = fuzz.Outcome("exception", f"fuzz harness: {type(exc).__name__}: {exc}")
                with lock:
                    results[i] = outcome
                    if outcome.failed:
                        fuzz.write_failure(out_dir, i, case, outcome)
                    done[0] += 1
                    if done[0] % 200 == 0:
                        rate = done[0] / (time.monotonic() - t1)
                        print(f"  {done[0]}/{len(cases)} ({rate:.0f} cases/s)", flush=True)

    threads = [threading.Thread(target=work) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t1

    counts = Counter(o.category for o in results.values())
    groups: dict[str, list[int]] = defaultdict(list)
    for i, o in sorted(results.items()):
        if o.failed:
            groups[o.signature()].append(i)
    names = {"cases": len(results), "ok": counts["ok"] + counts["stopped"],
             "  of which stopped while progressing": counts["stopped"],
             "scenario errors": counts["scenario-error"], "crashes": counts["crash"],
             "hangs": counts["hang"], "panics": counts["panic"], "other exceptions": counts["exception"],
             "bad error messages": counts["bad-error"], "impossible results": counts["impossible"],
             "writes or reads outside the named directories": counts["unsafe"]}
    unsafe = sum(1 for o in results.values() if o.category == "ok"
                 and any(any(ord(c) < 32 or c in "[]{}$\"\\;" for c in n) for n in o.verdict.get("names", [])))
    print(f"\n{len(results)} cases in {wall:.0f} s (seed {args.seed}, {args.jobs} jobs)")
    for k, v in names.items():
        print(f"{k:>38}: {v}")
    print(f"{'(ok runs whose names hold control/Tcl characters)':>38}: {unsafe}")
    fs_exits = Counter(o.verdict.get("exit") for i, o in results.items() if isinstance(cases[i], fuzz.FsCase)
                       and o.category == "ok")
    if fs_exits:
        shown = ", ".join(f"{n} exited {code}" for code, n in sorted(fs_exits.items(), key=lambda kv: str(kv[0])))
        print(f"{'(planted output directories)':>38}: {shown}")
    print(f"{'failure groups':>38}: {len(groups)}")

    # Group summary, with one reproducer per group (minimised on request).
    lines = [f"# fuzz run: {len(results)} cases, seed {args.seed}\n", "| count | value |", "|---|---|"]
    lines += [f"| {k.strip()} | {v} |" for k, v in names.items()]
    lines.append("\n## Failures by cause\n")
    with fuzz.Worker(timeout_s=args.timeout, budget_s=args.budget,
                     memory_limit=int(args.memory * 2**30)) as w:
        for sig, idx in sorted(groups.items(), key=lambda kv: (fuzz.FAILING.index(results[kv[1][0]].category),
                                                              -len(kv[1]))):
            first = idx[0]
            case, outcome = cases[first], results[first]
            if args.minimise and isinstance(case, fuzz.Case):
                case, outcome = fuzz.minimise(case, outcome, w)
                fuzz.write_failure(out_dir / "minimised", first, case, outcome)
            lines.append(f"### {sig} ({len(idx)} cases; e.g. {first})\n")
            lines.append("```\n" + fuzz.describe(case, outcome, limit=3000) + "\n```\n")
            print(f"\n[{len(idx)}x] {sig}")
    with open(out_dir / "cases.jsonl", "w", encoding="utf-8") as fh:
        for i, o in sorted(results.items()):
            fh.write(json.dumps({"case": i, **_case_summary(cases[i]), "category": o.category,
                                 "exit": o.verdict.get("exit"), "signature": o.signature(),
                                 "wall_s": round(o.wall_s, 3)}) + "\n")
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="replace")
    (out_dir / "counts.json").write_text(json.dumps(
        {**{k.strip(): v for k, v in names.items()}, "seed": args.seed, "wall_s": round(wall, 1),
         "groups": {sig: idx for sig, idx in groups.items()}}, indent=1) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nfailing cases: {out_dir}/ (summary.md groups them by cause)")
    failed = sum(counts[c] for c in fuzz.FAILING)
    return 1 if failed else 0


def _case_summary(case) -> dict:
    """A case's surface and gist for cases.jsonl."""
    if isinstance(case, fuzz.FsCase):
        return {"surface": "files", "command": case.command, "plants": sorted(case.plants)}
    if isinstance(case, fuzz.StudyCase):
        return {"surface": "study", "ops": [op[0] for op in case.ops]}
    return {"surface": "scenario", "base": case.base, "api": case.api,
            "ops": [op[0] if op[0] != "set" else f"set {fuzz.override_key(op[1])}" for op in case.ops][:20]}


if __name__ == "__main__":
    sys.exit(main())
