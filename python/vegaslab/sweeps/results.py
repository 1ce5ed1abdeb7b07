"""Running a sweep and reading its results (``vegaslab sweep``, :func:`vegaslab.sweep`)::

    import vegaslab
    res = vegaslab.sweep("study.toml", out="out/study")      # computes what the store lacks
    res.flows                                                # one row per (run, flow)
    res.runs                                                 # one row per run
    res.to_xarray("throughput_bps", entity="f1")             # dims: the axes, then seed
    res.plot("throughput_bps", x="alpha", flow="f1")         # mean and 95% CI across seeds

How it works, and why (docs/decisions.md, "Sweeps, engine and store"):

- **One plan, one engine, one store.** The plan is the core's (:func:`vegaslab.sweeps.planning.plan`),
  each run is a :class:`vegaslab.sweeps.store.RunSpec` with the plan's overrides for its point and an
  explicit seed, and everything goes through :func:`vegaslab.sweeps.engine.execute` into a results
  store, so a re-run computes only what is missing and the store is readable by any Parquet
  reader. The spec's ``params`` are the point's values, so the store's tables carry a typed
  column per swept parameter.
- **A scenario without ``[sweep]`` is refused** by the sweep command and :func:`sweep`: a
  "sweep" of one point is almost always a forgotten table, and ``vegaslab run`` does that job.
- **Rows are labelled by this plan.** The tables are read with this plan's columns (``point``,
  each parameter, ``seed``) attached by run key, not the stored labels (a run another sweep
  computed carries that sweep's labels in the store).
- **Failures are remembered** in ``<store>/sweep-failures.json`` (run key -> message), so
  ``--status`` can tell a run that failed from one never tried; a run that later succeeds
  leaves the list. The store itself stores only successes.
- **Confidence intervals use Student's t** with n - 1 degrees of freedom over the seeds (the
  seeds are a small sample; a normal interval would be too narrow for 3 to 10 seeds). The
  quantile is computed from the exact t distribution function (Abramowitz & Stegun 26.7.3-4,
  closed forms for integer degrees of freedom) by bisection, because scipy is not a dependency.
  The interval is clipped to the metric's physical range (:mod:`.metrics`); figures are drawn
  by :mod:`.figures`.
- **Small sweeps stay in this process**: :func:`sweep` runs with ``scheduler="auto"``
  (:mod:`vegaslab.sweeps.engine.choice`), which starts the local cluster only when the
  estimated work pays for it.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..errors import ScenarioError, VegaslabError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

    from .engine import Execution
    from .store import PreparedRun, RunSpec, Store
    from .planning import SweepPlan

__all__ = ["sweep", "SweepResults", "SweepStatus", "load_sweep", "sweep_status", "t_quantile", "FAILURES_FILE"]

#: Where a sweep records the runs that failed at their last attempt (run key -> message).
FAILURES_FILE = "sweep-failures.json"
#: Where the sweep format is documented (named in error messages).
DOCS = "docs/sweep-format.md"


# ---------------------------------------------------------------------- planning


@dataclass
class _Sweep:
    """A planned sweep: the plan, its run specs in run order and their resolution."""

    text: str
    source: str
    scenario_id: str
    plan: "SweepPlan"
    specs: list["RunSpec"]
    prepared: list["PreparedRun"] = field(default_factory=list)


def _scenario_id(text: str, source: str, overrides: Sequence[str]) -> str:
    """The scenario's id as the core resolves it after the overrides: ``meta.id`` (which the
    core restricts to letters, digits, ``_`` and ``-``) or the file's stem (no path separator),
    so a store directory named after it cannot leave ``out/``."""
    from ..simulation import normalize_text

    return str(normalize_text(text, source, None, list(overrides))["id"])


def load_sweep(scenario: Any, overrides: Any = ()) -> _Sweep:
    """Plan the sweep of ``scenario`` (a path, a catalog id, TOML text or a dict) and build one
    :class:`RunSpec` per run. :class:`ScenarioError` when the file has no ``[sweep]`` table or
    the core rejects it."""
    from ..scenario import normalise_overrides, scenario_source
    from .store import RunSpec, prepare
    from .planning import plan

    text, source = scenario_source(scenario)
    try:
        has_sweep = "sweep" in tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        has_sweep = True  # let the core report the syntax error, with its position
    if not has_sweep:
        raise ScenarioError(f"{source}: has no [sweep] table, so there is nothing to sweep; add a [sweep] table "
                            f"naming the fields to vary and the seeds (see {DOCS}), or use `vegaslab run` for one run")
    ovr = normalise_overrides(overrides)
    p = plan(scenario if isinstance(scenario, (str, os.PathLike)) else text, ovr)
    specs = [RunSpec(text, source, tuple(p.run_overrides(pt.index)), seed, dict(pt.values))
             for pt in p.points for seed in p.seeds]
    sw = _Sweep(text, source, _scenario_id(text, source, ovr), p, specs)
    sw.prepared = prepare(specs)
    return sw


def default_out(scenario_id: str) -> Path:
    """The default store of a sweep: ``out/sweep-<scenario id>``."""
    return Path("out") / f"sweep-{scenario_id}"


# ---------------------------------------------------------------------- failures


#: The shape of :data:`FAILURES_FILE` (run key -> the last error): anything else is ignored.
FAILURES_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}
#: The largest :data:`FAILURES_FILE` read (one message per failed run).
MAX_FAILURES_BYTES = 64 << 20


def _read_failures(out: Path) -> dict[str, str]:
    """The failures recorded in the store directory; an absent file is none, and one that is
    not what vegaslab writes (a link, a FIFO, too large, the wrong shape) is ignored with a
    warning naming it: it only records messages, and the runs are retried anyway."""
    from ..safe_io import ForeignFileError, read_json

    try:
        return dict(read_json(out / FAILURES_FILE, max_bytes=MAX_FAILURES_BYTES, schema=FAILURES_SCHEMA))
    except FileNotFoundError:
        return {}
    except (OSError, ForeignFileError) as exc:
        warnings.warn(f"{exc}; the failures it recorded are ignored", stacklevel=2)
        return {}


def _write_failures(out: Path, failures: Mapping[str, str]) -> None:
    from ..safe_io import remove_file, write_file

    if not failures:
        remove_file(out, FAILURES_FILE)
        return
    write_file(out, FAILURES_FILE, json.dumps(dict(sorted(failures.items())), indent=1) + "\n")


# ---------------------------------------------------------------------- status and dry run


@dataclass
class SweepStatus:
    """Where a sweep stands in a store. ``stored + missing + failed == runs``: ``failed`` are
    runs the core rejects or whose last attempt failed (``errors``: their messages, one per
    distinct message), ``missing`` the others not stored. ``mean_wall_s`` is the mean worker
    wall time of the plan's stored runs (None when none is stored); ``estimate_s`` the
    compute time left (``mean_wall_s`` x runs to do), before dividing by workers."""

    scenario_id: str
    out: Path
    runs: int
    points: int
    seeds: int
    stored: int
    missing: int
    failed: int
    errors: list[str]
    mean_wall_s: float | None

    @property
    def todo(self) -> int:
        return self.missing + self.failed

    @property
    def estimate_s(self) -> float | None:
        return None if self.mean_wall_s is None else self.mean_wall_s * self.todo


def sweep_status(sw: _Sweep, out: str | os.PathLike) -> SweepStatus:
    """Count the plan's runs in the store at ``out`` (which need not exist: nothing is
    created)."""
    from .store import Store, StoreError

    out = Path(out)
    try:
        store = Store(out, create=False) if (out / "store.json").exists() else None
    except StoreError:
        raise
    keys = store.keys() if store is not None else set()
    failures = _read_failures(out)
    stored = missing = failed = 0
    errors: list[str] = []
    stored_keys: list[str] = []
    for p in sw.prepared:
        if p.error:
            failed += 1
            msg = p.error
        elif p.key in keys:
            stored += 1
            stored_keys.append(p.key)
            continue
        elif p.key in failures:
            failed += 1
            msg = failures[p.key]
        else:
            missing += 1
            continue
        first = msg.splitlines()[0] if msg else "failed"
        if first not in errors:
            errors.append(first)
    mean = None
    if store is not None and stored_keys:
        walls = store.read("runs", keys=set(stored_keys))["wall_s"].dropna()
        mean = float(walls.mean()) if len(walls) else None
    return SweepStatus(sw.scenario_id, out, sw.plan.runs, len(sw.plan.points), len(sw.plan.seeds),
                       stored, missing, failed, errors, mean)


def _fmt_s(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def describe_plan(sw: _Sweep) -> list[str]:
    """Lines describing the axes and seeds of a plan."""
    p = sw.plan
    lines = [f"{sw.source}: {len(p.points)} points x {len(p.seeds)} seeds = {p.runs} runs"]
    for axis in p.axes:
        for prm in axis.params:
            shown = ", ".join(str(v) for v in prm.values[:8]) + (", ..." if len(prm.values) > 8 else "")
            zipped = f" (zipped in axis {axis.name})" if len(axis.params) > 1 else ""
            lines.append(f"  {prm.name} = {prm.path} [{prm.type}]: {len(prm.values)} values: {shown}{zipped}")
    seeds = ", ".join(str(s) for s in p.seeds[:10]) + (", ..." if len(p.seeds) > 10 else "")
    lines.append(f"  seeds: {seeds}")
    return lines


def format_estimate(st: SweepStatus, workers: int | None) -> str:
    """``estimated time: ...`` from the stored runs' wall times, or ``unknown``."""
    if st.todo == 0:
        return "estimated time: 0 s (nothing to compute)"
    if st.estimate_s is None:
        return "estimated time: unknown (no run of this sweep is stored yet)"
    text = (f"estimated time: {_fmt_s(st.estimate_s)} of compute ({st.todo} runs x {st.mean_wall_s:.3g} s, "
            f"the mean wall time of the {st.stored} stored runs)")
    if workers and workers > 1:
        text += f", about {_fmt_s(st.estimate_s / workers)} on {workers} workers"
    return text


