"""Several runs as one set of tables (:class:`ResultsSet`): each table of the runs stacked into
one DataFrame, the run-label columns in front (:func:`stack`), so that a set reads like one run
in a notebook. :func:`vegaslab.results.concat` builds one from runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..columns import TABLES
from .frames import LazyPandas, typed_frame
from .notebook import HTML_MAX_ROWS, NotebookViews, html_rows, html_table

if TYPE_CHECKING:
    import pandas as pd

    from .run import Results
else:
    pd = LazyPandas(globals())


class ResultsSet(NotebookViews):
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
        return stack([r.summary for r in self.runs.values()], list(self.runs), self.names, None)

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
                f"{html_table(self.meta[shown], HTML_MAX_ROWS)}{html_table(self.summary, HTML_MAX_ROWS)}"
                f"{html_rows(rows)}</div>")


def stack(frames: list[pd.DataFrame], labels: list, names: tuple[str, ...],
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
        typed_frame(out, documented)
        order = list(names) + list(documented)
        out = out[order + [c for c in out.columns if c not in order]]
    return out
