"""docs/your-algorithm.md runs as written: from ``vegaslab new-cc`` through a run, the
skeleton's tests, an edited class, a sweep (in this process and on a local Dask cluster) to the
error of a name that does not import, every marked block in order in one fresh directory
(:mod:`doc_steps`).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from doc_steps import run_steps, steps

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "your-algorithm.md"


def test_every_code_block_of_the_page_is_a_step():
    text = DOC.read_text(encoding="utf-8")
    assert text.count("```") // 2 == len(steps(DOC)) >= 7


def test_your_algorithm_page_runs_as_written(tmp_path):
    pytest.importorskip("vegaslab._core")
    run_steps(DOC, tmp_path)
    skeleton = tmp_path / "my_aimd"
    assert {p.name for p in skeleton.glob("*.py")} == {"my_aimd.py", "test_my_aimd.py"}
    assert (skeleton / "out" / "aimd").is_dir()
    assert (skeleton / "out" / "sweep" / "goodput_bps-vs-buffer.png").is_file()
    assert (skeleton / "out" / "sweep-dask" / "store.json").is_file()
