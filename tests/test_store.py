"""The results store: keys that name what was simulated and nothing else, commits
that are all-or-nothing and checked before they are trusted, a store that can be copied, and
tables that pandas and DuckDB read. Runs here are milliseconds long and computed in this
process (``scheduler="synchronous"``); tests/test_engine_dask.py runs them on Dask."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("vegaslab._core")

from scenario_text import TWO_HOP  # noqa: E402
from vegaslab.sweeps.engine import SYNCHRONOUS, execute, run_payload  # noqa: E402
from vegaslab.sweeps.store import (RunSpec, Store, StoreError, StoreLockedError, param_types, prepare, run_key)  # noqa: E402

TEXT = TWO_HOP + '\n[run]\nduration = "1s"\n'

TRACED = """
[run]
duration = "2s"

[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay_trace = "traces/d.txt"

[[flows]]
from = "S"
to = "D"
cc = "vegas"
"""


def specs(seeds=range(1, 5)) -> list[RunSpec]:
    return [RunSpec(TEXT, "two-hop.toml", (f"links[1].queue.limit={5 * s}",), s, {"buffer": 5 * s}) for s in seeds]


def fill(path, the_specs=None, **kw) -> Store:
    ex = execute(the_specs or specs(), path, scheduler=SYNCHRONOUS, **kw)
    assert ex.failed == 0, [o.error for o in ex.outcomes if o.error]
    return Store(path)


def traced_scenario(root: Path, trace: str) -> Path:
    (root / "traces").mkdir(parents=True, exist_ok=True)
    (root / "traces" / "d.txt").write_text(trace)
    path = root / "sc.toml"
    path.write_text(TRACED)
    return path


def test_run_key_depends_on_content_not_on_paths_or_modification_times(tmp_path):
    a = traced_scenario(tmp_path / "a", "0 10ms\n1 20ms\n")
    b = traced_scenario(tmp_path / "elsewhere" / "b", "0 10ms\n1 20ms\n")
    os.utime(b.parent / "traces" / "d.txt", (1_000_000, 1_000_000))
    key_a, key_b = (prepare([RunSpec.from_scenario(p, seed=1)])[0].key for p in (a, b))
    assert key_a == key_b and len(key_a) == 64

    (b.parent / "traces" / "d.txt").write_text("0 10ms\n1 30ms\n")  # a referenced file's content
    assert prepare([RunSpec.from_scenario(b, seed=1)])[0].key != key_a
    assert prepare([RunSpec.from_scenario(a, seed=2)])[0].key != key_a  # the seed

    p = prepare([RunSpec.from_scenario(a, seed=1)])[0]
    assert run_key(p.normalized, 1, p.core_version) == key_a
    assert run_key(p.normalized, 1, "999.0.0") != key_a  # the core's version
    assert str(tmp_path) not in p.normalized


def test_parameters_are_labels_not_identity():
    plain, labelled = prepare([RunSpec(TEXT, "two-hop.toml", (), 1), RunSpec(TEXT, "two-hop.toml", (), 1, {"x": 1})])
    assert plain.key == labelled.key
    # Overrides that resolve to the same scenario are the same run.
    same = prepare([RunSpec(TEXT, "two-hop.toml", ("links[1].queue.limit=10",), 1)])[0]
    assert same.key == plain.key  # TWO_HOP's limit is 10 already


def test_copied_store_has_nothing_missing_and_computes_nothing(tmp_path):
    original = fill(tmp_path / "a")
    copy = tmp_path / "b"
    shutil.copytree(tmp_path / "a", copy, copy_function=shutil.copy)  # new paths and modification times
    assert Store(copy).missing(specs()) == []
    ex = execute(specs(), copy, scheduler=SYNCHRONOUS)
    assert (ex.submitted, ex.ran, ex.stored) == (0, 0, 4)
    assert Store(copy).read("flows").equals(original.read("flows"))


def test_tables_are_tidy_with_typed_parameter_columns_and_provenance(tmp_path):
    store = fill(tmp_path / "s")
    flows = store.read("flows")
    assert list(flows.columns[:4]) == ["run_key", "buffer", "seed", "flow"]
    assert str(flows["buffer"].dtype) == "int64" and sorted(flows["buffer"]) == [5, 10, 15, 20]
    runs = store.read("runs").set_index("seed")
    assert sorted(runs.index) == [1, 2, 3, 4]
    row = runs.loc[3]
    assert list(row["overrides"]) == ["links[1].queue.limit=15"]
    assert json.loads(row["scenario"])["links"][1]["forward"]["queue"]["limit"] == 15
    assert row["core_version"] and row["source_revision"] and row["vegaslab_version"]
    assert row["command"] == "vegaslab run two-hop.toml --no-plots --seed 3 --set 'links[1].queue.limit=15'"
    assert row["flows"] == 1 and row["throughput_bps_total"] == flows[flows["seed"] == 3]["throughput_bps"].sum()
    # The same numbers as vegaslab.run
    import vegaslab

    direct = vegaslab.run(TEXT, seed=3, overrides=["links[1].queue.limit=15"])
    mine = flows[flows["seed"] == 3].reset_index(drop=True)
    for col in ("throughput_bps", "retransmitted_pkts", "final_cwnd_pkts", "delivered_bytes"):
        assert mine[col].tolist() == direct.flows[col].tolist()


MIXED = """
[run]
duration = "5s"
[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "1Mbps", delay = "10ms", queue = { limit = 20 } }
[[flows]]
pairs = "1-1"
cc = "reno"
[[flows]]
pairs = "2-2"
cc = "vegas"
"""


def test_an_optional_column_of_a_later_row_is_stored(tmp_path):
    """The ns-2 Vegas tie counts exist only on Vegas rows; a Reno row first must not drop them."""
    import vegaslab

    stored = fill(tmp_path / "s", [RunSpec(MIXED, "mixed.toml", (), 1, {})]).read("flows").set_index("flow")
    direct = vegaslab.run(MIXED, seed=1).flows.set_index("flow")
    assert direct.loc["vegas2", "vegas_decisions"] > 0
    assert stored.loc["vegas2", "vegas_decisions"] == direct.loc["vegas2", "vegas_decisions"]


def test_parameter_types_are_checked_and_ints_mixed_with_floats_become_floats():
    assert param_types([RunSpec(TEXT, params={"a": 1, "b": "x", "c": True}),
                        RunSpec(TEXT, params={"a": 2.5, "b": "y", "c": False})]) == {
        "a": "double", "b": "string", "c": "bool"}
    with pytest.raises(StoreError, match="parameter 'a': values mix int64 and string"):
        param_types([RunSpec(TEXT, params={"a": 1}), RunSpec(TEXT, params={"a": "1"})])
    with pytest.raises(StoreError, match="parameter 'seed': the name is taken"):
        param_types([RunSpec(TEXT, params={"seed": 1})])
    with pytest.raises(StoreError, match="parameter 'a': values must be"):
        param_types([RunSpec(TEXT, params={"a": [1, 2]})])


def test_results_carry_the_asking_specs_parameters(tmp_path):
    store = fill(tmp_path / "s")
    relabelled = [dataclasses.replace(s, params={"buffer_pkts": float(s.params["buffer"])}) for s in specs()]
    assert store.missing(relabelled) == []
    got = store.results(list(reversed(relabelled)), "runs")
    assert got["buffer_pkts"].tolist() == [20.0, 15.0, 10.0, 5.0]
    assert "buffer" not in got.columns and got["seed"].tolist() == [4, 3, 2, 1]


def test_duckdb_and_pandas_read_committed_runs_and_never_a_half_written_commit(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    import pandas as pd

    store = fill(tmp_path / "s", specs(range(1, 3)))
    # What a writer killed mid-commit leaves behind: a complete-looking table in _tmp.
    half = tmp_path / "s" / "_tmp" / "deadbeef"
    half.mkdir(parents=True)
    shutil.copy(store.files("flows")[0], half / "flows.parquet")

    glob = str(tmp_path / "s" / "data" / "*" / "flows.parquet")
    n, = duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}', union_by_name=true)").fetchall()[0]
    assert n == 2
    by_seed = duckdb.sql(f"SELECT seed, max(\"buffer\") FROM read_parquet('{glob}', union_by_name=true) "
                         "GROUP BY seed ORDER BY seed").fetchall()
    assert by_seed == [(1, 5), (2, 10)]
    assert len(pd.concat(pd.read_parquet(f) for f in store.files("flows"))) == 2
    assert len(store.read("flows")) == 2

    fill(tmp_path / "s", specs(range(1, 4)))  # the next writer removes the leftover
    assert not half.exists() and len(Store(tmp_path / "s").read("flows")) == 3


def test_truncated_file_makes_its_runs_missing_and_they_are_recomputed(tmp_path):
    store = fill(tmp_path / "s", batch_runs=2)  # two commits of two runs
    commits = store.commits()
    assert [len(c.runs) for c in commits] == [2, 2]
    victim = commits[0].path / "series_flows.parquet" if (commits[0].path / "series_flows.parquet").exists() \
        else commits[0].path / "flows.parquet"
    victim.write_bytes(victim.read_bytes()[:-7])

    fresh = Store(tmp_path / "s")
    assert [b.id for b in fresh.broken()] == [commits[0].id] and "truncated" in fresh.broken()[0].reason
    lost = set(commits[0].runs)
    assert {p.key for p in prepare(fresh.missing(specs()))} == lost
    ex = execute(specs(), tmp_path / "s", scheduler=SYNCHRONOUS)
    assert (ex.ran, ex.stored) == (2, 2)
    after = Store(tmp_path / "s")
    assert after.broken() == [] and after.keys() == {p.key for p in prepare(specs())}
    quarantined, = (tmp_path / "s" / "_quarantine").iterdir()
    assert "truncated" in (quarantined / "REASON.txt").read_text()


def test_a_file_with_the_right_size_but_other_bytes_is_not_trusted(tmp_path):
    store = fill(tmp_path / "s")
    f = store.files("runs")[0]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    assert len(Store(tmp_path / "s").missing(specs())) == 4


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    store = Store(tmp_path / "s")
    with store.writer():
        with pytest.raises(StoreLockedError, match=f"{tmp_path / 's'}: another process is writing"):
            with Store(tmp_path / "s").writer():
                pass
    with store.writer():  # released
        pass


def test_a_directory_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="holds other files"):
        Store(tmp_path)
    with pytest.raises(StoreError, match="not a vegaslab store"):
        Store(tmp_path / "absent", create=False)


def test_referenced_files_travel_with_the_run_not_their_paths(tmp_path):
    path = traced_scenario(tmp_path / "proj", "0 10ms\n1 20ms\n")
    prepared = prepare([RunSpec.from_scenario(path, seed=1)])
    shutil.rmtree(tmp_path / "proj")  # the worker must not need the client's files
    ex = execute(prepared, tmp_path / "s", scheduler=SYNCHRONOUS)
    assert ex.ran == 1, ex.outcomes[0].error
    runs = Store(tmp_path / "s").read("runs")
    assert runs["scenario_id"].tolist() == ["sc"]  # the file stem, as on the client

    # A name that climbs out of the scenario's directory travels too.
    up = tmp_path / "proj2" / "scenarios"
    up.mkdir(parents=True)
    (tmp_path / "proj2" / "shared").mkdir()
    (tmp_path / "proj2" / "shared" / "d.txt").write_text("0 30ms\n")
    (up / "sc.toml").write_text(TRACED.replace("traces/d.txt", "../shared/d.txt"))
    prepared = prepare([RunSpec.from_scenario(up / "sc.toml", seed=1)])
    shutil.rmtree(tmp_path / "proj2")
    ex = execute(prepared, tmp_path / "s", scheduler=SYNCHRONOUS)
    assert ex.ran == 1, ex.outcomes[0].error


def test_a_worker_that_resolves_the_scenario_differently_refuses_to_run():
    p = prepare([RunSpec(TEXT, "two-hop.toml", (), 1)])[0]
    assert run_payload(p.light(), TEXT, {}).run is not None
    tampered = TEXT.replace("limit = 10", "limit = 11")  # e.g. a worker reading another file
    result = run_payload(p.light(), tampered, {})
    assert result.run is None and "resolves the scenario differently" in result.error
    other_core = run_payload(dataclasses.replace(p, core_version="0.0.0-other").light(), TEXT, {})
    assert other_core.run is None and "install the same vegaslab version" in other_core.error


def test_a_rejected_spec_fails_alone_with_the_core_message(tmp_path):
    bad = RunSpec(TEXT, "two-hop.toml", ("links[1].queue.limit=-1",), 9)
    ex = execute([*specs(range(1, 3)), bad], tmp_path / "s", scheduler=SYNCHRONOUS)
    assert [o.status for o in ex.outcomes] == ["ran", "ran", "failed"]
    assert "two-hop.toml: links[1].queue.limit" in ex.outcomes[2].error
    assert Store(tmp_path / "s").missing([bad]) == [bad]


def test_repeated_runs_are_computed_once(tmp_path):
    twice = specs(range(1, 3)) * 2
    ex = execute(twice, tmp_path / "s", scheduler=SYNCHRONOUS)
    assert ex.submitted == 2 and [o.status for o in ex.outcomes] == ["ran"] * 4
    assert len(Store(tmp_path / "s").read("runs")) == 2


def test_partial_results_land_while_the_sweep_runs(tmp_path):
    seen = []

    def look(outcome):  # what a reader sees after each run
        seen.append(len(Store(tmp_path / "s")))
        time.sleep(0.02)

    execute(specs(), tmp_path / "s", scheduler=SYNCHRONOUS, batch_runs=2, flush_s=60, on_outcome=look)
    assert seen == [0, 2, 2, 4]


def test_a_parameter_named_like_a_row_identity_column_is_refused():
    # An axis named "flow" would overwrite the flow names in the flows table, and the rows of
    # several flows could no longer be told apart.
    for name in ("flow", "queue", "link", "source", "time_s"):
        bad = [RunSpec(TEXT, "two-hop.toml", ("links[1].queue.limit=10",), 1, {name: 10})]
        with pytest.raises(StoreError, match="tells a table's rows apart"):
            param_types(bad)


def test_load_results_gives_back_what_vegaslab_run_returns_across_several_commits(tmp_path):
    import pandas as pd

    import vegaslab

    overrides = ("links[1].queue.limit=8", "monitor.cwnd=true", "monitor.all_queues=true")
    source = tmp_path / "two-hop.toml"
    source.write_text(TEXT)
    monitored = [RunSpec(TEXT, str(source), overrides, s, {"seed_label": f"s{s}"}) for s in (1, 2, 3)]
    store = fill(tmp_path / "s", monitored, batch_runs=2, compact=False)
    assert len(store.commits()) == 2  # the runs come from more than one commit
    keys = [p.key for p in prepare(monitored)]
    loaded = store.load_results(keys + ["0" * 64])  # an unknown key is left out
    assert sorted(loaded) == sorted(keys)
    for spec, key in zip(monitored, keys):
        direct = vegaslab.run(source, seed=spec.seed, overrides=list(spec.overrides))
        got = loaded[key]
        for table in ("flows", "queues", "links", "udp", "series_flows", "series_queues"):
            pd.testing.assert_frame_equal(getattr(got, table), getattr(direct, table))
        assert len(got.series_flows) >= 10 and len(got.series_queues) >= 10  # 1 s, 100 ms bins
        mine, theirs = dict(got.meta), dict(direct.meta)
        mine.pop("wall_time_s"), theirs.pop("wall_time_s")
        assert mine == theirs  # provenance included


@pytest.mark.parametrize("compacted", [False, True])
def test_a_run_rebuilt_from_a_commit_shared_with_other_algorithms_has_only_its_own_columns(tmp_path, compacted):
    import pandas as pd

    import vegaslab

    source = tmp_path / "two-hop.toml"
    source.write_text(TEXT)
    # NewReno writes no alpha/beta/trend; Vegas-A does: in one commit the union is stored.
    mixed = [RunSpec(TEXT, str(source), (f"flows[0].cc={cc}", "monitor.cwnd=true"), 1, {"algo": cc})
             for cc in ("newreno", "vegas-a")]
    store = fill(tmp_path / "s", mixed, batch_runs=1 if compacted else 2, compact=False)
    if compacted:  # two commits of one run each, merged into one
        assert len(store.commits()) == 2 and store.compact() == 2
    assert len(store.commits()) == 1
    loaded = store.load_results([p.key for p in prepare(mixed)])
    for spec, p in zip(mixed, prepare(mixed)):
        direct = vegaslab.run(source, seed=1, overrides=list(spec.overrides))
        for table in ("flows", "queues", "links", "udp", "series_flows", "series_queues"):
            pd.testing.assert_frame_equal(getattr(loaded[p.key], table), getattr(direct, table))
    assert "trend" in store.read("series_flows").columns  # the union is what the tidy table shows


def test_runs_loaded_one_at_a_time_equal_runs_loaded_together_across_row_groups(tmp_path, monkeypatch):
    import pandas as pd
    import pyarrow.parquet as pq

    # Row groups of 7 rows, so that runs start and end inside groups and straddle them: a
    # reader of some runs reads only the groups holding them.
    write_table = pq.write_table
    monkeypatch.setattr(pq, "write_table", lambda table, where, **kw: write_table(table, where, row_group_size=7, **kw))
    source = tmp_path / "two-hop.toml"
    source.write_text(TEXT)
    mixed = [RunSpec(TEXT, str(source), (f"flows[0].cc={cc}", "monitor.cwnd=true"), s, {"algo": cc})
             for cc in ("newreno", "vegas-a") for s in (1, 2)]
    store = fill(tmp_path / "s", mixed)
    (commit,) = store.commits()
    assert pq.ParquetFile(commit.path / "series_flows.parquet").metadata.num_row_groups > 4
    keys = [p.key for p in prepare(mixed)]
    together = store.load_results(keys)
    for key in reversed(keys):
        (alone,) = store.load_results([key]).values()
        for table in ("flows", "queues", "links", "udp", "series_flows", "series_queues"):
            pd.testing.assert_frame_equal(getattr(alone, table), getattr(together[key], table))
        assert alone.meta == together[key].meta


@pytest.mark.parametrize("name, path, value", [("limit_pkts", "links[1].queue.limit", 8),
                                               ("alpha", "flows[0].params.alpha", 2)])
def test_load_results_leaves_out_runs_whose_parameter_replaced_a_core_column(tmp_path, name, path, value):
    # "alpha" is a column of series_flows that results.TABLES does not list (an algorithm variable).
    shadowing = [RunSpec(TEXT, "two-hop.toml", (f"{path}={value}", "flows[0].cc=vegas", "monitor.cwnd=true"), 1,
                         {name: value})]
    store = fill(tmp_path / "s", shadowing)
    assert len(store) == 1 and store.load_results([p.key for p in prepare(shadowing)]) == {}


#: The store's public names, which code outside the package imports from ``vegaslab.sweeps.store``
#: whichever of its modules defines them.
PUBLIC_NAMES = (
    "STORE_FORMAT", "READABLE_STORE_FORMATS", "RENAMED_AGGREGATES", "TABLES", "NONDETERMINISTIC_COLUMNS", "PARAM_TYPES",
    "COMPACT_MIN_COMMITS", "COMPACT_TARGET_BYTES", "STORE_FILE_SCHEMA", "COMMIT_SCHEMA", "StoreError",
    "StoreLockedError", "StoreWriteError", "RunSpec", "run_key", "PreparedRun", "prepare", "prepared_runs",
    "param_types", "stored_tables", "keyed_tables", "run_row", "runs_table", "Commit", "Broken", "Store", "StoredRun",
    "StoreWriter",
)


def test_every_public_name_of_the_store_imports_from_the_store_package():
    import vegaslab.sweeps.store as store

    missing = [name for name in PUBLIC_NAMES if not hasattr(store, name)]
    assert not missing, f"not importable from vegaslab.sweeps.store: {missing}"
    assert set(store.__all__) <= set(PUBLIC_NAMES)
