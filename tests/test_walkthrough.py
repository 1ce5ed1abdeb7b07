"""docs/walkthrough.md, the new-user walkthrough, runs as written: every block under a
``<!-- walkthrough: ... -->`` marker is executed in order in one fresh directory, the shell
lines with the installed ``vegaslab`` command, the Python blocks in a fresh interpreter. Markers:

- ``file NAME``: write the block to NAME;
- ``append BASE to NAME``: write BASE's text followed by the block to NAME;
- ``sh`` (or ``sh, expect exit N``): run each line with bash; every line must exit 0 (or N);
- ``python``: run the block with this interpreter.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "walkthrough.md"
STEP = re.compile(r"<!-- walkthrough: (?P<what>[^>]*?) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)


def steps() -> list[tuple[str, str]]:
    return [(m["what"].strip(), m["body"]) for m in STEP.finditer(DOC.read_text(encoding="utf-8"))]


def test_every_code_block_of_the_walkthrough_is_a_step():
    text = DOC.read_text(encoding="utf-8")
    assert text.count("```") // 2 == len(steps()) >= 8


def test_the_walkthrough_runs_as_written(tmp_path):
    pytest.importorskip("vegaslab._core")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    for what, body in steps():
        if what.startswith("file "):
            (tmp_path / what.split()[1]).write_text(body)
        elif what.startswith("append "):
            _, base, _, name = what.split()
            (tmp_path / name).write_text((tmp_path / base).read_text() + "\n" + body)
        elif what.startswith("sh"):
            expect = int(what.rsplit(" ", 1)[1]) if "expect exit" in what else 0
            for line in filter(None, (ln.strip() for ln in body.splitlines())):
                p = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                                   timeout=300)
                assert p.returncode == expect, f"{line}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
                if expect:
                    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") < 3, p.stderr
        elif what == "python":
            p = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300)
            assert p.returncode == 0, f"{body}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
        else:
            raise AssertionError(f"unknown walkthrough marker: {what!r}")
    assert (tmp_path / "out" / "mine").is_dir() and (tmp_path / "report" / "index.html").is_file()
    assert (tmp_path / "out" / "sweep" / "goodput_bps-vs-alpha.png").is_file()
    assert (tmp_path / "cwnd.png").is_file()
