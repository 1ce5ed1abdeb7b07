"""Our numbers beside the published ones: the columns of the comparison table
:func:`vegaslab.reproduction.reproduce` returns, and the ratio each row gives.

Data, not presentation: the catalog computes ratios with it (:func:`vegaslab.study.catalog.compare`)
and the report (:mod:`vegaslab.report.tables`, :mod:`vegaslab.report.model`) shows them. It imports
nothing, so resolving a catalog id (``vegaslab run CATALOG-ID``) still loads neither pandas nor
the report.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["REPRODUCE_COLUMNS", "ratio"]

#: Columns of the table :func:`vegaslab.reproduction.reproduce` returns: ``ours`` is the mean over
#: seeds, ``std`` the sample standard deviation (NaN for one seed), ``n`` the number of seeds
#: that gave a value.
REPRODUCE_COLUMNS = ["entry", "run", "metric", "published", "ours", "std", "n", "ratio", "note"]


def ratio(ours: Any, published: Any) -> float:
    """ours / published; 1.0 when both are 0, inf when only published is 0, NaN if unknown."""
    try:
        o, p = float(ours), float(published)
    except (TypeError, ValueError):
        return float("nan")
    if math.isnan(o) or math.isnan(p):
        return float("nan")
    if p == 0:
        return 1.0 if o == 0 else math.inf
    return o / p
