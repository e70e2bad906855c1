//! One record as `perfdata dump` shows it: a JSON object ([`record_value`], written by
//! [`write_json`] as one line of JSON Lines) or a text line ([`write_text`],
//! `OFFSET TYPE key=value ...`).
//!
//! The object's fields: `offset` (of the record in the file; for a record from a
//! compressed record, of that compressed record), `decompressed_offset` (its position in
//! the decompressed stream), `stream` (N for a directory's `data.N`), `type` (perf's
//! name), `misc`, `misc_names` (perf's names of its bits,
//! [`perfdata_core::record::misc::names`]), `size`, `event` (index of the attr), `body` (the
//! model's fields, absent optional fields left out), `sample_id` (the trailer), `extra_len`, `payload_len` and
//! `undecoded` (why the record was kept as bytes), and for a tracepoint's SAMPLE `trace`
//! (its RAW payload as perf script prints it) and `trace_fields` (the payload's fields
//! by name, from the event format in the tracing data; see [`crate::tracing::event`]).
//! Numbers follow [`crate::json`]: addresses are `"0x..."` strings, in both forms.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::tracing::{DecodedTrace, TraceEvents};
use perfdata_core::raw::Origin;
use perfdata_core::record::{RecordBody, Sample};
use perfdata_core::tracing::tracing_blob;
use perfdata_core::RecordRef;

mod flat;

use crate::ser;

pub use ser::Error as SerializeError;

/// The event formats of a recording's tracing data, read once, when first needed, for
/// [`record_value_with`] to decode tracepoint samples.
#[derive(Debug, Default)]
pub struct TraceDecoder {
    /// `None` until a tracepoint sample needs it; then the formats, or `None` inside
    /// when the recording has no tracing data that parses.
    events: Option<Option<TraceEvents>>,
}

impl TraceDecoder {
    fn events(&mut self, item: &RecordRef<'_>) -> Option<&TraceEvents> {
        self.events
            .get_or_insert_with(|| tracing_blob(item.meta).and_then(TraceEvents::parse))
            .as_ref()
    }
}

/// The record `item` as a JSON object, numbers exact (addresses as hex strings already).
pub fn record_value(item: &RecordRef<'_>) -> serde_json::Result<Map<String, Value>> {
    record_value_with(item, &mut TraceDecoder::default())
}

/// [`record_value`], tracepoint samples decoded with the formats `traces` keeps between
/// records.
pub fn record_value_with(
    item: &RecordRef<'_>,
    traces: &mut TraceDecoder,
) -> serde_json::Result<Map<String, Value>> {
    let (record, err) = item.decode_or_raw();
    let raw = &item.raw;
    let mut obj = Map::new();
    obj.insert("offset".into(), json!(raw.offset));
    if let Origin::Decompressed { stream_offset } = raw.origin {
        obj.insert("decompressed_offset".into(), json!(stream_offset));
    }
    if raw.stream > 0 {
        obj.insert("stream".into(), json!(raw.stream - 1));
    }
    obj.insert("type".into(), json!(record.record_type().name()));
    obj.insert("misc".into(), json!(record.header.misc));
    let names = perfdata_core::record::misc::names(record.header.misc, record.record_type());
    obj.insert("misc_names".into(), json!(names));
    obj.insert("size".into(), json!(record.header.size));
    // Located once: the event is both a field and what a tracepoint sample needs.
    let event = item.locate().event;
    if let Some(event) = event {
        obj.insert("event".into(), json!(event));
    }
    obj.insert(
        "body".into(),
        crate::json::value_in(&record.body, ser::Form::DUMP_EXACT)?,
    );
    if let Some(sid) = &record.sample_id {
        obj.insert(
            "sample_id".into(),
            crate::json::value_in(sid, ser::Form::DUMP_EXACT)?,
        );
    }
    if !record.extra.is_empty() {
        obj.insert("extra_len".into(), json!(record.extra.len()));
    }
    // A payload too large to hold is not in `record` (see `RawRecord::rest`).
    if raw.payload_len() > 0 {
        obj.insert("payload_len".into(), json!(raw.payload_len()));
    }
    if let Some(e) = err {
        obj.insert("undecoded".into(), json!(e.to_string()));
    }
    if let (RecordBody::Sample(sample), Some(event)) = (&record.body, event) {
        let attr = item.meta.attrs().get(event).map(|a| &a.attr);
        let raw = sample.raw.as_ref();
        // PERF_TYPE_TRACEPOINT: the attr's config is the tracepoint id.
        if let (Some(attr), Some(raw)) = (attr.filter(|a| a.type_ == 2), raw) {
            if let Some(d) = traces
                .events(item)
                .and_then(|t| t.decode(attr.config, &raw.data))
            {
                obj.insert("trace".into(), json!(d.text));
                let fields = d.fields.iter().map(|(n, v)| (n.clone(), v.to_json()));
                obj.insert("trace_fields".into(), Value::Object(fields.collect()));
            }
        }
    }
    Ok(obj)
}

