"""docs/your-algorithm.md runs as written (:mod:`doc_steps`), each part in a fresh directory.

The Python part: from ``vegaslab new-cc --python`` through a run, the skeleton's tests, an
edited class, a sweep (in this process and on a local Dask cluster) to the error of a name that
does not import. The BPF part (``walkthrough[bpf]``): from ``vegaslab new-cc --bpf`` through a
run, the skeleton's tests (as root, with the kernel's), a patched and rebuilt object, a sweep (in
this process and on Dask) to the refusal of a missing object; it needs clang, and skips without
it unless ``VEGASLAB_REQUIRE_BPF=1``. The kernel comparison is shown, not run (the page says why).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from doc_steps import run_steps, steps
from kernel_requirements import skip_unless, unavailable

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "your-algorithm.md"


def _clang() -> None:
    if shutil.which("clang") is None:
        raise RuntimeError("clang is not installed (scripts/install-bpf.sh installs it)")


def test_every_code_block_of_the_page_is_a_step():
    text = DOC.read_text(encoding="utf-8")
    assert text.count("```") // 2 == len(steps(DOC)) >= 7 + 7


def test_only_the_kernel_comparison_is_shown_without_running():
    shown = [body for what, body in steps(DOC) if what == "show"]
    assert len(shown) == 1 and "compare scenario.toml --kernel" in shown[0]


def test_your_algorithm_page_runs_as_written(tmp_path):
    pytest.importorskip("vegaslab._core")
    run_steps(DOC, tmp_path)
    skeleton = tmp_path / "my_aimd"
    assert {p.name for p in skeleton.glob("*.py")} == {"my_aimd.py", "test_my_aimd.py"}
    assert (skeleton / "out" / "aimd").is_dir()
    assert (skeleton / "out" / "sweep" / "goodput_bps-vs-buffer.png").is_file()
    assert (skeleton / "out" / "sweep-dask" / "store.json").is_file()


@skip_unless(unavailable(_clang))
def test_the_bpf_part_of_the_page_runs_as_written(tmp_path):
    pytest.importorskip("vegaslab._core")
    run_steps(DOC, tmp_path, part="bpf")
    skeleton = tmp_path / "my_bpf_aimd"
    assert "kept > 2 ? kept : 2" in (skeleton / "my_bpf_aimd.bpf.c").read_text()
    assert (skeleton / "my_bpf_aimd.bpf.o").stat().st_mtime >= (skeleton / "my_bpf_aimd.bpf.c").stat().st_mtime
    assert (skeleton / "out" / "aimd").is_dir()
    assert (skeleton / "out" / "sweep" / "goodput_bps-vs-buffer.png").is_file()
    assert (skeleton / "out" / "sweep-dask" / "store.json").is_file()
