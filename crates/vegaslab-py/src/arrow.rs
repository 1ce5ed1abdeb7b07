//! A run's tables and time series as Arrow record batches, and their export to Python through
//! the Arrow PyCapsule interface (`__arrow_c_array__`: an `ArrowSchema` and an `ArrowArray` of
//! the C data interface, each in a named capsule), which pyarrow imports without a copy
//! (`pyarrow.record_batch(obj)`).
//!
//! Every column keeps the core's own type: a results table's columns are `table_columns`'s
//! (`f64`, `i64`, `u64`, `bool`, text; a column no row has a value in is of Arrow's null type)
//! with a row that has no value null; the time series are `Series`'s columns, the interned
//! flow and queue names as dictionary arrays (`u32` indices into the names) and a sample the
//! core has no value for (`None`) null. A float that is NaN stays NaN: what Python makes of
//! NaN and null is its own business (`vegaslab.columns`).

use arrow_array::types::UInt32Type;
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, Float64Array, Int64Array, NullArray, StringArray, StructArray, UInt32Array,
    UInt64Array, UInt8Array,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{ArrowError, Field, Fields};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::Arc;
use vegaslab_sim::results::{FlowSeries, QueueColumn, QueueSeries};
use vegaslab_sim::table_columns::{Table, Values};

/// Field metadata key saying how the JSON form of the results (`RunResults::to_json`,
/// docs/results-format.md) writes a row's missing value in this column: `"omitted"` (the row
/// has no key for it: `Column::omitted`) or `"null"`. Only results tables' columns carry it.
pub const JSON_MISSING_KEY: &str = "vegaslab.json_missing";

/// One table as an Arrow record batch, handed to Python by the Arrow PyCapsule interface.
#[pyclass(frozen, module = "vegaslab._core", name = "ArrowBatch")]
pub struct ArrowBatch {
    batch: StructArray,
}

#[pymethods]
impl ArrowBatch {
    /// The batch as the two capsules of the Arrow PyCapsule interface (`arrow_schema`,
    /// `arrow_array`). `requested_schema` is a best-effort request by the protocol's rules;
    /// the batch has one layout, so it is always exported as it is.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let data = arrow_array::Array::to_data(&self.batch);
        let (array, schema) = arrow_array::ffi::to_ffi(&data).map_err(|e| crate::SimulationError::new_err(format!("exporting a results table: {e}")))?;
        // The capsules own the structures: a consumer moves them out (leaving their release
        // callback empty), and dropping a capsule never used releases the data.
        let schema = PyCapsule::new_bound(py, schema, Some(capsule_name("arrow_schema")))?;
        let array = PyCapsule::new_bound(py, array, Some(capsule_name("arrow_array")))?;
        Ok((schema, array))
    }

    fn __len__(&self) -> usize {
        arrow_array::Array::len(&self.batch)
    }
}

fn capsule_name(name: &str) -> CString {
    CString::new(name).expect("a capsule name has no NUL byte")
}

fn batch(columns: Vec<(Field, ArrayRef)>, rows: usize) -> Result<ArrowBatch, ArrowError> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = columns.into_iter().unzip();
    let batch = StructArray::try_new_with_length(Fields::from(fields), arrays, None, rows)?;
    Ok(ArrowBatch { batch })
}

fn column(name: &str, array: ArrayRef) -> (Field, ArrayRef) {
    (Field::new(name, array.data_type().clone(), true), array)
}

/// A results table (`table_columns::table`) as a batch; the values move, uncopied.
pub fn table_batch(t: Table) -> Result<ArrowBatch, ArrowError> {
    let rows = t.rows;
    let mut columns = Vec::with_capacity(t.columns.len());
    for c in t.columns {
        let nulls = if c.present.iter().all(|&p| p) { None } else { Some(NullBuffer::from(c.present.clone())) };
        let array: ArrayRef = match c.values {
            Values::F64(v) => Arc::new(Float64Array::try_new(v.into(), nulls)?),
            Values::I64(v) => Arc::new(Int64Array::try_new(v.into(), nulls)?),
            Values::U64(v) => Arc::new(UInt64Array::try_new(v.into(), nulls)?),
            Values::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
            // Offsets are i32: a table's text is far below 2 GiB (names of at most 64 bytes,
            // at most 2^20 rows: scenario::limits), and the caller catches a panic anyway.
            Values::Str(v) => Arc::new(StringArray::from_iter(v.iter().zip(&c.present).map(|(s, &p)| p.then_some(s.as_str())))),
            Values::Unknown => Arc::new(NullArray::new(rows)),
        };
        let (field, array) = column(c.name, array);
        let missing = if c.omitted { "omitted" } else { "null" };
        let field = field.with_metadata(HashMap::from([(JSON_MISSING_KEY.to_string(), missing.to_string())]));
        columns.push((field, array));
    }
    batch(columns, rows)
}

/// Interned names: `u32` indices into `names`, as a dictionary array.
fn names(codes: Vec<u32>, names: &[String]) -> Result<ArrayRef, ArrowError> {
    let values = StringArray::from_iter_values(names.iter());
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(UInt32Array::from(codes), Arc::new(values))?))
}

fn nullable(values: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from_iter(values.iter().copied()))
}

/// The flows' time series, in the JSON form's column order (`FlowSeries`'s `Serialize`).
pub fn flow_series_batch(f: FlowSeries) -> Result<ArrowBatch, ArrowError> {
    let rows = f.time.len();
    let mut columns = vec![
        column("time_s", Arc::new(Float64Array::from(f.time))),
        column("flow", names(f.flow, &f.names)?),
        column("cwnd_pkts", nullable(&f.cwnd)),
        column("ssthresh_pkts", nullable(&f.ssthresh)),
        column("rtt_s", nullable(&f.rtt)),
        column("throughput_bps", nullable(&f.throughput_bps)),
        column("active", Arc::new(UInt8Array::from(f.active))),
    ];
    for (name, values) in &f.extra {
        columns.push(column(name, nullable(values)));
    }
    batch(columns, rows)
}

/// The queues' time series: `time_s`, `queue`, then the core's own list of value columns
/// (`QueueSeries::value_columns`).
pub fn queue_series_batch(mut q: QueueSeries) -> Result<ArrowBatch, ArrowError> {
    let rows = q.time.len();
    let time = Arc::new(Float64Array::from(std::mem::take(&mut q.time)));
    let mut columns = vec![column("time_s", time), column("queue", names(std::mem::take(&mut q.queue), &q.names)?)];
    for (name, values) in q.value_columns() {
        let array: ArrayRef = match values {
            QueueColumn::Count(v) => Arc::new(UInt64Array::from(v.to_vec())),
            QueueColumn::Nullable(v) => nullable(v),
        };
        columns.push(column(name, array));
    }
    batch(columns, rows)
}
