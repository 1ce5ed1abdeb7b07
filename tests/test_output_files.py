"""What vegaslab writes into a directory that may be shared, copied or downloaded, and what it
reads back from one (vegaslab.safe_io): a results store and a ``reproduce --out`` directory
with planted links, FIFOs, huge or deeply nested files, and a disk that fills up. Nothing is
written or read outside the directory the user named, nothing planted is followed, a bad
file is set aside with a message naming it, and nothing committed before is lost."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("vegaslab._core")

from scenario_text import TWO_HOP  # noqa: E402
from vegaslab import cli  # noqa: E402
from vegaslab.sweeps.engine import SYNCHRONOUS, execute  # noqa: E402
from vegaslab.sweeps.store import RunSpec, Store, StoreError  # noqa: E402

TEXT = TWO_HOP + '\n[run]\nduration = "0.5s"\n'

SWEEP = TWO_HOP + """
[meta]
id = "tiny-sweep"
[run]
duration = "0.5s"
[sweep]
seeds = 2
[[sweep.axis]]
name = "limit"
path = "links[1].queue.limit"
values = [5, 20]
"""

ENTRY = """
[meta]
id = "tiny"
title = "A title with <b>markup</b>"
notes = "Notes with <script>alert('notes')</script> and [a link](javascript:alert(1))."
[run]
duration = "1s"
""" + TWO_HOP + """
[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }
published = { "f1.retransmitted_pkts" = 3 }
"""


def specs(seeds=range(1, 3)) -> list[RunSpec]:
    return [RunSpec(TEXT, "two-hop.toml", (f"links[1].queue.limit={5 * s}",), s, {"buffer": 5 * s}) for s in seeds]


def fill(path: Path, seeds=range(1, 3)) -> Store:
    ex = execute(specs(seeds), path, scheduler=SYNCHRONOUS)
    assert ex.failed == 0
    return Store(path)


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file outside every directory vegaslab is given: it must never change."""
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir()
    path.write_text("keep me")
    return path


# ---------------------------------------------------------------------- the store's lock

def test_a_lock_symlink_planted_in_a_store_is_refused_and_its_target_untouched(tmp_path, victim):
    store = fill(tmp_path / "s")
    os.unlink(store.path / ".lock")
    os.symlink(victim, store.path / ".lock")
    with pytest.raises(StoreError, match=r"\.lock: is a symbolic link"):
        execute(specs(range(3, 4)), store.path, scheduler=SYNCHRONOUS)
    assert victim.read_text() == "keep me"


def test_sweep_with_a_planted_lock_link_exits_2_naming_it(tmp_path, victim, capsys):
    (tmp_path / "study.toml").write_text(SWEEP)
    out = tmp_path / "store"
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous"]) == 0
    os.unlink(out / ".lock")
    os.symlink(victim, out / ".lock")
    capsys.readouterr()
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous",
                     "--set", "run.duration=0.6s"]) == 2
    assert ".lock" in capsys.readouterr().err and victim.read_text() == "keep me"


def test_a_directory_holding_only_a_lock_file_is_not_taken_for_a_store(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / ".lock").write_text("")
    with pytest.raises(StoreError, match="not a vegaslab store"):
        Store(d)
    assert not (d / "store.json").exists()


@pytest.mark.parametrize("name", ["data", "_tmp", "_quarantine"])
def test_a_link_in_place_of_a_store_directory_is_refused_and_nothing_is_written_through_it(tmp_path, name):
    store = fill(tmp_path / "s")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = store.path / name
    if real.exists():
        real.rename(tmp_path / f"moved-{name}")
    os.symlink(elsewhere, real)
    with pytest.raises(StoreError, match=f"{name}: is not a directory"):
        execute(specs(range(3, 4)), store.path, scheduler=SYNCHRONOUS)
    assert list(elsewhere.iterdir()) == []


