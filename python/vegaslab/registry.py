"""The congestion-control algorithms and the queue disciplines a scenario may name, with their
parameters.

Everything here is read from the compiled core's registry (``vegaslab._core.registry``, built
from ``vegaslab_cc::ALGORITHMS`` and the core's queue registry): the algorithms' names, what
each is, their flavours, and each parameter's kind, range or choices, unit, meaning, citation
and default; likewise each queue ``kind`` and its keys. The defaults are the ones a scenario
gets when it leaves the parameter out. Nothing in the package restates either list, so a newly
registered algorithm or queue discipline appears in the docs, the tests and the kernel build
by being registered.

>>> from vegaslab import registry
>>> "cubic" in registry.names()
True
>>> registry.algorithm("vegas").param("alpha").default_in("linux")
2.0
>>> registry.queue("codel").key("target").default
5000000
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from .core import call_core, load_core

__all__ = ["Algorithm", "Param", "QueueKind", "QueueKey", "algorithms", "algorithm", "names", "queues", "queue",
           "document", "BpfField", "BpfOffer", "bpf"]


@dataclass(frozen=True)
class Param:
    """One key of an algorithm's ``params`` table."""

    name: str
    #: ``{"type": "number" | "integer", "lo", "hi"}``, ``{"type": "time", "lo_ns", "hi_ns"}``,
    #: ``{"type": "choice", "values"}`` or ``{"type": "boolean"}``.
    kind: dict[str, Any]
    unit: str
    doc: str
    cite: str
    #: The default in every flavour (``None``: an input without a default), unless the default
    #: depends on the flavour: then ``default_by_flavour`` maps each flavour to its default.
    default: Any = None
    default_by_flavour: dict[str, Any] | None = None

    def default_in(self, flavour: str | None = None) -> Any:
        """The default in ``flavour`` (the algorithm's default flavour when ``None``)."""
        if self.default_by_flavour is None:
            return self.default
        if flavour is None:
            flavour = next(iter(self.default_by_flavour))
        return self.default_by_flavour[flavour]


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: its ``cc`` name, the tag of its normalised form, the name the
    papers print, what it is, its flavours (empty: it has none), its parameters, and how it
    exists in Linux."""

    name: str
    tag: str
    #: Its name as the papers and figures print it ("Vegas-A", "NewReno", "CUBIC").
    display: str
    about: str
    flavours: tuple[str, ...]
    params: tuple[Param, ...]
    #: ``"flavour"``: its ``linux`` flavour is ported to the kernel as a BPF congestion control;
    #: ``"native"``: it is Linux's own, modelled as Linux codes it (CUBIC); ``"kernel"``: the
    #: testbed runs the kernel's module of that name (ns-2's Reno and NewReno agents); ``"none"``:
    #: it exists in the simulator only.
    linux_form: str
    #: The congestion control the testbed sets on its sockets (``vl_vegas``, ``cubic``, ...);
    #: ``None`` for a simulator-only algorithm.
    kernel_name: str | None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r} (it has: {', '.join(p.name for p in self.params) or 'none'})")


@functools.cache
def document() -> dict[str, Any]:
    """The registry document as the core gives it (see ``vegaslab_sim::registry``)."""
    return json.loads(call_core(load_core().registry))


@functools.cache
def algorithms() -> tuple[Algorithm, ...]:
    """Every algorithm, in the registry's order."""
    out = []
    for a in document()["algorithms"]:
        params = tuple(Param(name=p["name"], kind=p["kind"], unit=p["unit"], doc=p["doc"], cite=p["cite"],
                             default=p.get("default"), default_by_flavour=p.get("default_by_flavour"))
                       for p in a["params"])
        out.append(Algorithm(name=a["name"], tag=a["tag"], display=a["display"], about=a["about"],
                             flavours=tuple(a["flavours"]),
                             params=params, linux_form=a["linux"]["form"], kernel_name=a["linux"]["kernel_name"]))
    return tuple(out)


