"""Type stubs for ``vegaslab._core``, the compiled bridge (crates/vegaslab-py/src/lib.rs).

Scenarios go in as TOML text plus ``KEY=VALUE`` overrides. Results come out of one function,
:func:`run`: ``meta`` as JSON text, and every table and time series as an :class:`ArrowBatch`, an
Arrow record batch with the Arrow PyCapsule interface (``pyarrow.record_batch(batch)`` imports
it without a copy); :func:`vegaslab.core.run_core` is its Python side.
Every function raises :class:`ScenarioError` for a bad scenario and :class:`SimulationError`
for an internal failure (never a Rust panic).
"""
from typing import Callable, Sequence

class ScenarioError(ValueError):
    file: str
    field: str
    kind: str
    reason: str

class SimulationError(RuntimeError): ...

class ControllerError(RuntimeError):
    """A Python controller's hook raised (the exception is the ``__cause__``) or handed back a
    window the sender cannot use (crates/vegaslab-py/src/controllers.rs)."""

#: What builds Python controllers: ``loader("package.module:Class")`` returns the class, the
#: optional hooks it overrides and its module's SHA-256 (:func:`vegaslab.controller.load`).
Loader = Callable[[str], tuple[type, list[str], str | None]]

class Window:
    """The sender's variables a hook sees; ``cwnd`` and ``ssthresh`` may be set."""
    cwnd: float
    ssthresh: int
    next_seq: int
    last_ack: int
    max_window: float
    cwnd_limited: bool
    in_flight: int
    in_slow_start: bool

class Ack:
    seqno: int
    acked: int
    now: int
    elapsed: float

class RttSample:
    now: int
    rtt: float
    rtt_us: int
    queue_forward_s: float | None
    queue_backward_s: float | None

class Loss:
    kind: str
    window: float

class CwndEvent:
    kind: str
    elapsed: float | None
    now: int | None
    last_send: int | None

class ArrowBatch:
    """One table as an Arrow record batch (crates/vegaslab-py/src/arrow.rs has its column types)."""
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __len__(self) -> int: ...

def run(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
        progress: Callable[[float, float], object] | None = None, trace_dir: str | None = None,
        normalized: bool = False, controllers: Loader | None = None) -> tuple[str, dict[str, ArrowBatch], str | None]:
    """``(meta, tables, normalized)``: tables ``flows``, ``queues``, ``links``, ``udp``,
    ``series_flows``, ``series_queues``; the normalised scenario's canonical JSON with
    ``normalized``, else None. ``controllers`` builds the scenario's Python controllers
    (without it, a scenario naming one is refused); a hook's error is :class:`ControllerError`."""
def precheck_scenario(toml_text: str, source_name: str) -> None: ...
MAX_SCENARIO_BYTES: int
def validate_scenario(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
                       controllers: Loader | None = None) -> str: ...
def normalize_scenario_seeds(toml_text: str, source_name: str, seeds: Sequence[int],
                             overrides: Sequence[str] = ..., controllers: Loader | None = None) -> list[str]: ...
def expand_sweep(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def heuristic(name: str, inputs: Sequence[int]) -> tuple[int, int]: ...
def seeded_tick_phase(seed: int, index: int, tick: float) -> float: ...
def registry() -> str: ...
def scenario_schema() -> str: ...
def scenario_file_path(source: str, name: str) -> str: ...
def version() -> str: ...
def source_revision() -> str: ...
