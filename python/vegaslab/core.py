"""The bridge to the compiled core (the Rust extension ``vegaslab._core``): importing it on first
use, so that ``import vegaslab`` and everything that works on saved results does not need it,
and calling it so that every failure reaches Python as a vegaslab exception.

:func:`run_core` is the one way a run's results cross from the core: ``meta`` as JSON text and
every table and time series as an Arrow record batch, imported by pyarrow through the Arrow
PyCapsule interface (no copy, no text). :func:`vegaslab.run`, the sweep workers, the
fingerprint and benchmark scripts all go through it.
"""

from __future__ import annotations

import functools
import json
import math
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ControllerError, ScenarioError, SimulationError, VegaslabError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["load_core", "call_core", "core_version", "source_revision", "package_version", "max_scenario_bytes",
           "CoreRun", "run_core", "RESULT_TABLES"]

#: The tables and time series :func:`run_core` returns, by the names the core gives them.
RESULT_TABLES = ("flows", "queues", "links", "udp", "series_flows", "series_queues")


@functools.cache
def package_version() -> str:
    """The installed package's version (``0+unknown`` when it is not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return "0+unknown"
    try:
        return version("vegaslab")
    except PackageNotFoundError:
        return "0+unknown"


def load_core():
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
        return str(load_core().version())
    except VegaslabError:
        return None


def source_revision() -> str:
    """The git revision the compiled core was built from (``+dirty`` when it had uncommitted
    changes, ``unknown`` when built outside a git checkout)."""
    return str(call_core(load_core().source_revision))


def call_core(fn: Callable[..., Any], *args: Any) -> Any:
    """Call into the core, translating every failure into a vegaslab exception."""
    core = load_core()
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException derives BaseException
        message = str(exc) or type(exc).__name__
        core_scenario_error = getattr(core, "ScenarioError", None)
        core_simulation_error = getattr(core, "SimulationError", None)
        core_controller_error = getattr(core, "ControllerError", None)
        if core_scenario_error is not None and isinstance(exc, core_scenario_error):
            err = ScenarioError(message)
            for name in ("file", "field", "kind", "reason"):
                setattr(err, name, getattr(exc, name, None))
            raise err from exc
        if core_controller_error is not None and isinstance(exc, core_controller_error):
            cause = exc.__cause__ or exc
            raise ControllerError(message + _where_raised(cause)) from cause
        if core_simulation_error is not None and isinstance(exc, core_simulation_error):
            raise SimulationError(message) from exc
        if type(exc).__name__ == "PanicException":
            raise SimulationError(f"internal error in the simulator core: {message}") from exc
        raise VegaslabError(f"{type(exc).__name__}: {message}") from exc


def _where_raised(exc: BaseException) -> str:
    """`` (at FILE:LINE)``: where a Python controller's exception was raised, so that the
    command line's one-line error points at the line; empty without a traceback."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    return f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""


def max_scenario_bytes() -> int:
    """The largest scenario text (the core's ``MAX_SCENARIO_BYTES``; 64 MiB when the core is
    not built, which is then not what reads the file)."""
    try:
        return int(load_core().MAX_SCENARIO_BYTES)
    except (VegaslabError, AttributeError):
        return 64 << 20


