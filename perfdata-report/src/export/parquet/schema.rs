//! The three tables' Arrow schemas (one versioned schema, documented in
//! docs/parquet.md) and the builders that fill a batch of rows of each.

use std::sync::Arc;

use arrow_array::builder::{Int32Builder, Int64Builder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};

/// The schema's version, in every file's key-value metadata as `schema_version`: it
/// changes whenever a column is added, removed, renamed or retyped.
pub const SCHEMA_VERSION: &str = "2";

/// The fields of one frame of a stack (leaf first in `frames`).
fn frame_fields() -> Fields {
    Fields::from(vec![
        Field::new("symbol", DataType::Utf8, false),
        Field::new("dso", DataType::Utf8, false),
        Field::new("address", DataType::Int64, false),
    ])
}

/// The fields of one build id of a recording.
fn build_id_fields() -> Fields {
    Fields::from(vec![
        Field::new("dso", DataType::Utf8, false),
        Field::new("build_id", DataType::Utf8, false),
    ])
}

/// The fields of one event's counts in a recording.
fn event_fields() -> Fields {
    Fields::from(vec![
        Field::new("event", DataType::Utf8, false),
        Field::new("samples", DataType::Int64, false),
        Field::new("period", DataType::Int64, false),
    ])
}

/// A list of non-null structs of `fields`, and the item field its builder must use.
fn list_of(fields: Fields) -> (DataType, Arc<Field>) {
    let item = Arc::new(Field::new("item", DataType::Struct(fields), false));
    (DataType::List(item.clone()), item)
}

/// The samples table; `host` is left out when the files are partitioned by host (the
/// value is in the path, `host=...`, where Hive-style readers take it from).
pub fn samples(with_host: bool) -> SchemaRef {
    let mut fields = vec![Field::new("recording", DataType::Utf8, false)];
    if with_host {
        fields.push(Field::new("host", DataType::Utf8, true));
    }
    fields.extend([
        Field::new("time", DataType::Int64, true),
        Field::new("pid", DataType::Int32, false),
        Field::new("tid", DataType::Int32, false),
        Field::new("cpu", DataType::Int32, true),
        Field::new("event", DataType::Utf8, false),
        Field::new("period", DataType::Int64, false),
        Field::new("stack_id", DataType::Int64, false),
        Field::new("comm", DataType::Utf8, false),
        Field::new("dso", DataType::Utf8, false),
        Field::new("symbol", DataType::Utf8, false),
    ]);
    Arc::new(Schema::new(fields))
}

/// The stacks table.
pub fn stacks() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("stack_id", DataType::Int64, false),
        Field::new("frames", list_of(frame_fields()).0, false),
    ]))
}

/// The recordings table.
pub fn recordings() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("recording", DataType::Utf8, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("hostname", DataType::Utf8, true),
        Field::new("os_release", DataType::Utf8, true),
        Field::new("cmdline", DataType::Utf8, true),
        Field::new("perf_version", DataType::Utf8, true),
        Field::new("date", DataType::Date32, true),
        Field::new("build_ids", list_of(build_id_fields()).0, false),
        Field::new("events", list_of(event_fields()).0, false),
        Field::new("samples", DataType::Int64, false),
        Field::new("lost_samples", DataType::Int64, false),
    ]))
}

/// A `u64` as Parquet's INT64 (Spark has no unsigned types): saturated at `i64::MAX`.
pub fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// One sample's row: the columns of [`samples`] after `recording` and `host`.
pub(crate) struct SampleRow<'a> {
    pub(crate) time: Option<u64>,
    pub(crate) pid: i32,
    pub(crate) tid: i32,
    pub(crate) cpu: Option<u32>,
    pub(crate) event: &'a str,
    pub(crate) period: u64,
    pub(crate) stack_id: i64,
    pub(crate) comm: &'a str,
    pub(crate) dso: &'a str,
    pub(crate) symbol: &'a str,
}

