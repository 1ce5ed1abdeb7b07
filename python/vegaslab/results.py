"""`Results`: one run's JSON document (docs/results-format.md) as pandas tables (built on
first use: printing and writing a run need no pandas, see :mod:`vegaslab.columns`).

Tables (one row per entity, the entity's name as a column):

- ``flows``  (column ``flow``): per-flow counters and rates
- ``queues`` (column ``queue``, e.g. ``"R1->R2"``): queue counters and time-weighted length
- ``links``  (column ``link``): bytes sent and utilisation per direction
- ``udp``    (column ``source``): UDP sources and their sinks (sent/received/dropped)

Time series (long format, one row per sample):

- ``series_flows``:  time_s, flow, cwnd_pkts, ssthresh_pkts, rtt_s, throughput_bps, active (0/1)
- ``series_queues``: time_s, queue, length_pkts

Column names end in their unit (docs/results-format.md, "Column names"):
``_s``, ``_bps``, ``_pkts``, ``_bytes``; dimensionless ratios end in ``_ratio``; event counts
named by a plural noun (``timeouts``, ``fast_retransmits``) and flags keep their names. The
names of 0.2 and before are in :data:`RENAMED_COLUMNS`, the one place they are listed.

``summary`` is a compact per-flow view in human units for printing (with ``window_limited_s``,
the seconds a flow's cwnd was at or above its receiver window); ``format_table()`` (and
``repr``) renders the run as fixed-width text; ``window_limited_flows()`` and
``window_warning()`` name the flows their receiver window capped.

Column dtypes follow from the column's name (text, ``int64`` counts, ``float64``), empty tables
included: :data:`TEXT_COLUMNS`, :data:`COUNT_COLUMNS`. For notebooks: an HTML view
(``_repr_html_``), ``plot_cwnd`` / ``plot_throughput`` / ``plot_rtt`` / ``plot_queue`` that draw
on a matplotlib ``ax`` and return it, and :func:`concat` (several runs as a :class:`ResultsSet`).

Output directories: :meth:`Results.to_dir` writes into a fresh temporary
directory beside the target and renames it into place only when every file is written, so a
failed or interrupted write never leaves new tables next to an old ``meta.json``. meta.json
records the SHA-256 of every table file it belongs with (``tables_sha256``) and
:meth:`Results.from_dir` refuses a directory whose files do not match. An existing target is
replaced only when it holds nothing but files vegaslab writes (tables, meta.json, job.json,
PNG plots), so ``--out .`` can never delete a user's files. :func:`vegaslab.outdir.check_output_dir`
makes the same checks up front, before anything is simulated (:mod:`vegaslab.outdir`).
"""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import shutil
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .errors import VegaslabError
from .safe_io import sha256_file as _sha256_file
from .columns import (COUNT_COLUMNS, FLOW_COLUMNS, INTEGRITY_KEY, LINK_COLUMNS, QUEUE_COLUMNS, SERIES_FLOW_COLUMNS,  # noqa: F401
                      SERIES_QUEUE_COLUMNS, TABLES, TEXT_COLUMNS, UDP_COLUMNS, Column, column_values, core_columns,
                      expanded, frame_columns, is_missing, meta_json, missing_column, typed_column, typed_columns,
                      write_parquet)
from .outdir import output_dir

if TYPE_CHECKING:
    import pandas as pd

    from .core import CoreRun
else:
    class _LazyPandas:
        """``pd`` until pandas is first used: then the module itself, in this module's globals.

        Importing pandas costs about 0.3 s of CPU, and ``vegaslab run`` needs none of it to print
        its summary and write its Parquet files (:mod:`vegaslab.columns`). Every use of ``pd``
        here is inside a function, so the first one imports it."""

        def __getattr__(self, name: str) -> Any:
            import pandas

            globals()["pd"] = pandas
            return getattr(pandas, name)

    pd = _LazyPandas()

