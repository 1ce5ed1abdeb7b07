"""Bridge to ns-2.35: run vegaslab scenarios in the reference simulator.

``run_scenario(scenario, overrides=..., trace=...)`` translates a scenario (dict or TOML path,
schema of docs/scenario-format.md, ns-2 subset) into an OTcl script, runs ``ns`` and returns
results-format metrics.  Imports nothing from the rest of ``vegaslab``.
"""
from .runner import NS2Error, ns_available, run_scenario
from .translate import (apply_overrides, build_model, build_script, load_scenario,
                        parse_bandwidth, parse_size, parse_time)

__all__ = ["run_scenario", "ns_available", "NS2Error", "apply_overrides", "build_model",
           "build_script", "load_scenario", "parse_bandwidth", "parse_size", "parse_time"]
