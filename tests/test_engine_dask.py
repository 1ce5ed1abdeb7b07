"""The execution engine on a real Dask cluster, on loopback only.

A ``dask scheduler`` and two ``dask worker`` processes (``--nthreads 1``, no nanny, so a
SIGKILL takes a worker away for good) are started per test on 127.0.0.1 with free ports and
stopped afterwards. The sweep is 40 runs of a two-hop scenario with seeded packet errors (each
seed gives different numbers; a run takes tens of milliseconds). Every distributed result is
compared, table by table, with the same sweep computed in this process
(``scheduler="synchronous"``): only wall times and worker addresses may differ.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("vegaslab._core")

from pandas.testing import assert_frame_equal  # noqa: E402

from vegaslab.sweeps.engine import SYNCHRONOUS, execute, run_payload  # noqa: E402
from vegaslab.sweeps.store import NONDETERMINISTIC_COLUMNS, TABLES, RunSpec, Store  # noqa: E402

SCENARIO = """
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "1Gbps"
delay = "5ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "50Mbps"
delay = "10ms"
error_rate = 0.0005
queue = { kind = "droptail", limit = 30 }

[monitor]
cwnd = true
queues = ["R1->D1"]

[run]
duration = "40s"

[[flows]]
name = "vegas"
from = "S1"
to = "D1"
cc = "vegas"
tcp = { window = 200 }

[[flows]]
name = "newreno"
from = "S1"
to = "D1"
cc = "newreno"
start = "0.1s"
tcp = { window = 200 }
"""

SOURCE = "two-hop.toml"
SEEDS = range(1, 41)


def sweep_specs(seeds=SEEDS) -> list[RunSpec]:
    """Seeds 1..40, the bottleneck queue alternating between 20 and 30 packets (a typed
    parameter column ``limit``)."""
    return [RunSpec(SCENARIO, SOURCE, (f"links[1].queue.limit={20 if s % 2 else 30}",), s,
                    {"limit": 20 if s % 2 else 30}) for s in seeds]


def assert_same_store(a: Store, b: Store) -> None:
    """Every table of ``a`` equals ``b``'s, exactly, but for the machine-dependent columns."""
    for table in TABLES:
        left, right = a.read(table), b.read(table)
        drop = [c for c in NONDETERMINISTIC_COLUMNS.get(table, ()) if c in left.columns]
        assert_frame_equal(left.drop(columns=drop), right.drop(columns=drop), check_exact=True, obj=table)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Store:
    """The 40-run sweep computed in this process, one run after another."""
    path = tmp_path_factory.mktemp("reference")
    ex = execute(sweep_specs(), path, scheduler=SYNCHRONOUS)
    assert (ex.ran, ex.failed) == (40, 0), [o.error for o in ex.outcomes if o.error]
    return Store(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: prctl(2), looked up now: between fork and exec a child may not import or load anything.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl
PR_SET_PDEATHSIG = 1


def _die_with_the_test() -> None:
    """In a cluster process, before exec: end with the test process that started it (a
    killed or timed-out test run leaves no scheduler or worker behind)."""
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)


