"""The plan of a parameter sweep: the points and seeds a scenario's ``[sweep]`` table expands to
(docs/sweep-format.md)::

    from vegaslab.sweeps import plan
    p = plan("study.toml", overrides=["sweep.seeds=3"])
    p.runs                      # points x seeds
    p.points[4].overrides       # ("flows[1].params.alpha=2", "links[1].queue.limit=20")
    p.to_pandas()               # one row per (point, seed), a typed column per parameter

The Rust core (``vegaslab_sim::scenario::sweep``) reads the table, expands it and validates
every point; this module only presents its answer, so the rules (order, ranges, errors) have
one owner. Errors are :class:`vegaslab.ScenarioError` naming the file and the field, e.g.
``study.toml: sweep.axis[1].values[3]: must be between 2 and 100000000, got 0``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..scenario import Overrides, Scenario

__all__ = ["plan", "SweepPlan", "SweepAxis", "SweepParam", "SweepPoint"]

#: Layout version of the core's sweep document this module reads.
FORMAT = 1

#: pandas dtype of each parameter type the core reports.
_DTYPES = {"integer": "int64", "float": "float64", "string": "string", "boolean": "bool"}


@dataclass(frozen=True)
class SweepParam:
    """One swept field: its column ``name``, its ``--set`` ``path``, its value ``type``
    (``integer``, ``float``, ``string`` or ``boolean``) and its values in axis order."""

    name: str
    path: str
    type: str
    values: tuple


@dataclass(frozen=True)
class SweepAxis:
    """One axis: a single parameter, or several that vary together (a zip)."""

    name: str
    params: tuple[SweepParam, ...]

    def __len__(self) -> int:
        return len(self.params[0].values)


@dataclass(frozen=True)
class SweepPoint:
    """One point: its position, its index along each axis, its ``path=value`` overrides
    (applied after the user's) and its value of each parameter, by column name."""

    index: int
    coords: tuple[int, ...]
    overrides: tuple[str, ...]
    values: dict[str, Any]


@dataclass(frozen=True)
class SweepPlan:
    """Every run of a sweep: each point once per seed, points in row-major order over the axes
    (last axis fastest), seeds fastest within a point."""

    source: str
    overrides: tuple[str, ...]
    axes: tuple[SweepAxis, ...]
    seeds: tuple[int, ...]
    points: tuple[SweepPoint, ...]

    @property
    def params(self) -> tuple[SweepParam, ...]:
        """The parameters of every axis, in order (the plan table's parameter columns)."""
        return tuple(p for a in self.axes for p in a.params)

    @property
    def runs(self) -> int:
        """How many runs the sweep has: points x seeds."""
        return len(self.points) * len(self.seeds)

    def run_overrides(self, point: int) -> list[str]:
        """All the overrides of a point's runs: the user's, then the point's. ``vegaslab run
        FILE --set ...`` with these (and ``--seed``) re-runs that run."""
        return [*self.overrides, *self.points[point].overrides]

    def to_pandas(self) -> "pd.DataFrame":
        """The plan as a table: one row per (point, seed) in run order, with columns
        ``point``, one typed column per parameter (named as in :attr:`params`), ``seed`` and
        ``overrides`` (the run's full override list, a tuple). ``attrs["axes"]`` maps each
        axis name to its parameter columns."""
        import numpy as np
        import pandas as pd

        n_points, n_seeds = len(self.points), len(self.seeds)
        columns: dict[str, Any] = {"point": np.repeat(np.arange(n_points, dtype="int64"), n_seeds)}
        coords = np.array([p.coords for p in self.points], dtype="int64").reshape(n_points, len(self.axes))
        for k, axis in enumerate(self.axes):
            for param in axis.params:
                dtype = _DTYPES[param.type]
                values = np.array(param.values, dtype=object if dtype == "string" else dtype)
                column = np.repeat(values[coords[:, k]], n_seeds)
                columns[param.name] = pd.array(column, dtype=dtype)
        columns["seed"] = np.tile(np.array(self.seeds, dtype="int64"), n_points)
        full = [tuple(self.run_overrides(i)) for i in range(n_points)]
        overrides = np.empty(n_points * n_seeds, dtype=object)
        for i, o in enumerate(full):
            overrides[i * n_seeds:(i + 1) * n_seeds] = [o] * n_seeds
        columns["overrides"] = overrides
        frame = pd.DataFrame(columns)
        frame.attrs["axes"] = {a.name: [p.name for p in a.params] for a in self.axes}
        return frame


def _from_document(doc: dict) -> SweepPlan:
    if doc.get("format") != FORMAT:
        from ..errors import VegaslabError

        raise VegaslabError(f"the compiled core writes sweep format {doc.get('format')!r}; this package reads {FORMAT}: "
                            "rebuild the core (`make setup`)")
    axes = tuple(
        SweepAxis(a["name"], tuple(SweepParam(p["name"], p["path"], p["type"], tuple(p["values"])) for p in a["params"]))
        for a in doc["axes"]
    )
    names = [p.name for a in axes for p in a.params]
    points = tuple(
        SweepPoint(p["index"], tuple(p["coords"]), tuple(p["overrides"]), dict(zip(names, p["values"])))
        for p in doc["points"]
    )
    return SweepPlan(doc["source"], tuple(doc["overrides"]), axes, tuple(doc["seeds"]), points)


def plan(scenario: "Scenario", overrides: "Overrides | None" = ()) -> SweepPlan:
    """Expand the ``[sweep]`` table of ``scenario`` (a path, TOML text or dict) with the
    user's ``overrides`` (applied first, so they may edit the sweep itself, e.g.
    ``"sweep.seeds=3"``). A scenario without ``[sweep]`` is one point with its own seed.
    Raises :class:`vegaslab.ScenarioError` naming the field for a bad sweep."""
    from ..errors import VegaslabError
    from ..core import call_core, load_core
    from ..scenario import normalise_overrides, overrides_blamed, scenario_source

    text, source = scenario_source(scenario)
    core = load_core()
    expand = getattr(core, "expand_sweep", None)
    if expand is None:
        raise VegaslabError("the compiled core vegaslab._core has no expand_sweep: it is older than this package; "
                            "rebuild it (`make setup`)")
    ovr = normalise_overrides(overrides)
    with overrides_blamed(text, source, ovr, expand):
        return _from_document(json.loads(call_core(expand, text, source, ovr)))
