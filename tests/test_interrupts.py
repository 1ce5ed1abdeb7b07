"""Ctrl-C always ends `sweep`, `reproduce` and `robustness`: within seconds, with exit 130, no
traceback, and the finished runs kept (vegaslab.interrupts, vegaslab.sweeps.engine).

The random-moment test starts each command in its own session (its own process group) and sends
SIGINT at a moment drawn from a seeded RNG over the command's whole working life, alternately to
the process group (a terminal's Ctrl-C: the embedded cluster's worker processes get it too) and
to the main process alone (what Jupyter's interrupt button sends). The window opens when the
command has created its output store, the first thing it writes: before that, in the tenth of a
second Python needs to start and import vegaslab, the signal meets Python's own handler and
its KeyboardInterrupt traceback, as in any Python program.

The in-process tests plant the two ways a Ctrl-C can go wrong: its KeyboardInterrupt raised
where Python drops it (a garbage-collection callback, such as the one the embedded Dask
scheduler installs), and raised in the middle of a store commit."""

from __future__ import annotations

import gc
import logging
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("distributed")

import vegaslab  # noqa: E402
from vegaslab import cli  # noqa: E402
from vegaslab.cli import run as run_cli  # noqa: E402
from vegaslab.sweeps import engine  # noqa: E402
from vegaslab.sweeps.engine import execute  # noqa: E402
from vegaslab.sweeps.engine.cluster import connect  # noqa: E402
from vegaslab.sweeps.store import RunSpec, Store, StoreWriter, prepare  # noqa: E402
from reproduce_process import PKG_ROOT  # noqa: E402
from scenario_text import TWO_HOP, two_hop_file  # noqa: E402

#: Random moments per test run, alternating the process group and the main process alone.
REPEATS = 20
#: Seed of the moments (repeat i runs the commands in turn: sweep, reproduce, robustness).
MOMENTS_SEED = 20261129
#: An interrupted command must have ended within this many seconds. It checks that a command
#: never hangs, not how fast it stops (the orderly stop takes under 3.5 s on an idle machine;
#: the program's own last resort would end it after interrupts.WATCHDOG_S, and the test also
#: fails if that is what ended it).
EXIT_BOUND_S = 20.0
#: A calibration run (no signal) must finish within this.
CALIBRATION_BOUND_S = 120.0


@pytest.fixture
def core():
    return pytest.importorskip("vegaslab._core")


