"""Start `vegaslab reproduce` as a child process on a catalog of one entry (for the tests that
signal or kill the whole command)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import vegaslab

PKG_ROOT = str(Path(vegaslab.__file__).resolve().parents[1])


def start_reproduce(tmp_path: Path, entry_id: str, entry_text: str, **popen: Any) -> subprocess.Popen:
    """``vegaslab reproduce ENTRY --jobs 2`` on a catalog holding only ``entry_text``, with the
    package on PYTHONPATH and no scheduler address or debug flag inherited."""
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / f"{entry_id}.toml").write_text(entry_text)
    env = {**os.environ, "VEGASLAB_CATALOG": str(cat),
           "PYTHONPATH": os.pathsep.join([PKG_ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    env.pop("VEGASLAB_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "vegaslab", "reproduce", entry_id, "--jobs", "2", "--no-progress",
                             "--out", str(tmp_path / "rep")], env=env, **popen)
