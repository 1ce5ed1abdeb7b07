//! Golden whole-run summaries, checked by `cargo test` alone: a behaviour change in
//! the core fails here without Python.
//!
//! The cases are listed once, in `tests/golden/cases.toml` (name, scenario file relative to the
//! repository, seed, overrides), and the expected summaries are the checked-in
//! `tests/golden/<name>.json`; `tests/test_core_properties.py` reads the same two, so the golden
//! files stay the single source of truth for both suites.
//!
//! What a summary is. The pytest side builds it from `vegaslab.run(...)`:
//! `{"flows": flows.to_dict("records"), "queues": queues.to_dict("records"), "events": meta.events}`
//! and writes `json.dumps(summary, sort_keys=True, indent=1, default=float) + "\n"`. The tables
//! are pandas DataFrames built from the core's JSON (`vegaslab.results._frame`), so this test
//! rebuilds the same records from `RunResults::to_json()` with pandas' mapping, decided column
//! by column (`pandas_records`):
//! - a column is every key that occurs in any record (the core omits its `Option` counters,
//!   e.g. `connections`, `errors`, `early_drops`, when they do not apply);
//! - a column where some record lacks the key or holds null, and the others hold numbers or
//!   strings, has NaN in those records, and its integers become floats (pandas makes the column
//!   float64); a column where every value is null is NaN if Python declares it a nullable float
//!   (`_NULLABLE_FLOAT`: `completion_time_s`, `throughput_bps` here) and null otherwise;
//! - a column of integers and floats becomes float; otherwise values keep their JSON type
//!   (`to_dict("records")` gives Python ints and floats).
//!
//! One pandas step is not replicated: `_frame` adds documented columns (`FLOW_COLUMNS`,
//! `QUEUE_COLUMNS`) that the core did not produce, as NaN. Today the core produces all of them;
//! if it ever stopped, the Python summary would show NaN and this test would report the field
//! as missing: both fail, which is the point.
//!
//! Comparison is field by field: every record and field in the golden file must be produced and
//! nothing more, numbers exactly (f64 bit for bit, NaN equal to NaN; an integer turning into a
//! float is a change). Then the text this test would write must equal the file byte for byte,
//! so both suites keep writing the same bytes (`python_json` renders Python's `json.dumps`:
//! `repr` floats, `NaN`, ASCII escapes, one-space indent).
//!
//! Regeneration: `VEGASLAB_UPDATE_GOLDEN=1 cargo test -p vegaslab-sim --test golden` rewrites
//! the files; without it a missing file is a failure, never a silent creation.
//! `VEGASLAB_GOLDEN_DIR=DIR` reads and writes the `<name>.json` files in DIR instead (the cases
//! still come from `tests/golden/cases.toml`): for regenerating into a scratch copy, or for
//! pointing the test at a deliberately edited copy to see it fail.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

// ------------------------------------------------------------------------------ the cases

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CasesFile {
    case: Vec<Case>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    scenario: String,
    seed: u64,
    overrides: Vec<String>,
}

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn cases_path() -> PathBuf {
    repo_root().join("tests/golden/cases.toml")
}

fn load_cases() -> Vec<Case> {
    let path = cases_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    let file: CasesFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut seen = BTreeSet::new();
    for c in &file.case {
        assert!(
            !c.name.is_empty() && c.name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_'),
            "{}: case name {:?} must be letters, digits, '-' and '_' (it names a file)",
            path.display(),
            c.name
        );
        assert!(seen.insert(c.name.clone()), "{}: case name {:?} is listed twice", path.display(), c.name);
    }
    assert!(!file.case.is_empty(), "{}: no [[case]] listed", path.display());
    file.case
}

fn golden_dir() -> PathBuf {
    match std::env::var_os("VEGASLAB_GOLDEN_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => repo_root().join("tests/golden"),
    }
}

/// Python's test regenerates when the variable is set to any non-empty text; so does this one.
fn updating() -> bool {
    std::env::var_os("VEGASLAB_UPDATE_GOLDEN").is_some_and(|v| !v.is_empty())
}

// ------------------------------------------------------------------------------ JSON values

/// A JSON value as Python's `json` module sees it: integers and floats are distinct, and floats
/// may be NaN or infinite (which `serde_json::Value` cannot hold).
#[derive(Clone, Debug)]
enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
}

impl Value {
    fn describe(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => format!("{b}"),
            Value::Int(i) => format!("{i} (integer)"),
            Value::Float(f) => format!("{} (float)", python_float(*f)),
            Value::Str(s) => format!("{s:?}"),
            Value::List(l) => format!("a list of {}", l.len()),
            Value::Map(m) => format!("an object of {} fields", m.len()),
        }
    }
}

