//! A results table (a slice of row structs: `FlowResult`, `QueueResult`, ...) as typed columns,
//! for a binding to hand over without a text format in between: at 100,000 flows the JSON
//! form of the tables is 168 MB, and decoding it and building frames from row dictionaries
//! would take most of `vegaslab.run`'s time.
//!
//! The rows' own `Serialize` implementations are the one description of a table: a field's name
//! is its column's, its type the column's type, and a field a row leaves out (`None`, or skipped
//! by `skip_serializing_if`) is a missing value. So the columns have exactly the names, order
//! and values of the JSON form: columns in the order their fields first appear, a column that
//! appears only from some row on missing in the rows before.

use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
use std::fmt;

/// A column's values; missing ones hold zero (numbers), false or an empty string.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// No row had a value yet (every value missing).
    Unknown,
}

/// One column: its name, values and which rows have one.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: &'static str,
    pub values: Values,
    /// `present[i]`: row i has a value.
    pub present: Vec<bool>,
    /// A row without a value leaves the field out (`skip_serializing_if`, or a field first
    /// written by a later row) rather than writing it as `None`: in the JSON form such a
    /// row has no key for the column, where a `None` is written as `null`.
    pub omitted: bool,
}

impl Column {
    /// Every row has a value.
    pub fn complete(&self) -> bool {
        self.present.iter().all(|&p| p)
    }
}

/// A table's columns, each `rows` long.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<Column>,
}

/// Why rows could not become columns: a field of a type a column cannot hold, or one column
/// with values of two types (neither happens with the results' row types; tests check them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnsError(pub String);

impl fmt::Display for ColumnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ColumnsError {}

impl ser::Error for ColumnsError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ColumnsError(msg.to_string())
    }
}

/// The columns of `rows` (module documentation).
pub fn table<T: Serialize>(rows: &[T]) -> Result<Table, ColumnsError> {
    let mut t = Table::default();
    for row in rows {
        row.serialize(RowSerializer { table: &mut t })?;
        t.rows += 1;
        // A field this row left out is missing in it.
        for c in &mut t.columns {
            if c.present.len() < t.rows {
                c.push(Scalar::Missing);
                c.omitted = true;
            }
        }
    }
    Ok(t)
}

/// One field's value.
enum Scalar {
    F64(f64),
    I64(i64),
    U64(u64),
    Bool(bool),
    Str(String),
    Missing,
}

impl Column {
    fn new(name: &'static str, rows: usize) -> Self {
        // The rows before this one left the field out.
        let mut c = Column { name, values: Values::Unknown, present: Vec::new(), omitted: rows > 0 };
        for _ in 0..rows {
            c.push(Scalar::Missing);
        }
        c
    }

    fn len(&self) -> usize {
        self.present.len()
    }

    fn push(&mut self, v: Scalar) {
        if matches!(self.values, Values::Unknown) {
            if let Some(typed) = Self::typed_empty(&v, self.len()) {
                self.values = typed;
            }
        }
        let ok = match (&mut self.values, v) {
            (Values::F64(x), Scalar::F64(v)) => push_present(x, v),
            (Values::I64(x), Scalar::I64(v)) => push_present(x, v),
            (Values::U64(x), Scalar::U64(v)) => push_present(x, v),
            (Values::Bool(x), Scalar::Bool(v)) => push_present(x, v),
            (Values::Str(x), Scalar::Str(v)) => push_present(x, v),
            (Values::Unknown, Scalar::Missing) => false,
            (Values::F64(x), Scalar::Missing) => push_missing(x),
            (Values::I64(x), Scalar::Missing) => push_missing(x),
            (Values::U64(x), Scalar::Missing) => push_missing(x),
            (Values::Bool(x), Scalar::Missing) => push_missing(x),
            (Values::Str(x), Scalar::Missing) => push_missing(x),
            // Another type than the column's: `serialize_field` refuses it before pushing.
            _ => false,
        };
        self.present.push(ok);
    }

