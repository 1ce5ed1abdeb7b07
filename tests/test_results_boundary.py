"""One boundary for results: the compiled core has one run function, ``_core.run``, whose tables
and time series cross as typed Arrow columns; the package reaches it only through
``vegaslab.core.run_core``, and no module turns a results table into or out of JSON text on the
way. The Arrow schema is the one the Rust core declares: the row structs of
crates/vegaslab-sim/src/results.rs (read here from the source, never restated), typed by
``table_columns``'s rules, and the series' ``Serialize`` impls there."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "python" / "vegaslab"
RESULTS_RS = ROOT / "crates" / "vegaslab-sim" / "src" / "results.rs"

#: The core functions of the boundary before it was one, and the Python helpers that decoded
#: their JSON and byte columns: none may come back.
OLD_BOUNDARY = ("run_scenario_columns", "run_scenario_tables", "from_tables", "from_columns", "table_columns",
                "series_columns", "column_f64", "tables_from_document", "series_from_columns")


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("vegaslab._core")


def test_the_core_has_exactly_one_run_function(core):
    public = {n for n in dir(core) if not n.startswith("_") and callable(getattr(core, n))
              and not isinstance(getattr(core, n), type)}
    assert {n for n in public if n.startswith("run")} == {"run"}
    assert not hasattr(core, "run_scenario")
    assert not any(hasattr(core, n) for n in OLD_BOUNDARY)


def _modules():
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def test_only_vegaslab_core_calls_the_cores_run_function():
    # `core.run` / `_core.run` as an attribute of the loaded extension: `run_core` is the one caller.
    callers = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "run" and isinstance(node.value, ast.Name) \
                    and node.value.id in ("core", "_core"):
                callers.append(path.relative_to(PACKAGE_DIR).as_posix())
    assert callers == ["core.py"]


def test_no_module_names_the_old_json_or_byte_column_boundary():
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else \
                node.name if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else None
            if name in OLD_BOUNDARY or name == "run_scenario" and isinstance(node, ast.Attribute) \
                    and isinstance(node.value, ast.Name) and node.value.id in ("core", "_core"):
                found.append(f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}: {name}")
    assert found == []


def test_the_boundary_parses_json_only_for_meta():
    # In vegaslab/core.py, what crosses from `_core.run` is parsed as JSON once: `meta`.
    tree = ast.parse((PACKAGE_DIR / "core.py").read_text(encoding="utf-8"))
    loads = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in ("loads", "dumps") and isinstance(node.func.value, ast.Name)
             and node.func.value.id == "json"]
    assert [ast.unparse(c) for c in loads] == ["json.loads(self.meta_text)"]


def test_a_planted_json_table_decoder_is_found(tmp_path, monkeypatch):
    # The scan above can fail: a module that brings back a table decoder by an old name is found.
    pkg = tmp_path / "vegaslab"
    pkg.mkdir()
    (pkg / "core.py").write_text("def run_core(core):\n    return core.run()\n")
    (pkg / "sneaky.py").write_text("import json\ndef table_columns(t):\n    return json.loads(t)\n"
                                   "def go(core):\n    return core.run()\n")
    monkeypatch.setitem(globals(), "PACKAGE_DIR", pkg)
    with pytest.raises(AssertionError):
        test_no_module_names_the_old_json_or_byte_column_boundary()
    with pytest.raises(AssertionError):
        test_only_vegaslab_core_calls_the_cores_run_function()


# ---------------------------------------------------------------------- the schema the core declares

#: `table_columns`'s rules (crates/vegaslab-sim/src/table_columns.rs, `FieldSerializer`): a
#: field's Rust type -> its column's Arrow type; `Option<T>` is T's column with nulls.
RUST_SCALARS = {
    **dict.fromkeys(("u8", "u16", "u32", "u64", "usize"), pa.uint64()),
    **dict.fromkeys(("i8", "i16", "i32", "i64", "isize"), pa.int64()),
    "f32": pa.float64(), "f64": pa.float64(), "bool": pa.bool_(), "String": pa.string(), "char": pa.string(),
}


def _struct_fields(source: str, name: str) -> list[tuple[str, str]]:
    """``(field, Rust type)`` of ``pub struct name`` in source order."""
    body = re.search(rf"pub struct {name} \{{(.*?)\n\}}", source, re.S)
    assert body, f"no struct {name} in {RESULTS_RS}"
    return re.findall(r"^\s*pub (\w+): ([^,\n]+),", body.group(1), re.M)


def _column_type(rust: str) -> pa.DataType:
    inner = re.fullmatch(r"Option<(.+)>", rust)
    return RUST_SCALARS[inner.group(1) if inner else rust]


def _declared_table(name: str) -> list[tuple[str, pa.DataType]]:
    return [(f, _column_type(t)) for f, t in _struct_fields(RESULTS_RS.read_text(), name)]


def _declared_series() -> dict[str, list[tuple[str, pa.DataType]]]:
    """The series' columns as their `Serialize` impls write them: `serialize_entry("name",
    &self.field)` (a `Named` field is an interned name: dictionary), then `value_columns`."""
    source = RESULTS_RS.read_text()
    element = {"Vec<f64>": pa.float64(), "Vec<Option<f64>>": pa.float64(), "Vec<u8>": pa.uint8(), "Vec<u64>": pa.uint64()}
    out = {}
    for struct, table in (("FlowSeries", "series_flows"), ("QueueSeries", "series_queues")):
        fields = dict(_struct_fields(source, struct))
        impl = re.search(rf"impl Serialize for {struct} \{{(.*?)\n\}}", source, re.S).group(1)
        columns = []
        for key, named, field in re.findall(r'serialize_entry\("(\w+)", &(Named\()?&?self\.(\w+)', impl):
            columns.append((key, pa.dictionary(pa.uint32(), pa.string()) if named else element[fields[field]]))
        if struct == "QueueSeries":
            kinds = {"Count": pa.uint64(), "Nullable": pa.float64()}
            value_columns = re.search(r"pub fn value_columns\(.*?\n    \}", source, re.S).group(0)
            columns += [(k, kinds[kind]) for k, kind in re.findall(r'\("(\w+)", QueueColumn::(\w+)\(', value_columns)]
        out[table] = columns
    return out


@pytest.fixture(scope="module")
def every_column_run(core):
    from vegaslab.core import run_core

    # The run docs/results-format.md's check uses: every optional column has a value in some row
    # and none in another (per-flow connections, ns-2 Vegas's tie counts, a completed file
    # transfer, RED, packet errors, UDP, every algorithm's series variables).
    import test_docs  # noqa: F401  (puts scripts/ on the path, for docs_gen)
    from docs_gen.results import COLUMNS_RUN

    return run_core(COLUMNS_RUN, "columns.toml", 1, [])


@pytest.mark.parametrize("table, struct", [("flows", "FlowResult"), ("queues", "QueueResult"),
                                           ("links", "LinkResult"), ("udp", "UdpResult")])
def test_each_tables_arrow_schema_is_its_rust_row_structs_fields_and_types(every_column_run, table, struct):
    schema = every_column_run.tables[table].schema
    declared = _declared_table(struct)
    assert {f.name: f.type for f in schema} == dict(declared)
    # Columns come in the order their fields first appear in a row (`table_columns`): the fields
    # every row has in the struct's order, one a row leaves out where a later row first has it.
    always = [name for name, rust in _struct_fields(RESULTS_RS.read_text(), struct) if not rust.startswith("Option<")]
    assert [f.name for f in schema if f.name in always] == always


def test_each_time_series_arrow_schema_is_what_its_rust_serialize_impl_writes(every_column_run):
    declared = _declared_series()
    for table, columns in declared.items():
        schema = every_column_run.tables[table].schema
        got = [(f.name, f.type) for f in schema]
        # The flows' algorithm variables (a map, Vegas-A's alpha and beta here) follow, as floats.
        assert got[:len(columns)] == columns, table
        assert all(t == pa.float64() for _, t in got[len(columns):]), table
    assert len(every_column_run.tables["series_flows"].schema) > len(declared["series_flows"])


def test_a_tables_missing_values_are_null_and_marked_as_the_json_form_writes_them(every_column_run):
    flows = every_column_run.tables["flows"]
    meta = {f.name: (f.metadata or {}).get(b"vegaslab.json_missing") for f in flows.schema}
    # `skip_serializing_if` fields are left out of a row's JSON object; `completion_time_s` is null.
    assert meta["connections"] == b"omitted" and meta["completion_time_s"] == b"null" and meta["flow"] == b"null"
    assert 0 < flows.column("connections").null_count < flows.num_rows  # only the per-flow entry has them