def names() -> list[str]:
    """Every ``cc`` name, in the registry's order."""
    return [a.name for a in algorithms()]


def algorithm(name: str) -> Algorithm:
    """The algorithm ``name``; ``KeyError`` naming the registered ones otherwise."""
    for a in algorithms():
        if a.name == name:
            return a
    raise KeyError(f"no algorithm {name!r} (registered: {', '.join(names())})")


@dataclass(frozen=True)
class QueueKey:
    """One key of a queue table (besides ``kind``)."""

    name: str
    #: Where the normalised scenario holds its value (the table's ``min`` is ``min_th``).
    field: str
    required: bool
    #: As :attr:`Param.kind`.
    kind: dict[str, Any]
    unit: str
    doc: str
    cite: str
    #: The value the normalised scenario holds when the key is left out (a time in ns; RED's
    #: weight as ``{"fixed": w}``); ``None`` for a required key.
    default: Any = None


@dataclass(frozen=True)
class QueueKind:
    """A ``kind`` a link's queue table may name: what it is, where its rules come from, the
    smallest valid table (TOML) and its keys."""

    name: str
    about: str
    cite: str
    minimal: str
    keys: tuple[QueueKey, ...]

    def key(self, name: str) -> QueueKey:
        for k in self.keys:
            if k.name == name:
                return k
        raise KeyError(f"queue kind {self.name!r} has no key {name!r} (it has: {', '.join(k.name for k in self.keys)})")


@functools.cache
def queues() -> tuple[QueueKind, ...]:
    """Every queue kind, in the registry's order."""
    return tuple(
        QueueKind(name=q["name"], about=q["about"], cite=q["cite"], minimal=q["minimal"],
                  keys=tuple(QueueKey(name=k["name"], field=k["field"], required=k["required"], kind=k["kind"],
                                      unit=k["unit"], doc=k["doc"], cite=k["cite"], default=k["default"])
                             for k in q["keys"]))
        for q in document()["queues"])


def queue(name: str) -> QueueKind:
    """The queue kind ``name``; ``KeyError`` naming the registered ones otherwise."""
    for q in queues():
        if q.name == name:
            return q
    raise KeyError(f"no queue kind {name!r} (registered: {', '.join(q.name for q in queues())})")


@dataclass(frozen=True)
class BpfField:
    """A kernel socket field a compiled BPF object may read or write in the simulator."""

    struct: str
    member: str
    #: Width in bytes (a bitfield: the byte that holds it).
    bytes: int
    signed: bool
    #: ``(first bit, count)`` for a bitfield, at Linux's position in its byte; else ``None``.
    bits: tuple[int, int] | None
    #: What the simulator keeps there, in one sentence.
    holds: str


@dataclass(frozen=True)
class BpfOffer:
    """What the simulator offers a compiled BPF struct_ops object (``cc = { bpf = ... }``):
    the hooks it calls, the helpers (``(id, name)``) and kfuncs it provides, the kernel config
    values an object may read, the CONFIG_HZ values and default, and the socket fields."""

    hooks: tuple[str, ...]
    helpers: tuple[tuple[int, str], ...]
    kfuncs: tuple[str, ...]
    kconfig: tuple[str, ...]
    hz_default: int
    hz_values: tuple[int, ...]
    fields: tuple[BpfField, ...]


@functools.cache
def bpf() -> BpfOffer:
    """What a compiled BPF object may use in the simulator, as the core says."""
    b = document()["bpf"]
    return BpfOffer(hooks=tuple(b["hooks"]), helpers=tuple((h["id"], h["name"]) for h in b["helpers"]),
                    kfuncs=tuple(b["kfuncs"]), kconfig=tuple(b["kconfig"]), hz_default=b["hz"]["default"],
                    hz_values=tuple(b["hz"]["values"]),
                    fields=tuple(BpfField(struct=f["struct"], member=f["member"], bytes=f["bytes"], signed=f["signed"],
                                          bits=tuple(f["bits"]) if f["bits"] else None, holds=f["holds"])
                                 for f in b["fields"]))