@dataclass(frozen=True)
class CoreRun:
    """What one run of the core hands over (:func:`run_core`)."""

    #: The results' ``meta`` as the core wrote it (JSON text; :attr:`meta` parses it).
    meta_text: str
    #: Every table and time series (:data:`RESULT_TABLES`) as an Arrow record batch, each
    #: column in the core's type (crates/vegaslab-py/src/arrow.rs).
    tables: dict[str, "pa.RecordBatch"]
    #: The normalised scenario that ran, as the core's canonical JSON text (when asked for).
    normalized: str | None = None

    @property
    def meta(self) -> dict:
        """``meta`` as a dict (a fresh one on each read)."""
        return json.loads(self.meta_text)

    def document(self, *, series: bool = True) -> dict:
        """The run as the core's JSON document (docs/results-format.md, what the Rust command
        line ``vegaslab-sim`` prints): ``meta``, each table a list of row objects and ``series``
        an object of columns, equal to what parsing that document gives, value for value.
        A float that is not finite is None (JSON has no NaN nor infinity: the core writes
        null); a row's missing value is None, or no key at all where the core leaves such a
        field out of its rows (the column's ``vegaslab.json_missing`` metadata). Without
        ``series``, no ``series`` key. For the fingerprints and benchmarks that compare runs
        in that form; a program reads a run as :class:`vegaslab.Results`."""
        doc: dict[str, Any] = {"meta": self.meta}
        for name in RESULT_TABLES[:4]:
            doc[name] = _document_rows(self.tables[name])
        if series:
            doc["series"] = {"flows": _document_columns(self.tables["series_flows"]),
                             "queues": _document_columns(self.tables["series_queues"])}
        return doc


def run_core(text: str, source: str, seed: int | None, overrides: Sequence[str], progress: Callable[[float, float], Any] | None = None,
             *, trace_dir: str | None = None, normalized: bool = False) -> CoreRun:
    """Run a scenario text in the core (``vegaslab._core.run``): the GIL is released while it
    runs, ``progress(sim_time_s, duration_s)`` and Ctrl-C are served about every 0.2 s, and
    every failure is a vegaslab exception (:func:`call_core`). ``trace_dir``: where a
    ``[trace]`` is created (none is written without it); ``normalized``: also return the
    normalised scenario, from the same parse. Python controllers (``cc = "py:..."``) are
    loaded by :func:`vegaslab.controller.load` and run in this process."""
    from .controller import load

    core = load_core()
    meta, batches, normalized_text = call_core(core.run, text, source, seed, list(overrides), progress, trace_dir,
                                               normalized, load)
    try:
        tables = import_batches(batches)
    except (ValueError, KeyError, TypeError) as exc:
        raise SimulationError(f"{source}: the core returned malformed results tables: {exc}") from exc
    return CoreRun(meta, tables, normalized_text)


#: Field metadata of a results table's column (crates/vegaslab-py/src/arrow.rs): how the JSON
#: form writes a row's missing value, ``omitted`` (no key) or ``null``.
JSON_MISSING_KEY = b"vegaslab.json_missing"


def _json_value(v: Any) -> Any:
    """A value as the core's JSON writes it: a float that is not finite as null."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _document_columns(batch: "pa.RecordBatch") -> dict[str, list]:
    return {f.name: [_json_value(v) for v in batch.column(i).to_pylist()] for i, f in enumerate(batch.schema)}


def _document_rows(batch: "pa.RecordBatch") -> list[dict]:
    """A table's rows as the JSON form's objects: a null (a row without a value, not a NaN)
    in an ``omitted`` column is no key."""
    columns = [(f.name, batch.column(i).to_pylist(), (f.metadata or {}).get(JSON_MISSING_KEY) == b"omitted")
               for i, f in enumerate(batch.schema)]
    return [{name: _json_value(values[i]) for name, values, omitted in columns if not (omitted and values[i] is None)}
            for i in range(batch.num_rows)]


def import_batches(batches: Mapping[str, Any]) -> dict[str, "pa.RecordBatch"]:
    """The core's batches (objects with ``__arrow_c_array__``) as pyarrow record batches, by name;
    every table of :data:`RESULT_TABLES` must be there. pyarrow takes the Arrow buffers over
    without copying them (the Arrow PyCapsule interface, pyarrow 14 and later) and without
    importing pandas."""
    import pyarrow as pa

    missing = [name for name in RESULT_TABLES if name not in batches]
    if missing:
        raise KeyError(f"no {', '.join(missing)} table")
    return {name: pa.record_batch(batches[name]) for name in RESULT_TABLES}
