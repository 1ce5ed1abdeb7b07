"""Column names with units (0.3): one naming in every table and in ``summary``; results
written by 0.2 are read with the new names; a name asked for under its 0.2 spelling is an error
naming the new one (docs/results-format.md, "Column names"). The 0.2 document is
tests/data/results-small-v0.2.json, the same run as results-small.json before the rename."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from vegaslab.errors import ScenarioError
from vegaslab.study import catalog, metrics
from vegaslab.study.claims import Claim, RunSet, evaluate
from vegaslab.results import INTEGRITY_KEY, RENAMED_COLUMNS, TABLES, Results

DATA = Path(__file__).parent / "data"
#: The naming rule of docs/results-format.md: a unit suffix, or a name the rule keeps.
UNIT = re.compile(r".*_(s|bps|pkts|bytes|ratio|mbps|ms)$")
KEPT = {"flow", "queue", "link", "source", "cc", "from", "to", "kind", "model", "active", "trend",
        "fast_retransmits", "timeouts", "slow_start_entries", "connections", "open_connections", "late_acks",
        "vegas_decisions", "vegas_threshold_ties", "vegas_decisive_ties",
        "alpha", "beta", "inc", "succ", "last_inc", "w_max", "target", "w_est", "hystart_found"}


def _old_doc() -> dict:
    return json.loads((DATA / "results-small-v0.2.json").read_text())


def _new() -> Results:
    return Results.from_json((DATA / "results-small.json").read_text())


def _assert_same(a: Results, b: Results) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_like=False)
    pd.testing.assert_frame_equal(a.summary, b.summary)


# ---------------------------------------------------------------- one naming


def test_every_column_of_a_run_and_of_its_summary_carries_its_unit_or_is_a_kept_name():
    import vegaslab

    r = vegaslab.run("va-reroute", seed=1, overrides=["run.duration=5s", "monitor.cwnd=true",
                                                      "monitor.throughput=true", "monitor.all_queues=true"])
    columns = {c for name in TABLES for c in getattr(r, name).columns} | set(r.summary.columns)
    assert not columns & set(RENAMED_COLUMNS), "a 0.2 name is still produced"
    assert sorted(c for c in columns if not UNIT.match(c) and c not in KEPT) == []


def test_summary_uses_the_names_of_the_flows_table():
    s, f = _new().summary, _new().flows
    own = [c for c in s.columns if c not in ("goodput_mbps", "throughput_mbps", "window_limited_s")]
    assert set(own) <= set(f.columns)
    for c in own:
        pd.testing.assert_series_equal(s[c], f[c], check_names=False)


# ---------------------------------------------------------------- reading 0.2 results


def test_a_0_2_document_reads_with_the_new_names():
    _assert_same(Results.from_dict(_old_doc()), _new())


def test_from_dir_reads_a_directory_written_by_0_2_with_the_new_names(tmp_path):
    # What 0.2's to_dir wrote: each table as Parquet under its old column names, and meta.json
    # with the tables' checksums.
    old = _old_doc()
    rows = {"flows": old["flows"], "queues": old["queues"], "links": old["links"], "udp": old.get("udp") or [],
            "series_flows": old["series"]["flows"], "series_queues": old["series"]["queues"]}
    sums = {}
    for name, data in rows.items():
        path = tmp_path / f"{name}.parquet"
        pd.DataFrame(data).to_parquet(path)
        sums[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    (tmp_path / "meta.json").write_text(json.dumps({**old["meta"], INTEGRITY_KEY: sums}))
    assert "final_cwnd" in pd.read_parquet(tmp_path / "flows.parquet").columns  # really the old names
    _assert_same(Results.from_dir(tmp_path), _new())


# ---------------------------------------------------------------- an old name asked for


@pytest.mark.parametrize("key, new", [("vegas.final_cwnd", "final_cwnd_pkts"), ("vegas.data_pkts_sent", "sent_pkts"),
                                      ("R1->R2.mean_len", "mean_len_pkts"), ("R1->R2.drops", "dropped_pkts"),
                                      ("R2->R1.utilisation", "utilisation_ratio")])
def test_value_of_an_old_name_is_an_error_naming_the_new_one(key, new):
    old = key.rpartition(".")[2]
    with pytest.raises(KeyError, match=re.escape(f"'{old}' was renamed '{new}' in 0.3")):
        _new().value(key)


@pytest.fixture
def runs() -> RunSet:
    return RunSet(runs={"v": [_new()]}, failed={}, order=["v"])


@pytest.mark.parametrize("expr, message", [
    ("v:vegas.final_cwnd > 0", "'final_cwnd' was renamed 'final_cwnd_pkts' in 0.3"),
    ("between(v:vegas.cwnd, 0.1, 0.3) > 0", "'cwnd' was renamed 'cwnd_pkts' in 0.3"),
    ("series_max(v:R1->R2.length) > 0", "'length' was renamed 'length_pkts' in 0.3"),
])
def test_a_claim_on_an_old_name_is_an_error_naming_the_new_one(runs, expr, message):
    v = evaluate(Claim("t", expr), runs)
    assert v.status == "error" and message in v.detail, v.detail


def test_the_same_claims_on_the_new_names_are_evaluated(runs):
    for expr in ("v:vegas.final_cwnd_pkts > 0", "between(v:vegas.cwnd_pkts, 0.1, 0.3) > 0",
                 "series_max(v:R1->R2.length_pkts) > 0"):
        assert evaluate(Claim("t", expr), runs).status == "holds", expr


def test_a_metric_given_an_old_column_name_names_the_new_one():
    with pytest.raises(KeyError, match="'cwnd' was renamed 'cwnd_pkts' in 0.3"):
        metrics.jain_over_active_windows(_new(), window="cwnd")
    with pytest.raises(KeyError, match="'data_pkts_sent' was renamed 'sent_pkts' in 0.3"):
        metrics.interprotocol_fairness_ratio(_new(), "vegas", "newreno", column="data_pkts_sent")


def test_a_catalog_entry_publishing_an_old_name_is_refused_naming_the_new_one(tmp_path):
    (tmp_path / "e.toml").write_text('[meta]\nid = "e"\ntitle = "t"\npublished = { "R1->R2.mean_len" = 2 }\n'
                                     '[[links]]\nendpoints = ["A", "B"]\n[[flows]]\nfrom = "A"\nto = "B"\n')
    with pytest.raises(ScenarioError, match=re.escape("R1->R2.mean_len: 'mean_len' was renamed 'mean_len_pkts' in 0.3")):
        catalog.load_entry("e", tmp_path)


# ---------------------------------------------------------------- a results store of format 2


def _as_format_2(root: Path) -> None:
    """Rewrite a store as 0.2 wrote it: format 2, its tables under the old column names (the
    aggregate ``queue_drops_total`` too), each commit's manifest matching its files."""
    import pyarrow.parquet as pq

    # The summary's own renames (retransmitted, dropped, completion_s, final_cwnd) were never
    # table columns.
    summary_only = {"retransmitted", "dropped", "completion_s"}
    old_of = {new: old for old, new in RENAMED_COLUMNS.items()
              if new not in ("sent_bytes", "dropped_pkts") and old not in summary_only}
    # sent_bytes and dropped_pkts have two old names (per table): pick the table's own.
    per_table = {"flows": {"sent_bytes": "data_bytes_sent"}, "queues": {"dropped_pkts": "drops"},
                 "links": {"sent_bytes": "bytes_sent"}, "runs": {"queue_dropped_pkts_total": "queue_drops_total"}}
    for commit in (root / "data").iterdir():
        record = json.loads((commit / "_commit.json").read_text())
        for name, info in record["files"].items():
            path = commit / name
            table = pq.read_table(path)
            if name == "udp.parquet":
                renames = {}
            else:
                renames = {**old_of, **per_table.get(name.removesuffix(".parquet"), {})}
            if name == "runs.parquet":  # the per-run layouts name the columns too
                layouts = [json.loads(x) for x in table.column("layout").to_pylist()]
                for lay in layouts:
                    lay["columns"] = {t: [({**old_of, **per_table.get(t, {})}).get(c, c) if t != "udp" else c
                                          for c in cols] for t, cols in lay["columns"].items()}
                import pyarrow as pa
                i = table.column_names.index("layout")
                table = table.set_column(i, "layout", pa.array([json.dumps(x) for x in layouts], pa.string()))
            table = table.rename_columns([renames.get(c, c) for c in table.column_names])
            pq.write_table(table, path)
            data = path.read_bytes()
            info.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        record["format"] = 2
        (commit / "_commit.json").write_text(json.dumps(record))
    meta = json.loads((root / "store.json").read_text())
    (root / "store.json").write_text(json.dumps({**meta, "format": 2}))