def describe_engine(st: SweepStatus, scheduler: Any, workers: int) -> str:
    """``engine: ...``: where the runs left would go (:mod:`vegaslab.sweeps.engine.choice`)."""
    from .engine import SYNCHRONOUS, choice
    from .engine.scheduler import LOCAL, scheduler_address

    if scheduler == SYNCHRONOUS:
        return "engine: this process (--scheduler synchronous)"
    if scheduler == LOCAL:
        return f"engine: a local Dask cluster of {workers} worker processes (--scheduler local)"
    address = scheduler_address(scheduler)
    if address is not None:
        return f"engine: the Dask scheduler at {address}"
    limit = choice.cluster_threshold_s(workers)
    if math.isinf(limit):
        return "engine: this process (one worker process would not be faster)"
    rule = (f"this process while the estimated work is under {limit:.1f} s, then a local Dask cluster of "
            f"{workers} worker processes")
    if st.estimate_s is not None and st.todo:
        rule += f" (the stored runs' times say {'the cluster' if st.estimate_s > limit else 'this process'})"
    return f"engine: {rule}"


# ---------------------------------------------------------------------- running


def run_sweep(sw: _Sweep, out: str | os.PathLike, scheduler: Any = None, workers: int | None = None,
              progress: bool = False) -> "Execution":
    """Execute the plan's missing runs into the store at ``out`` and record failures (not the
    runs an interrupt stopped). ``scheduler`` None is ``"auto"``: ``DASK_SCHEDULER_ADDRESS``
    when set, else in this process while the sweep's estimated work is small and on a local
    cluster of ``workers`` processes beyond (:mod:`vegaslab.sweeps.engine.choice`)."""
    from .engine import AUTO, execute
    from .store import Store

    out = Path(out)
    store = Store(out)
    ex = execute(sw.prepared, store, scheduler=AUTO if scheduler is None else scheduler, workers=workers,
                 progress=progress)
    failures = _read_failures(out)
    for p, o in zip(sw.prepared, ex.outcomes):
        if not o.key:
            continue
        if o.status == "failed" and o.error != "not run":
            failures[o.key] = o.error
        elif o.status in ("ran", "stored"):
            failures.pop(o.key, None)
    _write_failures(out, failures)
    return ex