#: The release that renamed the columns of :data:`RENAMED_COLUMNS`.
RENAMED_IN = "0.3"
#: Old column name -> new, for every table, the series and :attr:`Results.summary`: the one list
#: of the renames of 0.3, read by everything that meets an old name. No old name maps to two new
#: ones, so one flat map serves every table. For one version, results written before
#: (``Results.from_dir``, ``Results.from_dict``, the results store's tables) are read with their
#: columns renamed, while an old name *asked for* (a ``Results.value`` key, a claim's metric, a
#: figure's column) is an error naming the new one (:func:`renamed_column_message`), so a stale
#: notebook or catalog fails loudly instead of reading NaN. The series' algorithm variables alpha,
#: beta, inc and trend keep their names: they are the papers' parameters (in packets) under the
#: papers' names; ``base_rtt`` is a time and becomes ``base_rtt_s``.
RENAMED_COLUMNS: dict[str, str] = {
    # flows
    "data_pkts_sent": "sent_pkts", "data_bytes_sent": "sent_bytes", "final_cwnd": "final_cwnd_pkts",
    "mean_cwnd": "mean_cwnd_pkts", "final_ssthresh": "final_ssthresh_pkts",
    # queues
    "limit": "limit_pkts", "arrivals": "arrived_pkts", "drops": "dropped_pkts",
    "departures": "departed_pkts", "backlog": "backlog_pkts", "loss_rate": "loss_ratio",
    "mean_len": "mean_len_pkts", "std_len": "std_len_pkts", "max_len": "max_len_pkts",
    "errors": "error_pkts", "early_drops": "early_dropped_pkts", "forced_drops": "forced_dropped_pkts",
    # links
    "bytes_sent": "sent_bytes", "utilisation": "utilisation_ratio",
    # series_flows (and algorithm variables), series_queues
    "time": "time_s", "cwnd": "cwnd_pkts", "ssthresh": "ssthresh_pkts", "rtt": "rtt_s",
    "base_rtt": "base_rtt_s", "length": "length_pkts", "avg": "avg_pkts",
    # summary
    "retransmitted": "retransmitted_pkts", "dropped": "dropped_pkts", "completion_s": "completion_time_s",
}


def renamed_column_message(name: str) -> str | None:
    """``"'final_cwnd' was renamed 'final_cwnd_pkts' in 0.3"`` for an old column name, else None."""
    new = RENAMED_COLUMNS.get(name)
    return None if new is None else f"{name!r} was renamed {new!r} in {RENAMED_IN}"


def upgrade_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the old column names of :data:`RENAMED_COLUMNS` renamed (results written by
    0.2 and before); a frame that already has the new names is returned unchanged. An old
    column whose new name is also present is dropped (the new one wins)."""
    old = [c for c in df.columns if isinstance(c, str) and c in RENAMED_COLUMNS]
    if not old:
        return df
    clash = [c for c in old if RENAMED_COLUMNS[c] in df.columns]
    return df.drop(columns=clash).rename(columns={c: RENAMED_COLUMNS[c] for c in old if c not in clash})

class InconsistentResultsError(VegaslabError, ValueError):
    """A results directory whose table files do not belong with its meta.json (a mix of two
    runs, a truncated file, or a directory written before checksums were recorded)."""


@functools.cache
def text_dtype() -> Any:
    """pandas' dtype for text (what a non-empty table's name column gets): ``str`` in pandas 3,
    ``object`` in pandas 2. A function, not a constant: the module imports pandas only on use."""
    return pd.Series(["text"]).dtype


def _typed(name: str, col: pd.Series, documented: bool) -> pd.Series:
    """``col`` as the dtype its name calls for (see :data:`TEXT_COLUMNS`, :data:`COUNT_COLUMNS`);
    an undocumented column the core adds is left as pandas read it, except that one holding
    nothing but nulls becomes ``float64`` (an algorithm variable no flow has).

    The rules are :func:`vegaslab.columns.typed_column`'s, applied to the column's values, so
    a frame and the core's typed columns are typed alike (and write the same Parquet bytes);
    only text differs, as pandas' text dtype (:func:`text_dtype`)."""
    if name in TEXT_COLUMNS:
        return col if col.dtype == text_dtype() else col.astype(text_dtype())
    values = column_values(col)
    typed = typed_column(name, values, documented)
    fixed = documented or name in COUNT_COLUMNS  # a type the rules fix (pandas' Int64 is not int64)
    if typed is values and (col.dtype == typed.dtype or not fixed):
        return col
    return pd.Series(typed, index=col.index, name=col.name)


def _missing(name: str, rows: int) -> pd.Series:
    """A documented column the document does not have: :func:`vegaslab.columns.missing_column`
    as a Series (text in pandas' text dtype)."""
    if name in TEXT_COLUMNS:
        return pd.Series([None] * rows, dtype=text_dtype())
    return pd.Series(missing_column(name, rows))


