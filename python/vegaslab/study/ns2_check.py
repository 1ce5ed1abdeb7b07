"""Simulator or set-up? A robustness study's default point in ns-2.35.

When vegaslab and a paper disagree, either our simulator is wrong or the paper's set-up is not
the one we read. ns-2.35, the simulator the papers used (in an older release), answers the
first question: this module runs each of the study's variants at the study's default point
and first seed through the ns-2 bridge (:mod:`vegaslab.ns2`), then

- when every variant the claim needs runs in ns-2, evaluates the claim and the study's figure
  on ns-2's runs exactly as on ours (same expression, same seed, same set-up): if ns-2 gives
  our figure, the difference from the paper is in the set-up, not in our simulator;
- in any case, compares every flow that ran in both: the largest relative difference of a
  flow's delivered packets, so a study whose claim ns-2 cannot express (Vegas-A, AdaVegas,
  linear RED have no ns-2 counterpart) still says whether the parts ns-2 has agree.

What is decided here, and why:

- **The same quantities.** ns-2's output becomes a :class:`vegaslab.Results` whose
  ``delivered_pkts`` / ``delivered_bytes`` are the sink's in-order point, the core's meaning
  (:func:`as_results`). A claim or figure on ``mean_cwnd_pkts`` gets ns-2's traced ``cwnd_``
  (:func:`vegaslab.ns2.runner.mean_cwnd`, the core's time-weighted mean); ns-2 records no
  other time series, so a claim that needs one is reported as not measurable in ns-2's
  output, never guessed.
- **One seed.** ns-2 runs take minutes for the large networks; one seed (the study's first)
  is compared with our run of the same seed, which is what "agrees to the packet" means.
- **Cached.** Each ns-2 run is kept in ``<store>/ns2/<key>.json``, keyed by the normalised
  scenario, ns-2's version and vegaslab's: a second call runs nothing. The store may come
  from elsewhere, so a cached file is read back under the rule for such files
  (:mod:`vegaslab.safe_io`, :data:`CACHED_RUN_SCHEMA`); one that fails is run again.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

#: The status values of :class:`Ns2Check`.
STATUSES = ("same conclusion", "different conclusion", "not expressible", "not measurable",
            "ns-2 not installed", "error")


@dataclass
class Ns2Check:
    """ns-2.35 at a study's default point: see the module docstring for the rules."""

    status: str
    seed: int
    detail: str = ""
    ns2_figure: float | None = None
    our_figure: float | None = None
    ns2_claim: str | None = None     # holds / fails on ns-2's runs
    our_claim: str | None = None     # holds / fails on ours, same seed
    #: variant -> "ran" or why the bridge cannot run it
    variants: dict[str, str] = field(default_factory=dict)
    #: largest |ours - ns-2| / max(ns-2, 1) of a flow's delivered packets over the variants
    #: that ran in both, and the flow it was found on
    flow_diff: float | None = None
    flow_diff_at: str = ""
    flows_compared: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Ns2Check":
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def as_results(out: Mapping[str, Any]):
    """ns-2's output (:func:`vegaslab.ns2.run_scenario`) as a :class:`vegaslab.Results`, with
    the core's meaning of ``delivered_pkts`` (the sink's in-order point, ns-2's
    ``sink_delivered_pkts``) and no time series."""
    from ..results import Results

    flows = []
    for f in out["flows"]:
        f = dict(f)
        if f.get("sink_delivered_pkts") is not None:
            f["delivered_pkts"] = f["sink_delivered_pkts"]
            f["delivered_bytes"] = f["sink_delivered_bytes"]
        flows.append(f)
    meta = {k: out["meta"][k] for k in ("scenario", "simulator", "ns_version", "seed", "duration_s")}
    return Results.from_dict({"meta": meta, "flows": flows, "queues": out["queues"], "links": out["links"]})


