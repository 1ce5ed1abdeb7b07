"""Results tables, text summary, files and plots from a hand-written results document
(tests/data/*.json); the tests at the end that run a scenario need the compiled core."""

from __future__ import annotations

import json
import math

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import vegaslab
import vegaslab.core
import vegaslab.simulation
import tomllib as tomllib
from vegaslab import plots
from vegaslab.results import FLOW_COLUMNS, QUEUE_COLUMNS, SERIES_FLOW_COLUMNS, Results
from scenario_text import TWO_HOP

DATA = Path(__file__).parent / "data"


@pytest.fixture
def res_no_series() -> Results:
    return Results.from_json((DATA / "results-no-series.json").read_text())


# ---------------------------------------------------------------------- tables


def test_tables_have_one_row_per_flow_queue_and_link_with_the_name_as_a_column(res):
    assert list(res.flows["flow"]) == ["vegas", "reno"]
    assert list(res.queues["queue"]) == ["R1->R2", "S1->R1", "R2->R1"]
    assert list(res.links["link"]) == ["R1->R2", "R2->R1"]
    assert list(res.flows.columns[: len(FLOW_COLUMNS)]) == FLOW_COLUMNS
    assert list(res.queues.columns[: len(QUEUE_COLUMNS)]) == QUEUE_COLUMNS
    assert res.meta["scenario"] == "tiny" and res.meta["events"] == 4321


def test_null_completion_time_becomes_nan_in_a_float_column(res):
    col = res.flows["completion_time_s"]
    assert col.dtype == np.float64
    assert col.iloc[0] == pytest.approx(0.55) and math.isnan(col.iloc[1])


def test_series_are_long_format_with_time_name_and_value_columns(res):
    sf, sq = res.series_flows, res.series_queues
    assert list(sf.columns) == SERIES_FLOW_COLUMNS
    assert len(sf) == 12 and set(sf["flow"]) == {"vegas", "reno"}
    assert sf["rtt_s"].isna().sum() == 2  # JSON null before the first RTT sample
    assert list(sq.columns) == ["time_s", "queue", "length_pkts"]
    assert sq["length_pkts"].max() == 6


def test_missing_series_give_empty_frames_that_still_have_their_columns(res_no_series):
    assert res_no_series.series_flows.empty and list(res_no_series.series_flows.columns) == SERIES_FLOW_COLUMNS
    assert res_no_series.series_queues.empty
    doc = json.loads((DATA / "results-small.json").read_text())
    del doc["series"]
    assert Results.from_dict(doc).series_queues.empty


def test_extra_columns_from_the_core_are_kept_after_the_documented_ones(doc):
    doc["flows"][0]["syn_pkts"] = 1
    res = Results.from_dict(doc)
    assert res.flows.columns[-1] == "syn_pkts"


def test_a_document_without_meta_is_rejected():
    with pytest.raises(ValueError, match="meta"):
        Results.from_dict({"flows": []})


def test_summary_has_one_row_per_flow_with_rates_in_mbit_per_s(res):
    s = res.summary
    assert list(s["flow"]) == ["vegas", "reno"]
    assert s.loc[0, "goodput_mbps"] == pytest.approx(0.4)
    assert s.loc[1, "retransmitted_pkts"] == 2


def test_value_finds_flow_queue_link_and_meta_metrics(res):
    assert res.value("vegas.goodput_bps") == 400000.0
    assert res.value("R1->R2.mean_len_pkts") == pytest.approx(2.1)
    assert res.value("R2->R1.utilisation_ratio") == pytest.approx(0.0261)
    assert res.value("meta.seed") == 7
    assert math.isnan(res.value("reno.completion_time_s"))


def test_value_names_the_known_flows_when_the_name_is_wrong(res):
    with pytest.raises(KeyError, match="known: vegas, reno"):
        res.value("f9.goodput_bps")
    with pytest.raises(KeyError, match="no column"):
        res.value("vegas.nonsense")


# ---------------------------------------------------------------------- text


def test_format_table_is_fixed_width_with_human_units(res):
    text = res.format_table()
    lines = text.splitlines()
    assert lines[0].startswith("tiny  seed 7") and "4,321 events" in lines[0]
    header = next(line for line in lines if line.startswith("flow"))
    assert "Mbit/s" in header and "done s" in header
    vegas = next(line for line in lines if line.startswith("vegas"))
    reno = next(line for line in lines if line.startswith("reno "))
    assert len(vegas) == len(reno) == len(header)  # right-aligned numbers end in the same column
    assert " 0.4 " in vegas and reno.rstrip().endswith("6")
    assert " - " in reno  # an unfinished transfer has no completion time


