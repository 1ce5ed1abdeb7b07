"""The standing comparison suite (`vegaslab compare --suite`): every case of a manifest
(``examples/kernel/suite/cases.toml``) run several times on the kernel and once in the
simulator, judged flow by flow against the kernel's run-to-run range
(:mod:`vegaslab.testbed.suite_verdict`) and reported (:mod:`vegaslab.testbed.suite_report`).

Output directory, per case ``DIR/<case>/``: ``kernel/run-<i>/`` (each kernel run's Results
directory), ``kernel/kernel.json`` (what the kernel side was run from: the scenario's and its files' SHA-256,
the overrides, the stack switches, the runs, or why it was not run), ``sim/`` (the simulator's
run) and ``index.html`` (`vegaslab compare --kernel`'s report of the first kernel run: cwnd,
RTT and throughput overlaid per flow). A later call with ``reuse_kernel=DIR`` reads the stored kernel runs instead of running
the kernel, so the simulator side (with ``sim_overrides``, e.g. ``tcp.sack=false``) can be
recomputed against the same kernel runs.

The simulator is deterministic and none of the suite's scenarios draws random numbers, so a
case has one simulator run (with the scenario's seed).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import VegaslabError
from ..results import Results
from ..safe_io import write_file
from ..scenario import load_scenario
from ..simulation import normalize, run as simulate
from ..spelling import did_you_mean
from .compare import summary_table, write_report
from .plan import PlanError
from .stack import Stack
from .suite_verdict import flow_ranges, judge, worst

DEFAULT_RUNS = 5
#: The manifest `vegaslab compare --suite` reads unless given another, relative to the
#: working directory (the repository's root, where `make compare-kernel` runs).
DEFAULT_MANIFEST = Path("examples") / "kernel" / "suite" / "cases.toml"
#: What the simulator records for the comparison, as compare.py does.
MONITORS = ("monitor.cwnd=true", "monitor.throughput=true", "run.sample_interval=10ms")
KERNEL_RECORD = "kernel.json"


class SuiteError(VegaslabError, ValueError):
    """A bad manifest or selection; the message names the file and field."""


@dataclass(frozen=True)
class Case:
    name: str
    scenario: Path
    title: str
    overrides: tuple[str, ...] = ()


@dataclass
class CaseOutcome:
    case: Case
    #: "ran"; "not run" (the testbed refused the scenario); "error" (anything else failed).
    status: str
    reason: str = ""
    #: judge(flow_ranges(...)) when status is "ran".
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    kernel_runs: int = 0
    kernel_wall_s: float = 0.0
    sim_wall_s: float = 0.0
    #: Where the kernel runs were read from (this case's directory, or the reused one's).
    kernel_dir: str = ""

    @property
    def verdict(self) -> str:
        return worst(self.table.verdict) if self.status == "ran" else "error"


@dataclass
class SuiteResult:
    cases: list[CaseOutcome]
    wall_s: float
    runs: int
    overrides: list[str]
    sim_overrides: list[str]
    stack: Stack
    reuse_kernel: str | None
    out: Path
    report: Path | None = None


def read_cases(path: str | os.PathLike) -> list[Case]:
    """The manifest's cases: each ``[[case]]`` has ``name``, ``scenario`` (relative to the
    manifest), ``title`` and optionally ``set`` (a list of override strings)."""
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SuiteError(f"{path}: cannot read the suite's manifest: {e}") from e
    entries = doc.get("case")
    if not isinstance(entries, list) or not entries:
        raise SuiteError(f"{path}: case: the manifest needs at least one [[case]]")
    cases, seen = [], set()
    for i, entry in enumerate(entries):
        where = f"{path}: case[{i}]"
        unknown = sorted(set(entry) - {"name", "scenario", "title", "set"})
        if unknown:
            raise SuiteError(f"{where}.{unknown[0]}: unknown key (allowed: name, scenario, title, set)")
        for key in ("name", "scenario", "title"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise SuiteError(f"{where}.{key}: required, a non-empty string")
        name = entry["name"]
        if name in seen or "/" in name or name.startswith("."):
            raise SuiteError(f"{where}.name: {name!r} must be unique and a plain directory name")
        overrides = entry.get("set", [])
        if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
            raise SuiteError(f"{where}.set: a list of KEY=VALUE strings")
        seen.add(name)
        cases.append(Case(name, path.parent / entry["scenario"], entry["title"], tuple(overrides)))
    return cases


def select(cases: list[Case], names: list[str] | None) -> list[Case]:
    """The cases named in ``names`` (all when None), in the manifest's order."""
    if not names:
        return list(cases)
    unknown = sorted(set(names) - {c.name for c in cases})
    if unknown:
        hint = did_you_mean(unknown[0], [c.name for c in cases])
        raise SuiteError(f"--cases: no case {', '.join(unknown)}{hint} (cases: {', '.join(c.name for c in cases)})")
    return [c for c in cases if c.name in names]


