"""`make bench-memory`'s tool (scripts/memory_latency.c): it builds, prints one row per size,
and bad arguments get a message naming them. Its numbers are a measurement, not checked here."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "scripts" / "memory_latency.c"


@pytest.fixture(scope="module")
def tool(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("memlat") / "memory-latency"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", str(exe), str(SOURCE)], check=True)
    return exe


def test_it_prints_one_row_per_size_with_the_chains_and_a_positive_latency(tool):
    out = subprocess.run([str(tool), "--chains", "2", "16", "64"], capture_output=True, text=True, check=True).stdout
    rows = re.findall(r"^\s+(\d+) KB\s+(\d+)\s+([\d.]+)$", out, re.M)
    assert [(kb, chains) for kb, chains, _ in rows] == [("16", "2"), ("64", "2")], out
    assert all(float(ns) > 0 for _, _, ns in rows), out


def test_bad_arguments_get_a_message_naming_them_and_status_2(tool):
    for args, named in ((["--chains", "0"], "--chains 0"), (["abc"], "size abc"), (["2"], "size 2")):
        p = subprocess.run([str(tool), *args], capture_output=True, text=True)
        assert p.returncode == 2 and named in p.stderr, (args, p.stderr)
