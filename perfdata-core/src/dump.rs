//! One record as `perfdata dump` shows it: a JSON object ([`record_value`], written by
//! [`write_json`] as one line of JSON Lines) or a text line ([`write_text`],
//! `OFFSET TYPE key=value ...`).
//!
//! The object's fields: `offset` (of the record in the file; for a record from a
//! compressed record, of that compressed record), `decompressed_offset` (its position in
//! the decompressed stream), `stream` (N for a directory's `data.N`), `type` (perf's
//! name), `misc`, `size`, `event` (index of the attr), `body` (the model's fields, absent
//! optional fields left out), `sample_id` (the trailer), `extra_len`, `payload_len` and
//! `undecoded` (why the record was kept as bytes), and for a tracepoint's SAMPLE `trace`
//! (its RAW payload as perf script prints it) and `trace_fields` (the payload's fields
//! by name, from the event format in the tracing data; see [`crate::tracing::event`]).
//! Numbers follow [`crate::json`]: addresses are `"0x..."` strings, in both forms.

use std::io::{self, Write};

use serde_json::{json, Map, Value};

use crate::raw::Origin;
use crate::reader::Item;
use crate::record::RecordBody;
use crate::tracing::{tracing_blob, TraceEvents};

/// The event formats of a recording's tracing data, read once, when first needed, for
/// [`record_value_with`] to decode tracepoint samples.
#[derive(Debug, Default)]
pub struct TraceDecoder {
    /// `None` until a tracepoint sample needs it; then the formats, or `None` inside
    /// when the recording has no tracing data that parses.
    events: Option<Option<TraceEvents>>,
}

impl TraceDecoder {
    fn events(&mut self, item: &Item<'_>) -> Option<&TraceEvents> {
        self.events
            .get_or_insert_with(|| tracing_blob(item.meta).and_then(TraceEvents::parse))
            .as_ref()
    }
}

/// The record `item` as a JSON object, numbers exact (addresses as hex strings already).
pub fn record_value(item: &Item<'_>) -> serde_json::Result<Map<String, Value>> {
    record_value_with(item, &mut TraceDecoder::default())
}

/// [`record_value`], tracepoint samples decoded with the formats `traces` keeps between
/// records.
pub fn record_value_with(
    item: &Item<'_>,
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
    obj.insert("size".into(), json!(record.header.size));
    // Located once: the event is both a field and what a tracepoint sample needs.
    let event = item.locate().event;
    if let Some(event) = event {
        obj.insert("event".into(), json!(event));
    }
    obj.insert(
        "body".into(),
        without_nulls(serde_json::to_value(&record.body)?),
    );
    if let Some(sid) = &record.sample_id {
        obj.insert(
            "sample_id".into(),
            without_nulls(serde_json::to_value(sid)?),
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
        let attr = item.meta.attrs.get(event).map(|a| &a.attr);
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

/// Absent optional fields are left out rather than written as null.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
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
            "offset" | "type" | "decompressed_offset" | "trace" | "trace_fields"
        ) {
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

/// Whether `s` is an address as [`crate::json::addr`] writes it.
fn is_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_address_value(v: &Value) -> bool {
    v.as_str().is_some_and(is_address)
}
