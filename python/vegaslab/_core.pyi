"""Type stubs for ``vegaslab._core``, the compiled bridge (crates/vegaslab-py/src/lib.rs).

Scenarios go in as TOML text plus ``KEY=VALUE`` overrides; results come out as JSON
(docs/results-format.md), with the time series as typed columns of little-endian bytes
(``run_scenario_columns``), or with the tables as typed columns too (``run_scenario_tables``,
what :func:`vegaslab.run` uses).
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
class TableColumns(TypedDict):
    rows: int
    # (name, kind, values, present): kind "f64" | "i64" | "u64" (values: little-endian bytes),
    # "bool" (bytes, one per row), "str" (list of str), "none" (no value in any row; values
    # None); present None when every row has a value, else bytes, one per row (1: has one).
    columns: list[tuple[str, str, bytes | list[str] | None, bytes | None]]

class Tables(TypedDict):
    flows: TableColumns
    queues: TableColumns
    links: TableColumns
    udp: TableColumns

def run_scenario_tables(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...,
                        progress: Callable[[float, float], object] | None = None,
                        trace_dir: str | None = None) -> tuple[str, Tables, SeriesColumns, str]: ...
def precheck_scenario(toml_text: str, source_name: str) -> None: ...
MAX_SCENARIO_BYTES: int
def validate_scenario(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario(toml_text: str, source_name: str, seed: int | None = None, overrides: Sequence[str] = ...) -> str: ...
def normalize_scenario_seeds(toml_text: str, source_name: str, seeds: Sequence[int],
                             overrides: Sequence[str] = ...) -> list[str]: ...
def expand_sweep(toml_text: str, source_name: str, overrides: Sequence[str] = ...) -> str: ...
def heuristic(name: str, inputs: Sequence[int]) -> tuple[int, int]: ...
def seeded_tick_phase(seed: int, index: int, tick: float) -> float: ...
def registry() -> str: ...
def scenario_schema() -> str: ...
def version() -> str: ...
def source_revision() -> str: ...
