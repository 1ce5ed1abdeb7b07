"""Crash isolation of `vegaslab reproduce`: a run that kills its process fails
alone, and worker processes never outlive the command, now that reproduce runs on the Dask
engine. Tests named ``test_core_*`` need the core.

The crashing run is simulated with the engine's ``run_fn`` hook: :func:`abort_some` below runs
in the worker process and calls ``os.abort()`` (SIGABRT, as a failed allocation in the core
would) for the variant named ``crash``."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from vegaslab.study import catalog, runner
from vegaslab.reproduction import reproduce
from vegaslab.sweeps import engine
from vegaslab.sweeps.store import Store
from reproduce_process import start_reproduce
from scenario_text import TWO_HOP

ENTRY = """
[meta]
id = "crashy"

[run]
duration = "1s"
""" + TWO_HOP + """
[[variant]]
name = "vegas"
published = { "f1.retransmitted_pkts" = 0 }

[[variant]]
name = "crash"
set = { "flows[0].cc" = "reno" }

[[variant]]
name = "newreno"
set = { "flows[0].cc" = "newreno" }

[[variant]]
name = "reno-late"
set = { "flows[0].cc" = "reno", "flows[0].start" = "0.1s" }
"""


def abort_some(prepared, text, types):
    """The worker's run function: abort the process for the ``crash`` variant."""
    if prepared.spec.params.get("variant") == "crash":
        os.abort()
    return engine.run_payload(prepared, text, types)


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


@pytest.fixture
def cat(tmp_path) -> Path:
    d = tmp_path / "cat"
    d.mkdir()
    (d / "crashy.toml").write_text(ENTRY)
    return d


@pytest.mark.parametrize("n_jobs", [2, 1])
def test_core_a_run_that_aborts_its_worker_fails_alone_and_the_others_complete(core, cat, tmp_path, n_jobs):
    jobs = runner.plan([catalog.load_entry("crashy", cat)])
    ex = runner.execute(jobs, tmp_path / "store", n_jobs=n_jobs, progress=False, run_fn=abort_some)
    status = {o.job.variant: o.status for o in ex.outcomes.values()}
    assert status == {"vegas": "ran", "crash": "failed", "newreno": "ran", "reno-late": "ran"}
    (crashed,) = [o for o in ex.outcomes.values() if o.status == "failed"]
    assert "worker process died" in crashed.error and "SIGABRT" in crashed.error
    assert "crashy/crash/seed1" in crashed.error
    assert f"{runner.ALLOWED_FAILURES + 1} times" in crashed.error  # tried again once, on a fresh worker
    assert len(Store(tmp_path / "store")) == 3  # every finished run is stored


def test_core_reproduce_with_one_job_survives_an_aborting_run_and_writes_the_report(core, cat, tmp_path):
    out = tmp_path / "rep"
    table = reproduce(["crashy"], out, directory=cat, echo=None, jobs=1, run_fn=abort_some)
    assert table.attrs["runs"] == {"ran": 3, "cached": 0, "failed": 1, "total": 4}
    failed = table[table["metric"] == "(run failed)"]
    assert list(failed["run"]) == ["crash"] and "SIGABRT" in failed["note"].iloc[0]
    assert (out / "index.html").is_file() and "SIGABRT" in (out / "summary.md").read_text()
    # nothing computed is lost: a second reproduce takes the three from the cache
    again = reproduce(["crashy"], out, directory=cat, echo=None, jobs=1, run_fn=abort_some)
    assert again.attrs["runs"] == {"ran": 0, "cached": 3, "failed": 1, "total": 4}


# ---------------------------------------------------------------------- SIGKILL of the command

LONG = """
[meta]
id = "long"

[run]
duration = "1000000s"
""" + TWO_HOP.replace("500kbps", "50Mbps").replace("1Mbps", "100Mbps") + """
[[variant]]
name = "a"

[[variant]]
name = "b"
set = { "flows[0].cc" = "reno" }
"""


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(d.name))
    return kids


def _descendants(pid: int) -> set[int]:
    kids, out, todo = _children(), set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait() is missing


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")
def test_core_workers_exit_within_seconds_after_reproduce_is_killed(core, tmp_path):
    proc = start_reproduce(tmp_path, "long", LONG, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the two Dask worker processes
            if sum(1 for p in _descendants(proc.pid) if b"spawn_main" in _cmdline(p)) >= 2:
                break
            time.sleep(0.1)
        else:
            pytest.fail("reproduce did not start its workers")
        time.sleep(3)  # let them join the cluster and get into the simulation
        everything = _descendants(proc.pid)
        assert everything, "no worker processes found"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # They exit at once (end of file on the pipe from their parent) and would otherwise run the
    # 1,000,000-s scenario on: a minute is a hang guard, not a measure of the host's speed.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_running(p) for p in everything):
        time.sleep(0.1)
    alive = [p for p in everything if _running(p)]
    for p in alive:  # do not leave them behind even when the test fails
        os.kill(p, signal.SIGKILL)
    assert not alive, f"{len(alive)} of {len(everything)} worker processes outlived the killed reproduce"
