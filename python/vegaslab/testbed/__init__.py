"""vegaslab's namespace testbed: the papers' scenarios on the real Linux TCP stack.

:mod:`vegaslab.testbed.network` builds the path (sender, router and receiver network
namespaces, an htb + pfifo bottleneck, a TUN delay line per host pair) and removes it again on
every exit. Everything needs root, ``ip``, ``tc``, ``ethtool`` and the delay line built by
``make -C kernel delayline``; without them :class:`TestbedError` says, in one sentence, what is
missing.
"""
from __future__ import annotations

from .network import Bottleneck, Host, Network, Route, TestbedError
from .stack import Stack

__all__ = ["Host", "Bottleneck", "Route", "Network", "TestbedError", "Stack"]