def _typed_frame(df: pd.DataFrame, documented: Iterable[str]) -> pd.DataFrame:
    """Every column of ``df`` converted by :func:`_typed`, in place of the old ones."""
    documented = set(documented)
    for col in list(df.columns):
        typed = _typed(col, df[col], col in documented)
        if typed is not df[col]:
            df[col] = typed
    return df


def make_frame(rows: Any, columns: Sequence[str]) -> pd.DataFrame:
    """DataFrame from a list of row dicts or a dict of columns; documented columns first,
    any extra columns the core adds kept after them, missing ones present (as NA), each
    column in the dtype its name calls for (:func:`_typed`)."""
    if rows is None:
        rows = []
    df = upgrade_columns(pd.DataFrame(rows))
    for col in columns:
        if col not in df.columns:
            df[col] = _missing(col, len(df)).set_axis(df.index)
    _typed_frame(df, columns)
    extra = [c for c in df.columns if c not in columns]
    return df[list(columns) + extra].reset_index(drop=True)


class _NotebookViews:
    """What :class:`Results` and :class:`ResultsSet` share for notebooks: plots
    that take and return a matplotlib ``Axes``, and an HTML view for Jupyter. matplotlib is
    imported only when a plot is drawn. The tables are those of :class:`Results`; a
    :class:`ResultsSet`'s have its run-label columns in front (``_label_columns``), and its
    lines are labelled ``"<run label>: <flow>"``."""

    _label_columns: tuple[str, ...] = ()
    series_flows: pd.DataFrame
    series_queues: pd.DataFrame
    flows: pd.DataFrame

    def _title(self, what: str) -> str:  # pragma: no cover - overridden
        return what

    def _line_keys(self, frame: pd.DataFrame, key: str) -> np.ndarray:
        """Each row's line label: its ``key`` value, after the run labels for a set."""
        labels = frame[key].astype(str).to_numpy(dtype=object)
        for col in reversed(self._label_columns):
            labels = frame[col].astype(str).to_numpy(dtype=object) + ": " + labels
        return labels

    def _samples(self, table: str, value: str, key: str, only: Iterable[str] | None, monitor: str,
                 option: str) -> pd.DataFrame:
        """The rows of ``table`` with a ``value``, limited to the names in ``only``; a clear
        error when there are none (the monitor was off) or a name has no samples."""
        frame = getattr(self, table)
        s = frame[frame[value].notna()] if value in frame.columns else frame.iloc[:0]
        if s.empty:
            raise ValueError(f"{self._title('')}: no {value} samples in {table} (the run had {monitor} "
                             f"off; switch it on in [monitor] or with --set {monitor}=true)".lstrip(": "))
        if only is not None:
            wanted = [only] if isinstance(only, str) else list(only)
            known = list(dict.fromkeys(s[key]))
            unknown = [str(n) for n in wanted if n not in known]
            if unknown:
                raise ValueError(f"{option}: no {value} samples for {', '.join(map(repr, unknown))} "
                                 f"(with samples: {', '.join(map(str, known))})")
            s = s[s[key].isin(wanted)]
        return s

    def plot_cwnd(self, ax=None, flows: Iterable[str] | None = None):
        """Congestion window (packets) over time, one line per flow (``flows``: only these),
        on ``ax`` or a new figure; returns the axes. Needs ``monitor.cwnd``."""
        from . import plots

        s = self._samples("series_flows", "cwnd_pkts", "flow", flows, "monitor.cwnd", "flows")
        title = None if ax is not None else self._title("congestion window")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["cwnd_pkts"], self._line_keys(s, "flow"), lw=1.2)
        plots.finish_axes(ax, ylabel="cwnd (packets)", title=title)
        return ax

    def plot_throughput(self, ax=None, flows: Iterable[str] | None = None, *, running_mean: bool = False,
                        unit: str | None = None):
        """Throughput per sample bin over time, one line per flow; ``running_mean=True`` draws
        each flow's mean since its start instead (the Vegas-A paper's "average throughput").
        ``unit``: bit/s, kbit/s, Mbit/s or Gbit/s (default: Mbit/s from a 1 Mbit/s peak up,
        else kbit/s), named in the axis label. Returns the axes. Needs ``monitor.throughput``."""
        from . import plots

        s = self._samples("series_flows", "throughput_bps", "flow", flows, "monitor.throughput", "flows")
        scale, unit = plots.rate_unit(float(s["throughput_bps"].max()), unit)
        if running_mean:  # from each flow's start, as the PNG figure does
            keys = [*self._label_columns, "flow"]
            starts = s[keys].merge(self.flows[[*keys, "start_s"]], on=keys, how="left")["start_s"].to_numpy()
            s = s[~(s["time_s"].to_numpy() < starts)]
        title = None if ax is not None else self._title("throughput" + (" (running mean)" if running_mean else ""))
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["throughput_bps"] / scale, self._line_keys(s, "flow"),
                         transform=plots.running_mean if running_mean else None, lw=1.6 if running_mean else 0.8)
        plots.finish_axes(ax, ylabel=f"throughput ({unit})", title=title)
        return ax

    def plot_rtt(self, ax=None, flows: Iterable[str] | None = None, *, unit: str = "ms"):
        """Each flow's latest RTT sample over time, in ``unit`` (``"ms"`` or ``"s"``), one line
        per flow; returns the axes. Needs ``monitor.cwnd`` (the RTT is sampled with it)."""
        from . import plots

        if unit not in plots.TIME_UNITS:
            raise ValueError(f"unit: must be one of {', '.join(plots.TIME_UNITS)}, got {unit!r}")
        s = self._samples("series_flows", "rtt_s", "flow", flows, "monitor.cwnd", "flows")
        title = None if ax is not None else self._title("round-trip time")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["rtt_s"] / plots.TIME_UNITS[unit], self._line_keys(s, "flow"), lw=1.0)
        plots.finish_axes(ax, ylabel=f"RTT ({unit})", title=title)
        return ax

    def plot_queue(self, ax=None, queues: Iterable[str] | None = None):
        """Queue length (packets waiting) over time as steps, one line per monitored queue:
        ``queues`` names them, by default the busiest (highest mean length) up to
        ``plots.MAX_QUEUES``, as in queue.png. Returns the axes. Needs ``monitor.queues`` or
        ``monitor.all_queues``."""
        from . import plots

        s = self._samples("series_queues", "length_pkts", "queue", queues, "monitor.queues", "queues")
        keys = self._line_keys(s, "queue")
        if queues is None:
            means = pd.Series(s["length_pkts"].to_numpy(dtype=float)).groupby(keys, sort=False).mean()
            busiest = means.sort_values(ascending=False, kind="stable").index[:plots.MAX_QUEUES]
            keep = np.isin(keys, np.asarray(busiest, dtype=object))
            s, keys = s[keep], keys[keep]
        title = None if ax is not None else self._title("queue length")
        ax = plots.new_axes() if ax is None else ax
        plots.draw_lines(ax, s["time_s"], s["length_pkts"], keys, drawstyle="steps-post", lw=1.0)
        plots.finish_axes(ax, ylabel="queue length (packets)", title=title)
        return ax

    def _series_html(self) -> list[tuple[str, int, str]]:
        """``(table, rows, what it holds)`` of the two time-series tables for the HTML view."""
        out = []
        for table, key, monitors in (("series_flows", "flow", "monitor.cwnd / monitor.throughput"),
                                     ("series_queues", "queue", "monitor.queues")):
            frame = getattr(self, table)
            skip = {"time_s", key, *self._label_columns}
            present = [c for c in frame.columns if c not in skip and frame[c].notna().any()]
            if len(frame) and present:
                what = f"{', '.join(present)} of {frame[key].nunique()} {key}{'s' if frame[key].nunique() != 1 else ''}"
            else:
                what = f"none ({monitors} off)"
            out.append((table, len(frame), what))
        return out


