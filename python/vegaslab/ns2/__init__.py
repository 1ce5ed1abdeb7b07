"""Bridge to ns-2.35: run vegaslab scenarios in the reference simulator.

``run_scenario(scenario, overrides=..., seed=..., trace=...)`` has the compiled core
normalise a scenario (dict or TOML path, schema of docs/scenario-format.md), translates the
normalised scenario (ns-2 subset) into an OTcl script, runs ``ns`` and returns
results-format metrics.  ``run_normalized(doc)`` starts from a normalised scenario.  The
bridge owns no part of the schema: units, overrides, topology builders and defaults are the
core's (``vegaslab.normalize``).
"""
from .runner import NS2Error, ns_available, run_normalized, run_scenario
from .translate import build_model, build_script, normalize

__all__ = ["run_scenario", "run_normalized", "ns_available", "NS2Error", "build_model",
           "build_script", "normalize"]
