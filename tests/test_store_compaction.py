"""Compaction of a results store: many small commits are merged
into few, atomically. A reader never sees a run twice or loses one, whatever step a merge is
stopped at and even while it races one; a damaged file is never copied into a merged
commit; a truncated merged commit is detected and its runs computed again. Runs are
milliseconds long, computed in this process (``scheduler="synchronous"``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("vegaslab._core")

from pandas.testing import assert_frame_equal  # noqa: E402
from scenario_text import TWO_HOP  # noqa: E402

import vegaslab.sweeps.store.commits as commits_mod  # noqa: E402
import vegaslab.sweeps.store.read as read_mod  # noqa: E402
from vegaslab.sweeps.engine import SYNCHRONOUS, execute  # noqa: E402
from vegaslab.sweeps.store import (COMPACT_MIN_COMMITS, NONDETERMINISTIC_COLUMNS, STORE_FORMAT, TABLES, RunSpec,  # noqa: E402
                                   Store, StoreLockedError, StoreWriter, prepare)

TEXT = TWO_HOP + '\n[run]\nduration = "1s"\n\n[monitor]\ncwnd = true\n'
N = COMPACT_MIN_COMMITS  # one commit per run: exactly enough small commits to compact


def specs(seeds=range(1, N + 1), name: str = "buffer") -> list[RunSpec]:
    return [RunSpec(TEXT, "two-hop.toml", (f"links[1].queue.limit={4 + s}",), s, {name: 4 + s}) for s in seeds]


def fill(path: Path, the_specs=None, **kw) -> Store:
    ex = execute(the_specs or specs(), path, scheduler=SYNCHRONOUS, batch_runs=1, **kw)
    assert ex.failed == 0, [o.error for o in ex.outcomes if o.error]
    return Store(path)


def tables(store: Store) -> dict:
    out = {}
    for t in TABLES:
        df = store.read(t)
        out[t] = df.drop(columns=[c for c in NONDETERMINISTIC_COLUMNS.get(t, ()) if c in df.columns])
    return out


def assert_same_tables(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for t in a:
        assert_frame_equal(a[t], b[t], check_exact=True, obj=t)


def assert_each_run_once(store: Store, keys: set[str]) -> None:
    runs = store.read("runs")
    assert sorted(runs["run_key"]) == sorted(keys)
    assert len(store.read("flows")) == len(keys)  # one flow per run
    assert store.keys() == keys and store.missing(specs()) == []


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """The sweep's tables, one commit per run, never compacted."""
    store = fill(tmp_path_factory.mktemp("ref") / "s", compact=False)
    assert len(store.commits()) == N
    return tables(store)


@pytest.fixture(scope="module")
def keys() -> set[str]:
    return {p.key for p in prepare(specs())}


def test_a_sweep_ends_with_its_small_commits_merged_and_every_table_reads_the_same(tmp_path, reference):
    path = tmp_path / "s"
    ex = execute(specs(), path, scheduler=SYNCHRONOUS, batch_runs=1)
    assert (ex.ran, ex.commits, ex.merged) == (N, N, N)
    store = Store(path)
    merged, = store.commits()
    assert len(merged.runs) == N and len(merged.replaces) == N
    assert [p.name for p in (path / "data").iterdir()] == [merged.id]
    assert not (path / "_tmp").exists()
    assert_same_tables(tables(store), reference)
    # A stored run still rebuilds the Results that vegaslab.run returns (meta included).
    import vegaslab

    key = prepare(specs()[:1])[0].key
    got = store.load_results([key])[key]
    direct = vegaslab.run(TEXT, seed=1, overrides=["links[1].queue.limit=5"])
    assert_frame_equal(got.flows, direct.flows, check_exact=True)
    assert_frame_equal(got.series_flows, direct.series_flows, check_exact=True)
    # (vegaslab.run was given the text, not a file: its source and scenario id differ.)
    apart = ("wall_time_s", "provenance", "source", "scenario")
    assert {k: v for k, v in got.meta.items() if k not in apart} == \
        {k: v for k, v in direct.meta.items() if k not in apart}
    assert got.meta["source"] == "two-hop.toml" and got.meta["scenario"] == "two-hop"
    assert got.meta["wall_time_s"] > 0


def test_fewer_small_commits_than_the_threshold_are_left_alone(tmp_path):
    ex = execute(specs(range(1, N)), tmp_path / "s", scheduler=SYNCHRONOUS, batch_runs=1)
    assert ex.merged == 0 and len(Store(tmp_path / "s").commits()) == N - 1