def _html_table(df: pd.DataFrame, max_rows: int) -> str:
    """``df`` as an escaped HTML table of at most ``max_rows`` rows (and a line saying how
    many more there are)."""
    shown = df.head(max_rows)
    text = shown.to_html(index=False, escape=True, border=0, na_rep="-", classes="vegaslab",
                         float_format=lambda v: f"{v:.6g}")
    if len(df) > max_rows:
        text += f"<p>... {len(df) - max_rows} more rows</p>"
    return text


def _html_rows(rows: Iterable[tuple[str, int, str]]) -> str:
    esc = _escape
    body = "".join(f"<tr><td><code>{esc(t)}</code></td><td>{n:,}</td><td>{esc(w)}</td></tr>" for t, n, w in rows)
    return f'<table class="vegaslab" border="0"><tr><th>table</th><th>rows</th><th>holds</th></tr>{body}</table>'


def _escape(value: Any) -> str:
    import html

    return html.escape(str(value), quote=True)


#: Rows of the per-flow summary the HTML view shows (the rest are counted).
HTML_MAX_ROWS = 20


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


#: What :meth:`Results.from_dir` requires of ``meta.json`` before it uses a field (JSON
#: Schema): an object whose checksums, when present, map plain names to SHA-256 digests, and
#: whose packet trace, when present, names its file. The rest is the run's record, shown as is.
META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        INTEGRITY_KEY: {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
        "trace": {"type": ["object", "null"], "properties": {"file": {"type": "string"}}},
        "seed": {"type": ["integer", "null"]},
        "scenario": {"type": ["string", "null"]},
    },
}

