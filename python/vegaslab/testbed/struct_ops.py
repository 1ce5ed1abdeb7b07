"""The kernel's struct_ops congestion controls registered from objects a scenario names
(:mod:`.bpfobject`): listing the registrations by the congestion control's own name,
registering one object (``bpftool struct_ops register``) and unregistering it by its map id.

By the congestion control's name, not the map's: bpftool names a registration by its map
variable (``cubic`` for the kernel selftests' ``bpf_cubic``), which may even be the name of a
built-in algorithm, so only the struct_ops data's ``name`` says which algorithm sockets get,
and only the map id says which registration is the run's own.

The object registered is a private copy of the bytes checked against the normalised
scenario's SHA-256 (:meth:`.bpfobject.BpfObject.read`), so what the kernel loads is what the
simulator ran even if the file changes meanwhile.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .. import kernel
from ..kernel import KernelError, Registration, run_command, unregister_struct_ops
from .bpfobject import BpfObject, refuse_unless_one_map, struct_ops_maps
from .errors import TestbedError

__all__ = ["Registration", "registrations", "register", "unregister", "AVAILABLE"]

#: The congestion controls the kernel offers now (built-in and registered).
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def registrations() -> list[Registration]:
    """Every struct_ops congestion control in the kernel (:func:`vegaslab.kernel.registrations`);
    a failing bpftool is a :class:`TestbedError`."""
    return kernel.registrations(TestbedError)


def registered_as(name: str) -> list[Registration]:
    """The live (not draining) registrations of the congestion control ``name``."""
    return [r for r in registrations() if r.name == name and not r.draining]


def _refuse_taken(obj: BpfObject) -> None:
    """Refuse to register ``obj`` when its name is taken: by a built-in congestion control, or
    by a registration the run cannot tell came from the same object (the caller shares one a
    live testbed run made from it)."""
    taken = registered_as(obj.name)
    if taken:
        raise TestbedError(f"{obj.field}: a congestion control named {obj.name} is already registered (struct_ops "
                           f"map id {taken[0].id}) and was not registered by a testbed run from this object; "
                           f"unregister it first (bpftool struct_ops unregister id {taken[0].id})")
    if obj.name in AVAILABLE.read_text().split():
        raise TestbedError(f"{obj.field}: the object's congestion control is named {obj.name}, which the kernel "
                           "already has built in; the object must use a name of its own")


def register(obj: BpfObject, before=lambda: None) -> Registration:
    """Register ``obj``'s struct_ops map (a private copy of its checked bytes) and return the
    registration, whose name the kernel reports as ``obj.name``. ``before()`` runs once every
    check passed, just before the kernel is asked (a session records the registration there)."""
    data = obj.read()
    _refuse_taken(obj)
    with tempfile.TemporaryDirectory(prefix="vegaslab-bpf-") as private:
        copy = Path(private) / "object.bpf.o"
        copy.write_bytes(data)
        refuse_unless_one_map(obj, struct_ops_maps(copy))
        before()
        p = run_command(["bpftool", "struct_ops", "register", str(copy)],
                        f"{obj.field}: registering {obj.path} failed", TestbedError)
    ids = {int(i) for i in re.findall(r"\bid (\d+)", p.stdout + p.stderr)}
    mine = [r for r in registrations() if r.id in ids]
    if len(mine) == 1 and mine[0].name == obj.name:
        return mine[0]
    for r in mine:  # never leave behind what this call registered
        unregister(r.id, r.name)
    raise TestbedError(f"{obj.field}: registering {obj.path} gave {[r.name for r in mine]}, not the one "
                       f"congestion control {obj.name} the scenario names")


def unregister(reg_id: int | None, name: str) -> None:
    """Unregister the registration ``reg_id`` of ``name`` (waiting while closing sockets still
    hold it); with ``reg_id`` None (a run stopped while registering), every live registration
    of ``name``. Nothing to do when it is gone."""
    ids = [r.id for r in registered_as(name) if reg_id is None or r.id == reg_id]
    for i in ids:
        try:
            unregister_struct_ops(["id", str(i)], f"{name} (struct_ops map id {i})",
                                  gone=lambda i=i: all(r.id != i for r in registered_as(name)))
        except KernelError as e:
            raise TestbedError(str(e)) from None