@pytest.fixture(autouse=True)
def ctrl_c_reaches_python():
    """Every test here sends itself or its command a SIGINT, so Python's own handler must be in
    place, as it is in a terminal. A shell starts background commands (``make test &``, a CI
    runner's job) with SIGINT ignored, and Python keeps an ignored SIGINT ignored: the test
    would then see no interrupt at all. The handler is restored afterwards, and commands
    started here get the default action through it (an ignored signal stays ignored across
    exec, a handled one becomes the default)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _scenario(tmp_path: Path) -> Path:
    return two_hop_file(tmp_path)


# ---------------------------------------------------------------------- in this process


@pytest.mark.parametrize("scheduler", ["synchronous", None], ids=["synchronous", "embedded-cluster"])
def test_a_ctrl_c_whose_handler_runs_inside_a_gc_callback_still_stops_the_engine(core, tmp_path, scheduler,
                                                                                no_env_scheduler):
    # Python runs a signal handler at the next bytecode of the main thread; a KeyboardInterrupt
    # raised inside a gc callback is printed as "Exception ignored" and dropped, and the engine
    # would run every run to the end. Here the first result triggers a collection whose
    # callback receives the SIGINT.
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=s) for s in range(1, 41)]
    state = {"armed": False, "fired": False}

    def callback(phase: str, info: dict) -> None:
        if state["armed"] and not state["fired"]:
            state["fired"] = True
            os.kill(os.getpid(), signal.SIGINT)
            sum(i for i in range(1000))  # bytecodes: the handler runs here, inside the callback

    def seen(outcome) -> None:
        if outcome.status == "ran" and not state["armed"]:
            state["armed"] = True
            gc.collect()

    gc.callbacks.append(callback)
    try:
        ex = execute(specs, tmp_path / "store", scheduler=scheduler, workers=1, on_outcome=seen)
    finally:
        gc.callbacks.remove(callback)
    assert state["fired"]
    assert ex.interrupted
    assert 1 <= ex.ran < len(specs)
    assert Store(tmp_path / "store").keys() == {o.key for o in ex.outcomes if o.status == "ran"}


def test_a_ctrl_c_as_a_commit_starts_lets_it_complete_and_every_finished_run_is_stored(core, tmp_path,
                                                                                       monkeypatch):
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=s) for s in range(1, 9)]
    write_commit = StoreWriter._write_commit

    def interrupted_commit(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs at the next bytecode, here
        return write_commit(self, *args, **kwargs)

    monkeypatch.setattr(StoreWriter, "_write_commit", interrupted_commit)
    ex = execute(specs, tmp_path / "store", scheduler="synchronous", batch_runs=3)
    assert ex.interrupted
    assert ex.ran == 3  # the third run's commit completed; nothing ran after it
    assert Store(tmp_path / "store").keys() == {o.key for o in ex.outcomes if o.status == "ran"}
    assert not list((tmp_path / "store").glob("_tmp/*"))


def test_a_worker_busy_in_a_long_run_ends_it_when_the_cluster_closes_rather_than_being_killed(core, caplog,
                                                                                             no_env_scheduler):
    # Dask's close waits for a worker's running task, and the nanny kills a worker busy in a
    # long run after 4 s: each Ctrl-C during one would take that long. The engine's runs end
    # once their worker is closing.
    bench = Path(vegaslab.__file__).parent / "catalog_data" / "bench" / "grids-net2.toml"
    prepared = prepare([RunSpec.from_scenario(bench, seed=1, overrides=["run.duration=100000s"])])[0]
    caplog.set_level(logging.INFO, logger="distributed.nanny")
    with connect(None, 1, None) as (client, _):
        run = client.submit(engine.run_payload, prepared.light(), prepared.spec.text, {}, pure=False)
        deadline = time.monotonic() + 60
        while not any(client.processing().values()):
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
        time.sleep(0.5)  # inside the core now (a run takes minutes)
        assert run.status == "pending"
    # Leaving the block closed the cluster, the worker in the middle of its run.
    assert "killing" not in caplog.text, caplog.text
    assert "Nanny asking worker to close" in caplog.text  # the nanny's log was seen


def test_the_run_after_an_interrupted_one_computes_only_what_it_had_not_stored(core, tmp_path):
    specs = [RunSpec.from_scenario(_scenario(tmp_path), seed=s) for s in range(1, 11)]

    def ctrl_c_after_the_fourth(outcome) -> None:
        if outcome.status == "ran" and sum(1 for _ in seen) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        seen.append(outcome)

    seen: list = []
    first = execute(specs, tmp_path / "store", scheduler="synchronous", on_outcome=ctrl_c_after_the_fourth)
    assert first.interrupted and first.ran == 4
    again = execute(specs, tmp_path / "store", scheduler="synchronous")
    assert (again.stored, again.ran, again.interrupted) == (4, 6, False)


def test_a_command_whose_keyboard_interrupt_was_dropped_still_exits_130(monkeypatch, capsys):
    def swallowing(args) -> int:  # a subcommand in which the KeyboardInterrupt is lost on the way
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        return 0

    monkeypatch.setattr(run_cli, "cmd_run", swallowing)
    assert cli.main(["run", "nosuch.toml"]) == 130
    assert capsys.readouterr().err.strip() == "vegaslab: interrupted"


def test_a_ctrl_c_dropped_in_a_gc_callback_stops_the_command_soon_and_prints_no_traceback(monkeypatch, capsys):
    steps = []

    def command_whose_interrupt_is_dropped(args) -> int:
        fired = []

        def callback(phase: str, info: dict) -> None:
            if not fired:
                fired.append(True)
                os.kill(os.getpid(), signal.SIGINT)
                sum(i for i in range(1000))  # the handler raises here, and Python drops it

        gc.callbacks.append(callback)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(callback)
        for _ in range(500):  # 5 s of work, unless it is interrupted
            time.sleep(0.01)
            steps.append(1)
        return 0

    monkeypatch.setattr(run_cli, "cmd_run", command_whose_interrupt_is_dropped)
    assert cli.main(["run", "x.toml"]) == 130
    assert len(steps) < 100, "the interrupt is delivered again within a second, not at the end"
    assert capsys.readouterr().err.strip() == "vegaslab: interrupted"


WEDGED = textwrap.dedent("""
    import sys, time
    from vegaslab import interrupts
    interrupts.enable_watchdog(float(sys.argv[1]))
    with interrupts.deferred():
        print("ready", flush=True)
        while True:  # an orderly stop that never comes
            time.sleep(0.05)
