//! `perfdata info --json`: the fields are documented in the parent module.

use std::io::{self, Write};

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::names::event_name;
use perfdata_core::{ContainerKind, Endian, Metadata};
use serde_json::{json, Map, Value};

use super::{header_version, time};

/// Write [`to_value`], made [`crate::json::safe`], pretty-printed.
pub fn write(out: &mut impl Write, meta: &Metadata, captured_on: Option<i64>) -> io::Result<()> {
    crate::json::write_pretty(out, &to_value(meta, captured_on))
}

/// The header view as JSON, numbers exact (addresses as hex strings).
pub fn to_value(meta: &Metadata, captured_on: Option<i64>) -> Value {
    let file = meta
        .header
        .as_ref()
        .filter(|_| meta.container != ContainerKind::Pipe);
    let header = json!({
        "version": header_version(meta),
        "size": file.map_or(16, |h| h.size),
        "attr_size": file.map(|h| h.attr_size),
        "attrs": file.map(|h| h.attrs),
        "data": file.map(|h| h.data),
        "event_types": file.map(|h| h.event_types),
        "feat_offset": file.map(|h| h.feature_index_offset()),
    });
    let events: Vec<Value> = meta
        .attrs()
        .iter()
        .enumerate()
        .map(|(i, ev)| {
            json!({
                "name": event_name(meta, i),
                "ids": ev.ids,
                "attr": model_value(&ev.attr),
            })
        })
        .collect();
    let mut features = Map::new();
    for section in meta.features.values() {
        features.insert(
            section.id.name().to_lowercase(),
            feature_value(&section.feature),
        );
    }
    let missing: Vec<String> = FeatureId::all_known()
        .filter(|id| !meta.features.contains_key(id))
        .map(FeatureId::name)
        .collect();
    json!({
        "container": meta.container,
        "endian": match meta.endian {
            Endian::Little => "little",
            Endian::Big => "big",
        },
        "captured_on": captured_on.map(time::rfc3339),
        "header": header,
        "events": events,
        "features": features,
        "missing_features": missing,
        "warnings": meta.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

/// The model's serde form without the enum's `{kind, value}` wrapping.
fn feature_value(feature: &Feature) -> Value {
    match feature {
        Feature::BranchStack | Feature::Stat => Value::Bool(true),
        Feature::Raw(bytes) => json!({ "raw": crate::ser::hex(bytes) }),
        other => match model_value(other) {
            Value::Object(mut m) if !m.contains_key("error") => {
                m.remove("value").unwrap_or(Value::Null)
            }
            v => v,
        },
    }
}

/// A model's serde form as the views write it ([`crate::json::exact_value`]: marked
/// addresses and bytes in hex), or the error that stopped it.
fn model_value<T: serde::Serialize + ?Sized>(v: &T) -> Value {
    crate::json::exact_value(v).unwrap_or_else(|e| json!({ "error": e.to_string() }))
}
