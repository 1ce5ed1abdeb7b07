"""The testbed's one error, in a module of its own so that every testbed module can raise it
without importing the network that uses them all."""
from __future__ import annotations

from ..errors import VegaslabError

__all__ = ["TestbedError"]


class TestbedError(VegaslabError, RuntimeError):
    """The testbed cannot be used here, or building or running it failed; the message says why."""

    __test__ = False  # not a pytest test class despite the name
