"""The testbed's state files: one JSON file per live network or kernel session in
:data:`STATE_DIR`, naming its owner (pid and start time, against pid reuse) and what it made,
so that whatever a SIGKILLed owner left can be found and removed by the next start.

Writers hold :func:`state_lock` (an ``flock`` on ``STATE_DIR/.lock``); a file is replaced
atomically, so a reader without the lock still sees a whole one."""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path

from .processes import alive

__all__ = ["STATE_DIR", "state_lock", "write_state", "save_state", "live_states"]

#: One state file per live network or kernel session (and a network's delay-line log).
STATE_DIR = Path("/run/vegaslab-testbed")


@contextmanager
def state_lock():
    """Hold the lock every writer of :data:`STATE_DIR` takes."""
    STATE_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(STATE_DIR / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_state(path: Path, state: dict) -> None:
    """Replace the state file ``path`` with ``state``; the caller holds :func:`state_lock`."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)  # atomic: a reader never sees half a file


def save_state(path: Path, state: dict) -> None:
    """Write a state file under the lock."""
    with state_lock():
        write_state(path, state)


def live_states() -> list[dict]:
    """The state files whose owner still runs (read without the lock: files are replaced
    atomically, so a reader sees a whole one)."""
    states = []
    for path in sorted(STATE_DIR.glob("*.json")):
        try:
            state = json.loads(path.read_text())
            if alive(state["pid"], state["start"]):
                states.append(state)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return states
