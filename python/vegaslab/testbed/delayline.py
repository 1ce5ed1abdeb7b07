"""The delay line's process: ``kernel/build/vl-delayline`` (``kernel/delayline.c``), the
user-space program that holds each packet on the router's TUN device for its host pair's
propagation delay (this kernel has no netem). Here: building it, starting it in the router
namespace, waiting for its ``ready START_NS`` line, saying why it stopped, and stopping it.

It ends by itself when the process that started it ends, even by SIGKILL (``--parent-pid``, a
parent-death signal: kernel/delayline.c); :mod:`.cleanup` still removes one that runs on."""
from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .errors import TestbedError

__all__ = ["KERNEL_DIR", "DELAYLINE", "build_delayline", "start", "wait_ready", "message", "stop"]

#: The repository's ``kernel/`` and the delay line built there (``make -C kernel delayline``).
KERNEL_DIR = Path(__file__).resolve().parents[3] / "kernel"
DELAYLINE = KERNEL_DIR / "build" / "vl-delayline"
_READY_TIMEOUT_S = 5.0


def build_delayline() -> Path:
    """Build ``kernel/build/vl-delayline`` (``make -C kernel delayline``); returns its path."""
    if shutil.which("make") is None or not (KERNEL_DIR / "Makefile").is_file():
        raise TestbedError(f"cannot build the delay line: needs make and the repository's {KERNEL_DIR}")
    p = subprocess.run(["make", "-s", "-C", str(KERNEL_DIR), f"PYTHON={sys.executable}", "delayline"], capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise TestbedError(f"building the delay line failed: {lines[-1] if lines else p.returncode}")
    return DELAYLINE


def start(ns: str, args: list[str], log_path: Path) -> subprocess.Popen:
    """Start the delay line with ``args`` in the namespace ``ns``, its stderr to ``log_path``.
    ``ip netns exec`` execs the program, so the returned process's pid is the delay line's."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(["ip", "netns", "exec", ns, str(DELAYLINE), *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=log, close_fds=True)


def wait_ready(proc: subprocess.Popen, log_path: Path) -> int:
    """Wait for the delay line's ready line; returns its START_NS, the CLOCK_MONOTONIC
    nanoseconds at which its schedule of delay changes starts."""
    line = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise TestbedError(f"the delay line did not start within {_READY_TIMEOUT_S:g} s")
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                proc.wait()
                raise TestbedError(f"the delay line failed to start: {message(proc, log_path)}")
            line += chunk
    words = line.split()
    if len(words) != 2 or words[0] != b"ready":
        raise TestbedError(f"the delay line said {line!r} instead of 'ready START_NS'")
    return int(words[1])


def message(proc: subprocess.Popen | None, log_path: Path) -> str:
    """Why the delay line stopped: the last line of its log, else its exit status."""
    try:
        lines = [ln for ln in log_path.read_text().splitlines() if ln.strip()]
    except OSError:
        lines = []
    code = proc.returncode if proc is not None else None
    return lines[-1] if lines else f"exit status {code}"


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM the delay line, SIGKILL it if it has not ended within 2 s, and close its pipe;
    safe to call again."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
