"""Type stubs for ``vegaslab._core``, the compiled bridge (crates/vegaslab-py/src/lib.rs).

Scenarios go in as TOML text plus ``KEY=VALUE`` overrides; results come out as JSON
(docs/results-format.md), or with the time series as typed columns of little-endian bytes.
Every function raises :class:`ScenarioError` for a bad scenario and :class:`SimulationError`
for an internal failure (never a Rust panic).
"""
from typing import Callable, Sequence, TypedDict

class ScenarioError(ValueError):
    file: str
    field: str
    kind: str
    reason: str

class SimulationError(RuntimeError): ...

class FlowColumns(TypedDict):
    time: bytes  # f64 seconds
    flow: bytes  # u32 indices into names
    names: list[str]
    cwnd: bytes  # f64, NaN where not sampled
    ssthresh: bytes
    rtt: bytes
    throughput_bps: bytes
    active: bytes  # u8
    extra: dict[str, bytes]  # algorithm variables, f64

class QueueColumns(TypedDict):
    time: bytes
    queue: bytes  # u32 indices into names
    names: list[str]
    length: bytes  # f64 packets
    extra: dict[str, bytes]  # f64: avg (RED's average queue, NaN on other queues' rows) when a RED queue is monitored

class SeriesColumns(TypedDict):
    flows: FlowColumns
    queues: QueueColumns

def run_scenario(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
                 progress: Callable[[float, float], object] | None = None) -> str: ...
def run_scenario_columns(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
                         progress: Callable[[float, float], object] | None = None) -> tuple[str, SeriesColumns]: ...
def validate_scenario(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...) -> str: ...
def expand_sweep(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def heuristic(name: str, inputs: Sequence[int]) -> tuple[int, int]: ...
def seeded_tick_phase(seed: int, index: int, tick: float) -> float: ...
def version() -> str: ...
def source_revision() -> str: ...
