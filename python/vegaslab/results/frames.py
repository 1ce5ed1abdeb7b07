"""A results table as a pandas frame: documented columns first, each in the dtype its name calls
for (:data:`~vegaslab.columns.TEXT_COLUMNS`, :data:`~vegaslab.columns.COUNT_COLUMNS`), empty
tables included, and old column names renamed (:mod:`vegaslab.results.renamed`).

pandas is imported on first use (:class:`LazyPandas`): importing it costs about 0.3 s of CPU,
and ``vegaslab run`` prints its summary and writes its Parquet files without it
(:mod:`vegaslab.columns`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Iterable, MutableMapping, Sequence

from ..columns import COUNT_COLUMNS, TEXT_COLUMNS, column_values, missing_column, typed_column
from .renamed import upgrade_columns


class LazyPandas:
    """A module's ``pd`` until pandas is first used: then the pandas module itself, put in that
    module's globals (``namespace``) in its place, so later uses cost nothing extra.

    Every use of ``pd`` in the modules that hold one is inside a function, so the first one
    imports pandas: ``pd = LazyPandas(globals())``."""

    def __init__(self, namespace: MutableMapping[str, Any]) -> None:
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        import pandas

        self._namespace["pd"] = pandas
        return getattr(pandas, name)


if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyPandas(globals())


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


def typed_frame(df: pd.DataFrame, documented: Iterable[str]) -> pd.DataFrame:
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
    typed_frame(df, columns)
    extra = [c for c in df.columns if c not in columns]
    return df[list(columns) + extra].reset_index(drop=True)
