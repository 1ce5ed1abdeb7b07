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

class ArrowBatch:
    """One table as an Arrow record batch (crates/vegaslab-py/src/arrow.rs has its column types)."""
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __len__(self) -> int: ...

def run(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
        progress: Callable[[float, float], object] | None = None, trace_dir: str | None = None,
        normalized: bool = False) -> tuple[str, dict[str, ArrowBatch], str | None]:
    """``(meta, tables, normalized)``: tables ``flows``, ``queues``, ``links``, ``udp``,
    ``series_flows``, ``series_queues``; the normalised scenario's canonical JSON with
    ``normalized``, else None."""
def precheck_scenario(toml_text: str, source_name: str) -> None: ...
MAX_SCENARIO_BYTES: int
def validate_scenario(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario_seeds(toml_text: str, source_name: str, seeds: Sequence[int],
                             overrides: Sequence[str] = ...) -> list[str]: ...
def expand_sweep(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def heuristic(name: str, inputs: Sequence[int]) -> tuple[int, int]: ...
def seeded_tick_phase(seed: int, index: int, tick: float) -> float: ...
def version() -> str: ...
def source_revision() -> str: ...