""")


def test_the_programs_last_resort_ends_a_process_whose_orderly_stop_hangs_with_130():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", WEDGED, "1.0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, preexec_fn=_reset_sigint)
    try:
        assert proc.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=EXIT_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert 1.0 <= time.monotonic() - t0 < EXIT_BOUND_S
    assert err.startswith("vegaslab: interrupted; the orderly stop took longer than 1 s"), err


# ---------------------------------------------------------------------- the commands, at random moments


def _reset_sigint() -> None:
    # A shell starts background commands with SIGINT ignored, and an ignored signal stays
    # ignored across exec: the child must get the default, as in a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Command:
    """One command line on a small workload; each start writes to the output directory given."""

    name: str
    argv: list[str]
    runs: int
    #: Where the store is inside the output directory ("" : the output directory itself).
    store_in: str = ""
    env: dict[str, str] = field(default_factory=dict)

    def start(self, out: Path) -> subprocess.Popen:
        env = {**os.environ, **self.env,
               "PYTHONPATH": os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        for name in ("DASK_SCHEDULER_ADDRESS", "VEGASLAB_DEBUG"):
            env.pop(name, None)
        return subprocess.Popen([sys.executable, "-m", "vegaslab", *self.argv, "--out", str(out)], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, preexec_fn=_reset_sigint)

    def store(self, out: Path) -> Path:
        return out / self.store_in if self.store_in else out

    def computed(self, stdout: str, stderr: str) -> tuple[int, int]:
        """(runs computed, runs found in the store) as the command reported them."""
        if self.name == "sweep":
            m = re.search(r"ran (\d+), already stored (\d+)", stdout)
        elif self.name == "reproduce":
            m = re.search(r"runs: (\d+) ran, (\d+) found in", stderr)
        else:
            m = re.search(r"(\d+) runs, (\d+) computed", stdout)
            assert m, (stdout, stderr)
            return int(m.group(2)), int(m.group(1)) - int(m.group(2))
        assert m, (stdout, stderr)
        return int(m.group(1)), int(m.group(2))


#: One Vegas flow with unlimited data over a 50 Mbit/s bottleneck for 600 simulated seconds:
#: about 0.1 s of computing per run, so that the runs' phase of each command below lasts
#: seconds, about as long as the cluster's start, and some runs finish before a Ctrl-C.
BUSY_PATH = """
[run]
duration = "600s"

[[links]]
endpoints = ["S1", "R1"]
bandwidth = "100Mbps"
delay = "1ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "50Mbps"
delay = "5ms"
queue = { kind = "droptail", limit = 100 }

[[flows]]
name = "f1"
from = "S1"
to = "D1"
cc = "vegas"
app = "ftp"
"""

SWEEP = BUSY_PATH + """
[sweep]
seeds = 60
"""

ENTRY = """
[meta]
id = "busy"
title = "one Vegas flow over a 50 Mbit/s bottleneck"
paper = "test"
runs = 20

[[meta.claim]]
text = "the flow gets more than 10 Mbit/s"
expr = "busy:f1.throughput_bps > 10000000"
""" + BUSY_PATH

STUDY = """
[study]
entry = "busy"
claim = "the flow gets more than 10 Mbit/s"
conclusion = "the flow gets more than 10 Mbit/s"
default_reason = "it is a test."
seeds = 15

[study.figure]
expr = "busy:f1.throughput_bps / 1e6"
label = "throughput in Mbit/s"

