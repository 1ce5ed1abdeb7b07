"""The congestion-control algorithms a scenario may name, with their parameters.

Everything here is read from the compiled core's registry (``vegaslab._core.registry``, built
from ``vegaslab_cc::ALGORITHMS``): the algorithms' names, what each is, their flavours, and
each parameter's kind, range or choices, unit, meaning, citation and default. The defaults are
the ones a scenario gets when it leaves the parameter out. Nothing in the package restates the
list, so a newly registered algorithm appears in the docs, the tests and the kernel build by
being registered.

>>> from vegaslab import registry
>>> "cubic" in registry.names()
True
>>> registry.algorithm("vegas").param("alpha").default_in("linux")
2.0
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from .core import call_core, load_core

__all__ = ["Algorithm", "Param", "algorithms", "algorithm", "names", "document"]


@dataclass(frozen=True)
class Param:
    """One key of an algorithm's ``params`` table."""

    name: str
    #: ``{"type": "number" | "integer", "lo", "hi"}``, ``{"type": "choice", "values"}`` or
    #: ``{"type": "boolean"}``.
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
    """A registered algorithm: its ``cc`` name, the tag of its normalised form, what it is, its
    flavours (empty: it has none), its parameters, and how it exists in Linux."""

    name: str
    tag: str
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
        out.append(Algorithm(name=a["name"], tag=a["tag"], about=a["about"], flavours=tuple(a["flavours"]),
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
