"""The private /16 a network's addresses come from: the first of a few candidates that no route
of this machine overlaps, so that the namespaces' addresses never shadow a real network."""
from __future__ import annotations

import ipaddress
import json

from .errors import TestbedError
from .processes import run

__all__ = ["CANDIDATE_PREFIXES", "used_prefixes", "pick_prefix"]

CANDIDATE_PREFIXES = ["10.251.0.0/16", "10.252.0.0/16", "10.253.0.0/16", "10.254.0.0/16",
                      "172.30.0.0/16", "172.29.0.0/16"]


def used_prefixes() -> list[ipaddress.IPv4Network]:
    """The destinations of every IPv4 route of this machine, in all tables."""
    out = run(["ip", "-j", "-4", "route", "show", "table", "all"], "reading this machine's routes failed")
    nets = []
    for r in json.loads(out or "[]"):
        dst = r.get("dst", "default")
        if dst != "default":
            nets.append(ipaddress.ip_network(dst, strict=False))
    return nets


def pick_prefix() -> ipaddress.IPv4Network:
    """The first of :data:`CANDIDATE_PREFIXES` that no route of this machine overlaps."""
    used = used_prefixes()
    for text in CANDIDATE_PREFIXES:
        net = ipaddress.ip_network(text)
        if not any(net.overlaps(u) for u in used):
            return net
    raise TestbedError(f"every address range the testbed may use ({', '.join(CANDIDATE_PREFIXES)}) "
                       "is routed on this machine")
