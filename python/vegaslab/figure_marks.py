"""What a run's figures show besides its series: the scenario's title, the events of the run in
time (links going down and up, delay changes, flows starting and stopping), its RED queues'
thresholds, and flows named by their algorithm as the papers name them.

Everything is read from what the run records: the normalised scenario (``meta.provenance.scenario``,
docs/results-format.md; the core owns its fields), the ``flows`` table, and, for the title, the
scenario file's free-text ``[meta] title`` (the core reads only ``meta.id``). Results without a
record (a frame built by hand, a :class:`~vegaslab.results.ResultsSet`) simply get no marks.
"""

from __future__ import annotations

import functools
import math
import os
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

#: Delay changes beyond this many (a delay trace: thousands of points) are not marked one by one;
#: the legend says that the delay varies.
MAX_DELAY_MARKS = 10
#: Flow starts and stops are marked for at most this many flows (a 150-flow dumbbell's staggered
#: starts would only be a comb along the top).
MAX_FLOW_MARKS = 12
#: Colours of the marks: a link down (shaded), a delay change (dash-dot line).
DOWN_COLOR, DELAY_COLOR = "#e74c3c", "#555555"


@dataclass(frozen=True)
class Event:
    """One thing that happens during a run, at ``time_s`` (and, for ``down``, until ``until_s``)."""

    #: ``"down"`` (a link down until ``until_s``), ``"delay"`` (a link's delay changes),
    #: ``"start"`` or ``"stop"`` (a flow's application).
    kind: str
    time_s: float
    #: The link ``"A-B"`` or the flow.
    subject: str
    #: What the legend says, e.g. ``"S1-R1 delay 100 ms at 20 s"``.
    text: str
    until_s: float | None = None


