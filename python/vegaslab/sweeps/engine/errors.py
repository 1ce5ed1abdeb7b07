"""The engine's one error type: raised before any run starts when the engine cannot run."""

from __future__ import annotations

from ...errors import VegaslabError


class EngineError(VegaslabError):
    """The engine cannot run: no scheduler at the address, no worker joined, bad settings."""
