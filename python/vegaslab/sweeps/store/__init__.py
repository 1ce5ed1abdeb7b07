"""A portable, resumable results store: a directory of Parquet tables and a manifest
(docs/store-format.md describes the layout for readers in other tools)::

    from vegaslab.sweeps.store import RunSpec, Store
    store = Store("out/study")
    specs = [RunSpec.from_scenario("va-reroute", seed=s) for s in range(1, 11)]
    store.missing(specs)            # the specs whose runs are not stored yet
    store.read("flows")             # one row per (run, flow), every committed run
    store.results(specs, "flows")   # the rows of these specs, with their parameter columns

How it works, and why (docs/decisions.md, "Sweeps, engine and store"):

- **The key is what was simulated, nothing else.** A run's key is the SHA-256 of the store
  format, the core's semantic version, the seed and the core's normalised scenario text
  (``vegaslab._core.normalize_scenario``: every default filled in, overrides applied, the
  content of referenced files such as delay traces included and hashed, no file paths). No
  path, modification time, file size, timestamp, host or build identity takes part, so a
  store copied to another machine is worth as much there. The price is a promise: a change
  of the core that changes results must bump the core's version (``vegaslab_sim::VERSION``);
  each run still records the source revision it was computed with (``runs.source_revision``).
- **Commits are the unit of atomicity.** The single writer (:meth:`Store.writer`, an
  exclusive ``flock`` on ``.lock``) buffers finished runs and commits a batch by writing its
  tables and a ``_commit.json`` (the batch's run keys and every file's SHA-256, size and row
  count) into ``_tmp/<id>/``, syncing them, and renaming the directory to ``data/<id>/``: one
  rename, so a reader sees all of a batch or none of it, and a killed writer leaves only a
  ``_tmp`` directory, removed when the next writer opens the store.
- **Nothing is trusted unchecked.** A commit counts only when every file it lists has the
  recorded size and SHA-256 and it holds no other table file; otherwise it is *broken*: its
  runs are missing (so they are computed again) and the next writer moves the directory to
  ``_quarantine/`` so that readers of the raw files stop seeing it. The whole commit goes,
  because each of its files holds rows of all its runs. A process hashes a commit once and
  again whenever a file's ``stat`` moved (:mod:`.commits`); the writer hashes everything
  when it opens.
- **Per-commit partitions, not key-prefix partitions.** Each commit directory holds one
  Parquet file per table (``runs``, ``flows``, ``queues``, ``links``, ``udp``,
  ``series_flows``, ``series_queues``; empty tables are left out). Partitioning by run-key
  prefix was considered and rejected: a batch's keys are spread over every prefix, so it
  would multiply small files by up to 256 per commit, and no query filters on a hash;
  the manifest already maps each key to its commit. Partial results are readable as soon as
  a commit lands (``flush_s`` seconds at most after a run finishes, in the engine).
- **Compaction, not a manifest to rewrite.** A sweep commits every ``flush_s`` seconds, so a
  long one leaves hundreds of small commits, and reading hundreds of small files is what makes
  a large result slow to open. :meth:`StoreWriter.compact` (at the end of every
  :func:`vegaslab.sweeps.engine.execute`, and :meth:`Store.compact`) merges the small commits of one
  parameter set into one commit written like any other, whose ``_commit.json`` names the
  commits it ``replaces``; only then are those retired. A reader leaves out a replaced commit
  whose runs a verified commit holds, and lists ``data/`` again when a directory vanishes
  under it, so at no step (and after a kill at any step) does it see a run twice or lose one.
  The merge hashes the bytes it copies, so it never launders a damaged file into a commit
  with fresh checksums.
- **Tidy, typed tables.** Every table starts with ``run_key``, one typed column per swept
  parameter (``int64``, ``double``, ``string`` or ``bool``; integers and floats mixed in one
  parameter make it ``double``) and ``seed``; then the columns of docs/results-format.md, in
  the same order as :class:`vegaslab.Results`. A column that is missing in every row of a run
  is a ``double`` null. ``runs`` has one row per run: aggregates, wall times and the run's
  provenance (normalised scenario, overrides, seed, versions, source revision, command).
- **Parameters are labels, not identity.** Two specs that resolve to the same scenario and
  seed are one run. The stored parameter columns are those of the spec that computed it;
  :meth:`Store.results` attaches the asking specs' own parameters, so a sweep always sees its
  own columns even for runs another sweep computed.

One module per job, and this package re-exports their public names: :mod:`.format` (the
on-disk format: version, tables, file names, schemas, limits), :mod:`.errors`, :mod:`.keys`
(specs resolved by the core, and their run keys), :mod:`.tables` (a run's tables and ``runs``
row, built on the worker), :mod:`.commits` (which commits count: verification and the listing
of ``data/``), :mod:`.read` (tables and :class:`vegaslab.Results` read back), :mod:`.lock` (the
single writer's lock), :mod:`.writer` (committing batches, quarantine, compaction's writes),
:mod:`.compaction` (what to merge, and the merged tables) and :mod:`.store` (:class:`Store`,
the door to all of them).
"""

from .commits import Broken, Commit
from .errors import StoreError, StoreLockedError, StoreWriteError
from .format import (COMMIT_SCHEMA, COMPACT_MIN_COMMITS, COMPACT_TARGET_BYTES, NONDETERMINISTIC_COLUMNS, PARAM_TYPES,
                     READABLE_STORE_FORMATS, RENAMED_AGGREGATES, STORE_FILE_SCHEMA, STORE_FORMAT, TABLES)
from .keys import PreparedRun, RunSpec, prepare, prepared_runs, run_key
from .store import Store
from .tables import StoredRun, keyed_tables, param_types, run_row, runs_table, stored_tables
from .writer import StoreWriter

__all__ = [
    "STORE_FORMAT",
    "TABLES",
    "NONDETERMINISTIC_COLUMNS",
    "RunSpec",
    "PreparedRun",
    "Store",
    "StoreError",
    "StoreLockedError",
    "StoreWriteError",
    "run_key",
    "prepare",
]