[[study.factor]]
name = "delay"
path = "links[1].delay"
values = ["5ms", "20ms"]
default = "5ms"
reason = "not given"
"""


def _commands(tmp_path: Path) -> list[Command]:
    """`sweep`, `reproduce` and `robustness` on workloads of a few seconds, 2 workers each."""
    (tmp_path / "study.toml").write_text(SWEEP)
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "busy.toml").write_text(ENTRY)
    studies = tmp_path / "studies"
    studies.mkdir()
    (studies / "busy.toml").write_text(STUDY)
    common = ["--jobs", "2", "--no-progress"]
    return [
        Command("sweep", ["sweep", str(tmp_path / "study.toml"), *common], 60),
        Command("reproduce", ["reproduce", "busy", "-v", *common], 20, "store", {"VEGASLAB_CATALOG": str(cat)}),
        Command("robustness", ["robustness", "--studies", str(studies), "--no-ns2", *common], 30, "store",
                {"VEGASLAB_CATALOG": str(cat)}),
    ]


def _wait_for_store(store: Path, proc: subprocess.Popen) -> float:
    """Wait until the command has created its store (it then handles SIGINT itself); returns
    that moment (time.monotonic)."""
    deadline = time.monotonic() + CALIBRATION_BOUND_S
    while not store.exists():
        assert proc.poll() is None, ("ended before creating its store", proc.communicate())
        assert time.monotonic() < deadline, f"no {store} created"
        time.sleep(0.002)
    return time.monotonic()


def _finish(proc: subprocess.Popen, timeout: float) -> tuple[str, str] | None:
    """The command's (stdout, stderr), or None (and the group killed) when it runs past ``timeout``."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None


def _calibrate(cmd: Command, out: Path) -> float:
    """Seconds from the store's creation to the end of an uninterrupted run (which must succeed)."""
    proc = cmd.start(out)
    opened = _wait_for_store(cmd.store(out), proc)
    result = _finish(proc, CALIBRATION_BOUND_S)
    assert result is not None and proc.returncode == 0, (cmd.name, proc.returncode, result)
    return time.monotonic() - opened


def _store_is_consistent(cmd: Command, out: Path) -> set[str]:
    """The store's run keys, after checking that every committed run is readable, once."""
    store = Store(cmd.store(out))
    assert store.broken() == [], store.broken()
    keys = store.keys()
    if keys:
        runs = store.read("runs")
        assert sorted(runs["run_key"]) == sorted(keys), "a run is in the runs table twice or not at all"
    assert len(keys) <= cmd.runs
    return keys


#: What these commands may print on stderr: the interrupt's line, and `reproduce -v`'s counts.
STDERR_LINES = re.compile(r"vegaslab: interrupted(; \d+ finished runs are stored, run the same command to go on)?"
                          r"|runs: \d+ ran, \d+ found in .*")


def _clean_stderr(err: str) -> None:
    """Nothing but the expected lines: no traceback, no log line from Dask, no warning, and
    not the last resort's line (it must not have had to act)."""
    for line in err.splitlines():
        assert STDERR_LINES.fullmatch(line), err