    /// The empty values of `v`'s type, with `rows` missing values in front.
    fn typed_empty(v: &Scalar, rows: usize) -> Option<Values> {
        Some(match v {
            Scalar::F64(_) => Values::F64(vec![0.0; rows]),
            Scalar::I64(_) => Values::I64(vec![0; rows]),
            Scalar::U64(_) => Values::U64(vec![0; rows]),
            Scalar::Bool(_) => Values::Bool(vec![false; rows]),
            Scalar::Str(_) => Values::Str(vec![String::new(); rows]),
            Scalar::Missing => return None,
        })
    }

    fn accepts(&self, v: &Scalar) -> bool {
        matches!(
            (&self.values, v),
            (Values::Unknown, _)
                | (_, Scalar::Missing)
                | (Values::F64(_), Scalar::F64(_))
                | (Values::I64(_), Scalar::I64(_))
                | (Values::U64(_), Scalar::U64(_))
                | (Values::Bool(_), Scalar::Bool(_))
                | (Values::Str(_), Scalar::Str(_))
        )
    }
}

fn push_present<T>(x: &mut Vec<T>, v: T) -> bool {
    x.push(v);
    true
}

fn push_missing<T: Default>(x: &mut Vec<T>) -> bool {
    x.push(T::default());
    false
}

/// Serialises one row: a struct, each field into its column.
struct RowSerializer<'a> {
    table: &'a mut Table,
}

impl<'a> SerializeStruct for RowSerializer<'a> {
    type Ok = ();
    type Error = ColumnsError;

    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), ColumnsError> {
        let v = value.serialize(FieldSerializer { key })?;
        let rows = self.table.rows;
        let i = match self.table.columns.iter().position(|c| c.name == key) {
            Some(i) => i,
            None => {
                self.table.columns.push(Column::new(key, rows));
                self.table.columns.len() - 1
            }
        };
        let column = &mut self.table.columns[i];
        if column.len() > rows {
            return Err(ColumnsError(format!("field {key} appears twice in one row")));
        }
        if !column.accepts(&v) {
            return Err(ColumnsError(format!("field {key}: values of two types")));
        }
        column.push(v);
        Ok(())
    }

    fn skip_field(&mut self, _key: &'static str) -> Result<(), ColumnsError> {
        Ok(()) // missing in this row: filled in by `table` once the row is done
    }

    fn end(self) -> Result<(), ColumnsError> {
        Ok(())
    }
}

/// What a row that is not a struct gets.
fn not_a_row<T>() -> Result<T, ColumnsError> {
    Err(ColumnsError("a table row must be a struct".into()))
}

/// A row serializer accepts only `serialize_struct`.
macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ret, ColumnsError> { not_a_row() })*
    };
}

impl<'a> Serializer for RowSerializer<'a> {
    type Ok = ();
    type Error = ColumnsError;
    type SerializeSeq = Impossible<(), ColumnsError>;
    type SerializeTuple = Impossible<(), ColumnsError>;
    type SerializeTupleStruct = Impossible<(), ColumnsError>;
    type SerializeTupleVariant = Impossible<(), ColumnsError>;
    type SerializeMap = Impossible<(), ColumnsError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), ColumnsError>;

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, ColumnsError> {
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> (); serialize_i16(i16) -> (); serialize_i32(i32) -> (); serialize_i64(i64) -> ();
        serialize_u8(u8) -> (); serialize_u16(u16) -> (); serialize_u32(u32) -> (); serialize_u64(u64) -> ();
        serialize_f32(f32) -> (); serialize_f64(f64) -> (); serialize_char(char) -> ();
        serialize_str(&str) -> (); serialize_bytes(&[u8]) -> ();
        serialize_none() -> (); serialize_unit() -> (); serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<(), ColumnsError> {
        not_a_row()
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, _value: &T) -> Result<(), ColumnsError> {
        not_a_row()
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _n: &'static str, _i: u32, _v: &'static str, _value: &T) -> Result<(), ColumnsError> {
        not_a_row()
    }
}