def test_commits_of_different_parameter_columns_are_merged_apart(tmp_path):
    path = tmp_path / "s"
    fill(path, specs(range(1, N + 1), "buffer"), compact=False)
    fill(path, specs(range(N + 1, 2 * N + 1), "limit_pkts"), compact=False)
    assert Store(path).compact() == 2 * N
    commits = Store(path).commits()
    assert sorted(tuple(c.params) for c in commits) == [("buffer",), ("limit_pkts",)]
    assert all(len(c.runs) == N for c in commits)


def test_an_explicit_compaction_is_refused_while_a_sweep_writes(tmp_path):
    store = fill(tmp_path / "s", specs(range(1, 3)), compact=False)
    with store.writer():
        with pytest.raises(StoreLockedError):
            Store(tmp_path / "s").compact()
    assert Store(tmp_path / "s").compact() == 2 and len(Store(tmp_path / "s").commits()) == 1


def test_a_compaction_stopped_before_the_merged_commit_lands_changes_nothing(tmp_path, reference, keys, monkeypatch):
    path = tmp_path / "s"
    fill(path, compact=False)
    real_rename = os.rename

    def killed_at_the_commit_point(src, dst):
        if Path(dst).parent == path / "data":
            raise KeyboardInterrupt  # as if killed: the merged commit is complete in _tmp/
        return real_rename(src, dst)

    monkeypatch.setattr(os, "rename", killed_at_the_commit_point)
    with pytest.raises(KeyboardInterrupt):
        Store(path).compact()
    monkeypatch.setattr(os, "rename", real_rename)
    assert list((path / "_tmp").iterdir()), "the unfinished merged commit is left in _tmp/"
    store = Store(path)
    assert len(store.commits()) == N and store.superseded() == []
    assert_each_run_once(store, keys)
    assert_same_tables(tables(store), reference)
    with store.writer():  # the next writer removes the leftover
        pass
    assert not (path / "_tmp").exists()


@pytest.mark.parametrize("retired_before_the_kill", [0, 3])
def test_a_compaction_stopped_before_retiring_the_merged_commits_leaves_each_run_once(
        tmp_path, reference, keys, monkeypatch, retired_before_the_kill):
    path = tmp_path / "s"
    fill(path, compact=False)
    real_retire = StoreWriter._retire

    def killed_while_retiring(self, paths):
        paths = list(paths)
        if paths:  # the merge's retirement (the writer's own tidying retires nothing here)
            real_retire(self, paths[:retired_before_the_kill])
            raise KeyboardInterrupt

    monkeypatch.setattr(StoreWriter, "_retire", killed_while_retiring)
    with pytest.raises(KeyboardInterrupt):
        Store(path).compact()
    monkeypatch.setattr(StoreWriter, "_retire", real_retire)

    store = Store(path)
    assert len(list((path / "data").iterdir())) == 1 + N - retired_before_the_kill  # merged and old, side by side
    merged, = store.commits()
    assert len(store.superseded()) == N - retired_before_the_kill
    assert store.files("flows") == [merged.path / "flows.parquet"]  # what DuckDB and pandas are pointed at
    assert_each_run_once(store, keys)
    assert_same_tables(tables(store), reference)

    with store.writer() as w:  # the next writer retires them
        assert w.quarantined == []
    assert [p.name for p in (path / "data").iterdir()] == [merged.id]
    assert_same_tables(tables(Store(path)), reference)


