"""The kernel side of one testbed run: register the run's BPF congestion controls, list every
algorithm the run uses in ``net.ipv4.tcp_allowed_congestion_control``, and undo both.

Why the allowed list: the kernel lets a process pick a congestion control that is not in that
list only with ``CAP_NET_ADMIN``. The testbed's own flows run as root and would not need it,
but a program a user runs inside the testbed's namespaces without privileges (an ``iperf3 -C
vl_vegas`` under ``sudo -u``), or a per-namespace default, does. The list is global (one for
the machine, written from the initial namespace) and the kernel drops a name from it at every
(re)registration (docs/testbed.md, "What the kernel offers"), so the run adds its names after
registering and removes exactly the names it added (never one that was listed before, nor one
another live run also added) when it ends.

Two runs at once may share an algorithm registered with the same parameters (the second uses
the first's registration; it stays until neither needs it); with different parameters the
second run is refused with the reason.

A scenario's own BPF objects (``cc = { bpf = ... }``, :mod:`.bpfobject`) are registered as they
are (:mod:`.struct_ops`), one registration per congestion-control name, and unregistered by
their struct_ops map id. Another live run's registration of the same name is shared when it
came from the same object (the same SHA-256); any other registration of that name (another
object, or one made outside the testbed) refuses the run with the reason.

What the run's algorithms run with is read back from the kernel, not taken from the request
(:meth:`KernelSession.parameters`): each registered BPF program's read-only globals, checked
against what the run asked for, and a built-in congestion control's module parameters
(``/sys/module/tcp_<name>/parameters``, e.g. cubic's ``beta`` and ``hystart``).

Undone like the network (:mod:`.network`): on leaving the ``with`` block (also on an
exception), on SIGINT/SIGTERM (after the run's networks, whose sockets hold the algorithms), at
interpreter exit, and after a SIGKILL by the next testbed start, from the state file this
session keeps in ``/run/vegaslab-testbed/`` (``registrations``, ``objects`` and ``allowed_added``).
"""
from __future__ import annotations

import os
import sys

from .. import kernel
from . import struct_ops
from .bpfobject import BpfObject
from .cleanup import remove_stale
from .errors import TestbedError
# The allowed list's helpers and `undo` live in their own module, so that a testbed start can
# undo a dead session's state without importing this module.
from .kernelstate import ALLOWED_SYSCTL, adopt, allowed, release, undo, write_allowed
from .processes import process_start
from .state import STATE_DIR, live_states, save_state
from .tags import new_tag

__all__ = ["KernelSession", "ALLOWED_SYSCTL", "allowed", "undo"]


