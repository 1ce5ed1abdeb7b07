"""The results boundary: every table and time series crosses from Rust to Python as typed Arrow
columns (``vegaslab.core.run_core``), never as JSON text; the frames, the files written and the
results store's tables equal what the same run's JSON document (docs/results-format.md) gives
exactly, value for value and dtype for dtype."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from vegaslab import _core
from vegaslab.core import run_core
from vegaslab.simulation import run
from vegaslab.study.catalog import builtin_dir
from vegaslab.results import Results

TABLES = ("flows", "queues", "links", "udp", "series_flows", "series_queues")


def _both(name: str, overrides: list[str]) -> tuple[Results, Results]:
    """The run read from its JSON document, and from the Arrow columns."""
    text = (builtin_dir() / name).read_text()
    core_run = run_core(text, name, 1, overrides)
    return Results.from_json(json.dumps(core_run.document())), Results._from_core(core_run)


@pytest.mark.parametrize("name, overrides", [
    # Vegas-A's algorithm columns (alpha, beta, ...) null for the NewReno flow.
    ("va-newreno-share.toml", ["run.duration=20s", "monitor.all_queues=true"]),
    # Per-flow connections (cwnd summed, newest connection's variables).
    ("av-two-users.toml", ["run.duration=20s"]),
    # No monitors at all: empty series.
    ("va-reroute.toml", ["run.duration=5s", "monitor.cwnd=false", "monitor.throughput=false", "monitor.queues=[]"]),
])
def test_the_arrow_series_equal_the_json_series(name, overrides):
    a, b = _both(name, overrides)
    for table in TABLES:
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_exact=True)
    assert {k: v for k, v in a.meta.items() if k != "wall_time_s"} == \
        {k: v for k, v in b.meta.items() if k != "wall_time_s"}


def test_the_series_names_cross_interned_as_a_dictionary_and_the_document_names_every_row():
    text = (builtin_dir() / "va-newreno-share.toml").read_text()
    core_run = run_core(text, "x", 1, ["run.duration=12s"])
    flow = core_run.tables["series_flows"].column("flow")
    assert pa.types.is_dictionary(flow.type) and sorted(flow.dictionary.to_pylist()) == ["f1", "nr"]
    flows = core_run.document()["series"]["flows"]
    assert set(flows["flow"]) == {"f1", "nr"} and len(flows["flow"]) == len(flows["time_s"])


def test_vegaslab_run_returns_writable_series_frames():
    r = run("va-reroute", overrides=["run.duration=2s"])
    r.series_flows.loc[0, "cwnd_pkts"] = -1.0  # numpy views of Arrow buffers are read-only unless copied
    assert r.series_flows.loc[0, "cwnd_pkts"] == -1.0
    assert r.series_flows.flow.iloc[0] == "f1"


def _json_store_table(rows, columns):
    """What the results store made of one table of the JSON document before the tables crossed
    as Arrow (the oracle: each column through ``pyarrow.array`` of the parsed values)."""
    if not rows:
        return None
    if not isinstance(rows, dict):
        names = dict.fromkeys(k for row in rows for k in row)
        rows = {k: [row.get(k) for row in rows] for k in names}
    table = pa.table({k: pa.array(v) for k, v in rows.items()})
    if table.num_rows == 0:
        return None
    order = [c for c in columns if c in table.column_names] + [c for c in table.column_names if c not in columns]
    table = table.select(order)
    for i, name in enumerate(table.column_names):
        if pa.types.is_null(table.schema.field(i).type):
            table = table.set_column(i, name, table.column(i).cast(pa.string() if name == columns[0] else pa.float64()))
    return table


@pytest.mark.parametrize("name, overrides", [
    ("va-newreno-share.toml", ["run.duration=20s", "monitor.all_queues=true"]),
    ("av-two-users.toml", ["run.duration=20s", "monitor.cwnd=false"]),  # cwnd, rtt columns all null
    ("va-reroute.toml", ["run.duration=5s", "monitor.cwnd=false", "monitor.throughput=false", "monitor.queues=[]"]),
    ("wf-net1-red.toml", ["run.duration=5s", "monitor.all_queues=true"]),  # RED's drop counts on some rows only
])
def test_a_sweep_workers_store_tables_equal_those_it_made_from_the_json_document(name, overrides):
    from vegaslab.results import TABLES as RESULT_TABLES
    from vegaslab.sweeps.store import keyed_tables, stored_tables
    from vegaslab.sweeps.store.tables import _aggregates, _with_keys

    text = (builtin_dir() / name).read_text()
    core_run = run_core(text, name, 1, overrides)
    doc = core_run.document()
    series = doc["series"]
    sources = {**{t: doc[t] for t in ("flows", "queues", "links", "udp")},
               "series_flows": series["flows"], "series_queues": series["queues"]}
    by_json = {t: _with_keys(table, "k", 1, {}, {}) for t, rows in sources.items()
               if (table := _json_store_table(rows, RESULT_TABLES[t][1])) is not None}
    stored = stored_tables(core_run.tables)
    by_arrow = keyed_tables(stored, "k", 1, {}, {})
    assert by_json.keys() == by_arrow.keys()
    for table in by_json:
        assert by_json[table].equals(by_arrow[table], check_metadata=True), table
    # The runs row's aggregates as from the document's rows.
    got = _aggregates(stored["flows"], stored["queues"])
    assert got["flows"] == len(doc["flows"])
    assert got["retransmitted_pkts_total"] == sum(f["retransmitted_pkts"] for f in doc["flows"])
    assert got["throughput_bps_total"] == sum(f["throughput_bps"] for f in doc["flows"])
    assert got["queue_dropped_pkts_total"] == sum(q["dropped_pkts"] for q in doc["queues"])


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
def test_the_tables_as_arrow_columns_equal_the_json_tables_for_every_catalog_entry(path, overrides, tmp_path):
    # The catalog covers every optional column: per-flow connections, RED's drop counts, the
    # packet-error model's, ns-2 Vegas's tie counts, UDP sources, link failures, RoVegas.
    text = path.read_text()
    # Short: 2 s past the last flow's or UDP source's start, at most the entry's own duration.
    import vegaslab

    norm = vegaslab.normalize(path, overrides=overrides)
    last_start = max((f["start_ns"] for f in [*norm["flows"], *norm["udp"]]), default=0)
    duration_ns = min(norm["duration_ns"], last_start + 2_000_000_000)
    overrides = [*overrides, f"run.duration={duration_ns}ns", "monitor.all_queues=true"]
    core_run = run_core(text, path.name, 1, overrides, normalized=True)
    assert core_run.normalized == _core.normalize_scenario(text, path.name, 1, overrides)
    by_json = Results.from_json(json.dumps(core_run.document()))
    by_columns = Results._from_core(core_run)
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
    from vegaslab.columns import core_columns

    batch = pa.record_batch({
        "n": pa.array([7, None], pa.uint64()),
        "k": pa.array([7, 7], pa.uint64()),
        "x": pa.array([1.5, None], pa.float64()),
        "s": pa.array(["a", None], pa.string()),
        "b": pa.array([True, None], pa.bool_()),
        "z": pa.nulls(2),
    })
    cols = core_columns({"flows": batch})["flows"]
    assert list(cols) == ["n", "k", "x", "s", "b", "z"]
    assert cols["n"].dtype == "float64" and cols["n"][0] == 7 and np.isnan(cols["n"][1])
    assert cols["k"].dtype == "int64" and list(cols["k"]) == [7, 7]
    assert cols["x"][0] == 1.5 and np.isnan(cols["x"][1])
    assert cols["s"][0] == "a" and pd.isna(cols["s"][1])
    assert cols["b"].dtype == object and cols["b"][0] is True and pd.isna(cols["b"][1])
    assert list(cols["z"]) == [None, None]
    # A sliced batch (an offset into its buffers) reads the rows it has.
    assert list(core_columns({"flows": batch.slice(1)})["flows"]["k"]) == [7]


def test_an_empty_time_series_is_none_and_an_empty_table_has_no_columns():
    from vegaslab.columns import core_columns

    text = (builtin_dir() / "va-reroute.toml").read_text()
    core_run = run_core(text, "x", 1, ["run.duration=1s", "monitor.cwnd=false", "monitor.throughput=false",
                                       "monitor.queues=[]"])
    cols = core_columns(core_run.tables)
    assert cols["series_flows"] is None and cols["series_queues"] is None
    assert cols["udp"] == {}
