"""Running the compiled core on one scenario: :func:`run` (a simulation, returning
:class:`~vegaslab.results.Results`), :func:`validate`, :func:`normalize` (the scenario as the core
resolves it), :func:`provenance` and :func:`scenario_hash` (what a run records so that it can be
re-run exactly). The package's top level (``vegaslab.run`` ...) re-exports them; a sweep of
runs is :func:`vegaslab.sweeps.results.sweep` (``vegaslab.sweep``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .controller import load as load_controller
from .core import call_core, load_core, package_version, run_core
from .errors import ScenarioError, SimulationError, TraceError
from .scenario import Overrides, Scenario, normalise_overrides, overrides_blamed, scenario_source

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

__all__ = ["run", "validate", "normalize", "provenance", "scenario_hash", "MAX_SEED",
           "PROVENANCE_FORMAT", "LazyProgressBar", "check_seed", "normalize_text", "canonical_hash",
           "provenance_of"]


class LazyProgressBar:
    """A ``progress(sim_time_s, duration_s)`` callback that shows a tqdm bar only for runs
    that are still going after ``delay_s`` seconds of wall time (short runs stay quiet)."""

    def __init__(self, desc: str = "simulating", delay_s: float = 2.0) -> None:
        self.desc = desc
        self.delay_s = delay_s
        self._t0 = time.monotonic()
        self._bar = None

    def __call__(self, sim_time_s: float, duration_s: float) -> None:
        if self._bar is None:
            if time.monotonic() - self._t0 < self.delay_s:
                return
            from tqdm.auto import tqdm

            # disable=None: no bar frames when stderr is not a terminal (a redirected log).
            self._bar = tqdm(total=round(float(duration_s), 3), desc=self.desc, unit="sim-s", disable=None,
                             bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} sim-s [{elapsed}<{remaining}]")
        self._bar.n = min(round(float(sim_time_s), 3), self._bar.total)
        self._bar.refresh()

    def close(self) -> None:
        """Fill and close the bar, if one was shown."""
        if self._bar is not None:
            self._bar.n = self._bar.total
            self._bar.refresh()
            self._bar.close()
            self._bar = None


def validate(scenario: Scenario, *, overrides: Overrides | None = ()) -> dict:
    """Validate a scenario with the core and return its normalised form as a dict."""
    text, source = scenario_source(scenario)
    core = load_core()
    ovr = normalise_overrides(overrides)
    with overrides_blamed(text, source, ovr):
        doc = call_core(core.validate_scenario, text, source, ovr)
    return json.loads(doc)


#: Largest seed accepted (``run.seed`` is a TOML integer, at most 2**63 - 1).
MAX_SEED = 2**63 - 1


def check_seed(seed: Any, source: str) -> None:
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(f"{source}: seed: must be a whole number from 0 to 2**63-1 ({MAX_SEED}, the range "
                            f"of run.seed), got {seed!r}")


def normalize_text(text: str, source: str, seed: int | None, overrides: list[str]) -> dict:
    """:func:`normalize` of a scenario text already read (so that a caller that also runs the
    text normalises exactly what it ran, not a file re-read later)."""
    check_seed(seed, source)
    core = load_core()
    with overrides_blamed(text, source, overrides):
        return json.loads(call_core(core.normalize_scenario, text, source, seed, overrides, load_controller))


def normalize(scenario: Scenario, *, seed: int | None = None, overrides: Overrides | None = ()) -> dict:
    """The normalised scenario, as the core resolves it before a run: every default filled in,
    times in integer nanoseconds (keys ending in ``_ns``), bandwidths in bit/s, sizes in bytes,
    the content of referenced files included and hashed (``files``), no file paths.

    It is what the ns-2 bridge translates, what results are cached under and what provenance
    records; the layout is versioned by its ``format`` key.
    """
    text, source = scenario_source(scenario)
    return normalize_text(text, source, seed, normalise_overrides(overrides))


def scenario_hash(normalized: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a normalised scenario in canonical JSON (sorted keys, no spaces): two
    runs with the same hash ran the same resolved input, referenced files' content included."""
    return canonical_hash(json.dumps(normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def canonical_hash(text: str) -> str:
    """:func:`scenario_hash` of a normalised scenario given as the core's canonical text (sorted
    keys, no spaces, floats as Python prints them: crates/vegaslab-sim normalize::to_json), without
    parsing and printing it again; tests/test_normalize.py checks the two agree."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Layout version of the ``provenance`` record (bump when its keys change meaning).
PROVENANCE_FORMAT = 1


def provenance_of(normalized: dict, source: str, seed: int | None, overrides: list[str],
                   digest: str | None = None) -> dict:
    import shlex

    core = load_core()
    effective_seed = normalized.get("seed", seed)
    command = None
    if not source.startswith("<"):  # a file, not "<string>" or "<dict>"
        # --no-plots: the monitors the CLI would add are already among the recorded overrides.
        parts = ["vegaslab", "run", source, "--no-plots", "--seed", str(effective_seed)]
        for o in overrides:
            parts += ["--set", o]
        command = shlex.join(parts)
    return {
        "format": PROVENANCE_FORMAT,
        "source": source,
        "overrides": list(overrides),
        "seed": effective_seed,
        "scenario_sha256": digest or scenario_hash(normalized),
        "vegaslab_version": package_version(),
        "core_version": str(call_core(core.version)),
        "source_revision": str(call_core(core.source_revision)),
        "command": command,
        "scenario": normalized,
    }


def provenance(scenario: Scenario, *, seed: int | None = None, overrides: Overrides | None = ()) -> dict:
    """What a run of this scenario records so that it can be re-run exactly: the normalised
    scenario (:func:`normalize`) and its SHA-256, the overrides, the effective seed, the source
    file, the package and core versions, the core's source revision and a ``vegaslab run``
    command line. :func:`run` stores it as ``meta["provenance"]`` (so ``meta.json`` of
    ``Results.to_dir`` and every reproduce run directory carry it)."""
    text, source = scenario_source(scenario)
    ovr = normalise_overrides(overrides)
    return provenance_of(normalize_text(text, source, seed, ovr), source, seed, ovr)


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    overrides: Overrides | None = (),
    progress: bool | Callable[[float, float], None] = False,
    trace_dir: str | os.PathLike | None = None,
) -> "Results":
    """Run one simulation and return its :class:`Results`.

    scenario:  path to a ``.toml`` file, a built-in catalog id (``"va-reroute"``), TOML text
               (a string with a line break; any other string is a path or an id), or a dict
               (docs/scenario-format.md).
    seed:      overrides ``run.seed``.
    overrides: ``["flows[0].cc=newreno", "run.duration=100s"]`` or ``{"flows[0].cc": "newreno"}``;
               a ``cc`` may be a :class:`vegaslab.Controller` subclass (``{"flows[0].cc": MyCC}``),
               run in this process (docs/your-algorithm.md), or a compiled BPF struct_ops object,
               as a path (``{"flows[0].cc": Path("algo.bpf.o")}``) or a table
               (``{"flows[0].cc": {"bpf": "algo.bpf.o"}}``; docs/scenario-format.md).
    progress:  True for a tqdm bar on runs longer than ~2 s, or a callable
               ``progress(sim_time_s, duration_s)`` called every ~0.2 s of wall time.
    trace_dir: an existing directory to create the scenario's packet trace in (``[trace]``;
               its ``file`` is a plain name, and a file of that name already there is an
               error: a trace never replaces a file). Without it the trace goes into a
               private temporary directory that lives as long as the :class:`Results`:
               ``res.trace_path`` is the file, and ``res.to_dir(path)`` saves it with the
               tables. A trace that cannot be written raises :class:`TraceError`, which
               carries the results.
    """
    text, source = scenario_source(scenario)
    check_seed(seed, source)
    ovr = normalise_overrides(overrides)
    bar = LazyProgressBar() if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    own_dir = trace_dir is None
    directory = tempfile.mkdtemp(prefix="vegaslab-trace-") if own_dir else os.fspath(trace_dir)
    try:
        try:
            with overrides_blamed(text, source, ovr):
                core_run = run_core(text, source, seed, ovr, callback, trace_dir=directory, normalized=True)
        finally:
            if bar is not None:
                bar.close()
        # Imported only now (numpy, ~0.1 s; pandas waits until a table is read): `vegaslab run`
        # loads it on another thread meanwhile.
        from .results import Results

        try:
            res = Results._from_core(core_run)
        except (ValueError, KeyError, TypeError) as exc:
            raise SimulationError(f"the core returned a malformed results document: {exc}") from exc
        normalized = core_run.normalized
        if normalized is None:
            raise SimulationError(f"{source}: the core returned no normalised scenario")
        # Provenance: the normalised scenario the core ran, from the same parse, and the hash of
        # its canonical text as the core wrote it (equal to `scenario_hash` of the parsed document).
        res.meta["provenance"] = provenance_of(json.loads(normalized), source, seed, ovr,
                                                digest=canonical_hash(normalized))
        trace = res.meta.get("trace")
        if isinstance(trace, dict):
            if trace.get("error"):
                raise TraceError(f"{source}: {trace['error']}", res)
            res._keep_trace(Path(directory) / trace["file"], owned_dir=directory if own_dir else None)
            own_dir = False  # the Results removes it when it is collected
        return res
    finally:
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)
