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
  again whenever a file's ``stat`` moved (:data:`_VERIFIED`); the writer hashes everything
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
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import math
import os
import re
import shlex
import shutil
import socket
import stat
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from ..errors import VegaslabError
from ..safe_io import (ForeignFileError, UnsafePathError, make_dir, make_dirs, open_lock, open_regular, read_bytes,
                       read_json, write_file)
from ..safe_io import sha256_file as _sha256_file

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from ..results import Results

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

#: Layout version of a store (``store.json``, ``_commit.json`` and the key's definition).
#: 2: ``runs.meta`` holds the results document's ``meta`` (so a stored run rebuilds the
#: :class:`vegaslab.Results` that :func:`vegaslab.run` returns). 3: the columns carry their
#: unit (``sent_pkts``, ``time_s``, ``cwnd_pkts``, ...; :data:`vegaslab.results.RENAMED_COLUMNS`)
#: and the aggregate ``queue_drops_total`` is ``queue_dropped_pkts_total``.
STORE_FORMAT = 3
#: Formats a store or commit may have to be read (for one version): a format-2 store is read with
#: its columns renamed (:func:`_upgrade_table`), but never written to (its runs' keys include the
#: format, so they would all be computed again beside the old ones): :meth:`Store.writer` refuses
#: it and names the way out.
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

#: Compaction (:meth:`StoreWriter.compact`, run at the end of :func:`vegaslab.sweeps.engine.execute`):
#: the small commits of one parameter set are merged once there are this many of them ...
COMPACT_MIN_COMMITS = 8
#: ... into commits of at most this many bytes of Parquet; a commit of half this or more is
#: left alone. A merge holds its tables in memory, so this bounds its memory, and reading a few
#: files of this size costs no more than reading one.
COMPACT_TARGET_BYTES = 64 << 20

#: Columns every table starts with besides the parameters; a parameter may not take these names.
_KEY_COLUMNS = ("run_key", "seed")

_COMMIT_FILE = "_commit.json"
_STORE_FILE = "store.json"
#: The store's own directories: real directories, never followed if a link stands there.
_STORE_DIRS = ("data", "_tmp", "_quarantine")
#: The largest ``store.json`` and ``_commit.json`` read. A commit lists its runs' keys (64
#: hex characters each): 64 MiB holds far more than a commit of ``COMPACT_TARGET_BYTES``.
_MAX_STORE_FILE_BYTES = 1 << 20
_MAX_COMMIT_FILE_BYTES = 64 << 20

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

#: Commits this process verified: (device, inode, name of the directory) -> (the commit, the
#: directory's stamp when it was verified; see ``Store._stamp``). A commit is hashed once per
#: process, not once per :class:`Store` object (a sweep's result is read through
#: several), and again whenever any of its files' size, modification time, change time or
#: inode moved. Writing a file or replacing it moves those, and the change time cannot be set
#: back, so what this skips is only a re-read of bytes the process already checked: it
#: would catch decay of the disk under unchanged metadata, nothing else. The writer does not
#: use it (:meth:`Store.writer` hashes every commit when it opens: the check that decides
#: what is recomputed and quarantined), and a merge hashes the bytes it copies.
_VERIFIED: dict[tuple, tuple["Commit", tuple]] = {}
_VERIFIED_MAX = 65536
#: How many times a scan lists ``data/`` again when a directory vanished under it (each time
#: means a compaction retired a commit meanwhile).
_RESCANS = 8


class StoreError(VegaslabError):
    """A store directory that cannot be used (not a store, a newer format, not writable).
    The message names the path."""


class StoreLockedError(StoreError):
    """Another process is writing to the store (only one writer at a time)."""


class StoreWriteError(StoreError):
    """A commit could not be written (disk full, an I/O error). The message names the store,
    the runs and the file; every run committed before stays, and these count as missing."""


# ---------------------------------------------------------------------- run specs and keys


@dataclass(frozen=True, eq=False)
class RunSpec:
    """One run to compute: a scenario's TOML ``text`` and its ``source`` name, the
    ``overrides`` (``path=value`` strings, as ``--set`` takes) applied in order, the ``seed``
    (``None``: the scenario's ``run.seed``) and the swept ``params`` (column name -> value,
    labels for the tables; they do not change what runs).

    ``source`` is the file the text was read from: it names the file in error messages, gives
    the scenario its id when ``meta.id`` is not set (the file stem), and is the directory that
    referenced files (``delay_trace``) are read from, on the client only: workers receive the
    files' content, never a path. ``"<string>"`` for a text that came from no file."""

    text: str
    source: str = "<string>"
    overrides: tuple[str, ...] = ()
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "overrides", tuple(str(o) for o in self.overrides))
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_scenario(cls, scenario: Any, *, seed: int | None = None, overrides: Any = (),
                      params: Mapping[str, Any] | None = None) -> "RunSpec":
        """A spec from anything :func:`vegaslab.run` accepts (a path, a catalog id, TOML text
        or a dict) and overrides as a list or a mapping."""
        from ..scenario import normalise_overrides, scenario_source

        text, source = scenario_source(scenario)
        return cls(text, source, tuple(normalise_overrides(overrides)), seed, dict(params or {}))

    @property
    def label(self) -> str:
        """``source seed=N --set a=b ...`` for messages."""
        parts = [self.source, f"seed={self.seed if self.seed is not None else 'default'}"]
        parts += [f"--set {shlex.quote(o)}" for o in self.overrides]  # quoted: flows[0] would glob
        return " ".join(parts)


def run_key(normalized_text: str, seed: int, core_version: str) -> str:
    """The key of a run: SHA-256 (hex) of the store format, the core's semantic version, the
    seed and the core's normalised scenario text (canonical JSON: sorted keys, shortest
    round-trip numbers, referenced files' content included, no paths). See the module
    docstring for what is deliberately left out."""
    h = hashlib.sha256()
    h.update(f"vegaslab-store-run\n{STORE_FORMAT}\n{core_version}\n{int(seed)}\n".encode("utf-8"))
    h.update(normalized_text.encode("utf-8"))
    return h.hexdigest()


@dataclass(frozen=True, eq=False)
class PreparedRun:
    """A spec resolved by the core on the client: its ``key``, the ``normalized`` scenario
    text, the effective ``seed``, the ``files`` it references (name as written -> content,
    shipped to the worker) and the ``core_version`` the key was made with. ``error`` is set
    (and ``key`` is empty) when the core rejects the spec."""

    spec: RunSpec
    key: str
    normalized: str = ""
    seed: int = 0
    files: Mapping[str, bytes] = field(default_factory=dict)
    core_version: str = ""
    error: str = ""
    #: SHA-256 of ``normalized`` (what a worker checks its own normalisation against).
    normalized_sha256: str = ""

    def light(self) -> "PreparedRun":
        """This run without the scenario text and the normalised scenario (what is sent to a
        worker, with the text sent once per distinct text beside it)."""
        import dataclasses

        return dataclasses.replace(self, spec=dataclasses.replace(self.spec, text=""), normalized="")


def _referenced_files(normalized: str, source: str) -> dict[str, bytes]:
    """The content of each file the normalised scenario lists in ``files``, read relative to
    the source file's directory and checked against the SHA-256 the core recorded."""
    if '"files":[]' in normalized:  # the common case: nothing to read (canonical JSON, no spaces)
        return {}
    refs = json.loads(normalized).get("files") or []
    # As the core resolves them: against the scenario file's directory when the source is an
    # existing file, else against the working directory.
    base = Path(source).parent if Path(source).is_file() else Path(".")
    out: dict[str, bytes] = {}
    for ref in refs:
        name = str(ref["name"])
        path = base / name
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"{source}: {ref.get('field', 'a field')}: cannot read {name}: "
                             f"{exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != ref["sha256"]:
            raise StoreError(f"{source}: {ref.get('field', 'a field')}: {name} changed while the runs were planned; "
                             "plan again")
        out[name] = data
    return out


