"""The layout of the normalised scenario, from its JSON Schema.

The core generates the schema from the Rust types that write the normalised scenario
(``vegaslab._core.scenario_schema``; ``vegaslab_sim::scenario::schema``), so it is the one
description of that layout: the ns-2 bridge, the testbed, the kernel helpers and the docs read
an object's keys from here rather than listing them. The same schema is in the docs as
``docs/normalised-scenario.schema.json`` (written by ``scripts/gen_docs.py``; a test fails
when it is stale) and in the wheel beside the other docs.

>>> from vegaslab import schema
>>> sorted(schema.keys("LinkSpec"))
['a', 'b', 'down_ns', 'forward', 'reverse']
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .core import call_core, load_core

__all__ = ["normalised_scenario", "format_version", "definition", "keys", "ROOT"]

#: The name :func:`keys` and :func:`definition` give the top level of the document.
ROOT = "Scenario"


@functools.cache
def normalised_scenario() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the normalised scenario."""
    return json.loads(call_core(load_core().scenario_schema))


def format_version() -> int:
    """The layout version the schema describes (the document's ``format``)."""
    return int(normalised_scenario()["properties"]["format"]["const"])


def definition(name: str) -> dict[str, Any]:
    """The schema of one object of the layout: :data:`ROOT` or a name under ``$defs`` (the Rust
    type's name, e.g. ``"LinkSpec"``, ``"DirectionSpec"``, ``"TcpConfig"``)."""
    schema = normalised_scenario()
    if name == ROOT:
        return schema
    defs = schema.get("$defs", {})
    if name not in defs:
        raise KeyError(f"no object {name!r} in the normalised scenario's schema (it has: {', '.join(sorted(defs))})")
    return defs[name]


def _properties(schema: dict[str, Any]) -> frozenset[str]:
    """The keys of an object schema, with those of the struct it references (a tagged variant)."""
    own = frozenset(schema.get("properties", {}))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        own |= _properties(definition(ref.removeprefix("#/$defs/")))
    return own


def keys(name: str, variant: str | None = None) -> frozenset[str]:
    """The keys object ``name`` may have. For a tagged union (a ``oneOf`` whose forms tell
    themselves apart by a ``kind`` constant) give the ``variant``'s ``kind``."""
    schema = definition(name)
    if variant is not None:
        for form in schema.get("oneOf", []):
            if form.get("properties", {}).get("kind", {}).get("const") == variant:
                return _properties(form)
        raise KeyError(f"{name} has no form with kind {variant!r}")
    if "properties" not in schema:
        raise KeyError(f"{name} is not an object with fixed keys (give a variant)")
    return _properties(schema)