def normalised_scenario(meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The normalised scenario a run's ``meta`` records (``provenance.scenario``), or ``None``."""
    scenario = (meta.get("provenance") or {}).get("scenario") if isinstance(meta, Mapping) else None
    return scenario if isinstance(scenario, Mapping) else None


@functools.lru_cache(maxsize=64)
def _file_title(path: str, mtime_ns: int) -> str | None:
    try:
        with open(path, "rb") as f:
            title = (tomllib.load(f).get("meta") or {}).get("title")
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return str(title) if title else None


def scenario_title(meta: Mapping[str, Any] | None) -> str:
    """The scenario's ``[meta] title`` (read from the file the run's ``meta.source`` names), else
    its name (``meta.scenario``: its ``meta.id`` or the file's stem), else ``""``."""
    meta = meta if isinstance(meta, Mapping) else {}
    source = meta.get("source")
    if isinstance(source, str) and source.endswith(".toml"):
        try:
            title = _file_title(source, os.stat(source).st_mtime_ns)
        except OSError:
            title = None
        if title:
            return title
    name = str(meta.get("scenario") or (Path(source).stem if isinstance(source, str) else ""))
    return "" if name.startswith("<") else name  # "<string>": a scenario given as text has no name


def wrapped(text: str, width: int = 90) -> str:
    """``text`` broken into lines of at most ``width`` characters (a long title must not run off
    the figure)."""
    return "\n".join(textwrap.wrap(text, width)) if text else ""


def _ms(ns: float) -> str:
    return f"{ns / 1e6:g} ms"


def link_events(scenario: Mapping[str, Any], duration_s: float = math.inf) -> list[Event]:
    """Each link's ``down`` intervals (``down_ns``) and delay changes (``delay_schedule_ns`` of
    either direction, a change both directions make marked once) in the normalised scenario that
    begin within the run's ``duration_s``; more than :data:`MAX_DELAY_MARKS` delay changes are one
    ``delay-trace`` event naming the links."""
    nodes = list(scenario.get("nodes") or [])
    out: list[Event] = []
    delays: list[Event] = []
    for link in scenario.get("links") or []:
        try:
            name = f"{nodes[link['a']]}-{nodes[link['b']]}"
        except (KeyError, IndexError, TypeError):
            continue
        for a, b in link.get("down_ns") or []:
            if a / 1e9 < duration_s:
                out.append(Event("down", a / 1e9, name, f"{name} down", until_s=min(b / 1e9, duration_s)))
        seen = set()
        for side in ("forward", "reverse"):
            for at, delay in (link.get(side) or {}).get("delay_schedule_ns") or []:
                if (at, delay) in seen or at / 1e9 >= duration_s:  # both directions changed alike: one mark
                    continue
                seen.add((at, delay))
                delays.append(Event("delay", at / 1e9, name, f"{name} delay {_ms(delay)} at {at / 1e9:g} s"))
    if len(delays) > MAX_DELAY_MARKS:
        links = sorted({e.subject for e in delays})
        return out + [Event("delay-trace", math.nan, ", ".join(links), f"{', '.join(links)}: delay varies "
                            f"({len(delays)} changes, not marked)")]
    return out + sorted(delays, key=lambda e: e.time_s)


def flow_events(names: Sequence[Any], starts: Sequence[float], ends: Sequence[float],
                duration_s: float = math.inf) -> list[Event]:
    """Starts after 0 and ends before ``duration_s`` of the flows ``names`` (the ``flows`` table's
    ``flow``, ``start_s`` and ``end_s``), for at most :data:`MAX_FLOW_MARKS` flows (none beyond)."""
    if len(names) > MAX_FLOW_MARKS:
        return []
    duration = float(duration_s) if duration_s and math.isfinite(float(duration_s)) else math.inf
    out = [Event("start", float(t), str(n), f"{n} starts") for n, t in zip(names, starts) if np.isfinite(t) and t > 0]
    out += [Event("stop", float(t), str(n), f"{n} ends") for n, t in zip(names, ends)
            if np.isfinite(t) and t < duration - 1e-9]
    return out


def red_thresholds(scenario: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """``{"A->B": (min_th, max_th)}`` in packets for every RED queue of the normalised scenario
    (its ``queue.min_th`` and ``queue.max_th``)."""
    if not scenario:
        return {}
    nodes = list(scenario.get("nodes") or [])
    out = {}
    for link in scenario.get("links") or []:
        for side, (a, b) in (("forward", (link.get("a"), link.get("b"))), ("reverse", (link.get("b"), link.get("a")))):
            queue = (link.get(side) or {}).get("queue") or {}
            if queue.get("kind") == "red" and "min_th" in queue and "max_th" in queue:
                try:
                    out[f"{nodes[a]}->{nodes[b]}"] = (float(queue["min_th"]), float(queue["max_th"]))
                except (IndexError, TypeError):
                    continue
    return out


@functools.lru_cache(maxsize=None)
def algorithm_name(cc: str) -> str:
    """An algorithm's name as the papers print it ("Vegas-A", "NewReno", "CUBIC"): the core
    registry's ``display`` name of ``cc``; ``cc`` itself when the registry does not know it
    (a Python controller, ``py:package.module:Class``)."""
    from . import registry

    try:
        return registry.algorithm(cc).display
    except KeyError:
        return cc


def paper_flow_names(ccs: Mapping[str, str], flows: Iterable[str]) -> dict[str, str]:
    """How a paper names each of ``flows`` given ``{flow: cc}``: by its algorithm ("Vegas-A")
    when no other of ``flows`` runs it, else "connection k (Vegas-A)" with k its place among
    ``flows``; a flow without an algorithm (UDP) keeps its name."""
    flows = [str(f) for f in flows]
    algos = {f: algorithm_name(ccs[f]) for f in flows if f in ccs}
    counts: dict[str, int] = {}
    for a in algos.values():
        counts[a] = counts.get(a, 0) + 1
    out = {}
    for k, f in enumerate(flows, start=1):
        a = algos.get(f)
        out[f] = f if a is None else a if counts[a] == 1 else f"connection {k} ({a})"
    return out


def draw_events(ax, marks: Sequence[Event], colors: Mapping[str, Any] | None = None,
                names: Mapping[str, str] | None = None) -> list:
    """Mark ``marks`` on ``ax`` and return their legend handles, one per kind and subject: a link
    down is shaded over its interval, a delay change is a dash-dot vertical line, a flow's start
    and end are triangles on the top edge (in the flow's colour from ``colors``, named in the
    legend as ``names`` names it), outside the data (the y axis ends above the series' peak)."""
    from matplotlib.lines import Line2D

    colors, names = colors or {}, names or {}
    handles: list = []
    labelled: set[tuple[str, str]] = set()
    for e in marks:
        first = (e.kind, e.subject) not in labelled
        labelled.add((e.kind, e.subject))
        if e.kind == "down" and e.until_s is not None:
            span = ax.axvspan(e.time_s, e.until_s, color=DOWN_COLOR, alpha=0.15, lw=0, zorder=0,
                              label=f"{e.subject} down" if first else "_nolegend_")
            if first:
                handles.append(span)
        elif e.kind == "delay":
            handles.append(ax.axvline(e.time_s, color=DELAY_COLOR, ls="-.", lw=1.0, zorder=1.5, label=e.text))
        elif e.kind == "delay-trace":
            handles.append(Line2D([], [], color=DELAY_COLOR, ls="none", label=e.text))
    for kind, marker, what in (("start", "v", "flow starts"), ("stop", "^", "flow ends")):
        chosen = [e for e in marks if e.kind == kind]
        for e in chosen:
            ax.plot([e.time_s], [1.0], transform=ax.get_xaxis_transform(), marker=marker, ms=6, ls="none",
                    color=colors.get(e.subject, DELAY_COLOR), clip_on=False, zorder=3, label=f"_{e.text}")
        if chosen:
            who = (", ".join(names.get(e.subject, e.subject) for e in chosen) if len(chosen) <= 3
                   else f"{len(chosen)} flows")
            handles.append(Line2D([], [], marker=marker, ms=6, ls="none", color=DELAY_COLOR, label=f"{what} ({who})"))
    return handles


def outside_legend(ax, handles: Sequence, *, fontsize: str | float = "small"):
    """A legend of ``handles`` to the right of ``ax``, outside the data (the layout engine makes
    room for it); ``None`` without handles."""
    if not handles:
        return None
    return ax.legend(handles=list(handles), loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     fontsize=fontsize, frameon=False)