def _kernel_record(case: Case, overrides: list[str], stack: Stack) -> dict:
    """What identifies a case's kernel side: a reused run must have been made from the same,
    the files the scenario reads included (a BPF object, a delay trace: the normalised
    scenario's ``files``, by content)."""
    every = [*case.overrides, *overrides]
    files = normalize(case.scenario, overrides=every).get("files", [])
    return {"scenario": str(case.scenario),
            "scenario_sha256": hashlib.sha256(case.scenario.read_bytes()).hexdigest(),
            "files": [{k: f[k] for k in ("field", "name", "sha256")} for f in files],
            "overrides": every, "stack": stack.changes()}


def _run_dirs(kernel_dir: Path) -> list[Path]:
    return sorted((p for p in kernel_dir.glob("run-*") if p.is_dir()), key=lambda p: int(p.name[4:]))


def _kernel_side(case: Case, *, out: Path, runs: int, overrides: list[str], stack: Stack,
                 kernel_run: Callable) -> tuple[list[Results], str, str]:
    """Run the case ``runs`` times on the kernel, storing each run under ``out/kernel``; returns
    the runs, the status and the reason. A refusal by the testbed's plan is "not run"."""
    try:
        record = _kernel_record(case, overrides, stack)
    except VegaslabError as e:
        return [], "error", f"the scenario: {e}"
    kdir = out / "kernel"
    kdir.mkdir(parents=True, exist_ok=True)
    done: list[Results] = []
    status, reason = "ran", ""
    for i in range(1, runs + 1):
        try:
            r = kernel_run(case.scenario, overrides=record["overrides"], stack=stack)
        except PlanError as e:
            status, reason = "not run", str(e)
            break
        except VegaslabError as e:
            status, reason = "error", f"kernel run {i} of {runs}: {e}"
            break
        r.to_dir(kdir / f"run-{i}")
        done.append(r)
    for stale in _run_dirs(kdir)[len(done):]:  # a previous suite's further runs, not this one's
        shutil.rmtree(stale)
    write_file(kdir, KERNEL_RECORD, json.dumps({**record, "status": status, "reason": reason,
                                                "runs": len(done)}, indent=2) + "\n")
    return done, status, reason


def _stored_kernel_side(case: Case, *, source: Path, overrides: list[str],
                        stack: Stack) -> tuple[list[Results], str, str]:
    """The kernel runs a previous suite stored for ``case`` under ``source``."""
    kdir = source / case.name / "kernel"
    try:
        stored = json.loads((kdir / KERNEL_RECORD).read_text())
    except (OSError, ValueError) as e:
        return [], "error", f"no stored kernel runs to reuse ({kdir / KERNEL_RECORD}: {e})"
    try:
        want = _kernel_record(case, overrides, stack)
    except VegaslabError as e:
        return [], "error", f"the scenario: {e}"
    for key in ("scenario_sha256", "files", "overrides", "stack"):
        if stored.get(key) != want[key]:
            return [], "error", (f"the stored kernel runs in {kdir} were made with another {key} "
                                 f"({stored.get(key)!r}, now {want[key]!r}); run the kernel again")
    if stored.get("status") != "ran":
        return [], stored.get("status", "error"), stored.get("reason", "")
    dirs = _run_dirs(kdir)
    if len(dirs) != stored.get("runs"):
        return [], "error", f"{kdir}: {stored.get('runs')} runs recorded, {len(dirs)} stored"
    return [Results.from_dir(d) for d in dirs], "ran", ""


