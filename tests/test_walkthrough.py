"""docs/walkthrough.md, the new-user walkthrough, runs as written: every block under a
``<!-- walkthrough: ... -->`` marker is executed in order in one fresh directory
(:mod:`doc_steps` says how each marker is run).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from doc_steps import run_steps, steps

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "walkthrough.md"


def test_every_code_block_of_the_walkthrough_is_a_step():
    text = DOC.read_text(encoding="utf-8")
    assert text.count("```") // 2 == len(steps(DOC)) >= 8


def test_the_walkthrough_runs_as_written(tmp_path):
    pytest.importorskip("vegaslab._core")
    run_steps(DOC, tmp_path)
    assert (tmp_path / "out" / "mine").is_dir() and (tmp_path / "report" / "index.html").is_file()
    assert (tmp_path / "out" / "sweep" / "goodput_bps-vs-alpha.png").is_file()
    assert (tmp_path / "cwnd.png").is_file()
