"""Parameter sweeps and the execution engine: :mod:`.planning` (the points and seeds a scenario's
``[sweep]`` expands to), :mod:`.store` (the results store, docs/store-format.md),
:mod:`.engine` (runs on a local Dask cluster or an existing one, keeping finished runs in the
store) and :mod:`.results` (a sweep's results as tidy tables, ``to_xarray``, plots;
:func:`vegaslab.sweep` is its entry point).
"""
