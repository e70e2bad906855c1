//! `perfdata help-json`: the fields of every `--json` output, made from the JSON Schema
//! files in `schemas/` (embedded), so that the text cannot drift from what the tests
//! validate the outputs against.

use std::io::Write;

use serde_json::Value;

use crate::CliError;

/// Each schema file's name and text, as the repository holds them.
pub const SCHEMAS: &[(&str, &str)] = &[
    ("info", include_str!("../../schemas/info.schema.json")),
    ("stats", include_str!("../../schemas/stats.schema.json")),
    ("dump", include_str!("../../schemas/dump.schema.json")),
    ("check", include_str!("../../schemas/check.schema.json")),
    ("report", include_str!("../../schemas/report.schema.json")),
    ("unwind", include_str!("../../schemas/unwind.schema.json")),
    (
        "buildid-list",
        include_str!("../../schemas/buildid-list.schema.json"),
    ),
    ("common", include_str!("../../schemas/common.schema.json")),
];

/// What a property's values are, in the terms of docs/json.md.
fn kind(p: &Value) -> String {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        return match r.rsplit('/').next() {
            Some("address") => "\"0x...\" address string".into(),
            Some("integer") => "integer: a number up to 2^53-1, else a decimal string".into(),
            Some("hex") => "bytes as a hex string".into(),
            Some(other) => format!("see {other}"),
            None => r.into(),
        };
    }
    match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(t) => t.to_string(),
        None => "any".into(),
    }
}

/// Every object with `properties` under `v`, with the path that leads to it.
fn walk(v: &Value, path: &str, out: &mut Vec<(String, String, String)>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, p) in props {
                    out.push((path.to_owned(), name.clone(), kind(p)));
                }
            }
            for (k, child) in map {
                let sub = match k.as_str() {
                    "properties" | "items" | "additionalProperties" | "anyOf" | "oneOf" => {
                        path.to_owned()
                    }
                    _ if path.is_empty() => k.clone(),
                    _ => format!("{path}.{k}"),
                };
                walk(child, &sub, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| walk(i, path, out)),
        _ => {}
    }
}

/// Print each schema's title and fields.
pub fn run() -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    for (name, text) in SCHEMAS {
        let schema: Value = serde_json::from_str(text)?;
        let title = schema.get("title").and_then(Value::as_str).unwrap_or(name);
        writeln!(out, "== {name} ({name}.schema.json): {title}")?;
        let mut fields = Vec::new();
        walk(&schema, "", &mut fields);
        for (path, field, kind) in fields {
            let at = if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            writeln!(out, "  {at}{field}: {kind}")?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
