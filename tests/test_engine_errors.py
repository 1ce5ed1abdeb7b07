"""The engine's errors and interrupts: what a user sees when the scheduler address is
wrong or unreachable, when the store is busy or unusable, and on Ctrl-C.

The Ctrl-C test starts ``vegaslab reproduce`` in its own session (its own process group) and
sends SIGINT to the whole group, as a terminal does: the command, its embedded cluster's nannies
and their worker processes all receive it. The entry has many short runs, so the workers are
between runs (in Python) as often as in the core when the signal arrives."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from vegaslab import cli  # noqa: E402
from vegaslab.sweeps import engine  # noqa: E402
from vegaslab.sweeps.engine import EngineError, execute  # noqa: E402
from vegaslab.sweeps.engine.cluster import connect  # noqa: E402
from vegaslab.sweeps.engine.noise import drop_interrupt_noise  # noqa: E402
from vegaslab.sweeps.store import RunSpec, Store, StoreLockedError  # noqa: E402
from reproduce_process import start_reproduce  # noqa: E402
from scenario_text import TWO_HOP, two_hop_file  # noqa: E402


# Many short runs (0.5 s simulated each): a worker spends much of its time between runs.
MANY = """
[meta]
id = "many"
runs = 1000

[run]
duration = "0.5s"
""" + TWO_HOP + """
[[variant]]
name = "vegas"
"""


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


def _refused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------- Ctrl-C


def _reset_sigint() -> None:
    # A shell starts background commands with SIGINT ignored, and an ignored signal stays
    # ignored across exec: the child must get the default, as in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _worker_pids(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes()
                pgid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[2])
            except (OSError, ValueError, IndexError):
                continue
            if pgid == pid and b"spawn_main" in cmd:
                out.append(int(d.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")
def test_core_ctrl_c_on_the_process_group_says_interrupted_without_any_traceback(core, tmp_path):
    proc = start_reproduce(tmp_path, "many", MANY, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_reset_sigint)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_worker_pids(proc.pid)) < 2 and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(1.0)  # the workers join and compute runs
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert "vegaslab: interrupted" in err
    assert "Traceback" not in err, err
    assert "ERROR" not in err, err


def _blocked_signals(status: str) -> int:
    return int(next(line for line in status.splitlines() if line.startswith("SigBlk:")).split()[1], 16)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the signal mask from /proc")
def test_the_embedded_clusters_workers_block_sigint_from_their_start_and_the_client_does_not(no_env_scheduler):
    # A worker that got SIGINT while still importing Dask (before its preload ignores it)
    # printed a KeyboardInterrupt traceback; blocked from its process's start, it never gets
    # it. Read in the workers' main threads, where Python would run a handler.
    with connect(None, 2, None) as (client, _):
        masks = client.run(lambda: open("/proc/self/status").read())
    assert len(masks) == 2
    assert all(_blocked_signals(status) & (1 << (signal.SIGINT - 1)) for status in masks.values())
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


# ---------------------------------------------------------------------- the scheduler address

#: The bound on "fails within seconds": a malformed or refused address must not wait for the
#: Dask client's connect timeout, which is what it would otherwise take; half of that timeout
#: tells the two apart and is out of reach of a busy host's slowness.
WITHIN_SECONDS = engine.CONNECT_TIMEOUT_S / 2


@pytest.mark.parametrize("address", ["bogus", "tcp://10.0.0.1", "tcp://:8786", "tcp://127.0.0.1:99999",
                                     "nosuch://127.0.0.1:8786", "inproc://x"])
def test_an_unparsable_scheduler_is_an_engine_error_naming_the_argument(address, tmp_path, no_env_scheduler):
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=1)]
    t0 = time.monotonic()
    with pytest.raises(EngineError, match=r"^scheduler: .*scheme://host:port"):
        execute(specs, tmp_path / "store", scheduler=address)
    assert time.monotonic() - t0 < WITHIN_SECONDS


def test_a_refused_scheduler_fails_within_seconds(tmp_path, no_env_scheduler):
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=1)]
    address = f"tcp://127.0.0.1:{_refused_port()}"
    t0 = time.monotonic()
    with pytest.raises(EngineError, match=rf"cannot reach the Dask scheduler at {address}"):
        execute(specs, tmp_path / "store", scheduler=address)
    assert time.monotonic() - t0 < WITHIN_SECONDS


def test_a_bad_dask_scheduler_address_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "bogus")
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=1)]
    with pytest.raises(EngineError, match=r"^DASK_SCHEDULER_ADDRESS: "):
        execute(specs, tmp_path / "store")
    with pytest.raises(EngineError, match=r"^DASK_SCHEDULER_ADDRESS: "):  # as the sweep's default does
        execute(specs, tmp_path / "store", scheduler="auto")
    assert not (tmp_path / "store").exists()


def _scenario(tmp_path: Path) -> Path:
    return two_hop_file(tmp_path)


def _study(tmp_path: Path) -> Path:
    path = tmp_path / "study.toml"
    path.write_text('[run]\nduration = "0.2s"\n' + TWO_HOP + "\n[sweep]\nseeds = 2\n")
    return path


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_cli_bad_scheduler_is_a_usage_error_naming_the_option(command, tmp_path, capsys, no_env_scheduler):
    argv = ([command, str(_study(tmp_path))] if command == "sweep" else [command, "va-reroute", "--quick"])
    t0 = time.monotonic()
    assert cli.main([*argv, "--out", str(tmp_path / "out"), "--scheduler", "bogus", "--no-progress"]) == 2
    assert time.monotonic() - t0 < WITHIN_SECONDS
    err = capsys.readouterr().err.strip()
    assert err.startswith("vegaslab: --scheduler: ") and "'bogus'" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out").exists(), "checked before anything is written"


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_cli_bad_dask_scheduler_address_is_a_usage_error_naming_the_variable(command, tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "nohost")
    argv = ([command, str(_study(tmp_path))] if command == "sweep" else [command, "va-reroute", "--quick"])
    assert cli.main([*argv, "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("vegaslab: DASK_SCHEDULER_ADDRESS: ") and "'nohost'" in err, err


def test_cli_refused_scheduler_fails_within_seconds_with_exit_1(core, tmp_path, capsys, no_env_scheduler):
    address = f"tcp://127.0.0.1:{_refused_port()}"
    t0 = time.monotonic()
    assert cli.main(["sweep", str(_study(tmp_path)), "--out", str(tmp_path / "out"), "--scheduler", address,
                     "--no-progress"]) == 1
    assert time.monotonic() - t0 < WITHIN_SECONDS
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"vegaslab: cannot reach the Dask scheduler at {address}"), err


# ---------------------------------------------------------------------- the store


def test_execute_of_stored_runs_only_reads_while_another_process_writes(core, tmp_path):
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=s) for s in (1, 2)]
    path = tmp_path / "store"
    assert execute(specs, path, scheduler=engine.SYNCHRONOUS).ran == 2
    with Store(path).writer():  # a sweep writing to the same store
        ex = execute(specs, path, scheduler=engine.SYNCHRONOUS)
        assert (ex.stored, ex.ran, ex.failed, ex.commits) == (2, 0, 0, 0)
        with pytest.raises(StoreLockedError):  # a missing run still needs the lock
            execute([*specs, RunSpec.from_scenario(_scenario(tmp_path), seed=3)], path,
                    scheduler=engine.SYNCHRONOUS)


def test_cli_reproduce_into_a_locked_store_exits_2_with_one_line(tmp_path, capsys, no_env_scheduler):
    out = tmp_path / "rep"
    store = Store(out / "store")
    with store.writer():   # a store in use is bad input (docs/cli.md), as in sweep and robustness
        assert cli.main(["reproduce", "va-reroute", "--quick", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("vegaslab: ") and "another process is writing to this store" in err, err
    assert len(err.splitlines()) == 1


def test_cli_reproduce_into_a_store_of_another_format_exits_2_with_one_line(tmp_path, capsys, no_env_scheduler):
    out = tmp_path / "rep"
    (out / "store").mkdir(parents=True)
    (out / "store" / "store.json").write_text(json.dumps({"format": 1}))
    assert cli.main(["reproduce", "va-reroute", "--quick", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"vegaslab: {out / 'store' / 'store.json'}: store format 1"), err
    assert len(err.splitlines()) == 1


def _sigint_disposition() -> str:
    return "ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "handled"


def test_embedded_workers_ignore_sigint_also_after_the_nanny_restarts_them(no_env_scheduler):
    with connect(None, 1, None) as (client, _):
        first = client.run(_sigint_disposition)
        assert list(first.values()) == ["ignored"]
        client.restart(timeout=30)  # the nanny starts a fresh worker process
        again = client.run(_sigint_disposition)
        assert list(again.values()) == ["ignored"] and again.keys() != first.keys()


def test_nanny_errors_about_an_interrupted_worker_are_dropped_and_others_kept():
    import asyncio
    import logging

    def record(msg, exc=None):
        return logging.LogRecord("distributed.nanny", logging.ERROR, __file__, 1, msg, None,
                                 (type(exc), exc, None) if exc else None)

    assert not drop_interrupt_noise(record("Failed while trying to start worker", asyncio.CancelledError()))
    assert not drop_interrupt_noise(record("Traceback ...\nKeyboardInterrupt"))
    assert drop_interrupt_noise(record("Failed to start worker", OSError("no space left")))


def _log_in_worker(message: str) -> None:
    import logging

    logging.getLogger("distributed.worker").error(message)


def test_an_embedded_workers_heartbeat_error_is_dropped_and_its_other_errors_are_printed(no_env_scheduler, capfd):
    # Dask's shutdown race: a heartbeat in flight as the cluster closes logs this error, with
    # its CommClosedError traceback, after a Ctrl-C. The workers write to this process's stderr.
    with connect(None, 1, None) as (client, _):
        client.run(_log_in_worker, "Failed to communicate with scheduler during heartbeat.")
        client.run(_log_in_worker, "some other worker error")
    err = capfd.readouterr().err
    assert "some other worker error" in err
    assert "heartbeat" not in err, err
