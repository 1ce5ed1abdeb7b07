"""The store's on-disk format (docs/store-format.md): its version, the tables a commit holds,
the names of its files and directories, the JSON Schemas its records must match and the limits
on their size. Readers, the writer and the checks of a commit take these from here, so the
format is stated once."""

from __future__ import annotations

import re
from typing import Any

#: Layout version of a store (``store.json``, ``_commit.json`` and the key's definition).
#: 2: ``runs.meta`` holds the results document's ``meta`` (so a stored run rebuilds the
#: :class:`vegaslab.Results` that :func:`vegaslab.run` returns). 3: the columns carry their
#: unit (``sent_pkts``, ``time_s``, ``cwnd_pkts``, ...; :data:`vegaslab.results.RENAMED_COLUMNS`)
#: and the aggregate ``queue_drops_total`` is ``queue_dropped_pkts_total``.
STORE_FORMAT = 3
#: Formats a store or commit may have to be read (for one version): a format-2 store is read with
#: its columns renamed (:mod:`vegaslab.sweeps.store.read`), but never written to (its runs' keys
#: include the format, so they would all be computed again beside the old ones):
#: :meth:`vegaslab.sweeps.store.Store.writer` refuses it and names the way out.
READABLE_STORE_FORMATS = (2, 3)
#: The ``runs`` table's aggregate columns renamed in format 3 (the results tables' renames are
#: :data:`vegaslab.results.RENAMED_COLUMNS`).
RENAMED_AGGREGATES = {"queue_drops_total": "queue_dropped_pkts_total"}

#: The Parquet tables of a commit, in the order they are written.
TABLES = ("runs", "flows", "queues", "links", "udp", "series_flows", "series_queues")

#: Columns whose values depend on the machine or the moment, not on the scenario: everything
#: else is bit-identical whatever executor and worker count computed the run.
NONDETERMINISTIC_COLUMNS = {"runs": ("wall_s", "sim_wall_s", "worker")}

#: Parameter value types and their Arrow type names (as recorded in ``_commit.json``).
PARAM_TYPES = ("int64", "double", "string", "bool")

#: Compaction (:meth:`vegaslab.sweeps.store.StoreWriter.compact`, run at the end of
#: :func:`vegaslab.sweeps.engine.execute`): the small commits of one parameter set are merged
#: once there are this many of them ...
COMPACT_MIN_COMMITS = 8
#: ... into commits of at most this many bytes of Parquet; a commit of half this or more is
#: left alone. A merge holds its tables in memory, so this bounds its memory, and reading a few
#: files of this size costs no more than reading one.
COMPACT_TARGET_BYTES = 64 << 20

#: Columns every table starts with besides the parameters; a parameter may not take these names.
KEY_COLUMNS = ("run_key", "seed")

COMMIT_FILE = "_commit.json"
STORE_FILE = "store.json"
#: The store's own directories: real directories, never followed if a link stands there.
STORE_DIRS = ("data", "_tmp", "_quarantine")
#: The largest ``store.json`` and ``_commit.json`` read. A commit lists its runs' keys (64
#: hex characters each): 64 MiB holds far more than a commit of ``COMPACT_TARGET_BYTES``.
MAX_STORE_FILE_BYTES = 1 << 20
MAX_COMMIT_FILE_BYTES = 64 << 20

#: What a batch's ``_commit.json`` may list: plain file names, no directory part.
PLAIN_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")

#: The shape of ``store.json`` (JSON Schema): checked before any field is used.
STORE_FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format"],
    "properties": {"format": {"type": "integer"}, "kind": {"type": "string"}, "layout": {"type": "string"}},
}

#: The shape of a commit's ``_commit.json`` (JSON Schema; docs/store-format.md): a commit
#: whose record does not match is set aside (quarantined), never read.
COMMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "commit", "runs", "files"],
    "properties": {
        "format": {"type": "integer"},
        "commit": {"type": "string", "maxLength": 128},
        "runs": {"type": "array", "items": {"type": "string", "maxLength": 128}},
        "params": {"type": "object", "additionalProperties": {"enum": ["int64", "double", "string", "bool"]}},
        "files": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["sha256", "bytes"],
                "properties": {"sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                               "bytes": {"type": "integer", "minimum": 0},
                               "rows": {"type": "integer", "minimum": 0}},
            },
        },
        "replaces": {"type": "array", "items": {"type": "string", "maxLength": 128}},
    },
}


def check_table(table: str) -> None:
    """A ``KeyError`` naming the tables when ``table`` is not one of :data:`TABLES`."""
    if table not in TABLES:
        raise KeyError(f"{table!r}: no such table; the tables are {', '.join(TABLES)}")
