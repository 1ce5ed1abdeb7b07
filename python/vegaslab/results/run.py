"""One run's results (:class:`Results`, what :func:`vegaslab.run` returns): its meta record and
its tables as pandas frames, built from the core's columns on first read (:class:`_Table`), with
the views one reads a run by (the per-flow summary, one value by name, the flows their receiver
window capped), and :func:`concat`, several runs as one :class:`~vegaslab.results.ResultsSet`.

What a run shows in a notebook is :mod:`vegaslab.results.notebook`'s, its text
:mod:`vegaslab.results.text`'s, its directory on disk :mod:`vegaslab.results.directory`'s;
:class:`Results` ties them to the run.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..columns import (FLOW_COLUMNS, LINK_COLUMNS, QUEUE_COLUMNS, SERIES_FLOW_COLUMNS, SERIES_QUEUE_COLUMNS, TABLES,
                       UDP_COLUMNS, Column, core_columns, expanded, frame_columns, is_missing, typed_columns)
from ..outdir import output_dir
from .directory import TraceFile, read_run, write_run
from .frames import LazyPandas, make_frame
from .notebook import HTML_MAX_ROWS, NotebookViews, escape, html_rows, html_table
from .renamed import renamed_column_message
from .sets import ResultsSet, stack
from .text import format_number, format_run, records

if TYPE_CHECKING:
    import pandas as pd

    from ..core import CoreRun
else:
    pd = LazyPandas(globals())


class _Table:
    """A table attribute of :class:`Results` (``res.flows``, ...): a pandas frame built from the
    core's columns on first read (see :mod:`vegaslab.columns`), or the
    frame assigned to it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, res: "Results | None", owner: type | None = None) -> Any:
        if res is None:
            return self
        frame = res._frames.get(self.name)
        if frame is None:
            raw = res._columns.pop(self.name, None)
            frame = make_frame(None if raw is None else expanded(raw), TABLES[self.name][1])
            res._frames[self.name] = frame
        return frame

    def __set__(self, res: "Results", frame: pd.DataFrame) -> None:
        res._columns.pop(self.name, None)
        res._frames[self.name] = frame