def prepare(specs: Iterable[RunSpec]) -> list[PreparedRun]:
    """Resolve every spec with the core (on this machine): its key, normalised text and
    referenced files. A spec the core rejects gets ``error`` (the core's message, naming the
    file and field) instead of raising, so one bad point does not hide the others."""
    from ..errors import ScenarioError
    from ..core import load_core

    core = load_core()
    version = str(core.version())
    specs = list(specs)
    for spec in specs:
        if not isinstance(spec, RunSpec):
            raise TypeError(f"expected a RunSpec, got {type(spec).__name__}")
    texts = _normalized_texts(core, specs)
    _warn_of_traces(specs, texts)
    out: list[PreparedRun] = []
    for spec, normalized in zip(specs, texts):
        try:
            if isinstance(normalized, BaseException):
                raise normalized
            seed = spec.seed if spec.seed is not None else int(json.loads(normalized)["seed"])
            files = _referenced_files(normalized, spec.source)
        except (ScenarioError, VegaslabError, FileNotFoundError) as exc:
            out.append(PreparedRun(spec, "", error=str(exc)))
            continue
        out.append(PreparedRun(spec, run_key(normalized, seed, version), normalized, seed, files, version,
                               normalized_sha256=hashlib.sha256(normalized.encode("utf-8")).hexdigest()))
    return out


def _warn_of_traces(specs: Sequence[RunSpec], texts: Sequence[str | BaseException]) -> None:
    """A ``UserWarning`` per scenario with a ``[trace]``: the runs of a store (sweeps,
    ``reproduce``, ``robustness``) write tables only, so its trace is not written; said once,
    not silently dropped. (A normalised scenario has a top-level ``"trace"`` key only then.)"""
    import warnings

    named: set[str] = set()
    for spec, text in zip(specs, texts):
        if isinstance(text, str) and '"trace":{' in text and spec.source not in named:
            named.add(spec.source)
            warnings.warn(f"{spec.source}: [trace] is not written by the runs of a sweep, reproduce or robustness "
                          "(they write tables to a results store); trace one run with `vegaslab run --trace`",
                          stacklevel=3)


def _normalized_texts(core: Any, specs: Sequence[RunSpec]) -> list[str | BaseException]:
    """Each spec's normalised scenario (or the error the core gave), the specs that differ only
    in their seed resolved by one call (``normalize_scenario_seeds``: one parse for a sweep
    point's seeds, not one per seed)."""
    from ..core import call_core
    from ..simulation import check_seed

    groups: dict[tuple, list[int]] = {}
    texts: list[str | BaseException] = [""] * len(specs)
    for i, spec in enumerate(specs):
        try:
            check_seed(spec.seed, spec.source)
        except VegaslabError as exc:
            texts[i] = exc
            continue
        if spec.seed is None:  # the scenario's own seed: resolved alone
            groups.setdefault((i,), []).append(i)
        else:
            groups.setdefault((id(spec.text), spec.text, spec.source, tuple(spec.overrides)), []).append(i)
    for members in groups.values():
        first = specs[members[0]]
        try:
            if len(members) == 1:
                texts[members[0]] = call_core(core.normalize_scenario, first.text, first.source, first.seed,
                                               list(first.overrides))
                continue
            done = call_core(core.normalize_scenario_seeds, first.text, first.source,
                              [specs[i].seed for i in members], list(first.overrides))
        except (VegaslabError, FileNotFoundError) as exc:
            for i in members:
                texts[i] = exc
            continue
        for i, text in zip(members, done):
            texts[i] = text
    return texts


def prepared_runs(specs: Iterable[RunSpec | PreparedRun]) -> list[PreparedRun]:
    specs = list(specs)
    todo = [s for s in specs if not isinstance(s, PreparedRun)]
    done = iter(prepare(todo))
    return [s if isinstance(s, PreparedRun) else next(done) for s in specs]


def param_types(specs: Iterable[RunSpec | PreparedRun]) -> dict[str, str]:
    """The column type of each parameter over ``specs`` (see the module docstring). Raises
    :class:`StoreError` naming the parameter when its values mix types that do not convert
    (a string and a number), or when it is named like a fixed column."""
    kinds: dict[str, set[str]] = {}
    for s in specs:
        spec = s.spec if isinstance(s, PreparedRun) else s
        for name, value in spec.params.items():
            if isinstance(value, bool):
                kind = "bool"
            elif isinstance(value, int):
                kind = "int64"
            elif isinstance(value, float):
                kind = "double"
            elif isinstance(value, str):
                kind = "string"
            else:
                raise StoreError(f"parameter {name!r}: values must be integers, floats, strings or booleans, "
                                 f"got {type(value).__name__} {value!r}")
            kinds.setdefault(str(name), set()).add(kind)
    out: dict[str, str] = {}
    for name, ks in kinds.items():
        if name in _KEY_COLUMNS or not name:
            raise StoreError(f"parameter {name!r}: the name is taken by a column every table has "
                             f"({', '.join(_KEY_COLUMNS)}); rename the parameter")
        if name in _identity_columns():
            raise StoreError(f"parameter {name!r}: the name is the column that tells a table's rows apart "
                             f"({', '.join(sorted(_identity_columns()))}); give the axis another name (name = ...)")
        if len(ks) == 1:
            out[name] = ks.pop()
        elif ks == {"int64", "double"}:
            out[name] = "double"
        else:
            raise StoreError(f"parameter {name!r}: values mix {' and '.join(sorted(ks))}; "
                             "one type per parameter (integers and floats may mix)")
    return out


def _identity_columns() -> frozenset[str]:
    """The columns that tell a results table's rows apart (``flow``, ``queue``, ``link``,
    ``source``, and ``time_s`` of the series): a parameter may not take their names, or the rows
    of several flows would merge. A parameter named like another results column replaces it in
    the tidy tables (docs/store-format.md)."""
    from ..results import TABLES

    return frozenset([key for key, _columns in TABLES.values()] + ["time_s"])


def _nan_if_none(x: Any) -> float:
    return math.nan if x is None else float(x)


#: What a batch's ``_commit.json`` may list: plain file names, no directory part.
_PLAIN_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def _coerce(value: Any, kind: str) -> Any:
    return float(value) if kind == "double" else value


# ---------------------------------------------------------------------- building the tables (worker side)


def _arrow_type(kind: str) -> "pa.DataType":
    import pyarrow as pa

    return {"int64": pa.int64(), "double": pa.float64(), "string": pa.string(), "bool": pa.bool_()}[kind]


def _stored_column(arr: "pa.Array", json_floats: bool) -> "pa.Array":
    """One core column (:func:`vegaslab.core.run_core`) as the store keeps it: integers ``int64``,
    names (a dictionary) ``string``, a float that is not a number null; the rest as it is.
    ``json_floats``: infinities are null too. The results tables were stored from the core's
    JSON form, which has neither NaN nor infinity (both are written as null), and the time
    series from typed columns where only NaN was null; each keeps its rule, so a store written
    before and one written now hold the same bytes."""
    import numpy as np
    import pyarrow as pa

    kind = arr.type
    if pa.types.is_dictionary(kind):
        return arr.dictionary_decode()
    if pa.types.is_integer(kind):
        return arr.cast(pa.int64())
    if pa.types.is_floating(kind):
        values = arr.to_numpy(zero_copy_only=False)  # a null as NaN
        missing = ~np.isfinite(values) if json_floats else np.isnan(values)
        return pa.array(values, type=pa.float64(), mask=missing)
    return arr