/// Serialises one field's value into a [`Scalar`]; `key` names it in errors.
struct FieldSerializer {
    key: &'static str,
}

impl FieldSerializer {
    fn unsupported<T>(&self, what: &str) -> Result<T, ColumnsError> {
        Err(ColumnsError(format!("field {}: a column cannot hold {what}", self.key)))
    }
}

/// A field serializer takes scalars and options; anything else is an error naming the field.
macro_rules! not_scalar {
    ($($name:ident($($arg:ty),*) -> $ret:ty, $what:literal;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ret, ColumnsError> { self.unsupported($what) })*
    };
}

impl Serializer for FieldSerializer {
    type Ok = Scalar;
    type Error = ColumnsError;
    type SerializeSeq = Impossible<Scalar, ColumnsError>;
    type SerializeTuple = Impossible<Scalar, ColumnsError>;
    type SerializeTupleStruct = Impossible<Scalar, ColumnsError>;
    type SerializeTupleVariant = Impossible<Scalar, ColumnsError>;
    type SerializeMap = Impossible<Scalar, ColumnsError>;
    type SerializeStruct = Impossible<Scalar, ColumnsError>;
    type SerializeStructVariant = Impossible<Scalar, ColumnsError>;

    fn serialize_bool(self, v: bool) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::I64(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::U64(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::F64(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::F64(v))
    }
    fn serialize_str(self, v: &str) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::Str(v.to_owned()))
    }
    fn serialize_char(self, v: char) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::Str(v.to_string()))
    }
    fn serialize_none(self) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::Missing)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Scalar, ColumnsError> {
        value.serialize(self)
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Scalar, ColumnsError> {
        Ok(Scalar::Str(variant.to_owned())) // as JSON writes a unit variant: its name
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _name: &'static str, value: &T) -> Result<Scalar, ColumnsError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _n: &'static str, _i: u32, _v: &'static str, _value: &T) -> Result<Scalar, ColumnsError> {
        self.unsupported("an enum variant with data")
    }

    not_scalar! {
        serialize_bytes(&[u8]) -> Scalar, "bytes";
        serialize_unit() -> Scalar, "a unit";
        serialize_unit_struct(&'static str) -> Scalar, "a unit struct";
        serialize_seq(Option<usize>) -> Self::SerializeSeq, "a list";
        serialize_tuple(usize) -> Self::SerializeTuple, "a tuple";
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct, "a tuple";
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant, "an enum variant with data";
        serialize_map(Option<usize>) -> Self::SerializeMap, "a map";
        serialize_struct(&'static str, usize) -> Self::SerializeStruct, "a struct";
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant, "an enum variant with data";
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{FlowResult, LinkResult, QueueResult, UdpResult};
    use serde::Serialize;

    #[derive(Serialize)]
    struct Row {
        name: String,
        count: u32,
        delta: i64,
        ratio: f64,
        done: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        extra: Option<u64>,
    }

    fn row(name: &str, extra: Option<u64>, done: Option<f64>) -> Row {
        Row { name: name.into(), count: 3, delta: -2, ratio: 0.5, done, extra }
    }

    #[test]
    fn columns_follow_the_fields_in_order_with_their_types() {
        let t = table(&[row("a", None, Some(1.5)), row("b", None, None)]).unwrap();
        assert_eq!(t.rows, 2);
        let names: Vec<_> = t.columns.iter().map(|c| c.name).collect();
        assert_eq!(names, ["name", "count", "delta", "ratio", "done"]);
        assert_eq!(t.columns[0].values, Values::Str(vec!["a".into(), "b".into()]));
        assert_eq!(t.columns[1].values, Values::U64(vec![3, 3]));
        assert_eq!(t.columns[2].values, Values::I64(vec![-2, -2]));
        assert_eq!(t.columns[4].values, Values::F64(vec![1.5, 0.0]));
        assert_eq!(t.columns[4].present, [true, false]);
        assert!(t.columns[..4].iter().all(Column::complete));
    }

    #[test]
    fn a_field_skipped_in_earlier_rows_is_missing_there_and_one_skipped_later_too() {
        let t = table(&[row("a", None, None), row("b", Some(7), None), row("c", None, None)]).unwrap();
        let extra = t.columns.iter().find(|c| c.name == "extra").unwrap();
        assert_eq!(extra.values, Values::U64(vec![0, 7, 0]));
        assert_eq!(extra.present, [false, true, false]);
        // A column with no value in any row has no type.
        let done = t.columns.iter().find(|c| c.name == "done").unwrap();
        assert_eq!((done.values.clone(), done.present.clone()), (Values::Unknown, vec![false; 3]));
    }

    #[test]
    fn a_field_left_out_of_a_row_is_omitted_and_one_written_as_none_is_not() {
        let t = table(&[row("a", None, None), row("b", Some(7), None)]).unwrap();
        let by_name = |n: &str| t.columns.iter().find(|c| c.name == n).unwrap();
        assert!(by_name("extra").omitted, "skip_serializing_if leaves the field out");
        assert!(!by_name("done").omitted, "a None field is written (as null in JSON)");
        assert!(!by_name("name").omitted);
        // Left out of a later row too, not only of the rows before its first value.
        let t = table(&[row("a", Some(1), None), row("b", None, None)]).unwrap();
        assert!(t.columns.iter().find(|c| c.name == "extra").unwrap().omitted);
    }

    #[test]
    fn no_rows_give_no_columns() {
        assert_eq!(table::<Row>(&[]).unwrap(), Table::default());
    }

    #[test]
    fn a_row_that_is_not_a_struct_or_a_field_that_is_not_a_scalar_is_an_error() {
        assert!(table(&[1u32]).is_err());
        #[derive(Serialize)]
        struct Nested {
            list: Vec<u32>,
        }
        let err = table(&[Nested { list: vec![1] }]).unwrap_err();
        assert_eq!(err.0, "field list: a column cannot hold a list");
    }

    #[test]
    fn every_results_table_row_type_becomes_columns() {
        // The run's own tables: one run with per-flow connections, RED, an error model and UDP,
        // so the optional fields appear in some rows and not in others.
        let text = r#"
            [run]
            duration = "2s"
            [[links]]
            endpoints = ["A", "B"]
            bandwidth = "10Mbps"
            delay = "5ms"
            error_rate_forward = 0.01
            [[links]]
            endpoints = ["B", "C"]
            bandwidth = "1Mbps"
            delay = "10ms"
            queue = { kind = "red", limit = 20, min = 5, max = 15 }
            [[flows]]
            from = "A"
            to = "C"
            cc = "vegas"
            [[flows]]
            from = "A"
            to = "C"
            cc = "reno"
            app = { kind = "nps", mean_interarrival = "0.5s", mean_flow_size = "40KB", connection = "per-flow" }
            [[udp]]
            from = "A"
            to = "C"
            packet_size = 500
            model = "exp-onoff"
            rate = "100kbps"
            mean_on = "30ms"
            mean_off = "30ms"
        "#;
        let sc = crate::scenario::parse(text, "t.toml", &[]).unwrap();
        let r = crate::sim::Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
        fn check<T: Serialize>(rows: &[T]) {
            let t = table(rows).unwrap();
            assert_eq!(t.rows, rows.len());
            assert!(t.columns.iter().all(|c| c.present.len() == rows.len()));
        }
        check::<FlowResult>(&r.flows);
        check::<QueueResult>(&r.queues);
        check::<LinkResult>(&r.links);
        check::<UdpResult>(&r.udp);
        let queues = table(&r.queues).unwrap();
        let red = queues.columns.iter().find(|c| c.name == "early_dropped_pkts").unwrap();
        assert!(red.present.iter().any(|&p| p) && !red.complete());
        let flows = table(&r.flows).unwrap();
        assert!(!flows.columns.iter().find(|c| c.name == "connections").unwrap().complete());
    }
}