def test_ctrl_c_at_random_moments_always_ends_sweep_reproduce_and_robustness_keeping_their_runs(core, tmp_path):
    rng = random.Random(MOMENTS_SEED)
    commands = _commands(tmp_path)
    spans = {cmd.name: _calibrate(cmd, tmp_path / f"{cmd.name}-calibration") for cmd in commands}
    times: list[tuple[float, str]] = []
    finished_first = 0
    partial: dict[str, tuple[Path, set[str]]] = {}  # per command, a store an interrupt left partly done
    for i in range(REPEATS):
        cmd = commands[i % len(commands)]
        to_group = i % 2 == 0
        out = tmp_path / f"{cmd.name}-{i}"
        proc = cmd.start(out)
        opened = _wait_for_store(cmd.store(out), proc)
        # Up to 15% past the calibrated end, so that the close is hit too (and some runs end first).
        moment = rng.uniform(0.0, 1.15 * spans[cmd.name])
        time.sleep(max(0.0, opened + moment - time.monotonic()))
        sent = proc.poll() is None
        if sent:
            (os.killpg if to_group else os.kill)(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        result = _finish(proc, EXIT_BOUND_S)
        took = time.monotonic() - t0
        where = (f"repeat {i}: {cmd.name}, SIGINT to the {'process group' if to_group else 'main process'} "
                 f"{moment:.2f} s after the store was created")
        assert result is not None, f"{where}: still running {EXIT_BOUND_S:g} s later (killed)"
        stdout, stderr = result
        _clean_stderr(stderr)
        keys = _store_is_consistent(cmd, out)
        if proc.returncode == 0:  # it had finished (or was finishing) when the signal came
            finished_first += 1
            assert len(keys) == cmd.runs, where
            continue
        assert sent and proc.returncode == 130, (where, proc.returncode, stdout, stderr)
        assert "vegaslab: interrupted" in stderr, (where, stderr)
        times.append((took, where))
        if cmd.name == "sweep":  # every run it reports finished is committed
            m = re.search(r"interrupted; (\d+) finished runs are stored", stderr)
            if m:
                assert len(keys) == int(m.group(1)), (where, stderr, len(keys))
        if 0 < len(keys) < cmd.runs:
            partial.setdefault(cmd.name, (out, keys))
    longest = max(times) if times else (0.0, "")
    print(f"\nCtrl-C at {REPEATS} random moments: {len(times)} interrupted (exit 130), {finished_first} had "
          f"finished first (exit 0); longest time from SIGINT to exit {longest[0]:.2f} s ({longest[1]})")
    assert len(times) >= REPEATS // 4, "the moments must mostly fall before the end"
    # The next run of the same command computes only what the interrupted one had not stored.
    assert partial, "some interrupt must have left finished runs and unfinished ones"
    for cmd in commands:
        if cmd.name not in partial:
            continue
        out, keys = partial[cmd.name]
        proc = cmd.start(out)
        result = _finish(proc, CALIBRATION_BOUND_S)
        assert result is not None and proc.returncode == 0, (cmd.name, result)
        assert cmd.computed(*result) == (cmd.runs - len(keys), len(keys)), (cmd.name, result)
        assert Store(cmd.store(out)).keys() >= keys
        print(f"{cmd.name} run again after an interrupt: {len(keys)} runs found stored, "
              f"{cmd.runs - len(keys)} computed")


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_while_a_large_sweep_is_planned_ends_it_with_130(core, tmp_path):
    # 1,000,000 points take tens of seconds to expand and check (docs/limits.md); the Ctrl-C
    # comes once the planning has used a second of CPU (the imports take a few tenths), and
    # the command must end long before the planning would.
    study = tmp_path / "big.toml"
    study.write_text(TWO_HOP + '\n[run]\nduration = "1s"\n[sweep]\nseeds = 1\n[[sweep.axis]]\nname = "limit"\n'
                     'path = "links[1].queue.limit"\nrange = { start = 2, stop = 1000001, step = 1 }\n')
    proc = subprocess.Popen([sys.executable, "-m", "vegaslab", "sweep", str(study), "--out", str(tmp_path / "s"),
                             "--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, start_new_session=True, preexec_fn=_reset_sigint)
    deadline = time.monotonic() + CALIBRATION_BOUND_S
    while _cpu_seconds(proc.pid) < 1.0:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    result = _finish(proc, EXIT_BOUND_S)
    assert result is not None, f"still planning {EXIT_BOUND_S} s after Ctrl-C"
    assert proc.returncode == 130, (proc.returncode, result)
    _clean_stderr(result[1])
    print(f"planning interrupted, exit after {time.monotonic() - t0:.2f} s")


def test_the_librarys_sweep_raises_keyboard_interrupt_after_committing_what_finished(core, tmp_path, monkeypatch):
    # A notebook's interrupt must not let a cell carry on with a sweep that did not finish.
    study = tmp_path / "study.toml"
    study.write_text(TWO_HOP + '\n[run]\nduration = "0.5s"\n[sweep]\nseeds = 6\n')
    real = engine.execute

    def ctrl_c_after_the_second_run(*args, **kwargs):
        seen: list = []

        def on_outcome(outcome) -> None:
            seen.append(outcome)
            if len(seen) == 2:
                os.kill(os.getpid(), signal.SIGINT)

        return real(*args, **kwargs, on_outcome=on_outcome)

    monkeypatch.setattr(engine, "execute", ctrl_c_after_the_second_run)
    with pytest.raises(KeyboardInterrupt):
        vegaslab.sweep(str(study), out=tmp_path / "s", scheduler="synchronous")
    assert len(Store(tmp_path / "s")) == 2          # what finished is committed
    monkeypatch.setattr(engine, "execute", real)
    assert len(vegaslab.sweep(str(study), out=tmp_path / "s", scheduler="synchronous").execution.outcomes) == 6
