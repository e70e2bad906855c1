//! `perfdata dump`: every record, one per line, with its file offset.
//!
//! Text lines are `OFFSET TYPE key=value ...`; with `--json` each line is one JSON object
//! (JSON Lines) with the fields documented in the README.

use std::io::{BufWriter, Write};
use std::path::Path;

use perfdata_core::raw::Origin;
use perfdata_core::{PerfReader, ReadOptions};
use serde_json::{json, Map, Value};

use crate::{print_warnings, CliError};

pub fn run(path: &Path, as_json: bool, decompress: bool) -> Result<(), CliError> {
    let opts = if decompress {
        ReadOptions::ContainersAndContents
    } else {
        ReadOptions::Containers
    };
    let mut reader = PerfReader::open_with(path, opts)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut result = Ok(());
    loop {
        let item = match reader.next_record() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
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
        if let Some(event) = item.locate().event {
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
        if as_json {
            serde_json::to_writer(&mut out, &Value::Object(obj))?;
            writeln!(out)?;
        } else {
            write_text_line(&mut out, &obj)?;
        }
    }
    out.flush()?;
    drop(out);
    print_warnings(reader.meta());
    Ok(result?)
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

/// Fields that are addresses read better in hex.
const HEX_KEYS: [&str; 7] = ["ip", "addr", "pgoff", "phys_addr", "from", "to", "ips"];

fn write_text_line(out: &mut impl Write, obj: &Map<String, Value>) -> std::io::Result<()> {
    let offset = obj["offset"].as_u64().unwrap_or(0);
    let ty = obj["type"].as_str().unwrap_or("?");
    write!(out, "{offset:#010x}")?;
    if let Some(d) = obj.get("decompressed_offset") {
        write!(out, " (+{d})")?;
    }
    write!(out, " {ty}")?;
    for (k, v) in obj {
        if matches!(k.as_str(), "offset" | "type" | "decompressed_offset") {
            continue;
        }
        write_flat(out, k, v)?;
    }
    writeln!(out)
}

/// Nested objects become dotted keys; `body` adds no prefix of its own.
fn write_flat(out: &mut impl Write, key: &str, v: &Value) -> std::io::Result<()> {
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
        Value::Number(n) if is_hex_key(key) => match n.as_u64() {
            Some(v) => write!(out, " {key}={v:#x}"),
            None => write!(out, " {key}={n}"),
        },
        Value::Number(n) => write!(out, " {key}={n}"),
        Value::Array(items) if is_hex_key(key) && items.iter().all(|i| i.is_u64()) => {
            let hex: Vec<String> = items
                .iter()
                .map(|i| format!("{:#x}", i.as_u64().unwrap_or(0)))
                .collect();
            write!(out, " {key}=[{}]", hex.join(","))
        }
        Value::String(s) => write!(out, " {key}={s:?}"),
        other => write!(out, " {key}={other}"),
    }
}

fn is_hex_key(key: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or(key);
    HEX_KEYS.contains(&last)
}
