"""What a kernel session (:mod:`.session`) leaves on the machine, and undoing it: the names it
added to the machine's allowed list of congestion controls, vegaslab's BPF algorithms it
registered and the scenario's own BPF objects it registered (by struct_ops map id), all
recorded in its state file (:mod:`.state`).

Apart from :mod:`.session` so that a testbed start can undo a dead session's state without
importing the session, and a network alone never imports the kernel's BPF loader."""
from __future__ import annotations

from pathlib import Path

from .errors import TestbedError
from .signals import unwatch, watch
from .state import live_states, save_state, state_lock

__all__ = ["ALLOWED_SYSCTL", "allowed", "write_allowed", "undo", "adopt", "release"]

#: The machine's list of congestion controls any process may select.
ALLOWED_SYSCTL = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def allowed() -> list[str]:
    """The congestion controls in the allowed list now."""
    return ALLOWED_SYSCTL.read_text().split()


def write_allowed(names: list[str]) -> None:
    """Replace the allowed list with ``names``."""
    try:
        ALLOWED_SYSCTL.write_text(" ".join(names))
    except OSError as e:
        raise TestbedError(f"writing {ALLOWED_SYSCTL} failed: {e.strerror}") from None


def _claimed_by_live_sessions(key: str, except_tag: str) -> set[str]:
    """The names under ``key`` in the state files of other sessions whose owner still runs."""
    claimed: set[str] = set()
    for state in live_states():
        if state.get("tag") != except_tag:
            claimed.update(state.get(key, []))
    return claimed


def undo(state: dict) -> list[str]:
    """Undo what a session's state records: take its additions out of the allowed list, then
    unregister its algorithms (each skipped while another live run still uses it). Returns
    what could not be undone, as sentences."""
    from .. import kernel  # here: a network alone never needs the kernel's BPF loader

    failed = []
    added = set(state.get("allowed_added", [])) - _claimed_by_live_sessions("allowed_added", state.get("tag"))
    if added:
        try:
            write_allowed([n for n in allowed() if n not in added])
        except TestbedError as e:
            failed.append(str(e))
    in_use = _claimed_by_live_sessions("registrations", state.get("tag"))
    for name in state.get("registrations", []):
        if name in in_use:
            continue
        try:
            if name in kernel.registered():
                kernel.unregister(name)
        except kernel.KernelError as e:
            failed.append(str(e))
    return failed + _undo_objects(state)


def _undo_objects(state: dict) -> list[str]:
    """Unregister the BPF objects a session registered, each by its struct_ops map id (an entry
    without one: the session stopped while registering, so by its name), skipping those another
    live session shares. Returns what could not be undone."""
    from . import struct_ops  # here, as the kernel above

    entries = state.get("objects", [])
    if not entries:
        return []
    shared = {(o.get("name"), o.get("id")) for s in live_states() if s.get("tag") != state.get("tag")
              for o in s.get("objects", [])}
    failed = []
    for entry in entries:
        if (entry["name"], entry["id"]) in shared or (entry["id"] is None and any(n == entry["name"] for n, _ in shared)):
            continue
        try:
            struct_ops.unregister(entry["id"], entry["name"])
        except TestbedError as e:
            failed.append(str(e))
    return failed


def adopt(owner, path: Path, state: dict) -> None:
    """Record ``owner``'s state file and tear it down on SIGINT/SIGTERM and at exit, like a
    network (``owner`` has ``tag`` and ``_teardown()``); used by :mod:`.session`."""
    save_state(path, state)
    watch(owner)


def release(owner, path: Path) -> None:
    """The opposite of :func:`adopt`, once ``owner`` is undone."""
    with state_lock():
        path.unlink(missing_ok=True)
    unwatch(owner)