// ------------------------------------------------------------------------------ pandas mapping

/// Columns Python forces to float64 even when every value is null (`results._NULLABLE_FLOAT`).
const NULLABLE_FLOAT: &[&str] = &["completion_time_s", "cwnd_pkts", "ssthresh_pkts", "rtt_s", "throughput_bps", "length_pkts", "time_s"];

/// `pd.DataFrame(records).to_dict("records")` for the core's records (see the module doc).
fn pandas_records(table: &str, rows: &[Value]) -> Value {
    let rows: Vec<&BTreeMap<String, Value>> = rows
        .iter()
        .map(|r| match r {
            Value::Map(m) => m,
            other => panic!("{table}: a record is not an object but {}", other.describe()),
        })
        .collect();
    let columns: BTreeSet<&String> = rows.iter().flat_map(|r| r.keys()).collect();
    let mut out: Vec<BTreeMap<String, Value>> = vec![BTreeMap::new(); rows.len()];
    for col in columns {
        let cells: Vec<Option<Value>> = rows
            .iter()
            .map(|r| r.get(col.as_str()).filter(|v| !matches!(v, Value::Null)).cloned())
            .collect();
        let present: Vec<&Value> = cells.iter().flatten().collect();
        let numbers = present.iter().all(|v| matches!(v, Value::Int(_) | Value::Float(_)));
        let strings = present.iter().all(|v| matches!(v, Value::Str(_)));
        let any_float = present.iter().any(|v| matches!(v, Value::Float(_)));
        let gaps = present.len() < cells.len();
        let mapped: Vec<Value> = if present.is_empty() {
            let fill = if NULLABLE_FLOAT.contains(&col.as_str()) { Value::Float(f64::NAN) } else { Value::Null };
            vec![fill; cells.len()]
        } else if numbers && (gaps || any_float) {
            // float64 column: integers become floats, gaps NaN.
            cells
                .into_iter()
                .map(|c| match c {
                    Some(Value::Int(i)) => Value::Float(i as f64),
                    Some(v) => v,
                    None => Value::Float(f64::NAN),
                })
                .collect()
        } else if !gaps {
            cells.into_iter().map(Option::unwrap).collect()
        } else if strings {
            // pandas' string column: gaps are NaN.
            cells.into_iter().map(|c| c.unwrap_or(Value::Float(f64::NAN))).collect()
        } else {
            panic!("{table}.{col}: a column of mixed types with gaps; its pandas mapping is not replicated here (see the module doc)");
        };
        for (row, v) in out.iter_mut().zip(mapped) {
            row.insert(col.clone(), v);
        }
    }
    Value::List(out.into_iter().map(Value::Map).collect())
}

/// The summary of one run, as the Python test builds it. The core's JSON is read as Python's
/// `json.loads` reads it, floats correctly rounded (`str::parse`): serde_json's default float
/// reader may be one ulp off, which this test would report as a change.
fn summary(results_json: &str) -> Value {
    let doc = match parse_python_json(results_json) {
        Ok(Value::Map(m)) => m,
        other => panic!("the core's results are not a JSON object: {other:?}"),
    };
    let table = |name: &str| -> Value {
        match doc.get(name) {
            Some(Value::List(rows)) => pandas_records(name, rows),
            _ => panic!("results have no {name} list"),
        }
    };
    let events = match doc.get("meta").and_then(|m| if let Value::Map(m) = m { m.get("events") } else { None }) {
        Some(Value::Int(n)) => *n,
        other => panic!("meta.events is not an integer: {other:?}"),
    };
    let mut m = BTreeMap::new();
    m.insert("events".to_string(), Value::Int(events));
    m.insert("flows".to_string(), table("flows"));
    m.insert("queues".to_string(), table("queues"));
    Value::Map(m)
}

fn run_case(case: &Case) -> Value {
    let path = repo_root().join(&case.scenario);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()));
    let results = vegaslab_sim::run_text(&text, &path.to_string_lossy(), Some(case.seed), &case.overrides, |_, _| true)
        .unwrap_or_else(|e| panic!("case {}: {e}", case.name));
    summary(&results.to_json())
}

// ------------------------------------------------------------------------------ Python's json.dumps