/// Write `record` ([`record_value`]) as one line of JSON, made [`crate::json::safe`].
pub fn write_json(out: &mut impl Write, record: &Map<String, Value>) -> io::Result<()> {
    crate::json::write_line(out, record)
}

/// Write `record` ([`record_value`]) as `OFFSET TYPE key=value ...`: nested objects as
/// dotted keys (`body` adds none), addresses bare, other strings quoted. A tracepoint
/// sample ends with its `trace` text as perf script prints it, in place of the RAW
/// bytes and the fields.
pub fn write_text(out: &mut impl Write, record: &Map<String, Value>) -> io::Result<()> {
    let offset = record["offset"].as_u64().unwrap_or(0);
    let ty = record["type"].as_str().unwrap_or("?");
    write!(out, "{offset:#010x}")?;
    if let Some(d) = record.get("decompressed_offset") {
        write!(out, " (+{d})")?;
    }
    write!(out, " {ty}")?;
    let trace = record.get("trace").and_then(Value::as_str);
    for (k, v) in record {
        if matches!(
            k.as_str(),
            "offset" | "type" | "decompressed_offset" | "trace" | "trace_fields" | "misc_names"
        ) {
            continue;
        }
        if let ("misc", Some(names)) = (k.as_str(), record.get("misc_names")) {
            write!(out, " misc={v}({})", names.as_str().unwrap_or(""))?;
            continue;
        }
        match (k.as_str(), v, trace) {
            ("body", Value::Object(body), Some(_)) => {
                let mut body = body.clone();
                body.remove("raw");
                write_flat(out, k, &Value::Object(body))?;
            }
            _ => write_flat(out, k, v)?,
        }
    }
    if let Some(trace) = trace {
        write!(out, " {trace}")?;
    }
    writeln!(out)
}

fn write_flat(out: &mut impl Write, key: &str, v: &Value) -> io::Result<()> {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if key == "body" {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                write_flat(out, &key, v)?;
            }
            Ok(())
        }
        Value::Null => Ok(()),
        Value::String(s) if is_address(s) => write!(out, " {key}={s}"),
        Value::String(s) => write!(out, " {key}={s:?}"),
        Value::Array(items) if !items.is_empty() && items.iter().all(is_address_value) => {
            let list: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            write!(out, " {key}=[{}]", list.join(","))
        }
        other => write!(out, " {key}={other}"),
    }
}

/// Whether `s` is an address as [`crate::json::addr_string`] writes it.
fn is_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_address_value(v: &Value) -> bool {
    v.as_str().is_some_and(is_address)
}

/// Writes records as `perfdata dump` shows them, straight from the models into a
/// buffer: the same bytes as [`record_value_with`] then [`write_json`] or
/// [`write_text`], without a `serde_json::Value` per record.
#[derive(Debug, Default)]
pub struct DumpWriter {
    json: bool,
    traces: TraceDecoder,
    buf: Vec<u8>,
    key: String,
}

/// Bytes gathered before they go to the output: large writes, few system calls.
const FLUSH_AT: usize = 64 * 1024;

impl DumpWriter {
    /// A writer of JSON Lines (`json`) or text lines.
    pub fn new(json: bool) -> Self {
        DumpWriter {
            json,
            ..Self::default()
        }
    }

    /// Write `item`'s line, to `out` once enough lines are gathered ([`Self::flush`]
    /// writes the rest).
    pub fn write(&mut self, out: &mut impl Write, item: &RecordRef<'_>) -> io::Result<()> {
        let mark = self.buf.len();
        if let Err(e) = self.line(item) {
            self.buf.truncate(mark);
            return Err(io::Error::other(e));
        }
        if self.buf.len() >= FLUSH_AT {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Write the lines gathered so far to `out`, and flush it.
    pub fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.buf)?;
        self.buf.clear();
        out.flush()
    }

