"""Removing what a state file (:mod:`.state`) names: a network's delay line, the processes
left in its namespaces, its links and namespaces, or a kernel session's registrations and
allowed-list entries. A network's teardown removes its own; every testbed start removes those
of owners that died without cleaning up (SIGKILL)."""
from __future__ import annotations

import json
import subprocess

from .kernelstate import undo
from .processes import alive, kill, process_start, quiet
from .state import STATE_DIR, state_lock

__all__ = ["destroy", "remove_stale"]


def destroy(state: dict) -> list[str]:
    """Remove everything a state file names: the delay line, any other process left in the
    namespaces (they were started there by the testbed's user), the links and the namespaces;
    for a kernel session's file (:mod:`.session`), its registrations and allowed-list entries.
    Returns what could not be removed."""
    if "registrations" in state or "objects" in state or "allowed_added" in state:
        return undo(state)
    dl = state.get("delayline")
    if dl:
        kill(dl["pid"], dl["start"])
    namespaces = state.get("namespaces", [])
    for ns in namespaces:
        p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in (int(x) for x in p.stdout.split() if x.isdigit()):
            kill(pid, process_start(pid))
    for ns, dev in state.get("links", []):
        quiet(["ip", "-n", ns, "link", "del", dev])
    for ns in namespaces:
        quiet(["ip", "netns", "del", ns])
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    return [ns for ns in namespaces if ns in listed]


def remove_stale() -> None:
    """Remove the networks whose owner died without cleaning up (SIGKILL, power cut of the
    process): every state file whose pid is dead or reused."""
    with state_lock():
        dead = []
        for path in sorted(STATE_DIR.glob("*.json")):
            try:
                state = json.loads(path.read_text())
                owner_alive = alive(state["pid"], state["start"])
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)  # not ours or unreadable: nothing to act on
                continue
            if not owner_alive:
                dead.append((path, state))
        # Networks first: their sockets hold the algorithms a kernel session registered.
        dead.sort(key=lambda item: "registrations" in item[1])
        for path, state in dead:
            destroy(state)
            path.unlink(missing_ok=True)
            (STATE_DIR / f"{state.get('tag', path.stem)}.log").unlink(missing_ok=True)
