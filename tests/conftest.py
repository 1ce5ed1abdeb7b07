"""Fixtures shared by the Python tests."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from vegaslab.results import Results

DATA = Path(__file__).parent / "data"


@pytest.fixture
def doc() -> dict:
    """The results document of a small hand-written run (tests/data/results-small.json) with
    all three series: cwnd, throughput and queue."""
    return json.loads((DATA / "results-small.json").read_text())


@pytest.fixture
def res(doc) -> Results:
    """`doc` as Results."""
    return Results.from_dict(doc)