class KernelSession:
    """Registers ``algorithms`` (flow -> (cc, params) of the flows that run vegaslab's BPF
    algorithms; one registration per cc) and ``objects`` (the scenario's own BPF objects, one
    registration per name) for a run and allows ``names`` (every congestion control the run's
    flows use); a context manager."""

    def __init__(self, algorithms: dict[str, tuple[str, dict]], names: list[str], objects: list[BpfObject] = ()):
        self.algorithms = {cc: params for cc, params in algorithms.values()}
        self.objects = list({o.name: o for o in objects}.values())
        self.names = sorted(set(names))
        self.tag = new_tag("k")
        self._state_path = STATE_DIR / f"{self.tag}.json"
        self._state: dict | None = None
        self._in_kernel: dict[str, dict[str, int]] = {}

    def __enter__(self) -> "KernelSession":
        kernel.check()
        remove_stale()
        self._state = {"tag": self.tag, "pid": os.getpid(), "start": process_start(os.getpid()),
                       "registrations": [], "objects": [], "allowed_added": []}
        adopt(self, self._state_path, self._state)
        try:
            for cc, params in self.algorithms.items():
                name, values = kernel.kernel_name(cc), kernel.program_parameters(cc, **params)
                shared = self._shared_registration(name, values)
                if not shared:
                    kernel.register(cc, **params)
                self._state["registrations"].append(name)
                self._state.setdefault("parameters", {})[name] = values
                save_state(self._state_path, self._state)
                self._in_kernel[name] = self._checked_readback(name, values)
            for obj in self.objects:
                self._register_object(obj)
            before = allowed()
            added = [n for n in self.names if n not in before]
            if added:
                # Recorded first: a SIGKILL between the two steps still leaves the recipe.
                self._state["allowed_added"] = added
                save_state(self._state_path, self._state)
                write_allowed(before + added)
        except BaseException:
            self._teardown()
            raise
        return self

    def _register_object(self, obj: BpfObject) -> None:
        """Register ``obj`` (or share another live run's registration of the same object) and
        record it: once every check passed and before the kernel is asked, without its id, so
        that a SIGKILL while registering still leaves the name for the clean-up to find."""
        entry = {"name": obj.name, "sha256": obj.sha256, "id": self._shared_object(obj)}

        def record() -> None:
            self._state["objects"].append(entry)
            save_state(self._state_path, self._state)

        if entry["id"] is None:
            entry["id"] = struct_ops.register(obj, before=record).id
        else:
            record()
        save_state(self._state_path, self._state)
        self._in_kernel[obj.name] = {"object": str(obj.path), "sha256": obj.sha256, "struct_ops_id": entry["id"]}

    def _shared_object(self, obj: BpfObject) -> int | None:
        """The struct_ops map id of another live run's registration of ``obj`` (the same name
        and SHA-256, still registered), or None; an error when another live run registered the
        name from a different object."""
        live = {r.id for r in struct_ops.registered_as(obj.name)}
        for state in live_states():
            if state.get("tag") == self.tag:
                continue
            for theirs in state.get("objects", []):
                if theirs.get("name") != obj.name or theirs.get("id") not in live:
                    continue
                if theirs.get("sha256") == obj.sha256:
                    return theirs["id"]
                raise TestbedError(f"{obj.field}: {obj.name} is registered by another testbed run (pid {state['pid']}) "
                                   f"from a different object; wait for it to end")
        return None

    @staticmethod
    def _checked_readback(name: str, values: dict[str, int]) -> dict[str, int]:
        """The globals the registered ``name`` runs with, read from the kernel; an error when
        one differs from what the run asked for (the program would not be the one measured)."""
        got = kernel.parameters(name)
        wrong = {k: (v, got.get(k)) for k, v in values.items() if got.get(k) != v}
        if wrong:
            shown = ", ".join(f"{k} = {g} (asked {v})" for k, (v, g) in sorted(wrong.items()))
            raise TestbedError(f"{name} is registered but runs with {shown}")
        return {k: int(got[k]) for k in values}

    def parameters(self) -> dict[str, dict[str, int | str]]:
        """Kernel name -> the parameters it runs with, as the kernel reports them: the
        registered BPF programs' globals (``vl_alpha``, ...), and the module parameters of the
        built-in congestion controls among ``names`` (none for one without parameters, such
        as reno)."""
        out: dict[str, dict[str, int | str]] = dict(self._in_kernel)
        for name in self.names:
            if name not in out:
                out[name] = kernel.module_parameters(name)
        return out

    def _shared_registration(self, name: str, values: dict[str, int]) -> bool:
        """True when another live run registered ``name`` with the same parameters (this run
        then uses it as it is); an error when it did with others (re-registering would change
        that run's algorithm under it, and the kernel refuses while its sockets use it)."""
        for state in live_states():
            if state.get("tag") == self.tag or name not in state.get("registrations", []):
                continue
            theirs = state.get("parameters", {}).get(name)
            if theirs == values and name in kernel.registered():
                return True
            raise TestbedError(f"{name} is registered by another testbed run (pid {state['pid']}) with "
                               f"parameters {theirs}; this run needs {values}: wait for it to end")
        return False

    def __exit__(self, exc_type, exc, tb) -> None:
        failed = self._teardown()
        for sentence in failed:  # never hide a registration left behind, never mask the error
            print(f"vegaslab: warning: {sentence}", file=sys.stderr)

    def _teardown(self) -> list[str]:
        """Undo the session; safe to call again. Returns what could not be undone."""
        if self._state is None:
            return []
        failed = undo(self._state)
        if not failed:
            release(self, self._state_path)
            self._state = None
        return failed
