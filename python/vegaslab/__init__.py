"""vegaslab: fast, deterministic packet-level simulation of TCP Vegas and its variants.

The public API in one screen::

    import vegaslab

    res = vegaslab.run("va-reroute", overrides=["flows[0].cc=newreno"])
    print(res)                      # fixed-width summary table
    res.flows, res.queues           # pandas DataFrames (see docs/results-format.md)
    res.to_dir("out/va-reroute")    # Parquet + meta.json

A scenario is a path to a ``.toml`` file, a built-in catalog id, a TOML text (a string with a
line break; any other string is a path or an id), or a ``dict`` with the same structure
(docs/scenario-format.md). The compiled core (``vegaslab._core``) is imported on first use, so
``import vegaslab`` (and everything that works on a saved results document) does not need it.

Every error raised by the core reaches you as :class:`ScenarioError` (the scenario is wrong:
the message names the file and the field) or :class:`SimulationError` (the simulator failed,
including an internal panic); both derive from :class:`VegaslabError`.

This module only re-exports; the package is in layers, each importing only its own and the ones
below it (tests/test_architecture.py checks the order, and that no import goes round in a
circle; docs/architecture.md, "Layers"), highest first:

- front: the public API here, ``reproduction`` (``reproduce``), ``cli`` (the ``vegaslab``
  command, one module per subcommand);
- ``report`` (the reproduction report: model, figures, tables, templates);
- ``study`` (the paper catalog, claims and metrics, reproduce's runner, robustness studies);
- engines: ``sweeps`` (sweep plans, the execution engine, the results store, sweep results),
  ``ns2`` (the ns-2 bridge), ``testbed`` and ``kernel`` (real Linux stacks), ``bench``
  (benchmarks);
- run: ``simulation`` (run, validate, normalize), ``results``, ``plots``, ``columns``,
  ``fairness``;
- foundation: ``scenario`` (scenario input and TOML), ``core`` (the compiled core), ``errors``,
  ``heuristics``, ``deprecation``, ``interrupts``, and the file-safety helpers ``safe_io`` and
  ``outdir``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .controller import Controller
from .core import core_version, source_revision
from .errors import ControllerError, ScenarioError, SimulationError, TraceError, VegaslabError
from .scenario import Overrides, Scenario, format_override, load_scenario, read_text_file, to_toml
from .simulation import (MAX_SEED, PROVENANCE_FORMAT, LazyProgressBar, normalize, provenance, run,
                         scenario_hash, validate)
from .sweeps.results import sweep

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results, ResultsSet, concat

__all__ = [
    "run",
    "sweep",
    "validate",
    "normalize",
    "provenance",
    "scenario_hash",
    "source_revision",
    "load_scenario",
    "to_toml",
    "format_override",
    "Results",
    "ResultsSet",
    "concat",
    "VegaslabError",
    "ScenarioError",
    "SimulationError",
    "ControllerError",
    "TraceError",
    "Controller",
    "core_version",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # `__version__` is read from the installed package's metadata when first asked for:
    # importing `importlib.metadata` takes 35-45 ms, which no command should pay at its start
    # (`vegaslab run` imports it on its background import thread while the core simulates).
    if name == "__version__":
        from .core import package_version

        return package_version()
    # Results pulls in numpy (and pandas once a table is read); load it on first use so
    # `import vegaslab` stays light (the benchmark measures the simulator's memory in a child
    # process that imports only the core).
    if name in ("Results", "concat", "ResultsSet"):  # one run, or several as one set of tables
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module 'vegaslab' has no attribute {name!r}")