#: The largest ``meta.json`` :meth:`Results.from_dir` reads (its provenance holds the
#: normalised scenario, with a delay trace's points: a 64 MiB trace file's are under 256 MiB).
MAX_META_BYTES = 256 << 20


class _TraceFile:
    """A run's packet trace file; a private temporary directory it was created in is removed
    when the last :class:`Results` holding it (copies included) is collected."""

    def __init__(self, path: Path, owned_dir: str | None) -> None:
        self.path = path
        if owned_dir is not None:
            weakref.finalize(self, shutil.rmtree, owned_dir, True)

    def __copy__(self) -> "_TraceFile":
        return self  # one file, shared: copies of a Results keep it alive together

    def __deepcopy__(self, memo: dict) -> "_TraceFile":
        return self

    def save(self, directory: Path, name: str) -> Path:
        """The trace as ``directory/name``, a new file (never replacing one, never through a
        link): a hard link when both are on one file system, else a copy."""
        from .safe_io import create_new, open_regular, plain_name

        target = Path(directory) / plain_name(name, "meta.trace.file")
        try:
            os.link(self.path, target, follow_symlinks=False)
            return target
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                raise
        fd, target = create_new(directory, name)
        with os.fdopen(fd, "wb") as out, open_regular(self.path) as src:
            shutil.copyfileobj(src, out, 1 << 20)
        return target