def each_flow(overrides, scenario: str | os.PathLike) -> list[str]:
    """``overrides`` with every ``flows[*].KEY=VALUE`` written once per flow entry of
    ``scenario`` (``flows[0].KEY=VALUE``, ...): one setting for every flow of every case, such
    as switching one of Linux's TCP mechanisms off in the simulator (``--sim-set
    'flows[*].tcp.linux.sack=false'``)."""
    out = []
    for o in overrides:
        if o.startswith("flows[*]."):
            n = len(load_scenario(Path(scenario)).get("flows", []))
            out.extend(f"flows[{i}].{o[len('flows[*].'):]}" for i in range(n))
        else:
            out.append(o)
    return out


def run_case(case: Case, *, out: Path, runs: int = DEFAULT_RUNS, overrides=(), sim_overrides=(),
             stack: Stack = Stack(), reuse_kernel: Path | None = None,
             kernel_run: Callable | None = None) -> CaseOutcome:
    """One case: its kernel runs (made, or read from ``reuse_kernel``), its simulator run and
    the judged per-flow table. Failures become the outcome's status, never an exception, so
    the other cases still run."""
    if kernel_run is None:
        from .run import run as kernel_run
    overrides, sim_overrides = each_flow(overrides, case.scenario), each_flow(sim_overrides, case.scenario)
    cdir = out / case.name
    started = time.monotonic()
    if reuse_kernel is None:
        kern, status, reason = _kernel_side(case, out=cdir, runs=runs, overrides=overrides, stack=stack,
                                            kernel_run=kernel_run)
        kernel_dir = cdir / "kernel"
    else:
        kern, status, reason = _stored_kernel_side(case, source=reuse_kernel, overrides=overrides, stack=stack)
        kernel_dir = reuse_kernel / case.name / "kernel"
    outcome = CaseOutcome(case, status, reason, kernel_runs=len(kern), kernel_dir=str(kernel_dir),
                          kernel_wall_s=time.monotonic() - started)
    if status != "ran":
        return outcome
    started = time.monotonic()
    try:
        sim = simulate(case.scenario, overrides=[*MONITORS, *case.overrides, *overrides, *sim_overrides])
    except VegaslabError as e:
        outcome.status, outcome.reason = "error", f"simulator: {e}"
        return outcome
    sim.to_dir(cdir / "sim")
    outcome.sim_wall_s = time.monotonic() - started
    outcome.table = judge(flow_ranges(sim, kern))
    # compare --kernel's report of the first kernel run: the time series overlaid per flow.
    write_report(cdir, f"{case.name}: simulator and kernel run 1 of {len(kern)}", summary_table(sim, kern[0]),
                 sim, kern[0], stack)
    return outcome


def run_suite(cases: list[Case], *, out: str | os.PathLike, runs: int = DEFAULT_RUNS, overrides=(),
              sim_overrides=(), stack: Stack = Stack(), reuse_kernel: str | os.PathLike | None = None,
              kernel_run: Callable | None = None, progress: Callable[[CaseOutcome], None] | None = None,
              ) -> SuiteResult:
    """Every case in turn (:func:`run_case`), then the report in ``out``
    (:func:`vegaslab.testbed.suite_report.write`). ``kernel_run`` stands in for the testbed
    (tests give fabricated runs)."""
    from .suite_report import write

    if runs < 1:
        raise SuiteError(f"--runs: {runs}; at least 1 kernel run per case")
    out = Path(out)
    reuse = None if reuse_kernel is None else Path(reuse_kernel)
    started = time.monotonic()
    outcomes = []
    for case in cases:
        outcome = run_case(case, out=out, runs=runs, overrides=overrides, sim_overrides=sim_overrides,
                           stack=stack, reuse_kernel=reuse, kernel_run=kernel_run)
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    result = SuiteResult(outcomes, time.monotonic() - started, runs, list(overrides), list(sim_overrides),
                         stack, None if reuse is None else str(reuse), out)
    result.report = write(result)
    return result
