//! A JSON Schema (draft-07) validator for the keywords speedscope's file format schema
//! uses (`$ref`, `anyOf`, `const`, `enum`, `items`, `properties`, `required`, `type`;
//! `title` and `$schema` say nothing to check). Any other keyword fails the test, so a
//! schema that needs more is not half checked.
//!
//! `speedscope-schema.json` beside this file is speedscope's own
//! `dist/release/file-format-schema.json` from its npm package (speedscope 1.25.0, MIT
//! License, Copyright (c) 2018 Jamie Wong), the schema its `$schema` URL names.

use serde_json::Value;

/// speedscope's file format schema.
pub fn speedscope_schema() -> Value {
    serde_json::from_str(include_str!("speedscope-schema.json")).expect("schema JSON")
}

/// Where `doc` breaks `schema` (the root schema, for `$ref`s): one line per error.
pub fn validate(schema: &Value, doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, doc, "$", &mut errors);
    errors
}

fn resolve<'a>(root: &'a Value, reference: &str) -> &'a Value {
    let path = reference
        .strip_prefix("#/")
        .unwrap_or_else(|| panic!("$ref {reference}"));
    path.split('/').fold(root, |v, part| &v[part])
}

fn type_is(t: &str, v: &Value) -> bool {
    match t {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => panic!("type {t}"),
    }
}

fn check(root: &Value, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        panic!("schema at {at} is not an object");
    };
    for (key, rule) in schema {
        match key.as_str() {
            "$schema" | "title" | "definitions" => {}
            "$ref" => check(
                root,
                resolve(root, rule.as_str().expect("$ref")),
                v,
                at,
                errors,
            ),
            "type" => {
                let ok = match rule {
                    Value::String(t) => type_is(t, v),
                    Value::Array(ts) => ts.iter().any(|t| type_is(t.as_str().expect("type"), v)),
                    _ => panic!("type {rule}"),
                };
                if !ok {
                    errors.push(format!("{at}: not of type {rule}"));
                }
            }
            "const" if v != rule => errors.push(format!("{at}: {v} is not {rule}")),
            "const" => {}
            "enum" => {
                if !rule.as_array().expect("enum").contains(v) {
                    errors.push(format!("{at}: {v} not in {rule}"));
                }
            }
            "required" => {
                for name in rule.as_array().expect("required") {
                    let name = name.as_str().expect("name");
                    if v.is_object() && v.get(name).is_none() {
                        errors.push(format!("{at}: no {name}"));
                    }
                }
            }
            "properties" => {
                for (name, sub) in rule.as_object().expect("properties") {
                    if let Some(p) = v.as_object().and_then(|o| o.get(name)) {
                        check(root, sub, p, &format!("{at}.{name}"), errors);
                    }
                }
            }
            "items" => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    check(root, rule, item, &format!("{at}[{i}]"), errors);
                }
            }
            "anyOf" => {
                let fits = rule.as_array().expect("anyOf").iter().any(|sub| {
                    let mut e = Vec::new();
                    check(root, sub, v, at, &mut e);
                    e.is_empty()
                });
                if !fits {
                    errors.push(format!("{at}: fits none of anyOf"));
                }
            }
            other => panic!("schema keyword {other} at {at} is not checked here"),
        }
    }
}

#[test]
fn the_validator_rejects_what_the_schema_rejects() {
    let schema = speedscope_schema();
    let good = serde_json::json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": "main", "file": "a.out"}]},
        "profiles": [{"type": "sampled", "name": "p", "unit": "nanoseconds",
            "startValue": 0, "endValue": 2, "samples": [[0]], "weights": [2]}]
    });
    assert_eq!(validate(&schema, &good), Vec::<String>::new());
    let mut bad = good.clone();
    bad["profiles"][0]["unit"] = "parsecs".into();
    bad["shared"]["frames"][0]["name"] = 3.into();
    bad["profiles"][0]
        .as_object_mut()
        .unwrap()
        .remove("weights");
    let errors = validate(&schema, &bad);
    assert!(errors.len() >= 2, "{errors:?}");
}