class Results(NotebookViews):
    """The outcome of one run. Build it with :meth:`from_json`, :meth:`from_dict` or
    :meth:`from_dir`; :func:`vegaslab.run` returns one.

    The tables are pandas frames (``flows``, ``queues``, ``links``, ``udp``, ``series_flows``,
    ``series_queues``); a run's are built from the core's columns when first read, so printing
    a run and writing its files (:meth:`format_table`, :meth:`to_dir`) never imports pandas."""

    flows = _Table()
    queues = _Table()
    links = _Table()
    udp = _Table()
    series_flows = _Table()
    series_queues = _Table()
    #: The packet trace file held (:attr:`trace_path`), if any.
    _trace: "TraceFile | None" = None

    def __init__(
        self,
        meta: dict,
        flows: pd.DataFrame,
        queues: pd.DataFrame,
        links: pd.DataFrame,
        series_flows: pd.DataFrame,
        series_queues: pd.DataFrame,
        udp: pd.DataFrame | None = None,
    ) -> None:
        self.meta = dict(meta)
        self._columns: dict[str, dict[str, Column] | None] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self.flows = flows
        self.queues = queues
        self.links = links
        self.series_flows = series_flows
        self.series_queues = series_queues
        if udp is not None:
            self.udp = udp
        else:
            self._columns["udp"] = None

    def __copy__(self) -> "Results":
        # The copy's tables are its own attributes, as they were before they became lazy:
        # assigning a table of one never changes the other's.
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._columns, new._frames = dict(self._columns), dict(self._frames)
        return new

    @classmethod
    def _from_core_columns(cls, meta: dict, columns: Mapping[str, Mapping[str, Column] | None]) -> "Results":
        """A run whose tables stay the core's columns (``None``: no rows) until first read."""
        res = cls.__new__(cls)
        res.meta = dict(meta)
        res._frames = {}
        res._columns = {name: columns.get(name) for name in TABLES}
        return res

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_dict(cls, doc: dict) -> "Results":
        """From the parsed JSON document of docs/results-format.md."""
        if not isinstance(doc, dict) or "meta" not in doc:
            raise ValueError("a results document is a JSON object with a 'meta' field")
        series = doc.get("series") or {}
        return cls(
            meta=doc["meta"],
            flows=make_frame(doc.get("flows"), FLOW_COLUMNS),
            queues=make_frame(doc.get("queues"), QUEUE_COLUMNS),
            links=make_frame(doc.get("links"), LINK_COLUMNS),
            series_flows=make_frame(series.get("flows"), SERIES_FLOW_COLUMNS),
            series_queues=make_frame(series.get("queues"), SERIES_QUEUE_COLUMNS),
            udp=make_frame(doc.get("udp"), UDP_COLUMNS),
        )

    @classmethod
    def _from_core(cls, run: "CoreRun") -> "Results":
        """From what :func:`vegaslab.core.run_core` returns: ``meta`` as JSON and every table and
        time series as Arrow columns, kept as numpy columns (:func:`vegaslab.columns.core_columns`)
        until a table is first read; no table crosses as text (at 100,000 flows the tables'
        JSON would be 168 MB). The frames equal :meth:`from_json`'s of the same run's JSON
        document (tests/test_results_columns.py)."""
        record = run.meta
        if not isinstance(record, dict):
            raise ValueError("a results document is a JSON object with a 'meta' field")
        return cls._from_core_columns(record, core_columns(run.tables))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Results":
        """From the JSON text the core returns."""
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dir(cls, path: str | os.PathLike, *, verify: bool = True) -> "Results":
        """Read back what :meth:`to_dir` wrote (the Parquet files and meta.json).

        With ``verify`` (the default) every table file must match the SHA-256 recorded in
        meta.json and no table file may be present that meta.json does not list; otherwise
        :class:`InconsistentResultsError` names the file. ``verify=False`` reads a directory
        anyway (e.g. one written before checksums were recorded), at the reader's risk."""
        meta, tables, trace = read_run(Path(path), verify=verify)
        res = cls(meta=meta, **tables)
        if trace is not None:
            res._keep_trace(trace)
        return res

    # ------------------------------------------------------------------ views

    @property
    def summary(self) -> pd.DataFrame:
        """One row per flow, the numbers one usually looks at, rates in Mbit/s; every column named
        as in :attr:`flows` except the two rates (``goodput_mbps``, ``throughput_mbps``)."""
        f = self.flows
        return pd.DataFrame({
            "flow": f["flow"],
            "cc": f["cc"],
            "start_s": f["start_s"],
            "end_s": f["end_s"],
            "goodput_mbps": f["goodput_bps"] / 1e6,
            "throughput_mbps": f["throughput_bps"] / 1e6,
            "retransmitted_pkts": f["retransmitted_pkts"],
            "timeouts": f["timeouts"],
            "dropped_pkts": f["dropped_pkts"],
            "completion_time_s": f["completion_time_s"],
            "final_cwnd_pkts": f["final_cwnd_pkts"],
            "window_limited_s": self._window_limited_s(),
        })

    #: Columns of :meth:`window_limited_flows` (``meta["window_limited"]``'s keys).
    WINDOW_LIMITED_COLUMNS = ["flow", "window", "limited_s", "share"]

    def _window_limited_s(self) -> pd.Series:
        """Per flow row: seconds its cwnd was at or above its receiver window (0 when never);
        NaN for results made before the core measured it (no ``meta["window_limited"]``)."""
        names = self.flows["flow"]
        if "window_limited" not in self.meta:
            return pd.Series(np.nan, index=names.index, dtype="float64")
        seconds = {r["flow"]: float(r["limited_s"]) for r in self.meta["window_limited"] or []}
        return names.map(lambda n: seconds.get(n, 0.0)).astype("float64")

    @property
    def trace_path(self) -> Path | None:
        """The packet trace of this run (``[trace]`` in the scenario, ``vegaslab run --trace``)
        as a ``pathlib.Path``, or ``None`` without one: where :func:`vegaslab.run` created it
        (its ``trace_dir``, or a private temporary directory removed when these results are
        collected), or, for results read with :meth:`from_dir`, the file in that directory.
        ``meta["trace"]`` has its file name, format, line count and whether ``max_lines`` cut it
        short; :meth:`to_dir` saves it with the tables."""
        if self._trace is not None:
            return self._trace.path
        return None

    def _keep_trace(self, path: Path, *, owned_dir: str | None = None) -> None:
        """Hold the trace file ``path``; ``owned_dir`` (the private directory it was created
        in) is removed when no :class:`Results` holds it any more."""
        self._trace = TraceFile(Path(path), owned_dir)

    def window_limited_flows(self, min_share: float = 0.1) -> pd.DataFrame:
        """The flows capped by their receiver window ``tcp.window`` (ns-2's ``window_``, 20
        packets by default) for at least ``min_share`` of their active time, most capped first:
        columns ``flow``, ``window`` (packets), ``limited_s`` (seconds with cwnd >= window) and
        ``share`` (of ``end_s - start_s``).

        Such a flow sends at most ``window`` packets per round trip whatever its congestion
        control asks: its throughput, cwnd and drops say more about the window than about the
        algorithm (a Reno flow can show cwnd 158 and no drop). The core measures the time at
        each ACK and timeout, where cwnd changes (``meta["window_limited"]``,
        docs/results-format.md). Empty for results made before it did."""
        df = pd.DataFrame(self._window_limited_rows(min_share), columns=self.WINDOW_LIMITED_COLUMNS)
        return df.astype({"flow": "object", "window": "float64", "limited_s": "float64", "share": "float64"})

    def _window_limited_rows(self, min_share: float) -> list[dict]:
        """``meta["window_limited"]``'s rows with a share of at least ``min_share``, the largest
        share first (rows of equal share in their recorded order)."""
        rows = [r for r in self.meta.get("window_limited") or [] if float(r.get("share", 0.0)) >= min_share]
        return sorted(rows, key=lambda r: -float(r["share"]))

    def window_warning(self, min_share: float = 0.1, max_names: int = 4) -> str | None:
        """One line saying which flows :meth:`window_limited_flows` finds and how to raise their
        window, or None when none is capped (what ``vegaslab run`` prints on stderr)."""
        rows = self._window_limited_rows(min_share)
        if not rows:
            return None
        shown = [f"{r['flow']} ({100 * float(r['share']):.0f}% of its time at window {format_number(float(r['window']))})"
                 for r in rows[:max_names]]
        more = f" and {len(rows) - max_names} more" if len(rows) > max_names else ""
        first = rows[0]["flow"]
        return (f"warning: {len(rows)} flow{'s' if len(rows) > 1 else ''} capped by the receiver window "
                f"tcp.window, not by congestion control: {', '.join(shown)}{more}; raise it in the "
                f"flow's tcp table (tcp = {{ window = 1000 }}) or with --set 'flows[{first}].tcp.window=1000'")

    def route_tie_warning(self, max_names: int = 4) -> str | None:
        """One line naming the flows whose route a tie between equal-length paths chose
        (``meta["route_ties"]``: the core breaks such ties by node number, as ns-2 does), or
        None when no route was a tie."""
        ties = self.meta.get("route_ties") or []
        if not ties:
            return None
        shown = [f"{t['flow']} via {' -> '.join(t['path'])} ({t['equal_paths']} equal paths)" for t in ties[:max_names]]
        more = f" and {len(ties) - max_names} more" if len(ties) > max_names else ""
        return (f"warning: {len(ties)} route{'s' if len(ties) > 1 else ''} chosen by a tie between equal-length "
                f"paths, by node number as ns-2 chooses: {', '.join(shown)}{more}; nodes are numbered in the order "
                f"the scenario first names them (docs/scenario-format.md, \"Routes\")")

    def value(self, key: str) -> Any:
        """One number by ``"<name>.<metric>"``, where name is a flow, a queue or a link
        (``"f1.completion_time_s"``, ``"R1->R2.mean_len_pkts"``) or ``meta``. A metric renamed in
        0.3 (:data:`RENAMED_COLUMNS`) is a ``KeyError`` naming its new name."""
        name, sep, metric = key.rpartition(".")
        if not sep or not name:
            raise KeyError(f"{key!r}: expected '<flow|queue|link>.<metric>'")
        if name != "meta" and (renamed := renamed_column_message(metric)):
            raise KeyError(f"{key!r}: {renamed}")
        if name == "meta":
            if metric not in self.meta:
                raise KeyError(f"{key!r}: no field {metric!r} in meta")
            return self.meta[metric]
        # Queues and links share names ("R1->R2"): the first table with both the name and
        # the column answers.
        found_in = []
        for table, col in (("flows", "flow"), ("queues", "queue"), ("links", "link"), ("udp", "source")):
            df = getattr(self, table)
            rows = df[df[col] == name]
            if len(rows):
                found_in.append(table)
                if metric not in df.columns:
                    continue
                v = rows.iloc[0][metric]
                v = v.item() if hasattr(v, "item") else v  # numpy scalar -> Python number
                return float("nan") if v is None or (isinstance(v, float) and math.isnan(v)) else v
        if found_in:
            raise KeyError(f"{key!r}: {' and '.join(found_in)} have no column {metric!r}")
        names = list(self.flows["flow"]) + list(self.queues["queue"]) + list(self.links["link"]) + list(self.udp["source"])
        raise KeyError(f"{key!r}: no flow, queue or link named {name!r} (known: {', '.join(map(str, names))})")

    # ------------------------------------------------------------------ notebook

    def _title(self, what: str) -> str:
        m = self.meta
        return f"{m.get('scenario', '')} seed {m.get('seed', '?')}: {what}".strip(": ")

    def _repr_html_(self) -> str:
        """Jupyter's view: scenario, seed, simulated time and versions; the per-flow
        :attr:`summary`; each table with its row count and which time series were recorded.
        Every name and value is HTML-escaped."""
        m, esc = self.meta, escape
        prov = m.get("provenance") if isinstance(m.get("provenance"), dict) else {}
        facts = [f"seed {esc(m.get('seed', '?'))}"]
        duration = m.get("duration_s")
        if duration is not None:
            facts.append(f"{esc(format_number(duration) if isinstance(duration, (int, float)) else duration)} s simulated")
        if m.get("events") is not None:
            events = m["events"]
            facts.append(f"{events:,} events" if isinstance(events, int) else f"{esc(events)} events")
        if prov.get("vegaslab_version") is not None:
            facts.append(f"vegaslab {esc(prov['vegaslab_version'])}")
        if m.get("version") is not None:
            facts.append(f"core {esc(m['version'])}")
        rows = [(name, len(getattr(self, name)), f"one row per {key}") for name, (key, _c) in TABLES.items()
                if not name.startswith("series_")]
        rows += self._series_html()
        return (f'<div class="vegaslab-results"><p><strong>{esc(m.get("scenario", "?"))}</strong> &middot; '
                f"{' &middot; '.join(facts)}</p>"
                f"{html_table(self.summary, HTML_MAX_ROWS)}{html_rows(rows)}</div>")

    # ------------------------------------------------------------------ output

    def to_dir(self, path: str | os.PathLike, *, csv: bool = False) -> list[Path]:
        """Write every table as ``<name>.parquet`` (and ``<name>.csv`` with ``csv=True``) plus
        ``meta.json`` into ``path``, all or nothing: into a temporary directory beside it that
        replaces ``path`` once complete (see :mod:`vegaslab.results.directory`; :class:`~vegaslab.outdir.OutputDirError`
        when ``path`` cannot be used). Returns the paths written."""
        target = Path(path)
        with output_dir(target) as tmp:
            names = [p.name for p in self.write_files(tmp, csv=csv)]
        return [target / n for n in names]

    def write_files(self, directory: str | os.PathLike, *, csv: bool = False) -> list[Path]:
        """Write the tables (Parquet, plus CSV copies with ``csv=True``) and meta.json (with
        the tables' SHA-256) into an existing ``directory``, in place. Prefer :meth:`to_dir`;
        this is for callers that add more files (plots, job.json) inside :func:`output_dir`
        before the directory is renamed. Returns the paths written; the files are
        :func:`~vegaslab.results.directory.write_run`'s (Parquet the format, CSV on request)."""
        return write_run(Path(directory), self.meta, self._typed_columns, lambda name: getattr(self, name), self._trace,
                         csv=csv)

    def table_records(self, name: str) -> list[dict[str, Any]]:
        """Table ``name`` (``"flows"``, ``"queues"``, ...) as one dict per row, the rows and
        columns of ``getattr(self, name)``, its values Python scalars: a missing number NaN, a
        missing text ``None``. While the table is still the core's columns (it has not been read
        as a frame), without pandas: what ``vegaslab run --json`` prints as its flows (the
        command imports no pandas)."""
        if name not in TABLES:
            raise ValueError(f"name: must be one of {', '.join(TABLES)}, got {name!r}")
        frame = self._frames.get(name)
        if frame is None:
            return records(expanded(self._typed_columns(name)), is_missing)
        return records(frame_columns(frame), is_missing)  # the frame as it is (a user may have edited it)

    def _typed_columns(self, name: str) -> dict[str, Column]:
        """Table ``name`` as typed numpy columns (:func:`vegaslab.columns.typed_columns`): from
        the core's columns while the table is still those, else from its pandas frame."""
        documented = TABLES[name][1]
        if name not in self._frames:
            return typed_columns(self._columns.get(name), documented)
        return typed_columns(frame_columns(self._frames[name]), documented)

    def format_table(self, max_queues: int = 10, max_flows: int = 100) -> str:
        """Fixed-width text: a header line, the per-flow summary (the first ``max_flows`` flows,
        and a line saying how many more) and the busiest queues: a run of 20,000 flows would
        print 20,000 lines; every flow stays in ``flows`` and flows.parquet."""
        return format_run(self.meta, self._typed_columns, max_queues=max_queues, max_flows=max_flows)

    @classmethod
    def concat(cls, results: "Sequence[Results] | Mapping[Any, Results]", keys: Sequence[Any] | None = None,
               names: Sequence[str] | str = ("run",)) -> "ResultsSet":
        """Several runs as one :class:`ResultsSet`: see :func:`concat`."""
        return concat(results, keys=keys, names=names)

    def __repr__(self) -> str:
        return self.format_table()

    def __str__(self) -> str:
        return self.format_table()


