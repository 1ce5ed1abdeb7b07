"""The exceptions vegaslab raises on purpose, in a module of their own so that every layer of the
package can raise and catch them without importing anything else of it.

:class:`ScenarioError` (the scenario is wrong: the message names the file and the field) and
:class:`SimulationError` (the simulator failed, including an internal panic of the core) both
derive from :class:`VegaslabError`; ``vegaslab`` re-exports all of them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

__all__ = ["VegaslabError", "ScenarioError", "SimulationError", "ControllerError", "TraceError", "file_error"]


class VegaslabError(Exception):
    """Base class of every error vegaslab raises on purpose."""


class ScenarioError(VegaslabError, ValueError):
    """The scenario is invalid. The message names the file, the field and what was expected,
    e.g. ``va-reroute.toml: flows[1].start: must be >= 0 s, got "-3s"``.

    Errors from the core also carry the parts as attributes: ``file``, ``field`` (the dotted
    path, ``""`` for the whole file), ``kind`` (one of the core's error kinds: ``syntax``,
    ``unknown-field``, ``missing``, ``wrong-type``, ``out-of-range``, ``reference``,
    ``conflict``, ``too-large``, ``file``, ``invalid``) and ``reason`` (the message without
    file and field); they are ``None`` on errors raised by Python code. ``override`` is the
    ``key=value`` override that made the error (then the message names it first: ``override
    tcp.windw=20: tcp: unknown field ... (applied to va-reroute.toml)``), ``None`` when the
    scenario itself is wrong."""

    file: "str | None" = None
    field: "str | None" = None
    kind: "str | None" = None
    reason: "str | None" = None
    override: "str | None" = None


class SimulationError(VegaslabError, RuntimeError):
    """The simulation itself failed (including an internal panic of the Rust core)."""


class ControllerError(SimulationError):
    """A Python controller (``cc = "py:package.module:Class"``) raised in one of its hooks, or
    handed back a window the sender cannot use (a cwnd that is not a finite number > 0). The
    message names the class, the hook and the file and line that raised; the hook's own
    exception is the ``__cause__``, with its traceback. The run is stopped: it has no results."""


class TraceError(SimulationError):
    """The run finished but its packet trace (``[trace]``) could not be written (disk full,
    an I/O error); the message names the path and the operating system's error. Nothing
    computed is lost: ``results`` holds the run's :class:`Results`."""

    def __init__(self, message: str, results: "Results") -> None:
        super().__init__(message)
        self.results = results


# Their public names are ``vegaslab.ScenarioError`` and so on (``vegaslab`` re-exports them):
# tracebacks print that path and pickles (a Dask worker's error sent back) refer to it.
for _cls in (VegaslabError, ScenarioError, SimulationError, ControllerError, TraceError):
    _cls.__module__ = "vegaslab"
del _cls


def file_error(path: str | os.PathLike, reason: str) -> ScenarioError:
    """A :class:`ScenarioError` about a whole file (``field`` empty, ``kind`` ``"file"``)."""
    err = ScenarioError(f"{os.fspath(path)}: {reason}")
    err.file, err.field, err.kind, err.reason = os.fspath(path), "", "file", reason
    return err