class Results(_NotebookViews):
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
    _trace: "_TraceFile | None" = None

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
        from .safe_io import ForeignFileError, read_json

        root = Path(path)
        try:
            meta = read_json(root / "meta.json", max_bytes=MAX_META_BYTES, schema=META_SCHEMA)
        except ForeignFileError as exc:
            raise InconsistentResultsError(str(exc)) from None
        if not isinstance(meta, dict):
            raise InconsistentResultsError(f"{root / 'meta.json'}: not a JSON object")
        recorded = meta.pop(INTEGRITY_KEY, None)
        if verify:
            _verify_tables(root, recorded)
        tables = {}
        for name, (_, columns) in TABLES.items():
            tables[name] = make_frame(_read_table(root / f"{name}.parquet"), columns)
        res = cls(meta=meta, **tables)
        trace = meta.get("trace")
        if isinstance(trace, dict) and isinstance(trace.get("file"), str):
            from .safe_io import UnsafePathError, plain_name

            try:
                file = root / plain_name(trace["file"])
            except UnsafePathError:
                file = None  # written by an older vegaslab (a path), or not by vegaslab: not followed
            if file is not None and file.is_file() and not file.is_symlink():
                res._keep_trace(file)
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
        self._trace = _TraceFile(Path(path), owned_dir)

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
        m, esc = self.meta, _escape
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
                f"{_html_table(self.summary, HTML_MAX_ROWS)}{_html_rows(rows)}</div>")

    # ------------------------------------------------------------------ output

    def to_dir(self, path: str | os.PathLike, *, csv: bool = False) -> list[Path]:
        """Write every table as ``<name>.parquet`` (and ``<name>.csv`` with ``csv=True``) plus
        ``meta.json`` into ``path``, all or nothing: into a temporary directory beside it that
        replaces ``path`` once complete (see the module docstring; :class:`~vegaslab.outdir.OutputDirError`
        when ``path`` cannot be used). Returns the paths written."""
        target = Path(path)
        with output_dir(target) as tmp:
            names = [p.name for p in self.write_files(tmp, csv=csv)]
        return [target / n for n in names]

    def write_files(self, directory: str | os.PathLike, *, csv: bool = False) -> list[Path]:
        """Write the tables (Parquet, plus CSV copies with ``csv=True``) and meta.json (with
        the tables' SHA-256) into an existing ``directory``, in place. Prefer :meth:`to_dir`;
        this is for callers that add more files (plots, job.json) inside :func:`output_dir`
        before the directory is renamed.

        Parquet is the format: it keeps the column types and writes the
        benchmark's 500,000 series rows in under 0.1 s, where the CSV copies took about 1 s and
        20 times the disk. CSV is written only on request, here as in ``vegaslab run --csv``;
        the copies hold the same tables. The Parquet files are written from the typed columns
        (:mod:`vegaslab.columns`), whether a table is still the core's or a pandas frame, so
        they are the same bytes either way."""
        root = Path(directory)
        written = []
        for name in TABLES:
            pq = root / f"{name}.parquet"
            write_parquet(self._typed_columns(name), pq)
            written.append(pq)
            if csv:
                getattr(self, name).to_csv(root / f"{name}.csv", index=False)
                written.append(root / f"{name}.csv")
        hashed = list(written)
        trace = self.meta.get("trace")
        if self._trace is not None and isinstance(trace, dict) and self._trace.path.parent.resolve() != root.resolve():
            written.append(self._trace.save(root, trace["file"]))
        meta = root / "meta.json"
        record = {**self.meta, INTEGRITY_KEY: {p.name: _sha256_file(p) for p in hashed}}
        meta.write_text(meta_json(record), encoding="utf-8")
        written.append(meta)
        return written

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
            return _records(expanded(self._typed_columns(name)), is_missing)
        return _records(frame_columns(frame), is_missing)  # the frame as it is (a user may have edited it)

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
        m = self.meta
        head = f"{m.get('scenario', '?')}  seed {m.get('seed', '?')}"
        if m.get("duration_s") is not None:
            head += f"  {format_number(m['duration_s'])} s simulated"
        if m.get("wall_time_s") is not None:
            head += f" in {m['wall_time_s']:.3g} s"
        if m.get("events") is not None:
            head += f" ({int(m['events']):,} events)"
        lines = [head, ""]
        f = self._typed_columns("flows")
        flow_cells = _rows(f, ("flow", "cc", "start_s", "end_s", "goodput_bps", "throughput_bps", "retransmitted_pkts",
                                "timeouts", "dropped_pkts", "completion_time_s", "final_cwnd_pkts"), slice(0, max_flows))
        lines += fixed_width(
            ["flow", "cc", "start s", "end s", "goodput Mbit/s", "thrput Mbit/s", "retx",
             "timeouts", "drops", "done s", "cwnd"],
            [[flow, cc, format_number(start), format_number(end), format_number(goodput / 1e6, 4), format_number(thrput / 1e6, 4), _int(retx),
              _int(timeouts), _int(drops), format_number(done, 6), format_number(cwnd, 4)]
             for flow, cc, start, end, goodput, thrput, retx, timeouts, drops, done, cwnd in flow_cells],
            left=2,
        )
        if len(f["flow"]) > max_flows:
            lines.append(f"({len(f['flow']) - max_flows} more flows: every flow is in Results.flows and flows.parquet)")
        q = self._typed_columns("queues")
        if len(q["queue"]):
            arrived = np.asarray(q["arrived_pkts"], dtype=np.float64)
            # The busiest first; queues with equal arrivals in their order (a stable sort).
            busy = sorted((i for i in range(len(arrived)) if arrived[i] > 0), key=lambda i: -arrived[i])
            shown = busy[:max_queues]
            lines.append("")
            cells = _rows(q, ("queue", "kind", "limit_pkts", "arrived_pkts", "dropped_pkts", "loss_ratio",
                              "mean_len_pkts", "max_len_pkts"), shown)
            lines += fixed_width(
                ["queue", "kind", "limit", "arrivals", "drops", "loss %", "mean pkts", "max pkts"],
                [[name, kind, _int(limit), _int(arrivals), _int(drops), format_number(100 * loss if _ok(loss) else loss, 3),
                  format_number(mean, 4), _int(most)]
                 for name, kind, limit, arrivals, drops, loss, mean, most in cells],
                left=2,
            )
            hidden = len(arrived) - len(shown)
            if hidden:
                lines.append(f"({hidden} more queue{'s' if hidden > 1 else ''}, idle or less busy)")
        u = self._typed_columns("udp")
        if len(u["source"]):
            lines.append("")
            cells = _rows(u, ("source", "model", "sent_pkts", "received_pkts", "dropped_pkts", "offered_bps",
                              "active_throughput_bps"))
            lines += fixed_width(
                ["udp source", "model", "sent", "received", "dropped", "offered Mbit/s", "thrput Mbit/s"],
                [[source, model, _int(sent), _int(received), _int(dropped),
                  format_number(offered / 1e6 if _ok(offered) else offered, 4), format_number(thrput / 1e6 if _ok(thrput) else thrput, 4)]
                 for source, model, sent, received, dropped, offered, thrput in cells],
                left=2,
            )
        return "\n".join(lines)

    @classmethod
    def concat(cls, results: "Sequence[Results] | Mapping[Any, Results]", keys: Sequence[Any] | None = None,
               names: Sequence[str] | str = ("run",)) -> "ResultsSet":
        """Several runs as one :class:`ResultsSet`: see :func:`concat`."""
        return concat(results, keys=keys, names=names)

    def __repr__(self) -> str:
        return self.format_table()

    def __str__(self) -> str:
        return self.format_table()


