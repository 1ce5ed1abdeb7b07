"""Kernel TCP behaviours a testbed run can switch, one at a time, to measure how much each moves
a result against the simulator: which kernel behaviours the simulator's Linux flavour lacks,
and how much each moves the result.

The defaults are Linux's own; the simulator's Linux flavour differs from them in exactly these
ways, which is why they are the switches:

- ``sack``: Linux negotiates SACK and recovers losses with it (and PRR); the simulator's
  Linux-like sender has NewReno recovery without SACK. ``sack=off`` sets ``net.ipv4.tcp_sack=0``
  in the sender and receiver namespaces (the sysctl is per namespace), so the kernel falls back
  to its NewReno-style recovery (PRR still shapes the window during recovery).
- ``delayed_ack``: Linux's receiver ACKs every second full segment (or after its delayed-ACK
  timer, at least 40 ms on this HZ 250 kernel); the simulator's sink ACKs every packet.
  ``delayed_ack=off`` makes the testbed's sink re-arm ``TCP_QUICKACK`` after every read, so the
  kernel ACKs each segment as it arrives. The ACKs actually sent per data segment are measured
  and reported (``meta["testbed"]["acks_per_data_segment"]``), so the switch's effect is
  visible, not assumed.

What cannot be switched, and is therefore only documented: the 4 ms timer granularity (HZ 250:
RTO and delayed-ACK timers), TCP small queues, the 14-byte Ethernet header that htb counts
(47.82 of 50 Mbit/s of payload for 1448-byte segments), and the kernel's minimum RTO of 200 ms.
Offloads (TSO/GSO/GRO) and pacing are already off on the testbed (no fq qdisc; vegaslab's BPF
algorithms do not ask for pacing).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from .errors import TestbedError

__all__ = ["Stack"]

_SWITCHES = {"on": True, "off": False}


@dataclass(frozen=True)
class Stack:
    """Which of Linux's TCP behaviours are on for a testbed run (the defaults are Linux's)."""

    sack: bool = True
    delayed_ack: bool = True

    @classmethod
    def parse(cls, items: list[str] | tuple[str, ...]) -> "Stack":
        """``["sack=off", "delayed_ack=off"]`` (the CLI's ``--stack`` values) -> a Stack."""
        known = [f.name for f in fields(cls)]
        values: dict[str, bool] = {}
        for item in items:
            name, sep, value = item.partition("=")
            if not sep or name not in known:
                raise TestbedError(f"--stack {item!r}: expected NAME=on|off with NAME one of {', '.join(known)}")
            if value not in _SWITCHES:
                raise TestbedError(f"--stack {name}: must be on or off, got {value!r}")
            values[name] = _SWITCHES[value]
        return cls(**values)

    def endpoint_sysctls(self) -> dict[str, str]:
        """The sysctls to set in the sender and receiver namespaces."""
        return {} if self.sack else {"net.ipv4.tcp_sack": "0"}

    def changes(self) -> list[str]:
        """What differs from Linux's defaults, as ``NAME=off`` (empty for the defaults)."""
        return [f"{f.name}={'on' if getattr(self, f.name) else 'off'}" for f in fields(self)
                if getattr(self, f.name) != f.default]