def sweep(scenario: Any, overrides: Any = (), out: str | os.PathLike | None = None, scheduler: Any = None,
          workers: int | None = None, *, progress: bool = False) -> "SweepResults":
    """Run the sweep of ``scenario`` (a file or catalog id with a ``[sweep]`` table, TOML text
    or a dict; docs/sweep-format.md) into the results store ``out`` (default
    ``out/sweep-<scenario id>``) and return its :class:`SweepResults`.

    Only runs the store lacks are computed, on ``scheduler`` (None: ``DASK_SCHEDULER_ADDRESS``
    when set, else in this process while the estimated work is small and on an embedded local
    cluster of ``workers`` processes beyond; ``"local"``: that cluster; ``"tcp://host:8786"``;
    or ``"synchronous"``), as in :func:`vegaslab.sweeps.engine.execute`; call it under
    ``if __name__ == "__main__":`` in a script. ``overrides`` apply under every point (and may
    edit the sweep: ``"sweep.seeds=3"``). Runs that failed are listed in
    :attr:`SweepResults.execution`; the results hold the runs that are stored.

    Ctrl-C (a notebook's interrupt) stops the sweep in order: the runs that finished are
    committed to the store, then ``KeyboardInterrupt`` is raised, so a cell never carries on
    with a sweep that did not finish. Calling ``sweep`` again computes only what is missing."""
    sw = load_sweep(scenario, overrides)
    out = Path(out) if out is not None else default_out(sw.scenario_id)
    ex = run_sweep(sw, out, scheduler=scheduler, workers=workers, progress=progress)
    if ex.interrupted:
        raise KeyboardInterrupt
    return SweepResults(sw, out, ex)