def test_a_reader_racing_a_compaction_sees_every_run_once(tmp_path, reference, keys, monkeypatch):
    path = tmp_path / "s"
    fill(path, compact=False)
    reader = Store(path)

    # 1. The compaction lands after the reader listed data/ and before it checked the commits.
    real_checked = commits_mod._checked
    state = {"done": False}

    def compaction_mid_scan(d, fresh):
        if not state["done"]:  # the reader's first check; the compaction's own scans pass
            state["done"] = True
            assert Store(path).compact() == N
        return real_checked(d, fresh)

    monkeypatch.setattr(commits_mod, "_checked", compaction_mid_scan)
    assert reader.keys() == keys and len(reader.commits()) == 1
    monkeypatch.setattr(commits_mod, "_checked", real_checked)

    # 2. The compaction lands after the reader's scan and before it read the files.
    fill(path, specs(range(N + 1, 2 * N + 1)), compact=False)
    reader = Store(path)
    expected = reader.read("flows")
    real_read = read_mod.read_parquet
    state["done"] = False

    def compaction_mid_read(p):
        if not state["done"]:
            state["done"] = True
            assert Store(path).compact() == N + 1
        return real_read(p)

    monkeypatch.setattr(read_mod, "read_parquet", compaction_mid_read)
    got = reader.read("flows")
    assert got["run_key"].is_unique and len(got) == 2 * N
    assert_frame_equal(got, expected, check_exact=True)
    monkeypatch.setattr(read_mod, "read_parquet", real_read)

    # 3. The compaction lands while the reader lists data/: the listing names commits that
    # are gone and misses the merged one.
    fill(path, specs(range(2 * N + 1, 3 * N + 1)), compact=False)
    stale = sorted(os.listdir(path / "data"))
    assert Store(path).compact() == N + 1
    real_listdir = os.listdir
    listings = []

    def listing_taken_before_the_compaction(d):
        if Path(d) != path / "data":
            return real_listdir(d)
        listings.append(d)
        return stale if len(listings) == 1 else real_listdir(d)

    monkeypatch.setattr(os, "listdir", listing_taken_before_the_compaction)
    reader = Store(path)
    assert len(reader.keys()) == 3 * N and len(listings) == 2


def test_a_truncated_merged_commit_makes_its_runs_missing_and_they_are_recomputed(tmp_path, reference, keys):
    path = tmp_path / "s"
    merged, = fill(path).commits()
    victim = merged.path / "series_flows.parquet"
    victim.write_bytes(victim.read_bytes()[:-7])

    store = Store(path)
    assert [b.id for b in store.broken()] == [merged.id] and "truncated" in store.broken()[0].reason
    assert store.keys() == set() and len(store.missing(specs())) == N
    ex = execute(specs(), path, scheduler=SYNCHRONOUS, batch_runs=1)
    assert (ex.ran, ex.merged) == (N, N)
    assert_same_tables(tables(Store(path)), reference)
    quarantined, = (path / "_quarantine").iterdir()
    assert "truncated" in (quarantined / "REASON.txt").read_text()


def test_a_compaction_never_copies_a_file_damaged_after_it_was_verified(tmp_path, keys, monkeypatch):
    path = tmp_path / "s"
    fill(path, compact=False)
    victim = Store(path).commits()[2]
    real_merge = StoreWriter._merge

    def damaged_after_the_check(self, members):
        # The commits were verified when the merge chose them; now one file decays.
        f = victim.path / "flows.parquet"
        data = bytearray(f.read_bytes())
        data[len(data) // 2] ^= 0xFF  # same size, other bytes
        f.write_bytes(bytes(data))
        return real_merge(self, members)

    monkeypatch.setattr(StoreWriter, "_merge", damaged_after_the_check)
    assert Store(path).compact() == 0  # the merge hashes what it copies: nothing merged
    assert len(list((path / "data").iterdir())) == N
    assert not (path / "_tmp").exists() or not any((path / "_tmp").iterdir())  # no half-merged commit left
    store = Store(path)
    assert [b.id for b in store.broken()] == [victim.id]
    assert store.keys() == keys - set(victim.runs)


def test_a_commit_is_hashed_once_per_process_unless_a_file_changed_and_always_by_a_writer(tmp_path, monkeypatch):
    path = tmp_path / "s"
    fill(path, specs(range(1, 3)), compact=False)
    hashed: list[Path] = []
    real = commits_mod.sha256_file
    monkeypatch.setattr(commits_mod, "sha256_file", lambda p: hashed.append(p) or real(p))

    Store(path).commits()
    first = len(hashed)
    assert first > 0
    Store(path).commits()  # another Store object, nothing changed: no file hashed again
    assert len(hashed) == first

    f = Store(path).files("runs")[0]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))  # same size: the change time moved, so it is hashed again
    assert len(Store(path).commits()) == 1 and len(hashed) > first

    with Store(path).writer() as w:
        assert len(w.quarantined) == 1
    before = len(hashed)
    with Store(path).writer():  # nothing changed, yet the writer hashes every file again
        pass
    good, = Store(path).commits()
    assert len(hashed) - before == len(good.files)
    assert json.loads((path / "store.json").read_text())["format"] == STORE_FORMAT
