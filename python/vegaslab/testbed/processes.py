"""Running the tools that build the testbed (``ip``, ``tc``, ...) and telling whether a process
recorded in a state file still runs, so that cleanup never signals a reused pid."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from .errors import TestbedError

__all__ = ["run", "quiet", "process_start", "alive", "kill"]


def run(cmd: list[str], what: str) -> str:
    """Run a tool and return its output; on failure raise :class:`TestbedError` with ``what``
    and the tool's last line."""
    from ..kernel import run_command

    return run_command(cmd, what, TestbedError).stdout


def quiet(cmd: list[str]) -> None:
    """Run a cleanup command; failures (already gone) are fine."""
    subprocess.run(cmd, capture_output=True)


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (tells a reused pid apart), or None
    when there is no such process or it has ended (a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def alive(pid: int, start: int | None) -> bool:
    """True while ``pid`` is still the process that started at ``start``."""
    return start is not None and process_start(pid) == start


def kill(pid: int, start: int | None, timeout: float = 2.0) -> None:
    """SIGTERM the process ``pid`` if it is still the one that started at ``start``, then
    SIGKILL it if it has not ended within ``timeout``."""
    if not alive(pid, start):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid, start):
            return
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