class Cluster:
    """A scheduler and worker processes on 127.0.0.1, started with the ``dask`` command."""

    def __init__(self, logs: Path, workers: int = 2) -> None:
        self.logs = logs
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        self.env.pop("DASK_SCHEDULER_ADDRESS", None)
        # The scheduler setting docs/store-format.md recommends (a worker holds one run at a time).
        self.env["DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION"] = "1.0"
        port = self.address.rsplit(":", 1)[1]
        self.workers: list[subprocess.Popen] = []
        self.scheduler = self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", port,
                                                   "--no-dashboard", "--no-show"])
        try:
            self.workers = [self._start(f"worker{i}", ["worker", self.address, "--nthreads", "1", "--no-nanny",
                                                       "--host", "127.0.0.1", "--no-dashboard"])
                            for i in range(workers)]
            from distributed import Client

            # Hang guards: processes that import Dask take seconds to start on a busy host.
            with Client(self.address, timeout=120, set_as_default=False) as c:
                c.wait_for_workers(workers, timeout=120)
                pids = {pid: address for address, pid in c.run(os.getpid).items()}
        except BaseException:  # a cluster that did not come up is not left running
            self.stop()
            raise
        #: Each worker's address, in the order of ``workers`` (runs name the worker by it).
        self.worker_addresses = [pids[p.pid] for p in self.workers]

    def _start(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "wb")
        return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=self.env, preexec_fn=_die_with_the_test)

    def kill_worker(self, i: int) -> None:
        self.workers[i].send_signal(signal.SIGKILL)
        self.workers[i].wait(timeout=60)

    def stop(self) -> None:
        # Workers first (a worker whose scheduler is gone retries for a long time).
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@pytest.fixture
def cluster(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    c = Cluster(logs)
    try:
        yield c
    finally:
        c.stop()


def test_sweep_survives_a_killed_worker_with_each_run_stored_once_as_in_process(cluster, reference, tmp_path):
    path = tmp_path / "store"
    outcomes = []

    def kill_mid_sweep(outcome):
        # Killed once eight runs are in and worker 0 has computed at least one of them (on a
        # busy host worker 1 may be the first to compute eight).
        outcomes.append(outcome)
        first = cluster.worker_addresses[0]
        if cluster.workers[0].poll() is None and len(outcomes) >= 8 and any(o.worker == first for o in outcomes):
            cluster.kill_worker(0)

    ex = execute(sweep_specs(), path, scheduler=cluster.address, workers=2, batch_runs=8, flush_s=0.2,
                 on_outcome=kill_mid_sweep)

    assert cluster.workers[0].returncode == -signal.SIGKILL
    assert (ex.ran, ex.failed, ex.stored) == (40, 0, 0), [o.error for o in ex.outcomes if o.error]
    store = Store(path)
    runs = store.read("runs")
    assert len(runs) == 40 and runs["run_key"].is_unique
    assert sorted(runs["seed"]) == list(SEEDS)
    assert len(store.read("flows")) == 80
    assert len({w for w in runs["worker"]}) == 2, "both workers computed runs before one was killed"
    assert_same_store(store, reference)
    assert store.missing(sweep_specs()) == []


CLIENT = textwrap.dedent("""
    import json, sys, time
    from vegaslab.sweeps.engine import execute
    from vegaslab.sweeps.store import RunSpec
    a = json.loads(sys.argv[1])
    specs = [RunSpec(a["text"], a["source"], tuple(o), s, p) for o, s, p in a["runs"]]
    outcomes = []
    def stall_after_ten(outcome):
        # Each run is committed before its outcome comes here (one run per commit); from the
        # tenth on, this client commits nothing more until it is killed.
        outcomes.append(outcome)
        if len(outcomes) == 10:
            time.sleep(3600)
    execute(specs, a["store"], scheduler=a["address"], batch_runs=1, flush_s=0, on_outcome=stall_after_ten)
""")


def test_rerun_after_the_client_is_killed_computes_only_the_missing_runs(cluster, reference, tmp_path, monkeypatch):
    path = tmp_path / "store"
    specs = sweep_specs()
    arg = json.dumps({"text": SCENARIO, "source": SOURCE, "store": str(path), "address": cluster.address,
                      "runs": [[list(s.overrides), s.seed, s.params] for s in specs]})
    client = subprocess.Popen([sys.executable, "-c", CLIENT, arg], stdin=subprocess.DEVNULL,
                              stderr=open(tmp_path / "client.log", "wb"))
    deadline = time.monotonic() + 300  # a hang guard: the client stalls after ten runs
    try:
        while time.monotonic() < deadline and client.poll() is None:
            if (path / "store.json").exists() and len(Store(path)) >= 10:
                break
            time.sleep(0.02)
    finally:
        client.send_signal(signal.SIGKILL)
        client.wait()
    assert client.returncode == -signal.SIGKILL, (tmp_path / "client.log").read_text()

    before = len(Store(path))
    assert before == 10
    assert len(Store(path).missing(specs)) == 40 - before

    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.address)  # the address from the environment
    ex = execute(specs, path, batch_runs=8, flush_s=0.2)
    assert ex.executor == f"Dask scheduler {cluster.address}"
    assert (ex.submitted, ex.ran, ex.stored, ex.failed) == (40 - before, 40 - before, before, 0)
    assert len(Store(path)) == 40 and not list((path / "_tmp").glob("*"))
    assert_same_store(Store(path), reference)

    # A truncated file: its commit is not trusted, its runs (and only they) are computed again.
    store = Store(path)
    victim = max(store.commits(), key=lambda c: len(c.runs))
    flows = victim.path / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[: flows.stat().st_size // 2])
    assert {s.seed for s in Store(path).missing(specs)} == {
        int(r.seed) for r in reference.read("runs").itertuples() if r.run_key in victim.runs}
    ex = execute(specs, path, batch_runs=8, flush_s=0.2)
    assert (ex.ran, ex.stored) == (len(victim.runs), 40 - len(victim.runs))
    assert not victim.path.exists() and len(list((path / "_quarantine").iterdir())) == 1
    assert_same_store(Store(path), reference)


def crash_on_seed_3(prepared, text, types):
    """A worker's run function that kills its own process for seed 3 (as a core abort or the
    kernel's OOM killer would), and runs the others normally."""
    if prepared.seed == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return run_payload(prepared, text, types)


def test_a_run_that_keeps_killing_its_worker_fails_alone_on_the_embedded_cluster(tmp_path, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)  # the default: an embedded cluster
    path = tmp_path / "store"
    specs = sweep_specs(range(1, 7))
    ex = execute(specs, path, workers=2, allowed_failures=1, run_fn=crash_on_seed_3, flush_s=0.2)
    assert ex.executor == "local Dask cluster, 2 worker processes"
    failed = [o for o in ex.outcomes if o.status == "failed"]
    assert [o.spec.seed for o in failed] == [3]
    assert "worker process died each time it was tried" in failed[0].error
    assert "killed by SIGKILL" in failed[0].error, failed[0].error
    assert ex.ran == 5
    assert sorted(Store(path).read("runs")["seed"]) == [1, 2, 4, 5, 6]
    assert [s.seed for s in Store(path).missing(specs)] == [3], "a failed run is not stored: the next execute retries it"
