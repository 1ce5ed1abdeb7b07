"""The results tables written as Parquet without pandas (vegaslab.columns): every
table has one schema however it was held, missing values are null, a column a user adds is
written too, and ``vegaslab run --no-plots`` works with pandas unavailable."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import vegaslab
from vegaslab.columns import NameColumn, arrow_table, typed_columns
from vegaslab.results import TABLES, TEXT_COLUMNS, Results


@pytest.fixture(scope="module")
def run_res() -> Results:
    return vegaslab.run("va-newreno-share", overrides=["run.duration=12s", "monitor.queues=['R1->R2']"])


def test_a_vegaslab_run_is_printed_and_written_before_any_table_becomes_a_pandas_frame(tmp_path):
    res = vegaslab.run("va-reroute", overrides=["run.duration=3s"])
    assert not res._frames
    res.format_table()
    res.window_warning()
    res.to_dir(tmp_path / "o")
    assert not res._frames  # nothing above built a frame
    assert len(res.series_flows) and set(res._frames) == {"series_flows"}  # built when read


def test_the_written_tables_read_back_equal_to_the_runs_frames(run_res, tmp_path):
    run_res.to_dir(tmp_path / "o")
    back = Results.from_dir(tmp_path / "o")
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(back, name), getattr(run_res, name), check_exact=True)


def test_every_table_has_its_schema_even_empty_and_text_is_always_string(run_res, tmp_path):
    run_res.to_dir(tmp_path / "o")
    empty = Results.from_dict({"meta": {}}).to_dir(tmp_path / "e")
    assert {p.name for p in empty} >= {f"{n}.parquet" for n in TABLES}
    for name, (key, documented) in TABLES.items():
        full, none = (pq.read_schema(tmp_path / d / f"{name}.parquet") for d in ("o", "e"))
        assert none.names == documented
        assert str(full.field(key).type) == str(none.field(key).type) == "string", name
        for col in documented:  # a documented column has its type whether or not the table has rows
            if len(pq.read_table(tmp_path / "o" / f"{name}.parquet")):
                assert str(full.field(col).type) == str(none.field(col).type), (name, col)


def test_nan_and_missing_text_are_written_as_null_and_read_back_as_nan(tmp_path):
    cols = typed_columns({"flow": np.array(["a", np.nan], dtype=object), "completion_time_s": np.array([1.5, np.nan]),
                          "sent_pkts": np.array([3.0, np.nan])}, TABLES["flows"][1])
    table = arrow_table(cols)
    assert table.column("flow").null_count == 1 and table.column("completion_time_s").null_count == 1
    assert str(table.column("sent_pkts").type) == "double"  # a count with a missing value is float, NaN
    assert str(table.column("timeouts").type) == "double" and table.column("timeouts").null_count == 2
    res = Results.from_dict({"meta": {}, "flows": {k: list(v) for k, v in cols.items()}})
    res.to_dir(tmp_path / "o")
    back = Results.from_dir(tmp_path / "o").flows
    assert back["flow"].iloc[0] == "a" and pd.isna(back["flow"].iloc[1])
    assert back["completion_time_s"].iloc[0] == 1.5 and math.isnan(back["completion_time_s"].iloc[1])


def test_a_column_a_user_adds_to_a_table_is_written_and_read_back(run_res, tmp_path):
    res = Results.from_dict({"meta": dict(run_res.meta), "flows": run_res.flows.to_dict(orient="list")})
    n = len(res.flows)
    res.flows = res.flows.assign(note=[f"n{i}" for i in range(n)], ok=[i % 2 == 0 for i in range(n)],
                                 small=np.arange(n, dtype=np.int32), when=pd.Timestamp("2026-11-28"))
    res.to_dir(tmp_path / "o")
    back = Results.from_dir(tmp_path / "o").flows
    assert list(back["note"]) == [f"n{i}" for i in range(n)]
    assert list(back["ok"]) == [i % 2 == 0 for i in range(n)]
    assert list(back["small"]) == list(range(n))
    assert (back["when"] == pd.Timestamp("2026-11-28")).all()  # through pyarrow's own conversion


def test_interned_names_are_written_as_their_strings():
    col = NameColumn(np.array([1, 0, 2, 1, 3], dtype="<u4"), ["f1", "nr", "", "flöw-é"])
    table = arrow_table({"flow": col})
    assert table.column("flow").to_pylist() == ["nr", "f1", "", "nr", "flöw-é"] == list(col.to_numpy())
    assert arrow_table({"flow": NameColumn(np.array([], dtype="<u4"), [])}).column("flow").to_pylist() == []


def test_vegaslab_run_no_plots_works_with_pandas_unavailable(tmp_path):
    # A finder that refuses pandas, as a machine without it would: the run prints its summary
    # and writes every table all the same, and the files equal an ordinary run's.
    tiny = "va-reroute"
    code = (
        "import sys\n"
        "class NoPandas:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'pandas':\n"
        "            raise ImportError('pandas is unavailable here')\n"
        "sys.meta_path.insert(0, NoPandas)\n"
        "from vegaslab import cli\n"
        f"rc = cli.main(['run', {tiny!r}, '--out', {str(tmp_path / 'a')!r}, '--no-plots', '--set', 'run.duration=3s'])\n"
        "print(rc, 'pandas' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 False"
    assert "goodput Mbit/s" in proc.stdout
    ordinary = vegaslab.run(tiny, overrides=["run.duration=3s"])
    back = Results.from_dir(tmp_path / "a")
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(back, name), getattr(ordinary, name), check_exact=True)


def test_a_copy_of_a_run_has_tables_of_its_own(tmp_path):
    import copy

    res = vegaslab.run("va-reroute", overrides=["run.duration=3s"])
    other = copy.copy(res)
    other.flows = other.flows.assign(goodput_bps=0.0)
    assert (res.flows["goodput_bps"] > 0).any() and (other.flows["goodput_bps"] == 0).all()


def _same(a, b) -> bool:
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


def test_table_records_are_the_tables_rows_as_python_values_before_and_after_the_frames_are_built():
    run = ("va-newreno-share", ["run.duration=12s", "monitor.queues=['R1->R2']", "monitor.cwnd=true"])
    lazy, framed = vegaslab.run(run[0], overrides=run[1]), vegaslab.run(run[0], overrides=run[1])
    for name in TABLES:
        records = lazy.table_records(name)
        assert name not in lazy._frames, name  # read from the core's columns, no frame built
        frame = getattr(framed, name)
        assert len(records) == len(frame) and len(framed.table_records(name)) == len(frame), name
        for got, again, want in zip(records, framed.table_records(name), frame.to_dict(orient="records")):
            assert list(got) == list(again) == list(want), name
            for k, v in want.items():
                if k in TEXT_COLUMNS and (v is None or v is pd.NA):
                    assert got[k] is None and again[k] is None, (name, k)
                else:
                    assert _same(got[k], v) and _same(again[k], v), (name, k, got[k], again[k], v)
            assert all(v is None or type(v) in (str, int, float, bool) for v in got.values())
    assert len(lazy.table_records("series_flows")) > 100  # the interned names too


def test_table_records_of_an_edited_frame_are_its_rows_and_missing_text_is_none():
    res = Results.from_dict({"meta": {}, "flows": [{"flow": "a", "cc": "reno", "sent_pkts": 3}, {"flow": "b"}]})
    first, second = res.table_records("flows")
    assert second["cc"] is None and math.isnan(second["sent_pkts"]) and first["sent_pkts"] == 3.0
    res.flows = res.flows[["flow", "cc"]].assign(extra=[1, 2])
    assert res.table_records("flows") == [{"flow": "a", "cc": "reno", "extra": 1}, {"flow": "b", "cc": None, "extra": 2}]
    assert [type(r["extra"]) for r in res.table_records("flows")] == [int, int]


def test_table_records_names_the_tables_it_knows():
    with pytest.raises(ValueError, match="name: must be one of flows"):
        Results.from_dict({"meta": {}}).table_records("flow")