/// `repr(x)` of a Python float: the shortest digits that read back as `x` (Rust's `{:e}` gives
/// the same digits), positional for decimal exponents -4..=15, else `d.ddde+XX`.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let point = exp + 1; // digits d1d2... stand for 0.d1d2... x 10^point
    if point > -4 && point <= 16 {
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{body}")
    } else {
        let rest = if digits.len() > 1 { format!(".{}", &digits[1..]) } else { String::new() };
        format!("{sign}{}{rest}e{}{:02}", &digits[..1], if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// A JSON string as Python writes it with `ensure_ascii=True`.
fn python_string(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(ch),
            _ => {
                let mut units = [0u16; 2];
                for u in ch.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// `json.dumps(value, sort_keys=True, indent=1)`.
fn python_json(v: &Value) -> String {
    fn emit(v: &Value, depth: usize, out: &mut String) {
        let pad = |out: &mut String, d: usize| {
            out.push('\n');
            out.push_str(&" ".repeat(d));
        };
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(&python_float(*f)),
            Value::Str(s) => python_string(s, out),
            Value::List(items) if items.is_empty() => out.push_str("[]"),
            Value::Map(fields) if fields.is_empty() => out.push_str("{}"),
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    pad(out, depth + 1);
                    emit(item, depth + 1, out);
                }
                pad(out, depth);
                out.push(']');
            }
            Value::Map(fields) => {
                out.push('{');
                for (i, (k, item)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    pad(out, depth + 1);
                    python_string(k, out);
                    out.push_str(": ");
                    emit(item, depth + 1, out);
                }
                pad(out, depth);
                out.push('}');
            }
        }
    }
    let mut out = String::new();
    emit(v, 0, &mut out);
    out
}

/// Read what Python's `json.dumps` writes: JSON plus the tokens `NaN`, `Infinity` and
/// `-Infinity`, which JSON readers (serde_json included) refuse. Errors give the byte offset.
fn parse_python_json(text: &str) -> Result<Value, String> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            }
        }
        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("byte {}: {what}", self.i))
        }
        fn eat(&mut self, lit: &str) -> bool {
            if self.s[self.i..].starts_with(lit.as_bytes()) {
                self.i += lit.len();
                true
            } else {
                false
            }
        }
        fn value(&mut self) -> Result<Value, String> {
            self.ws();
            let Some(&c) = self.s.get(self.i) else { return self.err("unexpected end") };
            match c {
                b'{' => {
                    self.i += 1;
                    let mut m = BTreeMap::new();
                    self.ws();
                    if self.eat("}") {
                        return Ok(Value::Map(m));
                    }
                    loop {
                        self.ws();
                        let key = match self.value()? {
                            Value::Str(k) => k,
                            _ => return self.err("an object key must be a string"),
                        };
                        self.ws();
                        if !self.eat(":") {
                            return self.err("expected ':'");
                        }
                        let v = self.value()?;
                        if m.insert(key.clone(), v).is_some() {
                            return self.err(&format!("duplicate key {key:?}"));
                        }
                        self.ws();
                        if self.eat("}") {
                            return Ok(Value::Map(m));
                        }
                        if !self.eat(",") {
                            return self.err("expected ',' or '}'");
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut l = Vec::new();
                    self.ws();
                    if self.eat("]") {
                        return Ok(Value::List(l));
                    }
                    loop {
                        l.push(self.value()?);
                        self.ws();
                        if self.eat("]") {
                            return Ok(Value::List(l));
                        }
                        if !self.eat(",") {
                            return self.err("expected ',' or ']'");
                        }
                    }
                }
                b'"' => {
                    // The string's raw text, escapes included, is valid JSON on its own.
                    let start = self.i;
                    self.i += 1;
                    while self.i < self.s.len() && self.s[self.i] != b'"' {
                        self.i += if self.s[self.i] == b'\\' { 2 } else { 1 };
                    }
                    if self.i >= self.s.len() {
                        return self.err("unterminated string");
                    }
                    self.i += 1;
                    let raw = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| format!("byte {start}: {e}"))?;
                    serde_json::from_str::<String>(raw).map(Value::Str).map_err(|e| format!("byte {start}: {e}"))
                }
                _ if self.eat("NaN") => Ok(Value::Float(f64::NAN)),
                _ if self.eat("Infinity") => Ok(Value::Float(f64::INFINITY)),
                _ if self.eat("-Infinity") => Ok(Value::Float(f64::NEG_INFINITY)),
                _ if self.eat("null") => Ok(Value::Null),
                _ if self.eat("true") => Ok(Value::Bool(true)),
                _ if self.eat("false") => Ok(Value::Bool(false)),
                b'-' | b'0'..=b'9' => {
                    let start = self.i;
                    while self.i < self.s.len() && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                        self.i += 1;
                    }
                    let raw = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII");
                    // Python writes an int without '.', 'e'; a float always has one of them.
                    if raw.contains(['.', 'e', 'E']) {
                        raw.parse::<f64>().map(Value::Float).map_err(|e| format!("byte {start}: {raw}: {e}"))
                    } else {
                        raw.parse::<i128>().map(Value::Int).map_err(|e| format!("byte {start}: {raw}: {e}"))
                    }
                }
                _ => self.err("unexpected character"),
            }
        }
    }
    let mut p = P { s: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return p.err("trailing text");
    }
    Ok(v)
}

