"""vegaslab: fast, deterministic packet-level simulation of TCP Vegas and its variants.

The public API in one screen::

    import vegaslab

    res = vegaslab.run("va-reroute", overrides=["flows[0].cc=newreno"])
    print(res)                      # fixed-width summary table
    res.flows, res.queues           # pandas DataFrames (see docs/results-format.md)
    res.to_dir("out/va-reroute")    # Parquet + meta.json

A scenario is a path to a ``.toml`` file, a TOML text, or a ``dict`` with the same structure
(docs/scenario-format.md). The compiled core (``vegaslab._core``) is imported on first use, so
``import vegaslab`` (and everything that works on a saved results document) does not need it.

Every error raised by the core reaches you as :class:`ScenarioError` (the scenario is wrong:
the message names the file and the field) or :class:`SimulationError` (the simulator failed,
including an internal panic); both derive from :class:`VegaslabError`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results, ResultsSet, concat

# Python >= 3.11 only (pyproject's requires-python): the tests run on 3.11, and tomllib is the
# standard library's TOML reader there, so no tomli fallback is declared or kept.
import tomllib as _toml

__all__ = [
    "run",
    "sweep",
    "validate",
    "normalize",
    "provenance",
    "scenario_hash",
    "source_revision",
    "load_scenario",
    "to_toml",
    "format_override",
    "Results",
    "ResultsSet",
    "concat",
    "VegaslabError",
    "ScenarioError",
    "SimulationError",
    "TraceError",
    "core_version",
    "__version__",
]


@functools.cache
def _package_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return "0+unknown"
    try:
        return version("vegaslab")
    except PackageNotFoundError:
        return "0+unknown"



class VegaslabError(Exception):
    """Base class of every error vegaslab raises on purpose."""


class ScenarioError(VegaslabError, ValueError):
    """The scenario is invalid. The message names the file, the field and what was expected,
    e.g. ``va-reroute.toml: flows[1].start: must be >= 0 s, got "-3s"``.

    Errors from the core also carry the parts as attributes: ``file``, ``field`` (the dotted
    path, ``""`` for the whole file), ``kind`` (one of the core's error kinds: ``syntax``,
    ``unknown-field``, ``missing``, ``wrong-type``, ``out-of-range``, ``reference``,
    ``conflict``, ``too-large``, ``file``, ``invalid``) and ``reason`` (the message without
    file and field); they are ``None`` on errors raised by Python code."""

    file: "str | None" = None
    field: "str | None" = None
    kind: "str | None" = None
    reason: "str | None" = None


class SimulationError(VegaslabError, RuntimeError):
    """The simulation itself failed (including an internal panic of the Rust core)."""


class TraceError(SimulationError):
    """The run finished but its packet trace (``[trace]``) could not be written (disk full,
    an I/O error); the message names the path and the operating system's error. Nothing
    computed is lost: ``results`` holds the run's :class:`Results`."""

    def __init__(self, message: str, results: "Results") -> None:
        super().__init__(message)
        self.results = results


Scenario = Union[str, os.PathLike, Mapping[str, Any]]
Overrides = Union[Sequence[str], Mapping[str, Any]]


def _load_core():
    """Import the compiled core lazily, with a helpful message when it is not built."""
    try:
        from . import _core as core
    except ImportError as exc:
        raise VegaslabError(
            "the compiled core vegaslab._core is not available; build it with "
            "`maturin develop --release` (or `pip install .`) from the repository root"
        ) from exc
    return core


def core_version() -> str | None:
    """Version string of the compiled core, or None when it is not built."""
    try:
        return str(_load_core().version())
    except VegaslabError:
        return None


# --------------------------------------------------------------------------- scenario input


def _file_error(path: str | os.PathLike, reason: str) -> ScenarioError:
    err = ScenarioError(f"{os.fspath(path)}: {reason}")
    err.file, err.field, err.kind, err.reason = os.fspath(path), "", "file", reason
    return err


def _max_scenario_bytes() -> int:
    """The largest scenario text (the core's ``MAX_SCENARIO_BYTES``; 64 MiB when the core is
    not built, which is then not what reads the file)."""
    try:
        return int(_load_core().MAX_SCENARIO_BYTES)
    except (VegaslabError, AttributeError):
        return 64 << 20