def _stored_table(batch: "pa.RecordBatch", columns: Sequence[str], json_floats: bool) -> "pa.Table | None":
    """One results table or time series from the core as Arrow (:func:`_stored_column`),
    documented columns first in :mod:`vegaslab.results` order, then any others the core
    added; entirely-null columns are ``double`` (the name column excepted). None when empty."""
    import pyarrow as pa

    if batch.num_rows == 0:
        return None
    table = pa.table({f.name: _stored_column(batch.column(i), json_floats) for i, f in enumerate(batch.schema)})
    order = [c for c in columns if c in table.column_names] + [c for c in table.column_names if c not in columns]
    table = table.select(order)
    for i, name in enumerate(table.column_names):
        if pa.types.is_null(table.schema.field(i).type):
            target = pa.string() if name == columns[0] else pa.float64()
            table = table.set_column(i, name, table.column(i).cast(target))
    return table


def _with_keys(table: "pa.Table", key: str, seed: int, params: Mapping[str, Any], types: Mapping[str, str]) -> "pa.Table":
    import pyarrow as pa

    n = table.num_rows
    core_columns = list(table.column_names)
    shadowed = [name for name in ("run_key", "seed", *types) if name in core_columns]
    front = [("run_key", pa.repeat(pa.scalar(key, pa.string()), n))]
    front += [(name, pa.repeat(pa.scalar(_coerce(params[name], kind) if name in params else None, _arrow_type(kind)), n))
              for name, kind in types.items()]
    front.append(("seed", pa.repeat(pa.scalar(seed, pa.int64()), n)))
    for i, (name, arr) in enumerate(front):
        if name in table.column_names:  # a core column named like a parameter: the parameter wins
            table = table.drop_columns([name])
        table = table.add_column(i, name, arr)
    # The run's own layout travels with its table (a commit's tables are the union of its
    # runs' columns): see _layout and Store.load_results.
    return table.replace_schema_metadata({_LAYOUT_KEY: json.dumps({"columns": core_columns, "shadowed": shadowed})})


#: Schema metadata key of a run's table: the core's columns in order, and those a parameter replaced.
_LAYOUT_KEY = b"vegaslab.layout"


def _layout(run: "StoredRun") -> str:
    """The ``runs.layout`` value of a run: per table, the columns the core wrote (in order),
    and the columns a parameter named like them replaced (then the run cannot be rebuilt)."""
    columns: dict[str, list[str]] = {}
    shadowed: set[str] = set()
    for name, table in run.tables.items():
        meta = (table.schema.metadata or {}).get(_LAYOUT_KEY)
        if meta is None:
            continue
        info = json.loads(meta)
        columns[name] = list(info["columns"])
        shadowed.update(info["shadowed"])
    return json.dumps({"columns": columns, "shadowed": sorted(shadowed)}, sort_keys=True)


def _aggregates(flows: "pa.Table | None", queues: "pa.Table | None") -> dict[str, Any]:
    """Per-run numbers over the flows and queues (the ``runs`` table's aggregate columns), from
    the tables as stored (:func:`stored_tables`: a missing or non-finite value is None)."""
    from ..fairness import jain_index

    def values(table: "pa.Table | None", col: str, default: Any = None) -> list:
        if table is None:
            return []
        if col not in table.column_names:
            return [default] * table.num_rows
        return table.column(col).to_pylist()

    def total(table: "pa.Table | None", col: str) -> float | int | None:
        vals = values(table, col)
        if not vals or any(v is None for v in vals):
            return None
        return sum(vals)

    done = [v for v in values(flows, "completion_time_s") if v is not None]
    return {
        "flows": 0 if flows is None else flows.num_rows,
        # A missing value makes a total NaN (missing data), never 0.
        "throughput_bps_total": _nan_if_none(total(flows, "throughput_bps")),
        "goodput_bps_total": _nan_if_none(total(flows, "goodput_bps")),
        "jain_throughput": jain_index(values(flows, "throughput_bps", math.nan)),
        "retransmitted_pkts_total": total(flows, "retransmitted_pkts"),
        "timeouts_total": total(flows, "timeouts"),
        "dropped_pkts_total": total(flows, "dropped_pkts"),
        "queue_dropped_pkts_total": total(queues, "dropped_pkts"),
        "flows_completed": len(done),
        "completion_time_s_max": max(done) if done else math.nan,
    }


def stored_tables(tables: Mapping[str, "pa.RecordBatch"]) -> dict[str, "pa.Table | None"]:
    """A run's tables from the core (:func:`vegaslab.core.run_core`) as the store keeps them
    (:func:`_stored_table`), before the keys go in front; None for an empty one."""
    from ..results import TABLES as RESULT_TABLES

    return {name: _stored_table(tables[name], RESULT_TABLES[name][1], json_floats=not name.startswith("series_"))
            for name in RESULT_TABLES}


def keyed_tables(tables: Mapping[str, "pa.Table | None"], key: str, seed: int, params: Mapping[str, Any],
                 types: Mapping[str, str]) -> dict[str, "pa.Table"]:
    """The non-``runs`` tables of one run (:func:`stored_tables`), each with ``run_key``, the
    parameters and ``seed`` in front. Empty tables are left out."""
    return {name: _with_keys(table, key, seed, params, types) for name, table in tables.items() if table is not None}


def run_row(prepared: PreparedRun, meta: Mapping[str, Any], tables: Mapping[str, "pa.Table | None"], *,
            wall_s: float, worker: str, versions: Mapping[str, str], types: Mapping[str, str]) -> dict[str, Any]:
    """The ``runs`` row of one run: key, parameters, seed, aggregates (over ``tables``, as
    :func:`stored_tables` gives them), wall times and the provenance that re-runs it exactly;
    ``meta`` is the results' ``meta`` as the core wrote it."""
    from ..simulation import PROVENANCE_FORMAT, scenario_hash

    spec = prepared.spec
    command = None
    if not spec.source.startswith("<"):
        parts = ["vegaslab", "run", spec.source, "--no-plots", "--seed", str(prepared.seed)]
        for o in spec.overrides:
            parts += ["--set", o]
        command = shlex.join(parts)
    row: dict[str, Any] = {"run_key": prepared.key}
    row.update({name: _coerce(spec.params.get(name), kind) for name, kind in types.items()})
    row["seed"] = prepared.seed
    row["scenario_id"] = meta.get("scenario")
    row.update(_aggregates(tables.get("flows"), tables.get("queues")))
    row.update({
        "events": meta.get("events"),
        "duration_s": meta.get("duration_s"),
        "sim_wall_s": meta.get("wall_time_s"),
        "wall_s": float(wall_s),
        "worker": worker,
        "source": spec.source,
        "overrides": list(spec.overrides),
        "core_version": versions.get("core_version"),
        "vegaslab_version": versions.get("vegaslab_version"),
        "source_revision": versions.get("source_revision"),
        "provenance_format": PROVENANCE_FORMAT,
        "scenario_sha256": scenario_hash(json.loads(prepared.normalized)),
        "command": command,
        "scenario": prepared.normalized,
        # The client's source name, never the worker's temporary copy of the scenario file.
        # In the core's key order; wall_time_s (machine-dependent) is kept apart in sim_wall_s
        # and its place held by null, so the stored meta is the same on every machine.
        "meta": json.dumps({**{k: (None if k == "wall_time_s" else v) for k, v in meta.items()},
                            "source": spec.source}, allow_nan=True),
    })
    return row