def concat(results: "Sequence[Results] | Mapping[Any, Results]", keys: Sequence[Any] | None = None,
           names: Sequence[str] | str = ("run",)) -> ResultsSet:
    """Several runs as one :class:`ResultsSet` whose tables have run-label columns in front.

    ``keys`` labels the runs, one per run (a tuple per run when ``names`` has several
    columns); a mapping's keys are used when ``results`` is one; by default each run is
    labelled ``"<scenario> seed <seed>"`` from its meta (only with one label column). The
    labels must tell the runs apart. ``names`` are the label columns (default ``("run",)``)
    and may not be a column the tables already have."""
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    if not names or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise ValueError(f"names: one or more distinct column names, got {names!r}")
    if isinstance(results, Mapping):
        if keys is not None:
            raise ValueError("keys: give either a mapping of results or keys, not both")
        keys, results = list(results.keys()), list(results.values())
    results = list(results)
    if not results:
        raise ValueError("results: nothing to concatenate (an empty list)")
    for i, r in enumerate(results):
        if not isinstance(r, Results):
            raise TypeError(f"results[{i}]: expected a vegaslab Results, got {type(r).__name__}")
    if keys is None:
        if len(names) != 1:
            raise ValueError(f"keys: required with more than one label column (names={names!r}): one tuple per run")
        keys = [f"{r.meta.get('scenario', '?')} seed {r.meta.get('seed', '?')}" for r in results]
    keys = list(keys)
    if len(keys) != len(results):
        raise ValueError(f"keys: one per run, got {len(keys)} keys for {len(results)} runs")
    labels = []
    for i, k in enumerate(keys):
        parts = k if isinstance(k, tuple) else (k,)
        if len(parts) != len(names):
            raise ValueError(f"keys[{i}]: {k!r} has {len(parts)} part(s), names has {len(names)}: {names!r}")
        labels.append(parts)
    seen: dict[tuple, int] = {}
    for i, parts in enumerate(labels):
        if parts in seen:
            raise ValueError(f"keys[{i}]: {keys[i]!r} labels run {seen[parts]} too; give keys= that tell the runs "
                             "apart (e.g. the same scenario and seed run with different overrides)")
        seen[parts] = i
    for name, (_key, columns) in TABLES.items():
        taken = [n for n in names if any(n in r_.columns for r_ in (getattr(r, name) for r in results))]
        if taken:
            raise ValueError(f"names: {', '.join(map(repr, taken))} is already a column of {name}; choose another name")
    runs = {(parts[0] if len(names) == 1 else parts): r for parts, r in zip(labels, results)}
    tables = {name: stack([getattr(r, name) for r in results], labels, names, columns)
              for name, (_key, columns) in TABLES.items()}
    scalar = (str, int, float, bool, type(None))
    meta = pd.DataFrame([{**dict(zip(names, parts)), **{k: v for k, v in r.meta.items() if isinstance(v, scalar)}}
                         for parts, r in zip(labels, results)])
    return ResultsSet(runs, names, tables, meta)