def test_format_table_lists_busy_queues_and_counts_the_idle_ones(res):
    text = res.format_table()
    assert "R1->R2" in text and "3.64" in text  # loss rate shown in percent
    assert "R2->R1" not in text.split("queue", 1)[1].split("(")[0]
    assert "(1 more queue" in text


def test_format_table_shows_the_first_flows_and_says_how_many_more(res):
    text = res.format_table(max_flows=1)
    assert "vegas" in text and "\nreno " not in text
    assert "(1 more flows: every flow is in Results.flows and flows.parquet)" in text


def test_repr_is_the_formatted_summary(res):
    assert repr(res) == res.format_table() == str(res)


# ---------------------------------------------------------------------- files


def test_to_dir_writes_parquet_for_every_table_and_no_csv_unless_asked(res, tmp_path):
    written = res.to_dir(tmp_path / "out")
    names = {p.name for p in written}
    for table in ("flows", "queues", "links", "udp", "series_flows", "series_queues"):
        assert f"{table}.parquet" in names
        assert (tmp_path / "out" / f"{table}.parquet").stat().st_size > 0
    assert not list((tmp_path / "out").glob("*.csv"))
    assert json.loads((tmp_path / "out" / "meta.json").read_text())["scenario"] == "tiny"
    assert list(pd.read_parquet(tmp_path / "out" / "flows.parquet")["flow"]) == ["vegas", "reno"]


def test_to_dir_with_csv_writes_copies_equal_to_the_parquet_tables_and_checksums_them(res, tmp_path):
    from vegaslab.results import INTEGRITY_KEY, TABLES

    written = {p.name for p in res.to_dir(tmp_path / "out", csv=True)}
    recorded = json.loads((tmp_path / "out" / "meta.json").read_text())[INTEGRITY_KEY]
    for table in TABLES:
        assert {f"{table}.parquet", f"{table}.csv"} <= written and f"{table}.csv" in recorded
        parquet = pd.read_parquet(tmp_path / "out" / f"{table}.parquet")
        csv = pd.read_csv(tmp_path / "out" / f"{table}.csv")
        assert list(csv.columns) == list(parquet.columns) and len(csv) == len(parquet)
        if len(parquet):
            pd.testing.assert_frame_equal(csv, parquet, check_dtype=False)
    Results.from_dir(tmp_path / "out")  # the CSV copies belong with meta.json


def test_to_dir_round_trips_through_from_dir(res, tmp_path):
    res.to_dir(tmp_path)
    back = Results.from_dir(tmp_path)
    assert back.meta == res.meta
    pd.testing.assert_frame_equal(back.flows, res.flows, check_dtype=False)
    pd.testing.assert_frame_equal(back.series_flows, res.series_flows, check_dtype=False)


def test_meta_json_is_indented_with_the_provenance_scenario_on_one_line(res, tmp_path):
    # Indented, a large normalised scenario went through the json module's pure-Python encoder
    # (15 s at 20,000 flows); it is written compact, and the file parses to the same record.
    scenario = {"flows": [{"name": f"f{i}", "tcp": {"window": 20.0}} for i in range(3)], "seed": 1}
    res.meta["provenance"] = {"format": 1, "scenario": scenario, "source": "x.toml"}
    res.to_dir(tmp_path / "out")
    text = (tmp_path / "out" / "meta.json").read_text()
    meta = json.loads(text)
    assert meta["provenance"]["scenario"] == scenario and meta["provenance"]["source"] == "x.toml"
    scenario_lines = [line for line in text.splitlines() if '"scenario": {' in line]
    assert len(scenario_lines) == 1 and scenario_lines[0].rstrip(",").endswith("}")
    assert '\n  "provenance": {\n' in text  # the rest indented


def test_to_dir_handles_empty_series(res_no_series, tmp_path):
    res_no_series.to_dir(tmp_path)
    assert Results.from_dir(tmp_path).series_flows.empty


def test_from_dir_refuses_tables_that_belong_to_another_run(res, tmp_path):
    from vegaslab.results import InconsistentResultsError

    other = Results.from_dict({**json.loads((DATA / "results-small.json").read_text())})
    other.flows = other.flows.assign(goodput_bps=other.flows["goodput_bps"] * 2)
    res.to_dir(tmp_path / "a")
    other.to_dir(tmp_path / "b")
    (tmp_path / "a" / "flows.parquet").write_bytes((tmp_path / "b" / "flows.parquet").read_bytes())
    with pytest.raises(InconsistentResultsError, match=r"flows\.parquet.*does not belong"):
        Results.from_dir(tmp_path / "a")