def read_text_file(path: str | os.PathLike) -> str:
    """The text of a scenario (or catalog) file. A missing file raises FileNotFoundError; a file
    that cannot be read (permissions, a directory) or is not UTF-8 raises :class:`ScenarioError`
    naming the file and, for bad bytes, the line and byte offset, so no caller has to catch
    OSError or UnicodeDecodeError itself."""
    p = Path(path)
    limit = _max_scenario_bytes()
    try:
        with open(p, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:  # a regular file's size, known before a byte is read
                raise _file_error(p, f"has {size:,} bytes; a scenario may have at most {limit >> 20} MiB")
            data = fh.read(limit + 1)  # a pipe's size is known only by reading it
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise _file_error(p, "is a directory, not a scenario file") from None
    except OSError as exc:
        raise _file_error(p, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _file_error(p, f"has more than {limit:,} bytes; a scenario may have at most {limit >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _file_error(p, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line} "
                             f"(byte offset {exc.start}); save the file as UTF-8") from None


def load_scenario(path: str | os.PathLike) -> dict:
    """Read a scenario file as a plain dict (TOML parsed, not yet validated by the core)."""
    p = Path(path)
    text = read_text_file(p)
    try:
        core = _load_core()
    except VegaslabError:
        core = None  # without the compiled core the file is only parsed
    if core is not None:  # the core's checks before a parse: a file past a count limit is refused at once
        _call_core(core.precheck_scenario, text, os.fspath(p))
    try:
        return _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:  # Python's parser recurses per level; the core's stops near 80
        raise _file_error(p, "invalid TOML: arrays or tables nested too deep") from None


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    """One TOML value, inline (arrays and tables included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, os.PathLike):
        return json.dumps(os.fspath(value))
    if isinstance(value, Mapping):
        items = [f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} as TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _emit_table(table: Mapping[str, Any], prefix: str, out: list[str]) -> None:
    scalars, tables, arrays = [], [], []
    for key, value in table.items():
        if value is None:  # TOML has no null: leaving the key out means "use the default"
            continue
        if isinstance(value, Mapping):
            tables.append((key, value))
        elif _is_table_array(value):
            arrays.append((key, value))
        else:
            scalars.append((key, value))
    for key, value in scalars:
        out.append(f"{_toml_key(str(key))} = {_toml_value(value)}")
    for key, value in tables:
        path = f"{prefix}{_toml_key(str(key))}"
        out.extend(["", f"[{path}]"])
        _emit_table(value, path + ".", out)
    for key, value in arrays:
        path = f"{prefix}{_toml_key(str(key))}"
        for item in value:
            out.extend(["", f"[[{path}]]"])
            _emit_table(item, path + ".", out)


def to_toml(scenario: Mapping[str, Any]) -> str:
    """Serialise a scenario dict to TOML text (``None`` values are left out)."""
    out: list[str] = []
    _emit_table(scenario, "", out)
    return "\n".join(out).lstrip("\n") + "\n"


def format_override(key: str, value: Any) -> str:
    """``key=value`` for the core's override syntax (values are parsed as TOML when possible).

    Strings are written bare unless they would parse as another TOML type (``"10"``,
    ``"true"``), in which case they are quoted so that they stay strings.
    """
    if isinstance(value, str):
        try:
            _toml.loads(f"v = {value}")
        except (_toml.TOMLDecodeError, RecursionError):
            return f"{key}={value}"
        return f"{key}={json.dumps(value)}"
    return f"{key}={_toml_value(value)}"


def _normalise_overrides(overrides: Overrides | None) -> list[str]:
    if not overrides:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        return [format_override(str(k), v) for k, v in overrides.items()]
    return [str(o) for o in overrides]


def _looks_like_toml_text(text: str) -> bool:
    return "\n" in text or "=" in text or text.lstrip().startswith("[")


def _builtin_entry_path(name: object) -> Path | None:
    """The built-in catalog file of the entry id ``name`` ("va-reroute"), if there is one: a
    plain id only, never a path, so that a missing file is not silently replaced."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        return None
    from .catalog import builtin_dir

    candidate = builtin_dir() / f"{name}.toml"
    return candidate if candidate.is_file() else None


def _scenario_source(scenario: Scenario) -> tuple[str, str]:
    """(toml_text, source_name) for any accepted scenario form."""
    if isinstance(scenario, Mapping):
        meta = scenario.get("meta") if isinstance(scenario.get("meta"), Mapping) else {}
        name = str(meta.get("id", "<dict>")) if meta else "<dict>"
        return to_toml(scenario), name
    if isinstance(scenario, os.PathLike) or (
        isinstance(scenario, str) and not _looks_like_toml_text(scenario)
    ):
        path = Path(scenario)
        if not path.exists():
            builtin = _builtin_entry_path(scenario)
            if builtin is None:
                raise FileNotFoundError(f"{path}: scenario file not found (nor a catalog id; `vegaslab reproduce --list` lists them)")
            path, scenario = builtin, builtin
        return read_text_file(path), os.fspath(scenario)
    if isinstance(scenario, str):
        return scenario, "<string>"
    raise TypeError(f"scenario must be a path, a TOML text or a dict, not {type(scenario).__name__}")


# --------------------------------------------------------------------------- calling the core


def _call_core(fn: Callable[..., Any], *args: Any) -> Any:
    """Call into the core, translating every failure into a vegaslab exception."""
    core = _load_core()
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException derives BaseException
        message = str(exc) or type(exc).__name__
        core_scenario_error = getattr(core, "ScenarioError", None)
        core_simulation_error = getattr(core, "SimulationError", None)
        if core_scenario_error is not None and isinstance(exc, core_scenario_error):
            err = ScenarioError(message)
            for name in ("file", "field", "kind", "reason"):
                setattr(err, name, getattr(exc, name, None))
            raise err from exc
        if core_simulation_error is not None and isinstance(exc, core_simulation_error):
            raise SimulationError(message) from exc
        if type(exc).__name__ == "PanicException":
            raise SimulationError(f"internal error in the simulator core: {message}") from exc
        raise VegaslabError(f"{type(exc).__name__}: {message}") from exc


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
    text, source = _scenario_source(scenario)
    core = _load_core()
    doc = _call_core(core.validate_scenario, text, source, _normalise_overrides(overrides))
    return json.loads(doc)


#: Largest seed accepted (``run.seed`` is a TOML integer, at most 2**63 - 1).
MAX_SEED = 2**63 - 1


def _check_seed(seed: Any, source: str) -> None:
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ScenarioError(f"{source}: seed: must be a whole number from 0 to 2**63-1 ({MAX_SEED}, the range "
                            f"of run.seed), got {seed!r}")


def _normalize_text(text: str, source: str, seed: int | None, overrides: list[str]) -> dict:
    """:func:`normalize` of a scenario text already read (so that a caller that also runs the
    text normalises exactly what it ran, not a file re-read later)."""
    _check_seed(seed, source)
    core = _load_core()
    return json.loads(_call_core(core.normalize_scenario, text, source, seed, overrides))


def normalize(scenario: Scenario, *, seed: int | None = None, overrides: Overrides | None = ()) -> dict:
    """The normalised scenario, as the core resolves it before a run: every default filled in,
    times in integer nanoseconds (keys ending in ``_ns``), bandwidths in bit/s, sizes in bytes,
    the content of referenced files included and hashed (``files``), no file paths.

    It is what the ns-2 bridge translates, what results are cached under and what provenance
    records; the layout is versioned by its ``format`` key.
    """
    text, source = _scenario_source(scenario)
    return _normalize_text(text, source, seed, _normalise_overrides(overrides))


def scenario_hash(normalized: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a normalised scenario in canonical JSON (sorted keys, no spaces): two
    runs with the same hash ran the same resolved input, referenced files' content included."""
    return _canonical_hash(json.dumps(normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _canonical_hash(text: str) -> str:
    """:func:`scenario_hash` of a normalised scenario given as the core's canonical text (sorted
    keys, no spaces, floats as Python prints them: crates/vegaslab-sim normalize::to_json), without
    parsing and printing it again; tests/test_normalize.py checks the two agree."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Layout version of the ``provenance`` record (bump when its keys change meaning).
PROVENANCE_FORMAT = 1


def _provenance_of(normalized: dict, source: str, seed: int | None, overrides: list[str],
                   digest: str | None = None) -> dict:
    import shlex

    core = _load_core()
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
        "vegaslab_version": _package_version(),
        "core_version": str(_call_core(core.version)),
        "source_revision": str(_call_core(core.source_revision)),
        "command": command,
        "scenario": normalized,
    }


def provenance(scenario: Scenario, *, seed: int | None = None, overrides: Overrides | None = ()) -> dict:
    """What a run of this scenario records so that it can be re-run exactly: the normalised
    scenario (:func:`normalize`) and its SHA-256, the overrides, the effective seed, the source
    file, the package and core versions, the core's source revision and a ``vegaslab run``
    command line. :func:`run` stores it as ``meta["provenance"]`` (so ``meta.json`` of
    ``Results.to_dir`` and every reproduce run directory carry it)."""
    text, source = _scenario_source(scenario)
    ovr = _normalise_overrides(overrides)
    return _provenance_of(_normalize_text(text, source, seed, ovr), source, seed, ovr)


def source_revision() -> str:
    """The git revision the compiled core was built from (``+dirty`` when it had uncommitted
    changes, ``unknown`` when built outside a git checkout)."""
    return str(_call_core(_load_core().source_revision))


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    overrides: Overrides | None = (),
    progress: bool | Callable[[float, float], None] = False,
    trace_dir: str | os.PathLike | None = None,
) -> "Results":
    """Run one simulation and return its :class:`Results`.

    scenario:  path to a ``.toml`` file, a built-in catalog id (``"va-reroute"``), TOML text, or
               a dict (docs/scenario-format.md).
    seed:      overrides ``run.seed``.
    overrides: ``["flows[0].cc=newreno", "run.duration=100s"]`` or ``{"flows[0].cc": "newreno"}``.
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
    text, source = _scenario_source(scenario)
    _check_seed(seed, source)
    ovr = _normalise_overrides(overrides)
    bar = LazyProgressBar() if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    core = _load_core()
    own_dir = trace_dir is None
    directory = tempfile.mkdtemp(prefix="vegaslab-trace-") if own_dir else os.fspath(trace_dir)
    try:
        try:
            meta, tables, series, normalized = _call_core(core.run_scenario_tables, text, source, seed, ovr, callback,
                                                          directory)
        finally:
            if bar is not None:
                bar.close()
        # Imported only now (numpy, ~0.1 s; pandas waits until a table is read): `vegaslab run`
        # loads it on another thread meanwhile.
        from .results import Results

        try:
            res = Results.from_tables(meta, tables, series)
        except (ValueError, KeyError, TypeError) as exc:
            raise SimulationError(f"the core returned a malformed results document: {exc}") from exc
        # Provenance: the normalised scenario the core ran, from the same parse, and the hash of
        # its canonical text as the core wrote it (equal to `scenario_hash` of the parsed document).
        res.meta["provenance"] = _provenance_of(json.loads(normalized), source, seed, ovr,
                                                digest=_canonical_hash(normalized))
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


def sweep(scenario: Scenario, overrides: Overrides | None = (), out: str | os.PathLike | None = None,
          scheduler: Any = None, workers: int | None = None, **kw: Any):
    """Run a scenario's ``[sweep]`` into a results store and return its
    :class:`vegaslab.sweep_results.SweepResults` (tidy ``flows``/``runs``, ``to_xarray``,
    ``plot``); see :func:`vegaslab.sweep_results.sweep` and docs/sweep-format.md."""
    from .sweep_results import sweep as _sweep

    return _sweep(scenario, overrides, out=out, scheduler=scheduler, workers=workers, **kw)


def __getattr__(name: str) -> Any:
    # `__version__` is read from the installed package's metadata when first asked for:
    # importing `importlib.metadata` takes 35-45 ms, which no command should pay at its start
    # (`vegaslab run` imports it on its background import thread while the core simulates).
    if name == "__version__":
        return _package_version()
    # Results pulls in numpy (and pandas once a table is read); load it on first use so
    # `import vegaslab` stays light (the benchmark measures the simulator's memory in a child
    # process that imports only the core).
    if name == "Results":
        from .results import Results

        return Results
    if name in ("concat", "ResultsSet"):  # several runs as one set of tables
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module 'vegaslab' has no attribute {name!r}")
