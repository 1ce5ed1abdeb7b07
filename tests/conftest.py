"""Fixtures shared by the Python tests."""
from __future__ import annotations

import json
import os
import subprocess
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


@pytest.fixture
def small_tmpfs(tmp_path):
    """``small_tmpfs("256k")``: a new directory on a tmpfs of that size (root only; skipped
    elsewhere), unmounted after the test: a disk that fills up."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root")
        mnt = tmp_path / f"tmpfs-{len(mounted)}"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)]).returncode != 0:
            pytest.skip("cannot mount a tmpfs here")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", "-l", str(mnt)])


@pytest.fixture
def no_env_scheduler(monkeypatch):
    """No ``DASK_SCHEDULER_ADDRESS`` from the environment: the embedded cluster, not a user's."""
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