def test_from_dir_refuses_a_directory_without_table_checksums_unless_asked(res, tmp_path):
    from vegaslab.results import INTEGRITY_KEY, InconsistentResultsError

    res.to_dir(tmp_path / "a")
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    del meta[INTEGRITY_KEY]
    (tmp_path / "a" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InconsistentResultsError, match="verify=False"):
        Results.from_dir(tmp_path / "a")
    assert Results.from_dir(tmp_path / "a", verify=False).meta == res.meta


def test_to_dir_replaces_an_earlier_run_whole_and_leaves_no_temporary_directory(res, res_no_series, tmp_path):
    res.to_dir(tmp_path / "out")
    (tmp_path / "out" / "cwnd.png").write_bytes(b"old plot")
    res_no_series.to_dir(tmp_path / "out")
    assert not (tmp_path / "out" / "cwnd.png").exists()
    assert Results.from_dir(tmp_path / "out").series_flows.empty
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_to_dir_never_replaces_a_directory_with_other_files(res, tmp_path):
    from vegaslab.outdir import OutputDirError

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match="notes.txt"):
        res.to_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_runs_sets_and_their_error_pickle_under_the_path_users_import(res):
    """Dask workers send runs back pickled; the pickle names each class by the path users
    import (``vegaslab.results``), whichever module of the package defines it."""
    import pickle
    import pickletools

    from vegaslab.results import InconsistentResultsError, concat

    runs = concat([res, res], keys=["a", "b"])
    for obj in (res, runs, InconsistentResultsError("a run directory that does not belong together")):
        data = pickle.dumps(obj)
        texts = [arg for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)]
        assert "vegaslab.results" in texts and type(obj).__qualname__ in texts
        assert type(pickle.loads(data)) is type(obj)
    back = pickle.loads(pickle.dumps(res))
    assert back.format_table() == res.format_table()
    pd.testing.assert_frame_equal(back.flows, res.flows)
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(runs)).flows, runs.flows)


# ---------------------------------------------------------------------- plots


