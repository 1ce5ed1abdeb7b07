"""Scenarios as Python documents, and the core's word on them: the smallest scenario the core
accepts, a key set, read or removed by its dotted path (``links[0].queue.limit``), and the
core's normalised document for a scenario or the ``ScenarioError`` it raises."""

from __future__ import annotations

import copy
import re
from typing import Any


def _core():
    import vegaslab

    return vegaslab


def _toml(scenario: dict) -> str:
    return _core().to_toml(scenario)


def normalize(scenario: dict) -> dict:
    """The core's normalised document for ``scenario``."""
    return _core().normalize(_toml(scenario))


def scenario_error(scenario: dict) -> Any:
    """The core's ScenarioError for ``scenario``, or None when it is accepted."""
    v = _core()
    try:
        v.normalize(_toml(scenario))
    except v.ScenarioError as exc:
        return exc
    return None


def base_scenario() -> dict:
    """The smallest scenario the core accepts: one link, one Reno flow."""
    return {
        "run": {"duration": "10s"},
        "links": [{"endpoints": ["S", "D"], "bandwidth": "1Mbps", "delay": "10ms"}],
        "flows": [{"from": "S", "to": "D", "cc": "reno"}],
    }


def with_value(path: str, value: Any, base: dict | None = None) -> dict:
    """``base`` (default :func:`base_scenario`) with the TOML table or key at ``path`` set."""
    doc = copy.deepcopy(base if base is not None else base_scenario())
    node, parts = doc, _split(path)
    for part in parts[:-1]:
        node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
    node[parts[-1]] = value
    return doc


def _split(path: str) -> list:
    out: list = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        out.append(int(index) if index else name)
    return out


def get_path(doc: Any, path: str) -> Any:
    """The value at ``path`` in ``doc``."""
    for part in _split(path):
        doc = doc[part]
    return doc


def without(doc: dict, path: str) -> dict:
    """A copy of ``doc`` without the key at ``path``."""
    doc = copy.deepcopy(doc)
    parts = _split(path)
    node = doc
    for part in parts[:-1]:
        node = node[part]
    del node[parts[-1]]
    return doc


def has_path(scenario: dict, path: str) -> bool:
    """Whether ``scenario`` gives the key at ``path``."""
    try:
        get_path(scenario, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def app_scenario(app: dict) -> dict:
    """The smallest scenario with its flow's application set to ``app``."""
    return with_value("flows[0].app", app)