class ResultsSet(_NotebookViews):
    """Several runs' tables as one: the attributes of :class:`Results`
    (``flows``, ``queues``, ``links``, ``udp``, ``series_flows``, ``series_queues`` and
    ``summary``), each one DataFrame holding every run's rows with the run-label columns
    (``names``, default ``"run"``) in front, so ``groupby("run")`` or ``groupby("flow")``
    works at once; the same plot methods (one line per run and flow, labelled
    ``"<run>: <flow>"``) and an HTML view. ``meta`` is a DataFrame with one row per run (its
    labels and the scalar meta fields); ``runs`` maps each label to its :class:`Results`.
    Chosen over a dict of DataFrames so that a set reads like one run in a notebook. Build it
    with :func:`concat` (``vegaslab.concat``) or :meth:`Results.concat`."""

    def __init__(self, runs: "dict[Any, Results]", names: tuple[str, ...], tables: dict[str, pd.DataFrame],
                 meta: pd.DataFrame) -> None:
        self.runs = runs
        self.names = names
        self._label_columns = names
        self.meta = meta
        self.flows = tables["flows"]
        self.queues = tables["queues"]
        self.links = tables["links"]
        self.udp = tables["udp"]
        self.series_flows = tables["series_flows"]
        self.series_queues = tables["series_queues"]

    @property
    def summary(self) -> pd.DataFrame:
        """Every run's :attr:`Results.summary`, the run labels in front."""
        return _stack([r.summary for r in self.runs.values()], list(self.runs), self.names, None)

    def _title(self, what: str) -> str:
        scenarios = list(dict.fromkeys(str(r.meta.get("scenario", "?")) for r in self.runs.values()))
        return f"{', '.join(scenarios)} ({len(self.runs)} runs): {what}"

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        tables = ", ".join(f"{name} {len(getattr(self, name)):,}" for name in TABLES)
        labels = ", ".join(map(str, list(self.runs)[:6])) + (", ..." if len(self.runs) > 6 else "")
        return f"<ResultsSet of {len(self.runs)} runs ({labels}); rows: {tables}>"

    def _repr_html_(self) -> str:
        """The runs (labels, scenario, seed, simulated time), the per-flow summary and each
        table's row count; every name and value HTML-escaped."""
        shown = [c for c in (*self.names, "scenario", "seed", "duration_s", "version") if c in self.meta.columns]
        rows = [(name, len(getattr(self, name)), f"one row per {', '.join(self.names)} and {key}")
                for name, (key, _c) in TABLES.items() if not name.startswith("series_")]
        rows += self._series_html()
        return (f'<div class="vegaslab-results"><p><strong>{len(self.runs)} runs</strong></p>'
                f"{_html_table(self.meta[shown], HTML_MAX_ROWS)}{_html_table(self.summary, HTML_MAX_ROWS)}"
                f"{_html_rows(rows)}</div>")


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
    tables = {name: _stack([getattr(r, name) for r in results], labels, names, columns)
              for name, (_key, columns) in TABLES.items()}
    scalar = (str, int, float, bool, type(None))
    meta = pd.DataFrame([{**dict(zip(names, parts)), **{k: v for k, v in r.meta.items() if isinstance(v, scalar)}}
                         for parts, r in zip(labels, results)])
    return ResultsSet(runs, names, tables, meta)