def test_plot_all_writes_cwnd_throughput_and_queue_pngs(res, tmp_path):
    paths = plots.plot_all(res, tmp_path)
    assert [p.name for p in paths] == ["cwnd.png", "throughput.png", "queue.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_are_skipped_when_their_series_is_empty(res_no_series, tmp_path):
    assert plots.plot_cwnd(res_no_series, tmp_path / "c.png") is None
    assert plots.plot_throughput(res_no_series, tmp_path / "t.png") is None
    assert plots.plot_queues(res_no_series, tmp_path / "q.png") is None
    assert plots.plot_all(res_no_series, tmp_path) == []
    assert not list(tmp_path.iterdir())


def test_running_mean_is_the_mean_of_all_bins_so_far():
    assert plots.running_mean(np.array([2.0, 4.0, 0.0, 2.0])).tolist() == [2.0, 3.0, 2.0, 2.0]
    assert plots.running_mean(np.array([])).size == 0


# ---------------------------------------------------------------------- scenario input


def test_to_toml_round_trips_a_scenario_dict():
    scenario = {
        "run": {"duration": "10s", "seed": 3},
        "links": [
            {"endpoints": ["S1", "R1"], "bandwidth": "1Mbps", "delay": "10ms",
             "queue": {"kind": "droptail", "limit": 50},
             "delay_schedule": [{"at": "2s", "delay": "100ms"}]},
        ],
        "flows": [{"name": "a b", "from": "S1", "to": "R1", "cc": "vegas",
                   "params": {"alpha": 1, "beta": 3.5}, "tcp": {"syn": False}, "stop": None}],
        "monitor": {"queues": ["S1->R1"], "cwnd": True},
    }
    back = tomllib.loads(vegaslab.to_toml(scenario))
    del scenario["flows"][0]["stop"]  # None means "leave it out"
    assert back == scenario


def test_format_override_keeps_strings_strings_and_writes_values_as_toml():
    assert vegaslab.format_override("flows[0].cc", "newreno") == "flows[0].cc=newreno"
    assert vegaslab.format_override("run.duration", "100s") == "run.duration=100s"
    assert vegaslab.format_override("flows[0].name", "10") == 'flows[0].name="10"'
    assert vegaslab.format_override("links[1].queue.limit", 10) == "links[1].queue.limit=10"
    assert vegaslab.format_override("monitor.cwnd", True) == "monitor.cwnd=true"
    assert vegaslab.format_override("monitor.queues", ["R1->R2"]) == 'monitor.queues=["R1->R2"]'


def test_run_reports_a_missing_scenario_file_before_calling_the_core(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        vegaslab.run(tmp_path / "nope.toml")


def test_load_scenario_names_the_file_on_invalid_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\nduration = 1")
    with pytest.raises(vegaslab.ScenarioError, match="bad.toml"):
        vegaslab.load_scenario(bad)


class _StubCore:
    """Just enough of the core's surface to check how its exceptions are translated."""

    class ScenarioError(ValueError):
        pass

    class SimulationError(RuntimeError):
        pass

    class PanicException(BaseException):
        pass

    def __init__(self, exc: BaseException):
        self.exc = exc

    def run(self, *args):
        raise self.exc


@pytest.mark.parametrize(
    "raised, expected",
    [
        (_StubCore.ScenarioError("x.toml: flows[1].start: must be >= 0 s"), vegaslab.ScenarioError),
        (_StubCore.SimulationError("event queue exhausted"), vegaslab.SimulationError),
        (_StubCore.PanicException("index out of bounds"), vegaslab.SimulationError),
        (TypeError("argument 'seed': wrong type"), vegaslab.VegaslabError),
    ],
)
def test_every_core_error_surfaces_as_a_vegaslab_error_with_its_message(monkeypatch, raised, expected):
    stub = lambda: _StubCore(raised)  # noqa: E731
    monkeypatch.setattr(vegaslab.core, "load_core", stub)
    monkeypatch.setattr(vegaslab.simulation, "load_core", stub)
    with pytest.raises(expected) as info:
        vegaslab.run("[run]\nduration = 1\n")
    assert str(raised) in str(info.value)
    assert isinstance(info.value, vegaslab.VegaslabError)


def test_scenario_error_is_a_value_error():
    assert issubclass(vegaslab.ScenarioError, ValueError)
    assert issubclass(vegaslab.SimulationError, vegaslab.VegaslabError)


# ---------------------------------------------------------------------- with the compiled core

TINY = """
[run]
duration = "3s"
seed = 5
""" + TWO_HOP + """
[monitor]
cwnd = true
throughput = true
queues = ["R1->D1"]
"""


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


def test_core_run_returns_results_with_the_flow_and_its_series(core):
    res = vegaslab.run(TINY)
    assert list(res.flows["flow"]) == ["f1"]
    assert res.meta["duration_s"] == pytest.approx(3.0)
    assert res.meta["seed"] == 5
    assert not res.series_flows.empty and set(res.series_flows["flow"]) == {"f1"}
    assert set(res.series_queues["queue"]) == {"R1->D1"}
    f = res.flows.iloc[0]
    assert f["sent_pkts"] == f["received_pkts"] + f["dropped_pkts"] + f["in_flight_pkts"]


def test_core_run_gives_the_same_results_for_text_path_and_dict(core, tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    a = vegaslab.run(TINY).flows
    b = vegaslab.run(path).flows
    c = vegaslab.run(tomllib.loads(TINY)).flows
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_core_run_applies_seed_and_overrides(core):
    res = vegaslab.run(TINY, seed=9, overrides={"flows[0].cc": "newreno", "run.duration": "2s"})
    assert res.meta["seed"] == 9
    assert res.meta["duration_s"] == pytest.approx(2.0)
    assert res.flows.iloc[0]["cc"] == "newreno"


def test_core_invalid_scenario_raises_scenario_error_naming_the_field(core):
    with pytest.raises(vegaslab.ScenarioError, match=r"flows\[0\]\.start"):
        vegaslab.run(TINY, overrides=["flows[0].start=-3s"])


def test_core_progress_callback_receives_sim_time_and_duration(core):
    calls = []
    vegaslab.run(TINY, progress=lambda t, d: calls.append((t, d)))
    for t, d in calls:  # a 3 s run may finish before the first ~0.2 s report
        assert 0 <= t <= d == pytest.approx(3.0)


def test_core_validate_returns_the_normalised_scenario(core):
    normalised = vegaslab.validate(TINY)
    assert isinstance(normalised, dict) and normalised


def test_core_version_is_reported(core):
    assert vegaslab.core_version()
