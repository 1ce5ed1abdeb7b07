"""What a testbed network is asked to be: its hosts, its bottleneck, the sender's routes and the
host pairs' delays, and the check of them all, whose errors name the field and the allowed
range before anything is built."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import TestbedError

__all__ = ["Host", "Bottleneck", "Route", "ROUTE_MTU", "MAX_HOSTS_PER_SIDE", "validate"]

#: Route MTUs the testbed accepts: room for the kernel's 52 bytes of headers and some payload,
#: up to the largest packet the delay line holds (its slot, kernel/delayline.c SLOT_BYTES).
ROUTE_MTU = (92, 2048)
#: Hosts per side: their addresses are .1 to .253 of the side's /24 (.254 is the router).
MAX_HOSTS_PER_SIDE = 253


@dataclass(frozen=True)
class Host:
    """A traffic end: a sender host lives in the sender namespace, a receiver in the receiver
    namespace; each has its own address there. The side is where the host is (upstream or
    downstream of the forward queue), not what it does: with two-way traffic a host of either
    side may send and receive."""

    name: str
    side: Literal["sender", "receiver"]


@dataclass(frozen=True)
class Bottleneck:
    """The router's two egress queues: forward (toward the receivers) and reverse (toward the
    senders), each a rate in bit/s and a drop-tail buffer in packets."""

    rate_bps: float
    buffer_pkts: int
    reverse_rate_bps: float
    reverse_buffer_pkts: int


@dataclass(frozen=True)
class Route:
    """The route to one host from the other side's namespace (the sender namespace's route to
    a receiver host; with two-way traffic also the receiver namespace's to a sender host): the
    path MTU (bytes) and the initial congestion window (packets).

    (A locked ``cwnd`` route metric would set Linux's ``snd_cwnd_clamp``, but only for
    connections to a destination already in the kernel's TCP metrics cache, i.e. not the first
    one: it is not used. A flow's window limit is the receiver's advertised window instead;
    see :mod:`.flows`.)"""

    mtu: int
    initcwnd: int


def validate(hosts: list[Host], bottleneck: Bottleneck, pair_delays_ns: dict[tuple[str, str], int],
             delay_changes: list[tuple[int, str, str, int]], routes: dict[str, Route]) -> None:
    """Raise :class:`TestbedError` naming the field unless every argument of a
    :class:`~vegaslab.testbed.network.Network` is within its range."""
    names = {}
    for i, h in enumerate(hosts):
        if not isinstance(h, Host):
            raise TestbedError(f"hosts[{i}]: expected a Host, got {h!r}")
        if h.side not in ("sender", "receiver"):
            raise TestbedError(f"hosts[{i}].side: must be 'sender' or 'receiver', got {h.side!r}")
        if h.name in names:
            raise TestbedError(f"hosts[{i}].name: {h.name!r} is given twice")
        names[h.name] = h.side
    for side in ("sender", "receiver"):
        n = sum(1 for s in names.values() if s == side)
        if not 1 <= n <= MAX_HOSTS_PER_SIDE:
            raise TestbedError(f"hosts: need 1 to {MAX_HOSTS_PER_SIDE} {side} hosts, got {n}")
    b = bottleneck
    for field in ("rate_bps", "reverse_rate_bps"):
        v = getattr(b, field)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 1000 <= v <= 10e9:
            raise TestbedError(f"bottleneck.{field}: must be between 1000 and 1e10 bit/s, got {v!r}")
    for field in ("buffer_pkts", "reverse_buffer_pkts"):
        v = getattr(b, field)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1_000_000:
            raise TestbedError(f"bottleneck.{field}: must be an integer between 1 and 1000000 packets, got {v!r}")

    def pair(where, src, dst):
        for h in (src, dst):
            if h not in names:
                raise TestbedError(f"{where}: unknown host {h!r} (hosts: {', '.join(names)})")
        if names[src] == names[dst]:
            raise TestbedError(f"{where}: {src!r} and {dst!r} are both {names[src]}s; a delay is "
                               "between a sender and a receiver")

    def delay(where, v):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 60_000_000_000:
            raise TestbedError(f"{where}: must be an integer between 0 and 60e9 ns, got {v!r}")

    for key, v in pair_delays_ns.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise TestbedError(f"pair_delays_ns: keys are (src_host, dst_host), got {key!r}")
        pair(f"pair_delays_ns[{key!r}]", *key)
        delay(f"pair_delays_ns[{key!r}]", v)
    for i, c in enumerate(delay_changes):
        if len(c) != 4:
            raise TestbedError(f"delay_changes[{i}]: expected (at_ns, src, dst, delay_ns), got {c!r}")
        at, src, dst, d = c
        delay(f"delay_changes[{i}].at_ns", at)
        pair(f"delay_changes[{i}]", src, dst)
        delay(f"delay_changes[{i}].delay_ns", d)
    limits = {"mtu": ROUTE_MTU, "initcwnd": (1, 2**31 - 1)}
    for host, r in routes.items():
        if host not in names:
            raise TestbedError(f"routes[{host!r}]: unknown host (hosts: {', '.join(names)})")
        for field, (lo, hi) in limits.items():
            v = getattr(r, field)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise TestbedError(f"routes[{host!r}].{field}: must be an integer between {lo} and {hi}, got {v!r}")