def runs_table(rows: Sequence[Mapping[str, Any]], types: Mapping[str, str]) -> "pa.Table":
    """The ``runs`` table of a batch of run rows, with fixed column types (so that every
    commit's ``runs`` file has the same schema, parameters aside)."""
    import pyarrow as pa

    fields = [pa.field("run_key", pa.string())]
    fields += [pa.field(name, _arrow_type(kind)) for name, kind in types.items()]
    fields += [
        pa.field("seed", pa.int64()), pa.field("scenario_id", pa.string()),
        pa.field("flows", pa.int64()), pa.field("throughput_bps_total", pa.float64()),
        pa.field("goodput_bps_total", pa.float64()), pa.field("jain_throughput", pa.float64()),
        pa.field("retransmitted_pkts_total", pa.int64()), pa.field("timeouts_total", pa.int64()),
        pa.field("dropped_pkts_total", pa.int64()), pa.field("queue_dropped_pkts_total", pa.int64()),
        pa.field("flows_completed", pa.int64()), pa.field("completion_time_s_max", pa.float64()),
        pa.field("events", pa.int64()), pa.field("duration_s", pa.float64()),
        pa.field("sim_wall_s", pa.float64()), pa.field("wall_s", pa.float64()), pa.field("worker", pa.string()),
        pa.field("source", pa.string()), pa.field("overrides", pa.list_(pa.string())),
        pa.field("core_version", pa.string()), pa.field("vegaslab_version", pa.string()),
        pa.field("source_revision", pa.string()), pa.field("provenance_format", pa.int64()),
        pa.field("scenario_sha256", pa.string()), pa.field("command", pa.string()),
        pa.field("scenario", pa.string()), pa.field("meta", pa.string()), pa.field("layout", pa.string()),
    ]
    return pa.Table.from_pylist(list(rows), schema=pa.schema(fields))


# ---------------------------------------------------------------------- the store


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Commit:
    """A committed batch: its ``id``, directory, run keys, parameter types and files, and the
    ids of the commits it ``replaces`` (a merged commit of :meth:`StoreWriter.compact`)."""

    id: str
    path: Path
    runs: tuple[str, ...]
    params: Mapping[str, str]
    files: Mapping[str, Mapping[str, Any]]
    replaces: tuple[str, ...] = ()
    #: Its ``_commit.json`` format (:data:`READABLE_STORE_FORMATS`).
    format: int = STORE_FORMAT

    @property
    def bytes(self) -> int:
        """The size of its table files."""
        return sum(int(m.get("bytes") or 0) for m in self.files.values())


@dataclass(frozen=True)
class Broken:
    """A commit directory that failed verification, and why (its runs count as missing)."""

    id: str
    path: Path
    reason: str