def _stack(frames: list[pd.DataFrame], labels: list, names: tuple[str, ...],
           documented: Sequence[str] | None) -> pd.DataFrame:
    """``frames`` one under the other, each row's run label(s) in the ``names`` columns in
    front; the union of the columns (documented ones first), typed as in :func:`make_frame`."""
    labels = [parts if isinstance(parts, tuple) else (parts,) for parts in labels]
    lengths = [len(f) for f in frames]
    kept = [f for f in frames if len(f)] or frames[:1]  # empty frames would only blur dtypes
    body = pd.concat(kept, ignore_index=True, sort=False) if len(kept) > 1 else kept[0].reset_index(drop=True)
    front = pd.DataFrame({n: pd.Series([p[i] for p in labels]).repeat(lengths).reset_index(drop=True)
                          for i, n in enumerate(names)})
    out = pd.concat([front, body], axis=1)
    if documented is not None:
        _typed_frame(out, documented)
        order = list(names) + list(documented)
        out = out[order + [c for c in out.columns if c not in order]]
    return out


def _read_table(path: Path) -> "pd.DataFrame | None":
    """A results table read back from a run directory, a regular file only (never through a
    link, never waiting on a FIFO); None when absent (directories written before the table
    existed, e.g. ``udp``, read back empty)."""
    from .safe_io import ForeignFileError, open_regular

    try:
        with open_regular(path) as fh:
            return pd.read_parquet(fh)
    except FileNotFoundError:
        return None
    except ForeignFileError as exc:
        raise InconsistentResultsError(str(exc)) from None


def _verify_tables(root: Path, recorded: Any) -> None:
    where = root / "meta.json"
    if not isinstance(recorded, dict) or not recorded:
        raise InconsistentResultsError(
            f"{where}: no {INTEGRITY_KEY} record, so the tables cannot be checked against it (written by "
            f"an older vegaslab, or not by vegaslab); run again, or read with from_dir(..., verify=False)")
    from .safe_io import ForeignFileError, UnsafePathError, plain_name

    for name, digest in recorded.items():
        try:
            f = root / plain_name(name)
        except UnsafePathError:
            raise InconsistentResultsError(f"{where}: {INTEGRITY_KEY} lists {str(name)[:80]!r}, which is not a plain "
                                           "file name of the directory; not read") from None
        try:
            matches = _sha256_file(f) == digest
        except FileNotFoundError:
            raise InconsistentResultsError(f"{f}: listed in {where} but missing") from None
        except ForeignFileError as exc:
            raise InconsistentResultsError(str(exc)) from None
        if not matches:
            raise InconsistentResultsError(
                f"{f}: does not belong with {where} (its SHA-256 differs from the one recorded), e.g. "
                f"tables of another run or an interrupted write; run again")
    for name in TABLES:
        for f in (root / f"{name}.parquet", root / f"{name}.csv"):
            if f.exists() and f.name not in recorded:
                raise InconsistentResultsError(f"{f}: not listed in {where}; it belongs to another run")


# ---------------------------------------------------------------------- formatting helpers


def _rows(columns: Mapping[str, Any], names: Sequence[str], at: Any = slice(None)) -> Iterable[tuple]:
    """The values of the columns ``names`` as Python scalars, row by row, of the rows ``at``
    (a slice or a list of row numbers)."""
    return zip(*(columns[name][at].tolist() for name in names))


def _records(columns: Mapping[str, np.ndarray], missing: Callable[[Any], bool]) -> list[dict[str, Any]]:
    """:meth:`Results.table_records` of ``columns``: Python scalars row by row (:func:`_rows`); a
    cell that ``missing`` calls missing is ``None`` in a text column (:data:`TEXT_COLUMNS`) and
    NaN in any other."""
    names = list(columns)
    gaps = [None if name in TEXT_COLUMNS else math.nan for name in names]
    return [{name: gap if missing(v) else (v.item() if isinstance(v, np.generic) else v)
             for name, gap, v in zip(names, gaps, row)} for row in _rows(columns, names)]


def _ok(v: Any) -> bool:
    return not is_missing(v)


def format_number(v: Any, sig: int = 6) -> str:
    if not _ok(v):
        return "-"
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{sig}g}"


def _int(v: Any) -> str:
    return f"{int(v)}" if _ok(v) else "-"


def fixed_width(headers: Sequence[str], rows: Iterable[Sequence[Any]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell; the first ``left`` columns left-aligned, the
    rest (numbers) right-aligned."""
    rows = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(headers)] + [line(r) for r in rows]