def test_a_commit_directory_planted_as_a_link_is_never_followed_and_is_set_aside(tmp_path):
    store = fill(tmp_path / "s")
    other = fill(tmp_path / "other", seeds=range(5, 7))
    commit = next((other.path / "data").iterdir())
    os.symlink(commit, store.path / "data" / "planted")
    assert len(Store(store.path)) == 2                     # the other store's runs are not read
    assert [b.id for b in Store(store.path).broken()] == ["planted"]
    execute(specs(range(3, 4)), store.path, scheduler=SYNCHRONOUS)   # the writer sets it aside
    assert not os.path.lexists(store.path / "data" / "planted") and commit.is_dir()


# ---------------------------------------------------------------------- planted _commit.json

def _planted_commit(store: Store, how) -> Path:
    d = store.path / "data" / ("f" * 32)
    d.mkdir()
    how(d / "_commit.json")
    return d


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000)


def _zero(path: Path) -> None:
    os.symlink("/dev/zero", path)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _huge(path: Path) -> None:
    with open(path, "wb") as fh:
        fh.truncate(200 << 20)   # sparse: 200 MiB of zeros


def _wrong_shape(path: Path) -> None:
    path.write_text(json.dumps({"format": 3, "commit": "f" * 32, "runs": "not a list", "files": []}))


@pytest.mark.parametrize("how", [_deep, _zero, _fifo, _huge, _wrong_shape])
def test_a_planted_commit_record_is_set_aside_quickly_and_the_store_stays_usable(tmp_path, how):
    store = fill(tmp_path / "s")
    planted = _planted_commit(store, how)
    t0 = time.monotonic()
    again = Store(store.path)
    assert len(again) == 2                      # the real runs are still there
    broken, = again.broken()
    assert broken.id == planted.name and "_commit.json" in broken.reason
    assert time.monotonic() - t0 < 60           # no read of /dev/zero, no wait on the FIFO
    ex = execute(specs(range(1, 4)), store.path, scheduler=SYNCHRONOUS)
    assert (ex.ran, ex.failed) == (1, 0)
    assert len(Store(store.path)) == 3 and not planted.exists()
    quarantined, = (store.path / "_quarantine").iterdir()
    assert "_commit.json" in (quarantined / "REASON.txt").read_text()


def test_sweep_status_does_not_wait_on_a_fifo_planted_as_a_commit_record(tmp_path):
    (tmp_path / "study.toml").write_text(SWEEP)
    out = tmp_path / "store"
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous"]) == 0
    _planted_commit(Store(out), _fifo)
    proc = subprocess.run([sys.executable, "-m", "vegaslab", "sweep", str(tmp_path / "study.toml"), "--out", str(out),
                           "--status"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "stored 4, missing 0, failed 0" in proc.stdout


def test_a_planted_store_json_of_the_wrong_shape_is_a_clear_error(tmp_path):
    store = fill(tmp_path / "s")
    (store.path / "store.json").write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(StoreError, match=r"store\.json: nested deeper"):
        Store(store.path)
    (store.path / "store.json").write_text('{"format": "3"}')
    with pytest.raises(StoreError, match=r"store\.json: not a file vegaslab wrote: format"):
        Store(store.path)


# ---------------------------------------------------------------------- a disk that fills up

@pytest.fixture
def small_disk(small_tmpfs):
    return small_tmpfs("1m")


def test_a_commit_that_fills_the_disk_names_the_store_and_runs_and_leaves_no_partial_commit(small_disk):
    store = fill(small_disk / "s", seeds=range(1, 2))
    ballast = small_disk / "ballast"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    ballast.write_bytes(b"\0" * max(0, free - 8192))
    with pytest.raises(StoreError) as info:
        execute(specs(range(2, 3)), store.path, scheduler=SYNCHRONOUS)
    message = str(info.value)
    assert str(store.path) in message and "No space left on device" in message
    assert "two-hop.toml" in message and "seed 2" in message
    assert not (store.path / "_tmp").exists() or list((store.path / "_tmp").iterdir()) == []
    ballast.unlink()
    assert len(Store(store.path)) == 1          # what was committed before is intact
    assert execute(specs(range(1, 3)), store.path, scheduler=SYNCHRONOUS).ran == 1


# ---------------------------------------------------------------------- reproduce --out

@pytest.fixture
def catalog(tmp_path, monkeypatch) -> Path:
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "tiny.toml").write_text(ENTRY)
    monkeypatch.setenv("VEGASLAB_CATALOG", str(cat))
    return cat


@pytest.mark.parametrize("name", ["summary.md", "summary.csv", "index.html"])
def test_reproduce_replaces_a_link_planted_at_a_report_file_without_writing_through_it(catalog, tmp_path, victim,
                                                                                        name):
    out = tmp_path / "rep"
    out.mkdir()
    os.symlink(victim, out / name)
    assert cli.main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "-q"]) == 0
    assert victim.read_text() == "keep me"
    assert not (out / name).is_symlink() and (out / name).stat().st_size > 0