class Store:
    """A results store at ``path`` (created on first use unless ``create=False``).

    Reading never locks: :meth:`read` and :meth:`missing` see every commit that has landed,
    also while a sweep is writing. Writing goes through :meth:`writer` (one writer at a
    time)."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        self.path = Path(path)
        self._superseded: list[Commit | Broken] = []
        meta = self.path / _STORE_FILE
        if not os.path.lexists(meta):
            if not create:
                raise StoreError(f"{self.path}: not a vegaslab store (no {_STORE_FILE})")
            self._create()
        try:
            info = read_json(meta, max_bytes=_MAX_STORE_FILE_BYTES, schema=STORE_FILE_SCHEMA)
        except ForeignFileError as exc:
            raise StoreError(f"{exc}; not a vegaslab store, or a damaged one: use another directory") from None
        except OSError as exc:
            raise StoreError(f"{meta}: unreadable: {exc.strerror or exc}") from None
        if info["format"] not in READABLE_STORE_FORMATS:
            raise StoreError(f"{meta}: store format {info['format']!r}; "
                             f"this vegaslab reads format {STORE_FORMAT}; its runs would be computed again: use a "
                             "new directory (another --out) or delete this one")
        for name in _STORE_DIRS:  # never followed out of the store
            d = self.path / name
            if os.path.lexists(d) and not stat.S_ISDIR(os.lstat(d).st_mode):
                raise StoreError(f"{d}: is not a directory (a symbolic link or a file); a store's {name}/ is a "
                                 "directory vegaslab makes: move it away")
        #: The store's format: an older readable one is read, never written (:meth:`writer`).
        self.format: int = info["format"]

    def _create(self) -> None:
        """Make a new store at :attr:`path`: only in an absent or empty directory (or one
        holding just an empty ``data/``, what a creation cut short leaves), with ``data/``
        and ``store.json`` written under the one rule (:mod:`vegaslab.safe_io`)."""
        if os.path.lexists(self.path) and not self.path.is_dir():
            raise StoreError(f"{self.path}: exists and is not a directory")
        if self.path.is_dir():
            others = sorted(p.name for p in self.path.iterdir()
                            if not (p.name == "data" and not p.is_symlink() and p.is_dir() and not any(p.iterdir())))
            if others:
                raise StoreError(f"{self.path}: holds other files ({', '.join(others[:3])}) and is not a vegaslab "
                                 "store; choose an empty or new directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            make_dir(self.path, "data")
            write_file(self.path, _STORE_FILE, json.dumps({"format": STORE_FORMAT, "kind": "vegaslab results store",
                                                           "layout": "docs/store-format.md"}, indent=2) + "\n")
        except UnsafePathError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the store: {exc.strerror or exc}") from None

    # ------------------------------------------------------------------ commits

    def _scan(self, *, fresh: bool = False) -> tuple[list[Commit], list[Broken]]:
        """Every commit directory under ``data/``, verified: the live commits in id order, and
        the broken ones. A commit that a verified merged commit replaces (and whose runs it
        holds) is left out of both (see :meth:`superseded`).

        A directory that vanishes while it is checked was retired by a compaction, which
        renames the merged commit into ``data/`` before it retires anything: the listing is
        taken again (so the merged commit is seen), and a reader racing a compaction never
        loses a run. A commit is hashed again only when the ``stat`` of one of its files
        (size, modification and change time, inode) differs from when this process last
        verified it, unless ``fresh``: see :data:`_VERIFIED`."""
        data = self.path / "data"
        for _attempt in range(_RESCANS):
            good: list[Commit] = []
            broken: list[Broken] = []
            vanished = False
            try:
                names = sorted(os.listdir(data))
            except FileNotFoundError:
                return good, broken
            for name in names:
                d = data / name
                try:
                    mode = os.lstat(d).st_mode
                except FileNotFoundError:
                    vanished = True
                    continue
                if stat.S_ISLNK(mode):  # never followed: set aside like a broken commit
                    broken.append(Broken(name, d, f"{d}: a symbolic link, not a commit directory; not followed"))
                    continue
                if not stat.S_ISDIR(mode):
                    continue  # a stray file: not a commit
                commit, reason = self._checked(d, fresh)
                if commit is not None:
                    good.append(commit)
                elif not d.exists():
                    vanished = True
                else:
                    broken.append(Broken(d.name, d, reason))
            if not vanished:
                break
        else:
            raise StoreError(f"{self.path}: commits kept vanishing while the store was read ({_RESCANS} times: "
                             "compactions in quick succession); read again")
        dead = self._superseded_ids(good, broken)
        self._superseded = [c for c in good if c.id in dead] + [b for b in broken if b.id in dead]
        return [c for c in good if c.id not in dead], [b for b in broken if b.id not in dead]

    @staticmethod
    def _superseded_ids(good: Sequence[Commit], broken: Sequence[Broken]) -> set[str]:
        """The ids of commits that a verified commit replaces and whose runs it all holds
        (so leaving them out loses nothing)."""
        by_id = {c.id: c for c in good}
        dead: set[str] = set()
        for c in good:
            if not c.replaces:
                continue
            holds = set(c.runs)
            for old in c.replaces:
                if old == c.id:
                    continue
                if old in by_id and not set(by_id[old].runs) <= holds:
                    continue  # not what this commit merged: keep it
                dead.add(old)
        # A replaced commit that is broken now holds nothing the merged one lacks (the merge
        # checked every byte it copied); a broken commit nobody replaces stays broken.
        return {d for d in dead if d in by_id or any(b.id == d for b in broken)}

    def _checked(self, d: Path, fresh: bool) -> tuple[Commit | None, str]:
        stamp = self._stamp(d)
        if not stamp:
            return None, f"{d}: unreadable or vanished"
        cache_key = stamp[0]
        cached = None if fresh else _VERIFIED.get(cache_key)
        if cached is not None and cached[1] == stamp:
            commit = cached[0]
            return (commit if commit.path == d else dataclasses.replace(commit, path=d)), ""
        commit, reason = self._verify(d)
        if commit is None:
            _VERIFIED.pop(cache_key, None)
        else:
            if len(_VERIFIED) >= _VERIFIED_MAX:
                _VERIFIED.clear()
            _VERIFIED[cache_key] = (commit, stamp)
        return commit, reason

    @staticmethod
    def _stamp(d: Path) -> tuple:
        """What identifies a commit directory's state: its device, inode and name, then each
        entry's name, size, modification and change times and inode. Empty when unreadable."""
        try:
            st = d.lstat()
            files = tuple(sorted((p.name, fs.st_size, fs.st_mtime_ns, fs.st_ctime_ns, fs.st_ino)
                                 for p in d.iterdir() for fs in [p.lstat()]))
        except OSError:
            return ()
        return ((st.st_dev, st.st_ino, d.name), files)

    @staticmethod
    def _verify(d: Path) -> tuple[Commit | None, str]:
        record = d / _COMMIT_FILE
        try:
            # A regular file of bounded size, nested at most MAX_JSON_DEPTH deep, of the
            # shape vegaslab writes (COMMIT_SCHEMA), or the commit is set aside.
            info = read_json(record, max_bytes=_MAX_COMMIT_FILE_BYTES, schema=COMMIT_SCHEMA)
        except FileNotFoundError:
            return None, f"{record}: missing"
        except ForeignFileError as exc:
            return None, str(exc)
        runs = tuple(info["runs"])
        files = info["files"]
        params = dict(info.get("params") or {})
        replaces = tuple(info.get("replaces") or ())
        fmt = info["format"]
        if fmt not in READABLE_STORE_FORMATS or info["commit"] != d.name:
            return None, f"{record}: format or id does not match"
        for name, meta in files.items():
            # Only a plain file name of this directory (never a path a store file could aim
            # anywhere, e.g. at /dev/zero), and only a regular file, is checked and trusted.
            if not _PLAIN_FILE.fullmatch(name):
                return None, f"{record}: lists {name!r}, which is not a plain file name of the batch"
            f = d / name
            try:
                st = os.lstat(f)
            except OSError:
                return None, f"{f}: listed in {_COMMIT_FILE} but missing"
            if not stat.S_ISREG(st.st_mode):
                return None, f"{f}: listed in {_COMMIT_FILE} but not a regular file"
            if st.st_size != meta["bytes"]:
                return None, f"{f}: {st.st_size} bytes, {_COMMIT_FILE} records {meta['bytes']} (truncated or replaced)"
            try:
                digest = _sha256_file(f)
            except (OSError, ForeignFileError) as exc:
                return None, f"{f}: {getattr(exc, 'reason', None) or exc}"
            if digest != meta["sha256"]:
                return None, f"{f}: SHA-256 differs from the one in {_COMMIT_FILE} (corrupted or replaced)"
            why = _table_problem(f)
            if why:
                return None, f"{f}: {why}"
        extra = sorted(p.name for p in d.iterdir() if p.name != _COMMIT_FILE and p.name not in files)
        if extra:
            return None, f"{d}: holds files its {_COMMIT_FILE} does not list ({', '.join(extra[:3])})"
        return Commit(d.name, d, runs, params, files, replaces, fmt), ""

    def commits(self) -> list[Commit]:
        """The verified commits, in id order."""
        return self._scan()[0]

    def broken(self) -> list[Broken]:
        """Commit directories that failed verification (their runs count as missing)."""
        return self._scan()[1]

    def superseded(self) -> list[Commit | Broken]:
        """Commits that a merged commit replaces, left behind by a compaction that was
        stopped before it retired them (the next writer removes them). Never read."""
        self._scan()
        return list(self._superseded)

    def keys(self) -> set[str]:
        """The keys of every stored (verified) run."""
        return {k for c in self.commits() for k in c.runs}

    def __len__(self) -> int:
        return len(self.keys())

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def missing(self, specs: Iterable[RunSpec | PreparedRun]) -> list[RunSpec]:
        """The specs (in order, duplicates kept) whose runs are not stored: not in a verified
        commit, or rejected by the core (those are never stored)."""
        prepared = prepared_runs(specs)
        stored = self.keys()
        return [p.spec for p in prepared if p.error or p.key not in stored]

    # ------------------------------------------------------------------ reading

    def files(self, table: str) -> list[Path]:
        """The Parquet files of ``table`` in verified commits (for pyarrow, DuckDB, polars)."""
        _check_table(table)
        name = f"{table}.parquet"
        return [c.path / name for c in self.commits() if name in c.files]

    def read_arrow(self, table: str = "flows", keys: Iterable[str] | None = None) -> "pa.Table":
        """``table`` over every verified commit (or only the runs ``keys``), as one Arrow
        table: schemas unified by name (a parameter one commit lacks is null there), each run
        once, rows ordered by run key (then as the core wrote them)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        _check_table(table)
        wanted = set(keys) if keys is not None else None
        for attempt in range(_RESCANS):
            seen: set[str] = set()
            parts = []
            try:
                for c in self.commits():
                    own = [k for k in c.runs if k not in seen and (wanted is None or k in wanted)]
                    seen.update(own)
                    name = f"{table}.parquet"
                    if not own or name not in c.files:
                        continue
                    try:
                        t = _upgrade_table(_read_parquet(c.path / name), c)
                        if len(own) != len(c.runs):
                            t = t.filter(pc.is_in(t.column("run_key"), value_set=pa.array(own, pa.string())))
                    except _UNREADABLE as exc:
                        raise _unreadable(c, exc) from None
                    parts.append(t)
                break
            except FileNotFoundError:
                # A compaction retired a commit between the scan and the read: its runs are
                # in the merged commit, which the next scan sees.
                if attempt == _RESCANS - 1:
                    raise StoreError(f"{self.path}: commits kept vanishing while the store was read "
                                     f"({_RESCANS} times: compactions in quick succession); read again") from None
        if not parts:
            return pa.table({"run_key": pa.array([], pa.string()), "seed": pa.array([], pa.int64())})
        try:
            t = pa.concat_tables(parts, promote_options="permissive")
        except _UNREADABLE as exc:  # commits whose columns cannot be unified
            raise StoreError(f"{self.path}: the commits' {table} tables do not fit together ({type(exc).__name__}: "
                             f"{_gist(exc)}); a commit was not written by vegaslab") from None
        t = t.append_column("__row", pa.array(range(t.num_rows), pa.int64()))
        return t.sort_by([("run_key", "ascending"), ("__row", "ascending")]).drop_columns(["__row"])

    def read(self, table: str = "flows", keys: Iterable[str] | None = None) -> "pd.DataFrame":
        """:meth:`read_arrow` as a pandas DataFrame (a fresh RangeIndex)."""
        return self.read_arrow(table, keys).to_pandas()

    def results(self, specs: Iterable[RunSpec | PreparedRun], table: str = "flows") -> "pd.DataFrame":
        """The rows of ``table`` for ``specs`` (stored ones; see :meth:`missing`), one block
        per spec in spec order, with the specs' own parameter columns (see the module
        docstring: stored parameter columns are those of the spec that computed the run)."""
        import pandas as pd

        prepared = [p for p in prepared_runs(specs) if not p.error]
        types = param_types(prepared)
        stored_params = {n for c in self.commits() for n in c.params}
        rows = self.read(table, keys={p.key for p in prepared})
        rows = rows.drop(columns=[c for c in stored_params if c in rows.columns and c not in _KEY_COLUMNS])
        front = pd.DataFrame({"run_key": [p.key for p in prepared], "__spec": range(len(prepared))})
        for name, kind in types.items():
            values = [_coerce(p.spec.params.get(name), kind) if name in p.spec.params else None for p in prepared]
            front[name] = pd.array(values, dtype={"int64": "Int64", "double": "Float64", "string": "string",
                                                  "bool": "boolean"}[kind])
        merged = front.merge(rows, on="run_key", how="inner", sort=False)
        merged = merged.sort_values("__spec", kind="stable").drop(columns="__spec").reset_index(drop=True)
        return merged

    def load_results(self, keys: Iterable[str]) -> dict[str, "Results"]:
        """The :class:`vegaslab.Results` of each stored run among ``keys``, as
        :func:`vegaslab.run` returns it: the same tables (the key, parameter and seed
        columns removed), the core's ``meta`` and ``meta["provenance"]`` rebuilt from the
        run's recorded provenance; each table has exactly the columns the core wrote for that
        run, in its order (``runs.layout``), whatever other runs share its commit. Left out:
        runs not stored, and runs stored with a parameter named like a column the core wrote
        (the parameter replaced that column in the store, so the core's numbers are gone).

        Reads one commit at a time and cuts its tables by run in Arrow, so that the peak
        memory is the Results themselves plus one commit (reading each table whole and
        grouping it in pandas took 10 GB and 32 s for ``reproduce --all``'s 765 runs)."""
        wanted = set(keys)
        for attempt in range(_RESCANS):
            try:
                return self._load_results(wanted)
            except FileNotFoundError:
                # A compaction retired a commit meanwhile: its runs are in the merged one.
                if attempt == _RESCANS - 1:
                    raise StoreError(f"{self.path}: commits kept vanishing while the store was read "
                                     f"({_RESCANS} times: compactions in quick succession); read again") from None
        return {}  # pragma: no cover - the loop returns or raises

    def _load_results(self, wanted: set[str]) -> dict[str, "Results"]:
        import numpy as np
        import pandas as pd

        from ..results import TABLES as RESULT_TABLES
        from ..results import Results, make_frame

        out: dict[str, Results] = {}
        for c in self.commits():
            try:
                if not any(k in wanted and k not in out for k in c.runs):
                    continue
                rows = {row["run_key"]: row for row in _upgrade_table(_read_parquet(c.path / "runs.parquet"), c).to_pylist()
                        if row["run_key"] in wanted and row["run_key"] not in out}
                layouts = {k: _upgrade_layout(_json_cell(row["layout"], c), c) if isinstance(row.get("layout"), str) else None
                           for k, row in rows.items()}
                # A run whose parameter is named like a column the core wrote had that column
                # replaced (see the module docstring): it cannot give back the core's numbers.
                own = {k for k, lay in layouts.items() if not (lay and lay.get("shadowed"))}
                if not own:
                    continue
                front = {"run_key", "seed", *c.params}
                parts: dict[str, dict[str, list[pd.DataFrame]]] = {name: {} for name in RESULT_TABLES}
                for name in RESULT_TABLES:
                    if f"{name}.parquet" not in c.files:
                        continue
                    t = _upgrade_table(_read_parquet(c.path / f"{name}.parquet"), c)
                    # A run's rows are contiguous: cut where the (dictionary-encoded) key changes.
                    encoded = t.column("run_key").combine_chunks().dictionary_encode()
                    codes = encoded.indices.to_numpy(zero_copy_only=False)
                    names = encoded.dictionary.to_pylist()
                    starts = np.concatenate(([0], np.flatnonzero(np.diff(codes)) + 1)) if len(codes) else np.array([], int)
                    ends = np.append(starts[1:], len(codes))
                    for start, end in zip(starts.tolist(), ends.tolist()):
                        key = names[codes[start]]
                        if key not in own:
                            continue
                        piece = t.slice(start, end - start)
                        lay = layouts[key]
                        # Exactly the run's own columns, in the core's order: a commit's table is
                        # the union of its runs' columns (another algorithm's variables are null).
                        keep = (lay["columns"].get(name, []) if lay else
                                [n for n in piece.column_names if n not in front])
                        parts[name].setdefault(key, []).append(piece.select(keep).to_pandas())
                for key in own:
                    row = rows[key]
                    meta = _json_cell(row["meta"], c) if isinstance(row.get("meta"), str) else {}
                    if row.get("sim_wall_s") is not None and not math.isnan(row["sim_wall_s"]):
                        meta["wall_time_s"] = float(row["sim_wall_s"])  # stored apart (see run_row)
                    elif meta.get("wall_time_s", 0) is None:
                        del meta["wall_time_s"]
                    meta["provenance"] = {
                        "format": int(row["provenance_format"]), "source": row["source"],
                        "overrides": [str(o) for o in row["overrides"]], "seed": int(row["seed"]),
                        "scenario_sha256": row["scenario_sha256"], "vegaslab_version": row["vegaslab_version"],
                        "core_version": row["core_version"], "source_revision": row["source_revision"],
                        "command": row["command"], "scenario": _json_cell(row["scenario"], c),
                    }
                    tables = {}
                    for name, (_, columns) in RESULT_TABLES.items():
                        got = parts[name].get(key)
                        df = None if not got else (got[0] if len(got) == 1 else pd.concat(got, ignore_index=True))
                        tables[name] = make_frame(df, columns)
                    out[key] = Results(meta=meta, **tables)
            except _UNREADABLE as exc:
                raise _unreadable(c, exc) from None
        return out

    # ------------------------------------------------------------------ writing

    @contextmanager
    def writer(self, *, batch_runs: int = 256, flush_s: float = 2.0) -> Iterator["StoreWriter"]:
        """The store's single writer: locks the store, removes what killed writers left in
        ``_tmp/``, moves broken commits to ``_quarantine/``, and commits what it is given
        (:meth:`StoreWriter.add`) in batches; the last batch is committed when the block
        ends, also on an exception or Ctrl-C. :class:`StoreLockedError` when another
        process holds the lock."""
        if self.format != STORE_FORMAT:
            raise StoreError(f"{self.path / _STORE_FILE}: store format {self.format}, written by vegaslab 0.2 (column "
                             f"names without units); this vegaslab reads it but writes format {STORE_FORMAT}, and its "
                             "runs would be computed again: use a new directory (another --out) or delete this one")
        w = StoreWriter(self, batch_runs=batch_runs, flush_s=flush_s)
        try:
            yield w
        finally:
            w.close()

    def compact(self, *, min_commits: int = 2, target_bytes: int = COMPACT_TARGET_BYTES) -> int:
        """Merge the store's small commits (as the writer, so not while a sweep writes:
        :class:`StoreLockedError`); returns how many commits were merged away. See
        :meth:`StoreWriter.compact`; :func:`vegaslab.sweeps.engine.execute` does this at its end
        once a parameter set has :data:`COMPACT_MIN_COMMITS` small commits."""
        with self.writer() as w:
            return w.compact(min_commits=min_commits, target_bytes=target_bytes)


def _read_parquet(path: Path) -> "pa.Table":
    """A whole Parquet file (``ParquetFile.read``: a third of ``read_table``'s cost per
    file, which goes through the dataset layer)."""
    import pyarrow.parquet as pq

    with open_regular(path) as fh, pq.ParquetFile(fh) as f:
        return f.read()


def _old_names(c: Commit) -> dict[str, str]:
    """Old column name -> new for a commit written before format 3 (empty for a current one);
    the commit's parameter columns keep their names (a parameter may be called ``limit``)."""
    if c.format >= 3:
        return {}
    from ..results import RENAMED_COLUMNS

    return {o: n for o, n in {**RENAMED_COLUMNS, **RENAMED_AGGREGATES}.items() if o not in c.params}


def _upgrade_table(t: "pa.Table", c: Commit) -> "pa.Table":
    """A table of commit ``c`` with the column names of the current format."""
    old = _old_names(c)
    if not old or not any(n in old for n in t.column_names):
        return t
    return t.rename_columns([old.get(n, n) for n in t.column_names])


def _upgrade_layout(layout: Any, c: Commit) -> Any:
    """A run's ``runs.layout`` with the column names of the current format."""
    old = _old_names(c)
    if old and isinstance(layout, dict) and isinstance(layout.get("columns"), dict):
        layout = {**layout, "columns": {t: [old.get(n, n) for n in cols] for t, cols in layout["columns"].items()}}
    return layout


def _read_verified(path: Path, meta: Mapping[str, Any]) -> "pa.Table | None":
    """The Parquet table at ``path`` parsed from bytes that have the size and SHA-256
    ``meta`` records (one read, hashed and parsed from memory); None when they differ or the
    file cannot be read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = read_bytes(path, max_bytes=int(meta.get("bytes") or 0))
    except (OSError, ForeignFileError):
        return None
    if len(data) != meta.get("bytes") or hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        return None
    return pq.ParquetFile(pa.BufferReader(data)).read()


#: What reading a verified commit's tables back may raise when their content is not what
#: vegaslab writes (a copied or downloaded store whose checksums were written to match).
_UNREADABLE = (KeyError, TypeError, ValueError, IndexError, AttributeError, NotImplementedError, RecursionError,
               ForeignFileError)


def _gist(exc: BaseException) -> str:
    """An exception's message on one line, cut to 200 characters (for a message that names
    the file it is about)."""
    return " ".join(str(exc).split())[:200]


def _unreadable(c: "Commit", exc: BaseException) -> StoreError:
    """The error for a commit whose tables cannot be read back: names it and the way out."""
    return StoreError(f"{c.path}: its tables cannot be read back ({type(exc).__name__}: "
                      f"{_gist(exc)}); it was not written by vegaslab, or is damaged: move it "
                      "out of data/ and run again")


def _json_cell(text: str, c: "Commit") -> Any:
    """A JSON text stored in a ``runs`` table cell, parsed with the read-back rule's depth
    limit (:func:`vegaslab.safe_io.parse_json`)."""
    from ..safe_io import parse_json

    return parse_json(text, c.path / "runs.parquet")


def _table_problem(path: Path) -> str:
    """Why ``path`` is not a table of a store (its Parquet footer only: the checksums say the
    bytes are the ones the commit lists, this says they are a table vegaslab could have
    written: every table starts with ``run_key`` and ``seed``), or ""."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with open_regular(path) as fh:
            schema = pq.read_schema(fh)
    except (OSError, ForeignFileError, pa.ArrowException) as exc:
        return f"not a Parquet table ({_gist(exc)})"
    for name, kind in (("run_key", pa.string()), ("seed", pa.int64())):
        i = schema.get_field_index(name)
        if i < 0 or not schema.field(i).type.equals(kind):
            return f"not a table of a vegaslab store (no {kind} column {name!r})"
    return ""


def _quarantine_name(entry: str) -> str:
    """A plain name for the quarantine directory of ``data/<entry>``: its letters, digits,
    ``_`` and ``-`` (any name may stand in ``data/``: ``.ipynb_checkpoints``, 250 characters)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", entry).strip("_")[:64] or "entry"


def _run_label(row: Mapping[str, Any], params: Mapping[str, str]) -> str:
    """A run as a person finds it: its scenario, parameters and seed, then its key's start."""
    values = ", ".join(f"{name}={row.get(name)}" for name in params)
    return (f"{Path(str(row.get('source') or '?')).name}{f' [{values}]' if values else ''} seed {row.get('seed')} "
            f"(run {str(row.get('run_key'))[:12]})")


def _check_table(table: str) -> None:
    if table not in TABLES:
        raise KeyError(f"{table!r}: no such table; the tables are {', '.join(TABLES)}")


@dataclass
class StoredRun:
    """One finished run as the writer receives it: its ``runs`` row and its other tables."""

    key: str
    row: dict[str, Any]
    tables: dict[str, "pa.Table"]
    params: Mapping[str, str]


class StoreWriter:
    """Commits finished runs to a :class:`Store` (see :meth:`Store.writer`)."""

    def __init__(self, store: Store, *, batch_runs: int, flush_s: float) -> None:
        import time

        self.store = store
        self.batch_runs = max(1, int(batch_runs))
        self.flush_s = float(flush_s)
        self._clock = time.monotonic
        self._buffer: list[StoredRun] = []
        self._buffered: set[str] = set()
        self._first_at = 0.0
        self._lock_fd = self._lock()
        self.quarantined: list[Broken] = []
        try:
            self._clean()
            self._stored = store.keys()
        except BaseException:
            self._unlock()
            raise
        self.commits_written = 0
        #: Merged commits written by :meth:`compact`.
        self.merges_written = 0

    # -- lock

    def _lock(self) -> int | None:
        lock = self.store.path / ".lock"
        try:
            fd = open_lock(self.store.path, ".lock")
        except UnsafePathError as exc:
            raise StoreError(str(exc)) from None
        except OSError as exc:
            raise StoreError(f"{lock}: cannot open the store's lock file: {exc.strerror or exc}") from None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock, documented
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = ""
            try:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
            except OSError:
                pass
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise StoreLockedError(f"{self.store.path}: another process is writing to this store"
                                       f"{f' ({holder})' if holder else ''}; wait for it or use another store") from None
            raise StoreError(f"{lock}: cannot lock: {exc.strerror or exc}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        return fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def _clean(self) -> None:
        """Remove what killed writers left: ``_tmp/`` (unfinished commits and retired ones
        not yet deleted) and commits a merged commit replaces; quarantine broken commits.
        Every commit is hashed here, whatever this process verified before (``fresh``)."""
        root = self.store.path
        shutil.rmtree(root / "_tmp", ignore_errors=True)  # a real directory (Store checks), or absent
        make_dir(root, "data")  # the commits' directory, made again if it went missing
        _commits, broken = self.store._scan(fresh=True)
        self._retire([old.path for old in self.store._superseded])
        for b in broken:
            # A directory of our own per broken commit: the commit (or a planted link, moved
            # as the link itself) inside it, and why beside it.
            dest = make_dirs(root, "_quarantine", f"{_quarantine_name(b.id)}-{uuid.uuid4().hex[:6]}")
            os.rename(b.path, dest / "commit")
            write_file(dest, "REASON.txt", f"data/{b.id}: {b.reason}\n")
            self.quarantined.append(b)

    def _retire(self, paths: Iterable[Path]) -> None:
        """Remove commit directories: each first renamed out of ``data/`` (one atomic step,
        so a reader never sees a commit with some of its files gone), then deleted. Not
        synced: after a crash a retired commit may be back, and is superseded again."""
        gone = make_dirs(self.store.path, "_tmp", f"retired-{uuid.uuid4().hex}")
        for path in paths:
            try:
                os.rename(path, gone / path.name)
            except FileNotFoundError:
                continue
        shutil.rmtree(gone, ignore_errors=True)

    # -- adding and committing

    @property
    def stored(self) -> set[str]:
        """Keys stored (before this writer opened, and committed by it since)."""
        return self._stored

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def add(self, run: StoredRun) -> bool:
        """Buffer a finished run; commit the buffer when it holds ``batch_runs`` runs or its
        oldest run waited ``flush_s`` seconds. Returns whether a commit happened. A run that
        is already stored or buffered is ignored (a store never holds a run twice)."""
        if run.key in self._stored or run.key in self._buffered:
            return False
        if not self._buffer:
            self._first_at = self._clock()
        self._buffer.append(run)
        self._buffered.add(run.key)
        return self.maybe_flush()

    def maybe_flush(self) -> bool:
        """Commit the buffer if it is full or old enough (call it while waiting for runs)."""
        if self._buffer and (len(self._buffer) >= self.batch_runs or self._clock() - self._first_at >= self.flush_s):
            self.flush()
            return True
        return False

    def flush(self) -> None:
        """Commit every buffered run now (one commit)."""
        if not self._buffer:
            return
        batch, self._buffer = self._buffer, []
        self._buffered = set()
        self._commit(batch)
        self._stored.update(r.key for r in batch)

    def _commit(self, batch: list[StoredRun]) -> None:
        import pyarrow as pa

        params: dict[str, str] = {}
        for r in batch:
            for name, kind in r.params.items():
                seen = params.setdefault(name, kind)
                if seen != kind:  # only int64 and double can meet in one batch (param_types)
                    params[name] = "double"
        tables: dict[str, pa.Table] = {}
        for table in TABLES:
            if table == "runs":
                tables[table] = runs_table([{**r.row, "layout": _layout(r)} for r in batch], params)
            else:
                # The per-run layouts are in runs.layout, not in the batch's schema.
                parts = [r.tables[table].replace_schema_metadata(None) for r in batch if table in r.tables]
                if parts:
                    tables[table] = pa.concat_tables(parts, promote_options="permissive")
        self._write_commit([r.key for r in batch], params, tables, labels=[_run_label(r.row, params) for r in batch])

    def _write_commit(self, runs: Sequence[str], params: Mapping[str, str], tables: Mapping[str, "pa.Table"],
                      replaces: Sequence[str] = (), labels: Sequence[str] = ()) -> Commit:
        """Write a commit: its tables and ``_commit.json`` into ``_tmp/<id>/``, each synced,
        then one rename to ``data/<id>/`` (the commit point)."""
        import pyarrow.parquet as pq

        root = self.store.path
        cid = uuid.uuid4().hex
        tmp = None
        doing = "_tmp/"
        try:
            tmp = make_dirs(root, "_tmp", cid)
            files: dict[str, dict[str, Any]] = {}
            for table in TABLES:
                data = tables.get(table)
                if data is None:
                    continue
                f = tmp / f"{table}.parquet"
                doing = str(f)
                pq.write_table(data, f)
                with f.open("rb") as fh:
                    os.fsync(fh.fileno())
                files[f.name] = {"sha256": _sha256_file(f), "bytes": f.stat().st_size, "rows": data.num_rows}
            record: dict[str, Any] = {"format": STORE_FORMAT, "commit": cid, "runs": list(runs),
                                      "params": dict(params), "files": files}
            if replaces:
                record["replaces"] = list(replaces)
            doing = str(tmp / _COMMIT_FILE)
            write_file(tmp, _COMMIT_FILE, json.dumps(record, indent=1) + "\n", fsync=True)
            _fsync_dir(tmp)
            doing = str(root / "data" / cid)
            os.rename(tmp, root / "data" / cid)  # the commit point
            _fsync_dir(root / "data")
        except OSError as exc:
            # Disk full, quota, I/O error: nothing half-written stays, and the message says
            # which store, which runs and which file (the runs are computed again next time).
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            what = "merge of" if replaces else "commit of"
            named = list(labels) or [f"run {k[:12]}" for k in runs]
            shown = "; ".join(named[:3]) + (f"; and {len(named) - 3} more" if len(named) > 3 else "")
            raise StoreWriteError(f"{root}: {what} {len(runs)} run{'s' if len(runs) != 1 else ''} ({shown}) failed writing "
                             f"{exc.filename or doing}: {exc.strerror or exc}; the store keeps every run committed "
                             "before, and these runs count as missing") from None
        if replaces:
            self.merges_written += 1
        else:
            self.commits_written += 1
        return Commit(cid, root / "data" / cid, tuple(runs), dict(params), files, tuple(replaces))

    # -- compaction

    def compact(self, *, min_commits: int = COMPACT_MIN_COMMITS, target_bytes: int = COMPACT_TARGET_BYTES) -> int:
        """Merge small commits into larger ones; returns how many commits were merged away.

        Commits are merged only with commits of the same parameter columns (so each merged
        commit's tables have one schema and :meth:`Store.load_results` sees the same
        parameters per run as before). A commit of at least ``target_bytes / 2`` is left
        alone; the small ones of a parameter set are merged, in id order, into commits of
        at most ``target_bytes`` (which also bounds the memory a merge uses), once there are
        ``min_commits`` of them.

        Each merged commit is written like any other (``_tmp/`` then one rename) with
        ``replaces``, the ids it merged; only then are those retired, one rename out of
        ``data/`` each. Stopped in between (killed, power cut), the store holds both: a
        reader leaves out the replaced commits (and would read every run once anyway, since
        their rows are the same), and the next writer removes them. The bytes copied are
        hashed as they are read, so a file damaged since it was verified is never laundered
        into a merged commit: that group is left as it is, and the next writer quarantines
        the damaged commit."""
        self.flush()
        small: dict[tuple, list[Commit]] = {}
        for c in self.store._scan()[0]:
            if c.bytes < target_bytes // 2:
                small.setdefault(tuple(sorted(c.params.items())), []).append(c)
        merged = 0
        for group in small.values():
            if len(group) < max(2, min_commits):
                continue
            bins: list[list[Commit]] = [[]]
            size = 0
            for c in group:
                if bins[-1] and size + c.bytes > target_bytes:
                    bins.append([])
                    size = 0
                bins[-1].append(c)
                size += c.bytes
            for members in bins:
                if len(members) >= 2 and self._merge(members):
                    merged += len(members)
        return merged

    def _merge(self, members: Sequence[Commit]) -> bool:
        """One merged commit of ``members`` (same parameters, id order), then retire them.
        False (nothing changed) when a file no longer has its recorded bytes."""
        import pyarrow as pa
        import pyarrow.compute as pc

        runs: list[str] = []
        seen: set[str] = set()
        owned: list[list[str]] = []
        for c in members:
            own = [k for k in c.runs if k not in seen]  # each run once: the first commit's, as readers do
            seen.update(own)
            runs.extend(own)
            owned.append(own)
        tables: dict[str, pa.Table] = {}
        for table in TABLES:
            parts = []
            for c, own in zip(members, owned):
                name = f"{table}.parquet"
                if not own or name not in c.files:
                    continue
                t = _read_verified(c.path / name, c.files[name])
                if t is None:
                    return False
                if len(own) != len(c.runs):
                    t = t.filter(pc.is_in(t.column("run_key"), value_set=pa.array(own, pa.string())))
                parts.append(t)
            if parts:
                tables[table] = pa.concat_tables(parts, promote_options="permissive")
        # What the members replaced too: a commit left over from an earlier merge stays
        # superseded whichever merged commit survives.
        replaces = list(dict.fromkeys([c.id for c in members] + [r for c in members for r in c.replaces]))
        self._write_commit(runs, dict(members[0].params), tables, replaces=replaces)
        self._retire([c.path for c in members])
        return True

    def close(self) -> None:
        """Commit what is buffered and release the lock."""
        try:
            self.flush()
            try:
                (self.store.path / "_tmp").rmdir()  # only when empty
            except OSError:
                pass
        finally:
            self._unlock()
