"""A flow's own BPF congestion control (a scenario's ``cc = { bpf = "algo.bpf.o" }``) as the
testbed registers it: the object file the normalised scenario's record names, found where the
core found it, checked to be the very bytes the core read, and holding the one struct_ops map
the record picks.

The normalised record (``flows[i].algorithm = {"Bpf": {path, name, map, hz, sha256}}``) is the
core's; this module only reads it. ``name`` is the struct_ops congestion control's own name,
which the flow's sockets select (``TCP_CONGESTION``); ``map`` is the struct_ops variable that
declares it; ``hz`` is the ``CONFIG_HZ`` the simulator gave the object, which in the kernel is
the kernel's own.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import platform
from dataclasses import dataclass
from pathlib import Path

from ..kernel import run_command
from ..scenario import referenced_path
from .errors import TestbedError

__all__ = ["BpfObject", "bpf_object", "struct_ops_maps", "refuse_unless_one_map", "refuse_other_hz", "kernel_hz",
           "preflight"]

#: The sections of a BPF object whose BTF variables are struct_ops maps (libbpf's names; the
#: second is libbpf 1.2's link-based form).
STRUCT_OPS_SECTIONS = (".struct_ops", ".struct_ops.link")


@dataclass(frozen=True)
class BpfObject:
    """One flow's BPF congestion control as the normalised scenario records it."""

    #: ``flows (NAME).cc.bpf``: the scenario field the object came from, for messages.
    field: str
    #: The object file, resolved as the core resolves it (:func:`vegaslab.scenario.referenced_path`).
    path: Path
    #: The struct_ops congestion control's name (the sockets' ``TCP_CONGESTION``).
    name: str
    #: The struct_ops map variable that declares it.
    map: str
    #: SHA-256 (hex) of the object the core read.
    sha256: str
    #: The ``CONFIG_HZ`` the simulator runs the object with.
    hz: int

    def read(self, error: type[Exception] = TestbedError) -> bytes:
        """The object's bytes, checked against the record's SHA-256; ``error`` with one
        sentence when the file is missing or is not the object the scenario was read with."""
        try:
            data = self.path.read_bytes()
        except OSError as e:
            raise error(f"{self.field}: {self.path} cannot be read ({e.strerror}); a relative path is read "
                        "from the scenario file's directory") from None
        got = hashlib.sha256(data).hexdigest()
        if got != self.sha256:
            raise error(f"{self.field}: {self.path} is not the object the scenario was read with (its SHA-256 "
                        f"is {got[:16]}..., the normalised scenario records {self.sha256[:16]}...); run again")
        return data


def bpf_object(flow: str, record: dict, source: str) -> BpfObject:
    """The :class:`BpfObject` of the flow named ``flow`` from its normalised ``{"Bpf": record}``,
    its path resolved against ``source`` (the scenario's file, or a name such as ``<string>``).
    Messages name the flow as the rest of the plan does (``flows (NAME).cc.bpf``): a group's
    flows share one entry of the scenario file."""
    return BpfObject(field=f"flows ({flow}).cc.bpf", path=referenced_path(source, record["path"]),
                     name=record["name"], map=record["map"], sha256=record["sha256"], hz=int(record["hz"]))


def struct_ops_maps(path: Path) -> list[str]:
    """The struct_ops map variables the object at ``path`` declares, from its BTF (``bpftool
    btf dump file``, which needs no privileges)."""
    dump = json.loads(run_command(["bpftool", "-j", "btf", "dump", "file", str(path)],
                                  f"reading the BTF of {path} failed", TestbedError).stdout or "{}")
    types = {t["id"]: t for t in dump.get("types", [])}
    return [types[v["type_id"]]["name"] for t in types.values()
            if t["kind"] == "DATASEC" and t["name"] in STRUCT_OPS_SECTIONS for v in t["vars"]]


def refuse_unless_one_map(obj: BpfObject, maps: list[str]) -> None:
    """Refuse an object that does not declare exactly one struct_ops map (``maps``): bpftool
    registers every struct_ops map of an object and has no way to register only the one the
    scenario picks, and a map registered beside it would be a second algorithm in the kernel
    that the run never asked for."""
    if len(maps) == 1:
        return
    if not maps:
        raise TestbedError(f"{obj.field}: {obj.path} declares no struct_ops map")
    raise TestbedError(f"{obj.field}: {obj.path} declares {len(maps)} struct_ops maps ({', '.join(maps)}) and "
                       f"bpftool registers every one of them, with no way to register only {obj.map!r}; the "
                       "testbed runs objects with a single struct_ops map")


def refuse_other_hz(obj: BpfObject, hz: int | None) -> None:
    """Refuse an object the simulator runs with another ``CONFIG_HZ`` than the kernel's ``hz``
    (None: unknown, nothing to compare): in the kernel the object reads the kernel's own clock
    rate (its ``CONFIG_HZ`` extern, ``bpf_jiffies64``), so the two sides would run it differently."""
    if hz is not None and obj.hz != hz:
        raise TestbedError(f"{obj.field.removesuffix('.bpf')}.hz: the simulator runs {obj.path.name} with "
                           f"CONFIG_HZ {obj.hz}, but this kernel's is {hz} and that is what the object sees on "
                           f"the testbed; set hz = {hz}")


def preflight(objects: list[BpfObject]) -> None:
    """Everything about ``objects`` the testbed can check before it builds anything, without
    privileges: each file is the object the scenario was read with, declares one struct_ops
    map, and runs with this kernel's ``CONFIG_HZ``."""
    hz = kernel_hz()
    for obj in objects:
        obj.read()
        refuse_unless_one_map(obj, struct_ops_maps(obj.path))
        refuse_other_hz(obj, hz)


#: Where the running kernel's configuration may be read (``CONFIG_IKCONFIG_PROC``, then Debian's
#: copy in /boot), as libbpf looks for it to resolve a program's ``.kconfig`` externs.
KERNEL_CONFIGS = (Path("/proc/config.gz"), Path("/boot") / f"config-{platform.release()}")


def kernel_hz(configs: tuple[Path, ...] = KERNEL_CONFIGS) -> int | None:
    """The running kernel's ``CONFIG_HZ`` (what a BPF program's ``CONFIG_HZ`` extern and
    ``bpf_jiffies64`` follow), or None when no configuration file says."""
    for path in configs:
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode(errors="replace")
        for line in text.splitlines():
            if line.startswith("CONFIG_HZ="):
                return int(line.split("=", 1)[1])
    return None