    fn line(&mut self, item: &RecordRef<'_>) -> Result<(), ser::Error> {
        let (record, err) = item.decode_or_raw();
        let raw = &item.raw;
        let event = item.locate().event;
        let mut trace = None;
        if let (RecordBody::Sample(sample), Some(event)) = (&record.body, event) {
            trace = self.traces.decode(item, event, sample);
            if !self.json && trace.is_some() && fields_after_raw(sample) {
                // The Value path printed these out of order (a map's swap_remove of
                // `raw`): kept as it was.
                let v = record_value_with(item, &mut self.traces).map_err(to_error)?;
                return write_text(&mut self.buf, &v).map_err(to_error);
            }
        }
        let out = &mut self.buf;
        let decompressed = match raw.origin {
            Origin::Decompressed { stream_offset } => Some(stream_offset),
            _ => None,
        };
        let stream = (raw.stream > 0).then(|| raw.stream - 1);
        let extra_len = (!record.extra.is_empty()).then_some(record.extra.len());
        let payload_len = (raw.payload_len() > 0).then(|| raw.payload_len());
        let undecoded = err.map(|e| e.to_string());
        let ty = record.record_type().name();
        let misc_names =
            perfdata_core::record::misc::names(record.header.misc, record.record_type());
        if self.json {
            let mut o = Obj::new(out);
            o.num("offset", raw.offset);
            if let Some(d) = decompressed {
                o.num("decompressed_offset", d);
            }
            if let Some(s) = stream {
                o.num("stream", s as u64);
            }
            o.key("type");
            ser_json(o.out, &ty)?;
            o.num("misc", record.header.misc.into());
            o.key("misc_names");
            ser_json(o.out, &misc_names)?;
            o.num("size", record.header.size.into());
            if let Some(e) = event {
                o.num("event", e as u64);
            }
            o.key("body");
            ser_json(o.out, &record.body)?;
            if let Some(sid) = &record.sample_id {
                o.key("sample_id");
                ser_json(o.out, sid)?;
            }
            if let Some(n) = extra_len {
                o.num("extra_len", n as u64);
            }
            if let Some(n) = payload_len {
                o.num("payload_len", n);
            }
            if let Some(u) = &undecoded {
                o.key("undecoded");
                ser_json(o.out, u)?;
            }
            if let Some(d) = &trace {
                o.key("trace");
                ser_json(o.out, &d.text)?;
                o.key("trace_fields");
                o.out.push(b'{');
                for (i, (name, v)) in d.fields.iter().enumerate() {
                    if i > 0 {
                        o.out.push(b',');
                    }
                    ser_json(o.out, name)?;
                    o.out.push(b':');
                    ser_json(o.out, &v.to_json())?;
                }
                o.out.push(b'}');
            }
            out.extend_from_slice(b"}\n");
        } else {
            use std::io::Write as _;
            let _ = write!(out, "{:#010x}", raw.offset);
            if let Some(d) = decompressed {
                let _ = write!(out, " (+{d})");
            }
            out.push(b' ');
            out.extend_from_slice(ty.as_bytes());
            let key = &mut self.key;
            if let Some(s) = stream {
                ser_flat(out, key, "stream", &s, None)?;
            }
            // The number, then perf's names beside it: `misc=16385(USER|EXACT_IP)`.
            let _ = write!(out, " misc={}({misc_names})", record.header.misc);
            ser_flat(out, key, "size", &record.header.size, None)?;
            if let Some(e) = event {
                ser_flat(out, key, "event", &e, None)?;
            }
            let skip = trace.as_ref().map(|_| "raw");
            ser_flat(out, key, "body", &record.body, skip)?;
            if let Some(sid) = &record.sample_id {
                ser_flat(out, key, "sample_id", sid, None)?;
            }
            if let Some(n) = extra_len {
                ser_flat(out, key, "extra_len", &n, None)?;
            }
            if let Some(n) = payload_len {
                ser_flat(out, key, "payload_len", &n, None)?;
            }
            if let Some(u) = &undecoded {
                ser_flat(out, key, "undecoded", u, None)?;
            }
            if let Some(d) = &trace {
                out.push(b' ');
                out.extend_from_slice(d.text.as_bytes());
            }
            out.push(b'\n');
        }
        Ok(())
    }
}

impl TraceDecoder {
    /// A tracepoint sample's RAW payload decoded, when `sample` is one and the
    /// recording's formats describe it.
    fn decode(
        &mut self,
        item: &RecordRef<'_>,
        event: usize,
        sample: &Sample,
    ) -> Option<DecodedTrace> {
        let attr = item.meta.attrs().get(event).map(|a| &a.attr)?;
        let raw = sample.raw.as_ref()?;
        // PERF_TYPE_TRACEPOINT: the attr's config is the tracepoint id.
        if attr.type_ != 2 {
            return None;
        }
        self.events(item)?.decode(attr.config, &raw.data)
    }
}

/// Whether `sample` has a field after `raw` (that the Value path's text reordered).
fn fields_after_raw(s: &Sample) -> bool {
    s.branch_stack.is_some()
        || s.regs_user.is_some()
        || s.stack_user.is_some()
        || s.weight.is_some()
        || s.data_src.is_some()
        || s.transaction.is_some()
        || s.regs_intr.is_some()
        || s.phys_addr.is_some()
        || s.cgroup.is_some()
        || s.data_page_size.is_some()
        || s.code_page_size.is_some()
        || s.aux.is_some()
}

fn to_error(e: impl std::fmt::Display) -> ser::Error {
    serde::ser::Error::custom(e)
}

fn ser_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> Result<(), ser::Error> {
    let wrote = v.serialize(ser::Json::new(out, ser::Form::DUMP))?;
    if wrote == ser::Wrote::Null {
        // Top-level fields are never absent values; null, as a Value would say.
        out.extend_from_slice(b"null");
    }
    Ok(())
}

fn ser_flat<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    key: &mut String,
    name: &str,
    v: &T,
    skip: Option<&'static str>,
) -> Result<(), ser::Error> {
    key.clear();
    key.push_str(name);
    v.serialize(flat::Flat {
        out,
        key,
        skip,
        addr: false,
    })?;
    Ok(())
}

/// The top-level JSON object of a line.
struct Obj<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> Obj<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, empty: true }
    }

    fn key(&mut self, k: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn num(&mut self, k: &str, v: u64) {
        self.key(k);
        // A u64 always serialises.
        let _ = ser_json(self.out, &v);
    }
}
