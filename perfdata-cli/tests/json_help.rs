//! `perfdata help-json` covers every schema file in `schemas/` and lists every property
//! each declares, saying which are "0x..." addresses and which big-number strings (read
//! here from the schema files themselves).

use std::collections::BTreeMap;

use perfdata_tests::workspace_root;
use serde_json::Value;

/// (property name, the `$ref` it has) of every `properties` object under `v`.
fn properties(v: &Value, out: &mut Vec<(String, Option<String>)>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, p) in props {
                    let r = p.get("$ref").and_then(Value::as_str).map(str::to_owned);
                    out.push((name.clone(), r));
                }
            }
            map.values().for_each(|c| properties(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| properties(c, out)),
        _ => {}
    }
}

#[test]
fn every_schema_and_property_is_listed() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("help-json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // The sections, by schema file name.
    let mut sections: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("== ") {
            let file = head.split(['(', ')']).nth(1).unwrap().to_owned();
            current = Some(file.clone());
            sections.insert(file, Vec::new());
        } else if let Some(c) = &current {
            sections.get_mut(c).unwrap().push(line);
        }
    }
    let mut files = 0;
    let mut addresses = 0;
    for entry in std::fs::read_dir(workspace_root().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let lines = sections
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is not in help-json"));
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut props = Vec::new();
        properties(&schema, &mut props);
        assert!(!props.is_empty() || name == "common.schema.json", "{name}");
        for (prop, r) in props {
            let listed: Vec<&&str> = lines
                .iter()
                .filter(|l| l.ends_with(&format!(" {prop}: ")) || l.contains(&format!(" {prop}: ")))
                .collect();
            assert!(!listed.is_empty(), "{name}: {prop} not listed");
            match r.as_deref().and_then(|r| r.rsplit('/').next()) {
                Some("address") => {
                    addresses += 1;
                    assert!(
                        listed.iter().any(|l| l.contains("\"0x...\" address")),
                        "{prop}"
                    );
                }
                Some("integer") => {
                    assert!(
                        listed.iter().any(|l| l.contains("decimal string")),
                        "{prop}"
                    )
                }
                _ => {}
            }
        }
        files += 1;
    }
    assert_eq!(
        files,
        sections.len(),
        "help-json lists only the schema files"
    );
    eprintln!("{files} schema files, {addresses} address properties");
}
