"""Parameter sweeps and the execution engine: :mod:`.planning` (the points and seeds a scenario's
``[sweep]`` expands to), :mod:`.store` (the results store, docs/store-format.md),
:mod:`.engine` (runs on a local Dask cluster or an existing one, keeping finished runs in the
store) and :mod:`.results` (a sweep's results as tidy tables, ``to_xarray``, plots;
:func:`vegaslab.sweep` is its entry point).
"""

from typing import Any

#: What ``vegaslab.sweeps`` held when it was one module (now :mod:`.planning`): kept for one
#: release, with a warning.
_MOVED_TO_PLANNING = ("plan", "SweepPlan", "SweepAxis", "SweepParam", "SweepPoint", "FORMAT")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_PLANNING:
        from ..deprecation import warn_moved
        from . import planning

        warn_moved(f"vegaslab.sweeps.{name}", f"vegaslab.sweeps.planning.{name}")
        return getattr(planning, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