/// Rows of the samples table of one recording, as a batch fills.
pub(crate) struct SampleBatch {
    schema: SchemaRef,
    recording: String,
    host: Option<String>,
    time: Int64Builder,
    pid: Int32Builder,
    tid: Int32Builder,
    cpu: Int32Builder,
    event: StringBuilder,
    period: Int64Builder,
    stack_id: Int64Builder,
    comm: StringBuilder,
    dso: StringBuilder,
    symbol: StringBuilder,
    rows: usize,
}

impl SampleBatch {
    /// An empty batch of `recording`'s samples (`host`: None when the files are
    /// partitioned by host, else the recording's hostname).
    pub fn new(recording: &str, host: Option<Option<&str>>) -> SampleBatch {
        SampleBatch {
            schema: samples(host.is_some()),
            recording: recording.to_string(),
            host: host.map(|h| h.map(str::to_string).unwrap_or_default()),
            time: Int64Builder::new(),
            pid: Int32Builder::new(),
            tid: Int32Builder::new(),
            cpu: Int32Builder::new(),
            event: StringBuilder::new(),
            period: Int64Builder::new(),
            stack_id: Int64Builder::new(),
            comm: StringBuilder::new(),
            dso: StringBuilder::new(),
            symbol: StringBuilder::new(),
            rows: 0,
        }
    }

    /// The batch's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows added since the last [`SampleBatch::take`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Add a row.
    pub fn push(&mut self, r: &SampleRow<'_>) {
        self.time.append_option(r.time.map(signed));
        self.pid.append_value(r.pid);
        self.tid.append_value(r.tid);
        self.cpu
            .append_option(r.cpu.map(|c| i32::try_from(c).unwrap_or(i32::MAX)));
        self.event.append_value(r.event);
        self.period.append_value(signed(r.period));
        self.stack_id.append_value(r.stack_id);
        self.comm.append_value(r.comm);
        self.dso.append_value(r.dso);
        self.symbol.append_value(r.symbol);
        self.rows += 1;
    }

    /// The rows added as a record batch; the builders start again empty.
    pub fn take(&mut self) -> Result<RecordBatch, ArrowError> {
        let n = std::mem::take(&mut self.rows);
        let repeat = |v: &str| -> ArrayRef {
            let mut b = StringBuilder::with_capacity(n, v.len());
            (0..n).for_each(|_| b.append_value(v));
            Arc::new(b.finish())
        };
        let mut cols: Vec<ArrayRef> = vec![repeat(&self.recording)];
        if let Some(h) = &self.host {
            cols.push(if h.is_empty() {
                let mut b = StringBuilder::new();
                (0..n).for_each(|_| b.append_null());
                Arc::new(b.finish())
            } else {
                repeat(h)
            });
        }
        cols.extend([
            Arc::new(self.time.finish()) as ArrayRef,
            Arc::new(self.pid.finish()),
            Arc::new(self.tid.finish()),
            Arc::new(self.cpu.finish()),
            Arc::new(self.event.finish()),
            Arc::new(self.period.finish()),
            Arc::new(self.stack_id.finish()),
            Arc::new(self.comm.finish()),
            Arc::new(self.dso.finish()),
            Arc::new(self.symbol.finish()),
        ]);
        RecordBatch::try_new(self.schema.clone(), cols)
    }
}

/// A list-of-structs column being built, whose structs have string fields first and
/// Int64 fields after.
struct StructList {
    list: ListBuilder<StructBuilder>,
    strings: usize,
}

impl StructList {
    fn new(fields: Fields) -> StructList {
        let strings = fields
            .iter()
            .filter(|f| f.data_type() == &DataType::Utf8)
            .count();
        let item = list_of(fields.clone()).1;
        StructList {
            list: ListBuilder::new(StructBuilder::from_fields(fields, 0)).with_field(item),
            strings,
        }
    }

    /// Add one struct to the current list.
    fn item(&mut self, strings: &[&str], ints: &[i64]) {
        debug_assert_eq!(strings.len(), self.strings);
        let s = self.list.values();
        for (i, v) in strings.iter().enumerate() {
            s.field_builder::<StringBuilder>(i)
                .expect("a string field")
                .append_value(v);
        }
        for (i, v) in ints.iter().enumerate() {
            s.field_builder::<Int64Builder>(strings.len() + i)
                .expect("an Int64 field")
                .append_value(*v);
        }
        s.append(true);
    }