# ---------------------------------------------------------------------- statistics


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan2(t, math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2 == 1:  # A(t|df) = 2/pi (theta + sin cos (1 + 2/3 cos^2 + ... ))
        term, total = 1.0, 0.0
        if df > 1:
            total = term = 1.0
            for k in range(1, (df - 3) // 2 + 1):
                term *= c * c * (2 * k) / (2 * k + 1)
                total += term
            total *= s * c
        a = 2.0 / math.pi * (theta + total)
    else:  # A(t|df) = sin (1 + 1/2 cos^2 + 1.3/2.4 cos^4 + ...)
        term = total = 1.0
        for k in range(1, (df - 2) // 2 + 1):
            term *= c * c * (2 * k - 1) / (2 * k)
            total += term
        a = s * total
    return 0.5 + 0.5 * a


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (0.5 <= p < 1) of Student's t with ``df`` >= 1 degrees of freedom,
    to 1e-10 (bisection on the exact distribution function)."""
    if not 0.5 <= p < 1 or df < 1:
        raise ValueError(f"t_quantile: need 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2
    while hi - lo > 1e-10 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _t_cdf(mid, df) < p else (lo, mid)
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------------- results




def _warn_few_seeds(stats: "pd.DataFrame", metric: str, x: str) -> None:
    """A ``UserWarning`` (at the caller of the public method) when a point has fewer than
    :data:`vegaslab.sweeps.figures.MIN_SEEDS` seeds."""
    from .figures import MIN_SEEDS

    fewest = int(stats["n"].min()) if len(stats) else 0
    if 0 < fewest < MIN_SEEDS:
        warnings.warn(f"{metric} vs {x}: only {fewest} seed{'s' if fewest > 1 else ''} at a point; a confidence "
                      f"interval needs at least {MIN_SEEDS} to mean much (sweep.seeds = {MIN_SEEDS} or more, "
                      f"or --set sweep.seeds={MIN_SEEDS})", stacklevel=3)


def _known_metrics() -> dict:
    from .metrics import metrics

    return metrics()


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_.") or "x"


class SweepResults:
    """The stored results of a sweep, labelled by its plan.

    - :attr:`flows`: one row per (run, flow): ``run_key``, ``point``, one typed column per swept
      parameter (named as in the plan), ``seed``, then the columns of docs/results-format.md.
    - :attr:`runs`: one row per run with the per-run aggregates of docs/store-format.md
      (``throughput_bps_total``, ``jain_throughput``, ``wall_s``, ...).
    - :meth:`to_pandas`, :meth:`to_xarray`, :meth:`plot`.

    Runs not stored (failed, or not run yet) have no rows."""

    def __init__(self, sw: _Sweep, out: str | os.PathLike, execution: "Execution | None" = None) -> None:
        self._sweep = sw
        self.out = Path(out)
        #: What the :func:`sweep` call that made this object did (None when only read).
        self.execution = execution
        self._cache: dict[str, "pd.DataFrame"] = {}

    @classmethod
    def open(cls, scenario: Any, out: str | os.PathLike | None = None, overrides: Any = ()) -> "SweepResults":
        """The results of a sweep already (partly) in a store, without running anything."""
        sw = load_sweep(scenario, overrides)
        return cls(sw, Path(out) if out is not None else default_out(sw.scenario_id))

    @property
    def plan(self) -> "SweepPlan":
        return self._sweep.plan

    @property
    def params(self) -> list[str]:
        """The parameter column names, in plan order."""
        return [p.name for p in self.plan.params]

    def _store(self) -> "Store | None":
        from .store import Store

        return Store(self.out, create=False) if (self.out / "store.json").exists() else None

    def table(self, name: str = "flows") -> "pd.DataFrame":
        """Any store table (``runs``, ``flows``, ``queues``, ``links``, ``udp``,
        ``series_flows``, ``series_queues``) for this sweep's stored runs, in run order, with
        ``run_key``, ``point``, the plan's typed parameter columns and ``seed`` first."""
        if name in self._cache:
            return self._cache[name].copy()
        import pandas as pd

        front = self.plan.to_pandas().drop(columns=["overrides"])
        front.insert(0, "run_key", [p.key or None for p in self._sweep.prepared])
        front["__order"] = range(len(front))
        front = front[front["run_key"].notna()]
        store = self._store()
        if store is None:
            rows = pd.DataFrame({"run_key": pd.Series([], dtype="string")})
        else:
            rows = store.read(name, keys=set(front["run_key"]))
            stored_params = {n for c in store.commits() for n in c.params}
            rows = rows.drop(columns=[c for c in rows.columns if c in stored_params or c == "seed"])
        frame = front.merge(rows, on="run_key", how="inner", sort=False)
        frame = frame.sort_values("__order", kind="stable").drop(columns="__order").reset_index(drop=True)
        frame.attrs["axes"] = {a.name: [p.name for p in a.params] for a in self.plan.axes}
        self._cache[name] = frame
        return frame.copy()

    @property
    def flows(self) -> "pd.DataFrame":
        """One row per (run, flow); see the class docstring."""
        return self.table("flows")

    @property
    def runs(self) -> "pd.DataFrame":
        """One row per run: aggregates over its flows and queues, wall times, provenance."""
        return self.table("runs")

    def to_pandas(self, table: str = "flows") -> "pd.DataFrame":
        """The tidy table ``table`` (default ``flows``: one row per (run, flow))."""
        return self.table(table)

    def _values(self, metric: str, entity: str | None) -> tuple["pd.DataFrame", str | None]:
        """The rows holding ``metric``: the runs table for a run aggregate, else flows, one
        entity's rows when ``entity`` names a flow. Returns (rows, the entity column or None)."""
        flows = self.flows
        if metric in flows.columns and metric not in self.params and metric not in ("seed", "point"):
            if entity is not None:
                sel = flows[flows["flow"] == entity]
                if sel.empty and not flows.empty:
                    raise VegaslabError(f"flow {entity!r}: no such flow in the sweep; the flows are "
                                        f"{', '.join(map(str, flows['flow'].unique()))}")
                return sel, None
            if flows["flow"].nunique() > 1:
                return flows, "flow"
            return flows, None
        runs = self.runs
        if metric in runs.columns:
            return runs, None
        from .metrics import metric as known_metric

        known_metric(metric)  # raises, naming the closest metric (or the new name of a renamed one)
        raise VegaslabError(f"metric {metric!r}: no run of the sweep is stored yet")

    def to_xarray(self, metric: str, entity: str | None = None) -> "xr.DataArray":
        """``metric`` as an :class:`xarray.DataArray` with one dimension per axis (named as the
        axis: the parameter's name, or a zip's name with each member as a coordinate along
        it), then ``seed``. ``metric`` is a column of ``flows`` (``entity`` picks one flow;
        without it, a sweep of several flows gets a last dimension ``flow``) or of ``runs``
        (``throughput_bps_total``, ``jain_throughput``, ...). Runs not stored are NaN."""
        import numpy as np
        import xarray as xr

        rows, extra = self._values(metric, entity)
        plan = self.plan
        shape = [len(a) for a in plan.axes] + [len(plan.seeds)]
        dims = [a.name for a in plan.axes] + ["seed"]
        coords: dict[str, Any] = {}
        for k, axis in enumerate(plan.axes):
            for prm in axis.params:
                coords[prm.name] = ((axis.name,), list(prm.values))
        coords["seed"] = list(plan.seeds)
        extra_values: list = []
        if extra is not None:
            extra_values = list(dict.fromkeys(rows[extra]))
            shape.append(len(extra_values))
            dims.append(extra)
            coords[extra] = extra_values
        data = np.full(shape, np.nan)
        seed_index = {s: i for i, s in enumerate(plan.seeds)}
        extra_index = {v: i for i, v in enumerate(extra_values)}
        points = plan.points
        values = rows[metric].to_numpy(dtype=float, na_value=np.nan)
        for i, (pt, sd) in enumerate(zip(rows["point"], rows["seed"])):
            at = (*points[int(pt)].coords, seed_index[int(sd)])
            if extra is not None:
                at = (*at, extra_index[rows[extra].iloc[i]])
            data[at] = values[i]
        name = metric if entity is None else f"{metric}[{entity}]"
        return xr.DataArray(data, dims=dims, coords=coords, name=name,
                            attrs={"source": self._sweep.source, "store": str(self.out)})

    def summary(self, metric: str, x: str, hue: str | None = None, flow: str | None = None,
                confidence: float = 0.95) -> "pd.DataFrame":
        """Per (``x``, ``hue``) group: ``n`` seeds, ``mean``, ``std`` (n - 1) and the bounds of the
        Student-t confidence interval ``lo``/``hi`` (mean -/+ t_{(1+c)/2, n-1} s/sqrt(n); NaN
        when n < 2), clipped to the metric's physical range (a rate, count or time is not
        negative; Jain's index and a ratio lie in [0, 1]: :mod:`vegaslab.sweeps.metrics`);
        ``clipped`` is True where a bound was. Every other parameter must be constant (or be
        ``hue``), so that a group holds the seeds of one point only; when exactly one other
        parameter varies and ``hue`` is not given, it becomes the hue."""
        from .metrics import metric as known_metric, physical_clip

        self.check_plot(metric, x, hue)
        rows, extra = self._values(metric, flow)
        if extra is not None and hue is None and len(self._varying({x})) == 0:
            hue = extra
        elif extra is not None:
            raise VegaslabError(f"metric {metric!r} is per flow and the sweep has several flows "
                                f"({', '.join(map(str, rows['flow'].unique()))}): name one with flow=")
        if hue is None and extra is None:
            others = self._varying({x})
            if len(others) == 1:  # one other parameter varies: one line per value of it
                hue = others[0]
        others = self._varying({x, hue} if hue else {x})
        if others:
            raise VegaslabError(f"parameters {', '.join(others)} also vary: a point of the plot would pool "
                                "different runs; plot one of them as hue=, or fix the others (--set on the axis, or select "
                                "rows of .flows/.runs)")
        keys = [x] + ([hue] if hue else [])
        grouped = rows.groupby(keys, sort=True, dropna=False)[metric]
        stats = grouped.agg(["count", "mean", "std"]).reset_index().rename(columns={"count": "n"})
        if len(rows) and not stats["n"].any():
            raise VegaslabError(f"metric {metric!r} has no value in any stored run (NaN in each: a completion time "
                                "of flows that never complete, say)")
        q = (1 + confidence) / 2
        half = [t_quantile(q, int(n) - 1) * s / math.sqrt(n) if n >= 2 else float("nan")
                for n, s in zip(stats["n"], stats["std"])]
        m = known_metric(metric) if metric in _known_metrics() else None
        bounds = [(mu - h, mu + h) for mu, h in zip(stats["mean"], half)]
        clipped = [physical_clip(lo, hi, m) if m is not None else (lo, hi) for lo, hi in bounds]
        stats["lo"] = [lo for lo, _ in clipped]
        stats["hi"] = [hi for _, hi in clipped]
        stats["clipped"] = [c != b for c, b in zip(clipped, bounds)]
        stats.attrs["hue"] = hue
        return stats

    def check_plot(self, metric: str, x: str, hue: str | None = None, flow: str | None = None) -> None:
        """Raise :class:`VegaslabError` (naming the closest name) when ``metric``, ``x``, ``hue``
        or ``flow`` cannot be plotted from this sweep, from the plan and the scenario alone:
        ``vegaslab sweep --plot`` calls it before any run."""
        from .metrics import did_you_mean, metric as known_metric

        if metric not in _known_metrics() and not self._stored_column(metric):
            known_metric(metric)
        for what, name in (("", x), ("hue ", hue)):
            if name is not None and name not in self.params and not (what and name == "flow"):
                raise VegaslabError(f"{what}{name!r} is not a swept parameter{did_you_mean(name, self.params)}; "
                                    f"the parameters are {', '.join(self.params)}")
        flows = self.flow_names
        if flow is not None and flows and flow not in flows:
            raise VegaslabError(f"flow {flow!r}: no such flow in the sweep{did_you_mean(flow, flows)}; "
                                f"the flows are {', '.join(flows)}")

    def _stored_column(self, name: str) -> bool:
        """Whether ``name`` is a numeric column the stored tables have beyond the documented ones
        (only looked up when the store exists)."""
        if self._store() is None:
            return False
        return any(name in self.table(t).columns for t in ("flows", "runs")) and name not in (
            "seed", "point", "run_key", *self.params)

    @property
    def flow_names(self) -> list[str]:
        """The flows of the scenario's first point, as the core resolves them."""
        for p in self._sweep.prepared:
            if p.normalized:
                return [str(f.get("name")) for f in json.loads(p.normalized).get("flows", [])]
        return []

    @property
    def title(self) -> str:
        """The scenario's ``meta.title``, else its id: the title of its figures."""
        try:
            meta = tomllib.loads(self._sweep.text).get("meta", {})
        except tomllib.TOMLDecodeError:  # pragma: no cover - the core read it
            meta = {}
        title = meta.get("title") if isinstance(meta, dict) else None
        return str(title) if title else self._sweep.scenario_id

    def _varying(self, exclude: set) -> list[str]:
        return [p.name for a in self.plan.axes for p in a.params
                if p.name not in exclude and len(a) > 1
                and not any(q.name in exclude for q in a.params)]

    def plot(self, metric: str, x: str, hue: str | None = None, flow: str | None = None, ax: Any = None,
             confidence: float = 0.95):
        """Plot ``metric`` against the parameter ``x``: the mean over seeds as a line with
        markers and a shaded **confidence interval of the mean (95%), a Student-t interval with
        n - 1 degrees of freedom over the n seeds** (mean +/- t_{0.975, n-1} s / sqrt(n); no band
        with one seed), clipped to the metric's physical range (:meth:`summary`; the subtitle
        says when). Fewer than :data:`~vegaslab.sweeps.figures.MIN_SEEDS` seeds at a point warn
        (``UserWarning``). ``hue`` draws one line per value of another parameter (default: the
        other varying parameter when there is exactly one); ``flow`` selects one flow for a
        per-flow metric (needed when the sweep has several flows and another parameter varies;
        with only ``x`` varying, each flow gets its own line).

        Draws on ``ax`` (a matplotlib Axes) or, without one, on a new pyplot figure (so a
        notebook shows it inline, as pandas' plots do); returns the Axes (``.figure`` saves it).
        The figure is titled by the scenario's ``meta.title`` (docs/sweep-format.md, "Figures")."""
        from ..plots import new_axes

        drawn_on: list = []

        def axes() -> Any:  # a pyplot figure only once the summary is known to be drawable
            drawn_on.append(ax if ax is not None else new_axes())
            return drawn_on[0]

        _warn_few_seeds(self._draw(axes, metric, x, hue, flow, confidence), metric, x)
        return drawn_on[0]

    def save_plot(self, metric: str, x: str, out_dir: str | os.PathLike | None = None, *, format: str = "png",
                  hue: str | None = None, flow: str | None = None, confidence: float = 0.95) -> Path:
        """:meth:`plot` saved as ``<out_dir>/<metric>-vs-<x>.<format>`` (default: the store's
        directory; ``format``: ``png``, ``pdf`` or ``svg``, written without a creation date, so
        the same results give the same bytes); returns the path. Uses no pyplot figure."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from ..figure_formats import check_format, figure_bytes
        from ..safe_io import write_file
        from .figures import FIGSIZE

        try:
            check_format(format)
        except ValueError as exc:
            raise VegaslabError(str(exc)) from None
        fig = Figure(figsize=FIGSIZE, dpi=110, layout="constrained")
        FigureCanvasAgg(fig)
        _warn_few_seeds(self._draw(fig.add_subplot, metric, x, hue, flow, confidence), metric, x)
        directory = Path(out_dir if out_dir is not None else self.out)
        return write_file(directory, f"{_safe_name(metric)}-vs-{_safe_name(x)}.{format}", figure_bytes(fig, format))

    def _draw(self, axes: Callable[[], Any], metric: str, x: str, hue: str | None, flow: str | None,
              confidence: float) -> "pd.DataFrame":
        """Draw :meth:`plot`'s figure on the Axes ``axes()`` gives, asked for only once the
        :meth:`summary` is computed (a bad name makes no empty figure); returns that summary."""
        from . import figures
        from .metrics import Metric, metric as known_metric

        stats = self.summary(metric, x, hue, flow, confidence)
        hue = stats.attrs["hue"]  # "flow" when each flow gets its own line
        m = known_metric(metric) if metric in _known_metrics() else Metric(metric, "runs", metric, "", None, None)
        if flow is None and m.per_flow and hue != "flow":  # the sweep's only flow, named
            names = self.flow_names
            flow = names[0] if len(names) == 1 else None
        axis = next(a for a in self.plan.axes if any(p.name == x for p in a.params))
        figures.draw(axes(), stats, x=x, axis=axis, hue=hue, metric=m, flow=flow, title=self.title,
                     subtitle=f"{figures.y_label(m, '', flow)} vs {figures.x_label(axis)}\n"
                              f"{figures.band_text(stats, m, confidence)}")
        return stats

    def __repr__(self) -> str:
        return (f"SweepResults({self._sweep.source!r}, {len(self.plan.points)} points x {len(self.plan.seeds)} seeds, "
                f"store {str(self.out)!r})")