def _key(normalized: Mapping[str, Any], cwnd: bool) -> str:
    from ..core import package_version
    from ..ns2.runner import NS_VERSION

    text = json.dumps({"scenario": normalized, "ns": NS_VERSION, "vegaslab": package_version(), "cwnd": cwnd},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


#: The largest cached ns-2 run read back (a run's tables are well under 1 KB per flow).
MAX_CACHED_BYTES = 64 << 20
_CELL = {"type": ["string", "number", "boolean", "null"]}
_ROWS = {"type": "array", "items": {"type": "object", "additionalProperties": _CELL}}
#: The JSON Schema of a cached ns-2 run (``<store>/ns2/<key>.json``): what :func:`as_results`
#: reads. A cached file that does not match is not used: ns-2 runs again and replaces it.
CACHED_RUN_SCHEMA = {
    "type": "object", "required": ["meta", "flows", "queues", "links"],
    "properties": {
        "meta": {"type": "object", "required": ["scenario", "simulator", "ns_version", "seed", "duration_s"],
                 "properties": {"simulator": {"type": "string"}, "ns_version": {"type": "string"},
                                "seed": {"type": "integer"}, "duration_s": {"type": "number"}}},
        "flows": _ROWS, "queues": _ROWS, "links": _ROWS,
    },
}


def _read_cached(cache: Path, name: str) -> dict | None:
    """The cached run ``cache/name``, or None when there is none or it cannot be trusted (the
    store is not vegaslab's own: a link, a FIFO, a damaged file or another shape is not used,
    and nothing outside ``cache`` is read: :mod:`vegaslab.safe_io`)."""
    from ..safe_io import ForeignFileError, open_dir, read_json

    try:
        fd = open_dir(cache)
    except (FileNotFoundError, ForeignFileError):
        return None
    try:
        return read_json(name, max_bytes=MAX_CACHED_BYTES, schema=CACHED_RUN_SCHEMA, dir_fd=fd)
    except (FileNotFoundError, ForeignFileError):
        return None
    finally:
        os.close(fd)


def _run_cached(path: str, overrides: tuple[str, ...], seed: int, cache: Path, cwnd: bool = False) -> dict:
    """ns-2's output for one run, from ``cache`` or by running it (``ValueError``: the
    bridge cannot express the scenario); ``cwnd``: with each flow's ``mean_cwnd_pkts``. A new
    run is written under the rule for files vegaslab writes (``cache`` made with
    :func:`vegaslab.safe_io.make_dir`, the file with :func:`vegaslab.safe_io.write_file`)."""
    from ..ns2 import build_model, normalize, run_normalized
    from ..safe_io import make_dir, write_file

    doc = normalize(path, overrides=list(overrides), seed=seed)
    build_model(doc)  # raises ValueError, naming the field, when ns-2 cannot express it
    name = f"{_key(doc, cwnd)}.json"
    cached = _read_cached(cache, name)
    if cached is not None:
        return cached
    out = run_normalized(doc, cwnd=cwnd)
    out["meta"] = {k: v for k, v in out["meta"].items() if k not in ("script", "normalized")}
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_file(make_dir(cache.parent, cache.name), name, json.dumps(out))
    return out


def _flow_diff(ours, ns2) -> tuple[float, str, int]:
    mine = dict(zip(ours.flows["flow"], ours.flows["delivered_pkts"]))
    worst, at, n = 0.0, "", 0
    for name, theirs in zip(ns2.flows["flow"], ns2.flows["delivered_pkts"]):
        if name not in mine:
            continue
        n += 1
        d = abs(float(mine[name]) - float(theirs)) / max(float(theirs), 1.0)
        if d > worst or not at:
            worst, at = d, str(name)
    return worst, at, n


def check(study, plan, ours: Mapping[str, Any], cache: str | os.PathLike) -> Ns2Check:
    """ns-2.35 at ``study``'s default point and first seed. ``plan`` is the study's
    :class:`vegaslab.study.robustness.Plan`; ``ours`` our Results of that point and seed, by variant."""
    from .claims import ClaimError, ClaimSkipped, RunSet, evaluate, measure
    from ..ns2 import NS2Error, ns_available
    from ..safe_io import UnsafePathError

    seed = study.seeds[0]
    result = Ns2Check(status="error", seed=seed)
    if not ns_available():
        result.status, result.detail = "ns-2 not installed", "scripts/install-ns2.sh installs it"
        return result
    theirs: dict[str, Any] = {}
    # ns-2's window trace is a line per ACK: recorded only when the claim or figure reads it.
    cwnd = "mean_cwnd_pkts" in str(plan.claim.get("expr", "")) or "mean_cwnd_pkts" in study.figure
    for job, (i, name, s) in zip(plan.jobs, plan.index):
        if i != 0 or s != seed:
            continue
        try:
            theirs[name] = as_results(_run_cached(job.scenario_path, tuple(job.overrides), seed, Path(cache), cwnd))
            result.variants[name] = "ran"
        except UnsafePathError as exc:  # the cache's directory: a link or a file planted there
            result.variants[name] = f"ns-2 failed: its run cannot be cached: {exc}"
        except ValueError as exc:
            result.variants[name] = f"not expressible: {exc}"
        except NS2Error as exc:
            result.variants[name] = f"ns-2 failed: {str(exc).splitlines()[0]}"
    for name, r in theirs.items():
        if name in ours:
            d, at, n = _flow_diff(ours[name], r)
            result.flows_compared += n
            if result.flow_diff is None or d > result.flow_diff:
                result.flow_diff, result.flow_diff_at = d, f"{name}:{at}"
    failed = {k: v for k, v in result.variants.items() if v.startswith("ns-2 failed")}
    refused = {k: v for k, v in result.variants.items() if v != "ran" and k not in failed}
    if failed or refused:
        name, why = next(iter((failed or refused).items()))
        result.status = "error" if failed else "not expressible"
        verb = "failed in ns-2" if failed else "cannot run in ns-2"
        result.detail = f"{len(failed or refused)} of {len(result.variants)} variants {verb} ({name}: {why})"
        return result
    mine = RunSet(runs={k: [v] for k, v in ours.items()})
    other = RunSet(runs={k: [v] for k, v in theirs.items()})
    v_ours, v_ns2 = evaluate(plan.claim, mine), evaluate(plan.claim, other)
    result.our_claim, result.ns2_claim = v_ours.status, v_ns2.status
    if v_ns2.status not in ("holds", "fails"):
        result.status = "not measurable"
        result.detail = f"the claim on ns-2's runs: {v_ns2.status}: {v_ns2.detail}"
        return result
    if study.figure:
        try:
            result.our_figure = measure(study.figure, mine)
            result.ns2_figure = measure(study.figure, other)
        except (ClaimError, ClaimSkipped) as exc:
            result.status, result.detail = "not measurable", f"the figure: {exc}"
            return result
    result.status = "same conclusion" if v_ours.status == v_ns2.status else "different conclusion"
    if result.flow_diff is not None:
        result.detail = (f"{result.flows_compared} flows compared; largest difference in delivered packets "
                         f"{100 * result.flow_diff:.2f}% ({result.flow_diff_at})")
    return result


def describe(c: Ns2Check | None) -> str:
    """One table cell: ns-2's figure and conclusion, or why there is none."""
    if c is None:
        return "not run"
    agree = "" if c.flow_diff is None else f"; flows within {_pct(c.flow_diff)} of ours ({c.flows_compared} flows)"
    if c.status in ("same conclusion", "different conclusion"):
        fig = "" if c.ns2_figure is None else f"{_num(c.ns2_figure)} (ours {_num(c.our_figure)}), "
        return f"{fig}{c.ns2_claim} ({c.status}){agree}"
    if c.status in ("not expressible", "not measurable"):
        return f"{c.status}{agree}: {c.detail}"
    return f"{c.status}: {c.detail}"


def _pct(x: float) -> str:
    return "0%" if x == 0 else f"{100 * x:.3g}%"


def _num(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x:.3g}"