    /// End the current list.
    fn end(&mut self) {
        self.list.append(true);
    }

    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.list.finish())
    }
}

/// Rows of the stacks table, as a batch fills.
pub(crate) struct StackBatch {
    stack_id: Int64Builder,
    frames: StructList,
    rows: usize,
}

impl Default for StackBatch {
    fn default() -> Self {
        StackBatch {
            stack_id: Int64Builder::new(),
            frames: StructList::new(frame_fields()),
            rows: 0,
        }
    }
}

impl StackBatch {
    /// Rows added since the last [`StackBatch::take`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Add a stack: its id and its frames (symbol, DSO, address), leaf first.
    pub fn push<'a>(&mut self, id: i64, frames: impl Iterator<Item = (&'a str, &'a str, u64)>) {
        self.stack_id.append_value(id);
        for (symbol, dso, addr) in frames {
            self.frames.item(&[symbol, dso], &[addr as i64]);
        }
        self.frames.end();
        self.rows += 1;
    }

    /// The rows added as a record batch; the builders start again empty.
    pub fn take(&mut self) -> Result<RecordBatch, ArrowError> {
        self.rows = 0;
        let cols = vec![
            Arc::new(self.stack_id.finish()) as ArrayRef,
            self.frames.finish(),
        ];
        RecordBatch::try_new(stacks(), cols)
    }
}

/// One recording's row: the columns of [`recordings`].
pub(crate) struct RecordingRow<'a> {
    pub(crate) recording: &'a str,
    pub(crate) path: &'a str,
    pub(crate) hostname: Option<&'a str>,
    pub(crate) os_release: Option<&'a str>,
    pub(crate) cmdline: Option<&'a str>,
    pub(crate) perf_version: Option<&'a str>,
    /// Days since 1970-01-01.
    pub(crate) date: Option<i32>,
    /// (DSO, build id in hex).
    pub(crate) build_ids: &'a [(String, String)],
    /// (event, samples, period).
    pub(crate) events: &'a [(String, u64, u64)],
    pub(crate) samples: u64,
    pub(crate) lost_samples: u64,
}

/// Rows of the recordings table.
pub(crate) struct RecordingBatch {
    strings: [StringBuilder; 6],
    date: arrow_array::builder::Date32Builder,
    build_ids: StructList,
    events: StructList,
    samples: Int64Builder,
    lost: Int64Builder,
}

impl Default for RecordingBatch {
    fn default() -> Self {
        RecordingBatch {
            strings: std::array::from_fn(|_| StringBuilder::new()),
            date: Default::default(),
            build_ids: StructList::new(build_id_fields()),
            events: StructList::new(event_fields()),
            samples: Int64Builder::new(),
            lost: Int64Builder::new(),
        }
    }
}

impl RecordingBatch {
    /// Add a recording.
    pub fn push(&mut self, r: &RecordingRow<'_>) {
        let texts = [
            Some(r.recording),
            Some(r.path),
            r.hostname,
            r.os_release,
            r.cmdline,
            r.perf_version,
        ];
        for (b, v) in self.strings.iter_mut().zip(texts) {
            b.append_option(v);
        }
        self.date.append_option(r.date);
        for (dso, id) in r.build_ids {
            self.build_ids.item(&[dso, id], &[]);
        }
        self.build_ids.end();
        for (event, samples, period) in r.events {
            self.events
                .item(&[event], &[signed(*samples), signed(*period)]);
        }
        self.events.end();
        self.samples.append_value(signed(r.samples));
        self.lost.append_value(signed(r.lost_samples));
    }

    /// The rows added as a record batch; the builders start again empty.
    pub fn take(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut cols: Vec<ArrayRef> = self
            .strings
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        cols.extend([
            Arc::new(self.date.finish()) as ArrayRef,
            self.build_ids.finish(),
            self.events.finish(),
            Arc::new(self.samples.finish()),
            Arc::new(self.lost.finish()),
        ]);
        RecordBatch::try_new(recordings(), cols)
    }
}