@pytest.mark.parametrize("name", ["results", "store"])
def test_reproduce_refuses_a_link_planted_as_its_results_or_store_before_any_run(catalog, tmp_path, capsys, name):
    out = tmp_path / "rep"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, out / name)
    assert cli.main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "-q"]) == 2
    assert f"{name}: is a symbolic link" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == [] and not (out / "index.html").exists()


def test_summary_md_quotes_catalog_text_as_text_never_as_html(catalog, tmp_path):
    out = tmp_path / "rep"
    assert cli.main(["reproduce", "tiny", "--out", str(out), "--scheduler", "synchronous", "-q"]) == 0
    md = (out / "summary.md").read_text()
    assert "<script" not in md and "<b>" not in md and not re.search(r"(?<!\\)\]\(", md)   # no tag, no link
    assert "&lt;script>alert('notes')&lt;/script>" in md and "\\[a link\\](javascript:alert(1))" in md


def test_sweep_on_a_full_disk_exits_1_naming_the_store_and_keeps_what_was_committed(small_disk, capsys):
    study = small_disk / "study.toml"
    study.write_text(SWEEP)
    out = small_disk / "store"
    assert cli.main(["sweep", str(study), "--out", str(out), "--scheduler", "synchronous", "-q"]) == 0
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    (small_disk / "ballast").write_bytes(b"\0" * max(0, free - 8192))
    assert cli.main(["sweep", str(study), "--out", str(out), "--scheduler", "synchronous", "-q",
                     "--set", "run.duration=0.6s"]) == 1
    err = capsys.readouterr().err
    assert str(out) in err and "No space left on device" in err and "study.toml" in err, err
    assert len(Store(out)) == 4


def test_a_planted_failures_file_is_ignored_with_a_warning_naming_it(tmp_path, capsys):
    (tmp_path / "study.toml").write_text(SWEEP)
    out = tmp_path / "store"
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous"]) == 0
    os.mkfifo(out / "sweep-failures.json")
    capsys.readouterr()
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--status"]) == 0
    captured = capsys.readouterr()
    assert "sweep-failures.json: is a FIFO" in captured.err and "stored 4" in captured.out


def test_a_sweep_plot_replaces_a_planted_link_without_writing_through_it(tmp_path, victim):
    (tmp_path / "study.toml").write_text(SWEEP)
    out = tmp_path / "store"
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous"]) == 0
    os.symlink(victim, out / "throughput_bps-vs-limit.png")
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(out), "--scheduler", "synchronous",
                     "--plot", "throughput_bps:limit"]) == 0
    assert victim.read_text() == "keep me"
    assert (out / "throughput_bps-vs-limit.png").read_bytes()[:4] == b"\x89PNG"


# ---------------------------------------------------------------------- found by an audit