def test_a_format_2_store_is_read_with_the_new_names_and_never_written_to(tmp_path):
    pytest.importorskip("vegaslab._core")
    from scenario_text import TWO_HOP
    from vegaslab.sweeps.engine import SYNCHRONOUS, execute
    from vegaslab.sweeps.store import RunSpec, Store, StoreError, prepare

    specs = [RunSpec(TWO_HOP + '\n[run]\nduration = "1s"\n[monitor]\ncwnd = true\nall_queues = true\n', "two-hop.toml",
                     (f"links[1].queue.limit={q}",), 1, {"buffer": q}) for q in (5, 20)]
    assert execute(specs, tmp_path / "s", scheduler=SYNCHRONOUS).failed == 0
    keys = [p.key for p in prepare(specs)]
    now = Store(tmp_path / "s")
    want = {t: now.read(t) for t in ("runs", "flows", "queues", "links", "series_flows", "series_queues")}
    want_results = now.load_results(keys)
    _as_format_2(tmp_path / "s")
    assert "drops" in pd.read_parquet(next((tmp_path / "s" / "data").iterdir()) / "queues.parquet").columns

    old = Store(tmp_path / "s")
    for table, frame in want.items():
        got = old.read(table)
        assert list(got.columns) == list(frame.columns), table
        # runs.layout is the store's own record of each run's columns, kept as written (the
        # run's Results below are rebuilt through it).
        pd.testing.assert_frame_equal(got.drop(columns=["layout"], errors="ignore"),
                                      frame.drop(columns=["layout"], errors="ignore"), check_dtype=False)
    got_results = old.load_results(keys)
    assert set(got_results) == set(keys)
    for key in keys:
        _assert_same(got_results[key], want_results[key])
    with pytest.raises(StoreError, match="store format 2.*use a new directory"):
        with old.writer():
            pass
