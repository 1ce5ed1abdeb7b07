"""Where the generated and checked docs are, and the command that writes them (named in the
messages that ask to run it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_DOC = ROOT / "docs" / "scenario-format.md"
SCHEMA_DOC = ROOT / "docs" / "normalised-scenario.schema.json"
RESULTS_DOC = ROOT / "docs" / "results-format.md"
BPF_DOC = ROOT / "docs" / "bpf-objects.md"
SCRIPT = "scripts/gen_docs.py"
