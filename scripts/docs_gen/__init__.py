"""The generated parts of the docs (run by ``scripts/gen_docs.py``), one job per module:
:mod:`.keymap` (the hand-written map from TOML keys to the normalised document), :mod:`.scenarios`
(scenario documents and the core's word on them), :mod:`.probe` (each row's default and allowed
values from the core, and the map's checks), :mod:`.values` (values as the docs show them),
:mod:`.render` (the field-table blocks, replaced between their markers), :mod:`.params` and
:mod:`.units` (those two blocks), :mod:`.bpf` (docs/bpf-objects.md's block), :mod:`.schema` (the JSON Schema), :mod:`.results` (the check
of the results columns) and :mod:`.paths`."""
