"""docs/normalised-scenario.schema.json: the normalised scenario's JSON Schema as the core
generates it from its types (:mod:`vegaslab.schema`), kept in the docs and the wheel."""

from __future__ import annotations

import json


def render_schema() -> str:
    """The normalised scenario's JSON Schema as the core generates it, indented for reading."""
    from vegaslab import schema

    return json.dumps(schema.normalised_scenario(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
