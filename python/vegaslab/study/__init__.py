"""Paper studies: the catalog of paper experiments (:mod:`.catalog`, built-in files in
``vegaslab/catalog_data/``), the claim language and its metrics (:mod:`.claims`,
:mod:`.metrics`), the runner that executes an entry's runs on the engine (:mod:`.runner`), and
robustness studies (:mod:`.robustness`, with their ns-2 side in :mod:`.ns2_check`).

Above :mod:`vegaslab.sweeps` (the engine and store it runs on) and below
:mod:`vegaslab.report`, which shows what a study found.
"""
