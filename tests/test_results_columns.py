"""The columnar results boundary: the time series cross from Rust to Python as typed
columns (bytes wrapped by numpy), not JSON; the frames equal the JSON path's exactly."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from vegaslab import _core
from vegaslab.simulation import run
from vegaslab.study.catalog import builtin_dir
from vegaslab.results import Results

TABLES = ("flows", "queues", "links", "udp", "series_flows", "series_queues")


def _both(name: str, overrides: list[str]) -> tuple[Results, Results]:
    text = (builtin_dir() / name).read_text()
    by_json = Results.from_json(_core.run_scenario(text, name, 1, overrides, None))
    doc, series = _core.run_scenario_columns(text, name, 1, overrides, None)
    return by_json, Results.from_columns(doc, series)


@pytest.mark.parametrize("name, overrides", [
    # Vegas-A's algorithm columns (alpha, beta, ...) null for the NewReno flow.
    ("va-newreno-share.toml", ["run.duration=20s", "monitor.all_queues=true"]),
    # Per-flow connections (cwnd summed, newest connection's variables).
    ("av-two-users.toml", ["run.duration=20s"]),
    # No monitors at all: empty series.
    ("va-reroute.toml", ["run.duration=5s", "monitor.cwnd=false", "monitor.throughput=false", "monitor.queues=[]"]),
])
def test_the_columnar_series_equal_the_json_series(name, overrides):
    a, b = _both(name, overrides)
    for table in TABLES:
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True)
    assert {k: v for k, v in a.meta.items() if k != "wall_time_s"} == \
        {k: v for k, v in b.meta.items() if k != "wall_time_s"}


def test_the_json_document_keeps_its_series_with_names_per_row():
    text = (builtin_dir() / "va-newreno-share.toml").read_text()
    doc = json.loads(_core.run_scenario(text, "x", 1, ["run.duration=12s"], None))
    flows = doc["series"]["flows"]
    assert set(flows["flow"]) == {"f1", "nr"} and len(flows["flow"]) == len(flows["time_s"])
    doc2, _ = _core.run_scenario_columns(text, "x", 1, ["run.duration=12s"], None)
    assert json.loads(doc2)["series"]["flows"]["time_s"] == []  # the series travel as columns


def test_vegaslab_run_returns_writable_series_frames():
    r = run("va-reroute", overrides=["run.duration=2s"])
    r.series_flows.loc[0, "cwnd_pkts"] = -1.0  # numpy buffers from bytes are read-only unless copied
    assert r.series_flows.loc[0, "cwnd_pkts"] == -1.0
    assert r.series_flows.flow.iloc[0] == "f1"


@pytest.mark.parametrize("name, overrides", [
    ("va-newreno-share.toml", ["run.duration=20s", "monitor.all_queues=true"]),
    ("av-two-users.toml", ["run.duration=20s", "monitor.cwnd=false"]),  # cwnd, rtt columns all null
    ("va-reroute.toml", ["run.duration=5s", "monitor.cwnd=false", "monitor.throughput=false", "monitor.queues=[]"]),
])
def test_a_sweep_workers_store_tables_from_columns_equal_those_from_json(name, overrides):
    from vegaslab.sweeps.store import tables_from_document

    text = (builtin_dir() / name).read_text()
    by_json = tables_from_document(json.loads(_core.run_scenario(text, name, 1, overrides, None)), "k", 1, {}, {})
    doc, series = _core.run_scenario_columns(text, name, 1, overrides, None)
    by_columns = tables_from_document(json.loads(doc), "k", 1, {}, {}, series_columns=series)
    assert by_json.keys() == by_columns.keys()
    for table in by_json:
        assert by_json[table].equals(by_columns[table], check_metadata=True), table


def _files(res: Results, directory) -> dict[str, bytes]:
    """The bytes of the Parquet files ``res`` writes (meta.json aside: it has the wall time)."""
    directory.mkdir()
    return {p.name: p.read_bytes() for p in res.write_files(directory) if p.suffix == ".parquet"}


def _entries_first_runs():
    from vegaslab.study.catalog import list_entries

    for entry in list_entries():
        spec = entry.runs(quick=True)[0]
        yield pytest.param(spec.scenario_path, list(spec.overrides), id=entry.id)


@pytest.mark.parametrize("path, overrides", list(_entries_first_runs()))
def test_the_tables_as_typed_columns_equal_the_json_tables_for_every_catalog_entry(path, overrides, tmp_path):
    # The catalog covers every optional column: per-flow connections, RED's drop counts, the
    # packet-error model's, ns-2 Vegas's tie counts, UDP sources, link failures, RoVegas.
    text = path.read_text()
    # Short: 2 s past the last flow's or UDP source's start, at most the entry's own duration.
    import vegaslab

    norm = vegaslab.normalize(path, overrides=overrides)
    last_start = max((f["start_ns"] for f in [*norm["flows"], *norm["udp"]]), default=0)
    duration_ns = min(norm["duration_ns"], last_start + 2_000_000_000)
    overrides = [*overrides, f"run.duration={duration_ns}ns", "monitor.all_queues=true"]
    by_json = Results.from_json(_core.run_scenario(text, path.name, 1, overrides, None))
    meta, tables, series, normalized = _core.run_scenario_tables(text, path.name, 1, overrides, None)
    assert normalized == _core.normalize_scenario(text, path.name, 1, overrides)
    by_columns = Results.from_tables(meta, tables, series)
    # Printed and written while its tables are still the core's columns (vegaslab run's path) ...
    text_lazy, files_lazy = by_columns.format_table(), _files(by_columns, tmp_path / "lazy")
    assert not by_columns._frames
    for table in TABLES:
        pd.testing.assert_frame_equal(getattr(by_json, table), getattr(by_columns, table), check_exact=True)
    # ... the same as from the pandas frames, the JSON path's included.
    by_json.meta["wall_time_s"] = by_columns.meta["wall_time_s"]  # printed in the header
    assert by_columns.format_table() == text_lazy == by_json.format_table()
    assert _files(by_columns, tmp_path / "frames") == files_lazy == _files(by_json, tmp_path / "json")
    assert {k: v for k, v in by_json.meta.items() if k != "wall_time_s"} == \
        {k: v for k, v in by_columns.meta.items() if k != "wall_time_s"}


def test_a_table_column_missing_in_some_rows_is_nan_there_and_one_with_no_value_is_none():
    from vegaslab.results import table_columns

    present = bytes([1, 0])
    cols = table_columns({"rows": 2, "columns": [
        ("n", "u64", (7).to_bytes(8, "little") * 2, present),
        ("k", "u64", (7).to_bytes(8, "little") * 2, None),
        ("x", "f64", b"\x00" * 16, present),
        ("s", "str", ["a", ""], present),
        ("z", "none", None, bytes([0, 0])),
    ]})
    assert list(cols) == ["n", "k", "x", "s", "z"]
    assert cols["n"].dtype == "float64" and cols["n"][0] == 7 and pd.isna(cols["n"][1])
    assert cols["k"].dtype == "int64" and list(cols["k"]) == [7, 7]
    assert pd.isna(cols["x"][1]) and cols["s"][0] == "a" and pd.isna(cols["s"][1])
    assert list(cols["z"]) == [None, None]