// ------------------------------------------------------------------------------ comparison

/// Every difference between `expected` (the golden file) and `actual` (this run), one line each,
/// naming the field by its path; records of the flows and queues tables are named by their key.
fn differences(expected: &Value, actual: &Value) -> Vec<String> {
    fn label(path: &str, index: usize, record: &Value) -> String {
        match record {
            Value::Map(m) => match m.get("flow").or_else(|| m.get("queue")) {
                Some(Value::Str(name)) => format!("{path}[{index}] ({name})"),
                _ => format!("{path}[{index}]"),
            },
            _ => format!("{path}[{index}]"),
        }
    }
    fn walk(path: &str, e: &Value, a: &Value, out: &mut Vec<String>) {
        match (e, a) {
            (Value::Map(em), Value::Map(am)) => {
                for (k, ev) in em {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    match am.get(k) {
                        Some(av) => walk(&p, ev, av, out),
                        None => out.push(format!("{p}: in the golden file ({}) but not produced by the run", ev.describe())),
                    }
                }
                for (k, av) in am {
                    if !em.contains_key(k) {
                        let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                        out.push(format!("{p}: produced by the run ({}) but not in the golden file", av.describe()));
                    }
                }
            }
            (Value::List(el), Value::List(al)) => {
                for (i, (ev, av)) in el.iter().zip(al).enumerate() {
                    walk(&label(path, i, ev), ev, av, out);
                }
                if el.len() != al.len() {
                    out.push(format!("{path}: {} records in the golden file, {} produced by the run", el.len(), al.len()));
                }
            }
            (Value::Float(x), Value::Float(y)) if x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) => {}
            (Value::Int(x), Value::Int(y)) if x == y => {}
            (Value::Str(x), Value::Str(y)) if x == y => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Null, Value::Null) => {}
            _ => out.push(format!("{path}: golden {}, run {}", e.describe(), a.describe())),
        }
    }
    let mut out = Vec::new();
    walk("", expected, actual, &mut out);
    out
}

/// Check one case against its golden file (or rewrite the file when updating); `Err` says why.
fn check_case(case: &Case, dir: &Path) -> Result<(), String> {
    let actual = run_case(case);
    let text = python_json(&actual) + "\n";
    let path = dir.join(format!("{}.json", case.name));
    if updating() {
        std::fs::write(&path, &text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        return Ok(());
    }
    let golden = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{}: golden file missing (case {} in {}); create it with VEGASLAB_UPDATE_GOLDEN=1 and commit it",
                path.display(),
                case.name,
                cases_path().display()
            ))
        }
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let expected = parse_python_json(&golden).map_err(|e| format!("{}: {e}", path.display()))?;
    let diffs = differences(&expected, &actual);
    if !diffs.is_empty() {
        return Err(format!(
            "{} moved ({} differences; if the change is intended, regenerate with VEGASLAB_UPDATE_GOLDEN=1 and say why in the commit):\n  {}",
            path.display(),
            diffs.len(),
            diffs.join("\n  ")
        ));
    }
    if text != golden {
        return Err(format!(
            "{}: the same values, but not the bytes json.dumps(sort_keys=True, indent=1) writes; regenerate it with VEGASLAB_UPDATE_GOLDEN=1",
            path.display()
        ));
    }
    Ok(())
}