def test_a_garbage_table_with_matching_checksums_is_set_aside_not_an_internal_error(tmp_path):
    import hashlib

    store = fill(tmp_path / "s")
    commit = next((store.path / "data").iterdir())
    record = json.loads((commit / "_commit.json").read_text())
    garbage = b"PAR1 not a parquet file PAR1"
    (commit / "flows.parquet").write_bytes(garbage)
    record["files"]["flows.parquet"] = {"sha256": hashlib.sha256(garbage).hexdigest(), "bytes": len(garbage), "rows": 1}
    (commit / "_commit.json").write_text(json.dumps(record))
    broken, = Store(store.path).broken()
    assert "flows.parquet: not a Parquet table" in broken.reason
    assert execute(specs(), store.path, scheduler=SYNCHRONOUS).ran == 2   # computed again, the commit quarantined


@pytest.mark.parametrize("name", [".ipynb_checkpoints", "x" * 250])
def test_any_stray_directory_among_the_commits_is_quarantined_and_the_store_stays_writable(tmp_path, name):
    store = fill(tmp_path / "s")
    (store.path / "data" / name).mkdir()
    assert execute(specs(range(1, 4)), store.path, scheduler=SYNCHRONOUS).ran == 1
    quarantined, = (store.path / "_quarantine").iterdir()
    assert (quarantined / "commit").is_dir() and f"data/{name}" in (quarantined / "REASON.txt").read_text()


def test_a_hard_link_planted_as_the_lock_is_refused_and_its_target_untouched(tmp_path, victim):
    store = fill(tmp_path / "s")
    os.unlink(store.path / ".lock")
    os.link(victim, store.path / ".lock")
    with pytest.raises(StoreError, match="hard links"):
        execute(specs(range(3, 4)), store.path, scheduler=SYNCHRONOUS)
    assert victim.read_text() == "keep me"


def test_run_out_through_the_users_own_link_writes_where_it_points_and_keeps_the_link(tmp_path):
    (tmp_path / "s.toml").write_text(TEXT)
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "link")
    for _ in range(2):   # a new run directory, then one replaced
        assert cli.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "link"), "--no-plots", "-q"]) == 0
    assert (tmp_path / "link").is_symlink() and (real / "flows.parquet").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "s.toml"]   # no stray staging or old directory


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_scenario_nested_too_deep_for_pythons_parser_is_a_scenario_error(tmp_path, capsys, command):
    (tmp_path / "deep.toml").write_text(TEXT + "x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert cli.main([command, str(tmp_path / "deep.toml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "deep.toml" in err and "internal error" not in err, err


def test_run_out_never_replaces_a_directory_holding_a_users_capture(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(TEXT)
    out = tmp_path / "d"
    out.mkdir()
    (out / "capture.pcap").write_bytes(b"mine")
    assert cli.main(["run", str(tmp_path / "s.toml"), "--out", str(out), "--no-plots", "-q"]) == 2
    assert "capture.pcap" in capsys.readouterr().err and (out / "capture.pcap").read_bytes() == b"mine"


def test_a_sweep_of_a_scenario_with_a_trace_says_the_trace_is_not_written(tmp_path, capsys):
    (tmp_path / "study.toml").write_text(SWEEP + '\n[trace]\nfile = "t.tr"\n')
    assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(tmp_path / "s"), "--scheduler",
                     "synchronous", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "[trace] is not written" in err and err.count("[trace]") == 1, err
    assert not list(tmp_path.rglob("t.tr"))


def test_sweep_into_a_locked_store_exits_2(tmp_path, capsys):
    (tmp_path / "study.toml").write_text(SWEEP)
    with Store(tmp_path / "s").writer():
        assert cli.main(["sweep", str(tmp_path / "study.toml"), "--out", str(tmp_path / "s"), "--scheduler",
                         "synchronous", "-q"]) == 2
    assert "another process is writing to this store" in capsys.readouterr().err
