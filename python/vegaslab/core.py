"""The bridge to the compiled core (the Rust extension ``vegaslab._core``): importing it on first
use, so that ``import vegaslab`` and everything that works on saved results does not need it,
and calling it so that every failure reaches Python as a vegaslab exception.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .errors import ScenarioError, SimulationError, VegaslabError

__all__ = ["load_core", "call_core", "core_version", "source_revision", "package_version", "max_scenario_bytes"]


@functools.cache
def package_version() -> str:
    """The installed package's version (``0+unknown`` when it is not installed)."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return "0+unknown"
    try:
        return version("vegaslab")
    except PackageNotFoundError:
        return "0+unknown"


def load_core():
    """Import the compiled core lazily, with a helpful message when it is not built."""
    try:
        from . import _core as core
    except ImportError as exc:
        raise VegaslabError(
            "the compiled core vegaslab._core is not available; build it with "
            "`maturin develop --release` (or `pip install .`) from the repository root"
        ) from exc
    return core


def core_version() -> str | None:
    """Version string of the compiled core, or None when it is not built."""
    try:
        return str(load_core().version())
    except VegaslabError:
        return None


def source_revision() -> str:
    """The git revision the compiled core was built from (``+dirty`` when it had uncommitted
    changes, ``unknown`` when built outside a git checkout)."""
    return str(call_core(load_core().source_revision))


def call_core(fn: Callable[..., Any], *args: Any) -> Any:
    """Call into the core, translating every failure into a vegaslab exception."""
    core = load_core()
    try:
        return fn(*args)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException derives BaseException
        message = str(exc) or type(exc).__name__
        core_scenario_error = getattr(core, "ScenarioError", None)
        core_simulation_error = getattr(core, "SimulationError", None)
        if core_scenario_error is not None and isinstance(exc, core_scenario_error):
            err = ScenarioError(message)
            for name in ("file", "field", "kind", "reason"):
                setattr(err, name, getattr(exc, name, None))
            raise err from exc
        if core_simulation_error is not None and isinstance(exc, core_simulation_error):
            raise SimulationError(message) from exc
        if type(exc).__name__ == "PanicException":
            raise SimulationError(f"internal error in the simulator core: {message}") from exc
        raise VegaslabError(f"{type(exc).__name__}: {message}") from exc


def max_scenario_bytes() -> int:
    """The largest scenario text (the core's ``MAX_SCENARIO_BYTES``; 64 MiB when the core is
    not built, which is then not what reads the file)."""
    try:
        return int(load_core().MAX_SCENARIO_BYTES)
    except (VegaslabError, AttributeError):
        return 64 << 20