#[test]
fn golden_summaries_are_unchanged() {
    let dir = golden_dir();
    let mut failures = Vec::new();
    for case in load_cases() {
        let t = Instant::now();
        let outcome = check_case(&case, &dir);
        eprintln!("golden {}: {:.2} s", case.name, t.elapsed().as_secs_f64());
        if let Err(e) = outcome {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ------------------------------------------------------------------------------ the checker's own tests

/// The comparison catches each kind of change: a number one ulp off, an integer turned float,
/// a field or record missing or extra.
#[test]
fn comparison_reports_every_kind_of_change() {
    let golden = parse_python_json(
        "{\n \"events\": 5,\n \"flows\": [\n  {\n   \"flow\": \"f1\",\n   \"rate\": 0.1,\n   \"t\": NaN\n  }\n ]\n}\n",
    )
    .unwrap();
    assert!(differences(&golden, &golden.clone()).is_empty(), "NaN must equal NaN");
    type Edit<'a> = &'a dyn Fn(&mut BTreeMap<String, Value>, &mut BTreeMap<String, Value>);
    let mutate = |f: Edit| {
        let mut v = golden.clone();
        let Value::Map(top) = &mut v else { unreachable!() };
        let mut flows = top.remove("flows").unwrap();
        let Value::List(rows) = &mut flows else { unreachable!() };
        let Value::Map(row) = &mut rows[0] else { unreachable!() };
        f(top, row);
        top.insert("flows".into(), flows);
        differences(&golden, &v)
    };
    let d = mutate(&|_, row| {
        row.insert("rate".into(), Value::Float(f64::from_bits(0.1f64.to_bits() + 1)));
    });
    assert_eq!(d, ["flows[0] (f1).rate: golden 0.1 (float), run 0.10000000000000002 (float)"]);
    let d = mutate(&|top, _| {
        top.insert("events".into(), Value::Float(5.0));
    });
    assert_eq!(d, ["events: golden 5 (integer), run 5.0 (float)"]);
    let d = mutate(&|_, row| {
        row.remove("t");
    });
    assert_eq!(d, ["flows[0] (f1).t: in the golden file (NaN (float)) but not produced by the run"]);
    let d = mutate(&|_, row| {
        row.insert("extra".into(), Value::Int(1));
    });
    assert_eq!(d, ["flows[0] (f1).extra: produced by the run (1 (integer)) but not in the golden file"]);
    let mut more = golden.clone();
    if let Value::Map(top) = &mut more {
        if let Some(Value::List(rows)) = top.get_mut("flows") {
            rows.push(rows[0].clone());
        }
    }
    assert_eq!(differences(&golden, &more), ["flows: 1 records in the golden file, 2 produced by the run"]);
}

/// Floats are written as Python's `repr` writes them (values checked with CPython 3.11).
#[test]
fn floats_are_written_as_python_repr_writes_them() {
    let cases: &[(f64, &str)] = &[
        (0.1, "0.1"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (1234567890123456.0, "1234567890123456.0"),
        (12345678901234567.0, "1.2345678901234568e+16"),
        (1e-5, "1e-05"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (0.00012345, "0.00012345"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (217240.0, "217240.0"),
        (5.1153684, "5.1153684"),
        (1e22, "1e+22"),
        (f64::MAX, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (-2.5e-7, "-2.5e-07"),
        (100.0, "100.0"),
        (123.456, "123.456"),
        (f64::NAN, "NaN"),
        (f64::NEG_INFINITY, "-Infinity"),
    ];
    for (x, want) in cases {
        assert_eq!(python_float(*x), *want, "{x:e}");
    }
    let mut s = String::new();
    python_string("a\"\\\n\u{7f}\u{e9}\u{1F600}", &mut s);
    assert_eq!(s, r#""a\"\\\n\u007f\u00e9\ud83d\ude00""#);
}

/// Reading a golden file and writing it back gives the same bytes, and pandas' mapping of
/// gaps and nulls is applied (an absent Option counter, a null completion time).
#[test]
fn golden_format_round_trips_and_gaps_become_nan() {
    let dir = repo_root().join("tests/golden");
    for case in load_cases() {
        let path = dir.join(format!("{}.json", case.name));
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        assert_eq!(python_json(&parse_python_json(&text).unwrap()) + "\n", text, "{}", path.display());
    }
    let Value::List(rows) = parse_python_json(
        r#"[{"flow": "a", "n": 3, "connections": 2, "completion_time_s": null, "x": 1.5},
            {"flow": "b", "n": 4, "completion_time_s": null, "x": 2.0}]"#,
    )
    .unwrap() else {
        unreachable!()
    };
    let text = python_json(&pandas_records("flows", &rows));
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>().join(" "),
        "[ { \"completion_time_s\": NaN, \"connections\": 2.0, \"flow\": \"a\", \"n\": 3, \"x\": 1.5 }, \
         { \"completion_time_s\": NaN, \"connections\": NaN, \"flow\": \"b\", \"n\": 4, \"x\": 2.0 } ]"
    );
}
