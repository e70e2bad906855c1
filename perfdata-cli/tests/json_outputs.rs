//! Every `--json` output of every corpus file and fixture survives a reader that holds
//! numbers as doubles (jq, JavaScript): read that way (every number an f64, as
//! `JSON.parse` does), each number is the integer perfdata wrote, no integer field above
//! 2^53 - 1 is a number, the addresses of dump's records are `"0x..."` strings, and
//! each document is valid under its command's JSON Schema in `schemas/`.

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use perfdata_tests::{all_inputs, name, run_perfdata};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::json_support;
use json_support::{addr, MAX_SAFE_INTEGER};

/// The commands with a JSON output; `dump` twice (its records decompressed, and the
/// compressed records as stored).
const COMMANDS: &[&[&str]] = &[
    &["info", "--json"],
    &["stats", "--json"],
    &["dump", "--json"],
    &["dump", "--json", "--no-decompress"],
    &["check", "--json"],
    &["buildid", "list", "--json"],
    &["report", "--json"],
    &["unwind", "-o", "/dev/null", "--json"],
];

/// The schema file (in `schemas/`) of each command's documents, by the command's words
/// before `--json`.
fn schema_name(command: &[&str]) -> &'static str {
    match command[0] {
        "info" => "info",
        "stats" => "stats",
        "dump" => "dump",
        "check" => "check",
        "buildid" => "buildid-list",
        "report" => "report",
        "unwind" => "unwind",
        other => panic!("no schema for {other}"),
    }
}

/// The inputs a command must print JSON for: most of them, but `unwind` only takes
/// `--call-graph dwarf` recordings (11 of the fixtures and corpus files) and refuses the
/// others.
fn least_inputs(command: &[&str]) -> usize {
    if command[0] == "unwind" {
        10
    } else {
        20
    }
}

/// One command's output for one input: its JSON documents (JSON Lines or one document).
struct Output {
    input: PathBuf,
    command: &'static [&'static str],
    text: String,
}

impl Output {
    fn label(&self) -> String {
        format!("{} {}", self.command.join(" "), name(&self.input))
    }

    /// The documents, read exactly (serde_json keeps u64 and i64 whole).
    fn documents(&self) -> Vec<Value> {
        serde_json::Deserializer::from_str(&self.text)
            .into_iter()
            .map(|v| v.unwrap_or_else(|e| panic!("{}: not JSON: {e}", self.label())))
            .collect()
    }
}

/// Every command's output for every input, run once for all the tests here. A command
/// may fail on an input (the corrupt corpus file): what it printed before is still JSON.
fn outputs() -> &'static [Output] {
    static OUTPUTS: OnceLock<Vec<Output>> = OnceLock::new();
    OUTPUTS.get_or_init(|| {
        let inputs = all_inputs();
        assert!(inputs.len() >= 20, "{} inputs", inputs.len());
        let mut outputs = Vec::new();
        for input in &inputs {
            for &command in COMMANDS {
                let mut args: Vec<&OsStr> = command.iter().map(OsStr::new).collect();
                args.push(input.as_os_str());
                let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
                let text = String::from_utf8(out.stdout).expect("UTF-8 JSON");
                outputs.push(Output {
                    input: input.clone(),
                    command,
                    text,
                });
            }
        }
        outputs
    })
}

/// A JSON value as a double-based reader holds it: every number an f64.
#[derive(Debug)]
enum Js {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Js>),
    Object(Vec<(String, Js)>),
}

impl<'de> Deserialize<'de> for Js {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Js;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Js, E> {
                Ok(Js::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Js, E> {
                Ok(Js::Bool(b))
            }
            // What JSON.parse does: the nearest double.
            fn visit_u64<E>(self, n: u64) -> Result<Js, E> {
                Ok(Js::Number(n as f64))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Js, E> {
                Ok(Js::Number(n as f64))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Js, E> {
                Ok(Js::Number(n))
            }
            fn visit_str<E>(self, s: &str) -> Result<Js, E> {
                Ok(Js::String(s.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Js, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Js::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Js, A::Error> {
                let mut v = Vec::new();
                while let Some(kv) = a.next_entry()? {
                    v.push(kv);
                }
                Ok(Js::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Compare the double reading `js` with the exact one `exact`, field by field; count
/// the integers seen. A difference is a number a double reader would get wrong.
fn same_as_doubles(exact: &Value, js: &Js, path: &str, ints: &mut usize) -> Result<(), String> {
    match (exact, js) {
        (Value::Number(n), Js::Number(d)) => {
            if let Some(i) = n.as_u64().map(i128::from).or(n.as_i64().map(i128::from)) {
                *ints += 1;
                if i.unsigned_abs() > u128::from(MAX_SAFE_INTEGER) {
                    return Err(format!("{path}: {i} is a number above 2^53 - 1"));
                }
                if *d as i128 != i || d.fract() != 0.0 {
                    return Err(format!("{path}: {i} reads as {d}"));
                }
            }
            Ok(())
        }
        (Value::Array(a), Js::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .try_for_each(|(x, y)| same_as_doubles(x, y, &format!("{path}[]"), ints)),
        (Value::Object(a), Js::Object(b)) if a.len() == b.len() => {
            a.iter().zip(b).try_for_each(|((k, x), (k2, y))| {
                assert_eq!(k, k2);
                same_as_doubles(x, y, &format!("{path}.{k}"), ints)
            })
        }
        (Value::Null, Js::Null) => Ok(()),
        (Value::Bool(a), Js::Bool(b)) if a == b => Ok(()),
        (Value::String(a), Js::String(b)) if a == b => Ok(()),
        (a, b) => Err(format!("{path}: {a} read as {b:?}")),
    }
}

#[test]
fn every_json_output_reads_the_same_with_doubles() {
    let mut documents = 0;
    let mut ints = 0;
    let mut problems = Vec::new();
    for out in outputs() {
        let exact = out.documents();
        let doubles: Vec<Js> = serde_json::Deserializer::from_str(&out.text)
            .into_iter()
            .map(|v| v.expect("JSON"))
            .collect();
        assert_eq!(exact.len(), doubles.len());
        documents += exact.len();
        for (e, d) in exact.iter().zip(&doubles) {
            if let Err(p) = same_as_doubles(e, d, "", &mut ints) {
                problems.push(format!("{}: {p}", out.label()));
                break;
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // Every command printed something for most inputs: not a comparison of nothing.
    for command in COMMANDS {
        let printed = outputs()
            .iter()
            .filter(|o| o.command == *command && !o.text.trim().is_empty())
            .count();
        assert!(
            printed >= least_inputs(command),
            "{command:?} printed JSON for {printed} inputs"
        );
    }
    // The fixtures alone hold 12445 records and 126405 integers.
    assert!(documents > 10_000 && ints > 100_000, "{documents} {ints}");
}

/// The fields of dump's records that are addresses, by record type: (type, path).
const DUMP_ADDRESSES: &[(&str, &str)] = &[
    ("SAMPLE", "ip"),
    ("SAMPLE", "addr"),
    ("SAMPLE", "phys_addr"),
    ("SAMPLE", "callchain.ips[]"),
    ("SAMPLE", "branch_stack.entries[].from"),
    ("SAMPLE", "branch_stack.entries[].to"),
    ("SAMPLE", "regs_user.regs[]"),
    ("SAMPLE", "regs_intr.regs[]"),
    ("MMAP", "addr"),
    ("MMAP", "len"),
    ("MMAP", "pgoff"),
    ("MMAP2", "addr"),
    ("MMAP2", "len"),
    ("MMAP2", "pgoff"),
    ("KSYMBOL", "addr"),
    ("TEXT_POKE", "addr"),
    ("AUXTRACE_ERROR", "ip"),
];

/// The values at `path` (dotted, `[]` for every element) under `v`.
fn at<'a>(v: &'a Value, path: &str, found: &mut Vec<&'a Value>) {
    let (head, rest) = path.split_once('.').unwrap_or((path, ""));
    let (key, each) = match head.strip_suffix("[]") {
        Some(k) => (k, true),
        None => (head, false),
    };
    let Some(v) = v.get(key) else { return };
    let items: Vec<&Value> = match (each, v) {
        (true, Value::Array(a)) => a.iter().collect(),
        (true, _) => return,
        (false, v) => vec![v],
    };
    for item in items {
        if rest.is_empty() {
            found.push(item);
        } else {
            at(item, rest, found);
        }
    }
}

#[test]
fn dump_addresses_are_hex_strings() {
    let mut seen = std::collections::BTreeMap::new();
    let mut above = 0;
    for out in outputs().iter().filter(|o| o.command[0] == "dump") {
        for record in out.documents() {
            for (ty, path) in DUMP_ADDRESSES {
                if record["type"] != *ty {
                    continue;
                }
                let mut found = Vec::new();
                at(&record["body"], path, &mut found);
                for v in found {
                    // `addr` panics, naming the value, on anything but "0x" and hex.
                    if addr(v) > MAX_SAFE_INTEGER {
                        above += 1;
                    }
                    *seen.entry((*ty, *path)).or_insert(0) += 1;
                }
            }
        }
    }
    // The inputs have kernel addresses and PERF_CONTEXT markers (above 2^53: 1611 in
    // the fixtures alone) and, with the corpus, every kind of address but TEXT_POKE's and
    // AUXTRACE_ERROR's.
    assert!(above > 1_000, "{above} addresses above 2^53");
    for (ty, path) in DUMP_ADDRESSES {
        if perfdata_tests::corpus_dir().is_some() && !matches!(*ty, "TEXT_POKE" | "AUXTRACE_ERROR")
        {
            assert!(seen.contains_key(&(*ty, *path)), "no {ty} {path} seen");
        }
    }
}

/// The base the schemas' relative `$id`s and `$ref`s resolve against; never fetched (the
/// validator has no retriever: every schema is registered from `schemas/`).
const SCHEMA_BASE: &str = "https://perfdata.invalid/schemas/";

/// A schema file of `schemas/`, parsed.
fn schema_file(name: &str) -> Value {
    let path = perfdata_tests::workspace_root()
        .join("schemas")
        .join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// The validator of one command's schema, `common.schema.json` registered beside it.
fn validator(name: &str) -> jsonschema::Validator {
    let registry = jsonschema::Registry::new()
        .add(
            format!("{SCHEMA_BASE}common.schema.json"),
            schema_file("common"),
        )
        .and_then(|r| r.prepare())
        .expect("common.schema.json registers");
    // Building also checks the schema against the draft 2020-12 meta-schema.
    jsonschema::options()
        .with_base_uri(SCHEMA_BASE)
        .with_registry(&registry)
        .build(&schema_file(name))
        .unwrap_or_else(|e| panic!("{name}.schema.json: {e}"))
}

#[test]
fn every_json_output_is_valid_under_its_schema() {
    let mut validators = std::collections::BTreeMap::new();
    let mut checked = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    for out in outputs() {
        let name = schema_name(out.command);
        let v = validators.entry(name).or_insert_with(|| validator(name));
        for doc in out.documents() {
            *checked.entry(name).or_insert(0usize) += 1;
            if let Some(e) = v.iter_errors(&doc).next() {
                problems.push(format!(
                    "{}: {} at {}: {e}",
                    out.label(),
                    name,
                    e.instance_path()
                ));
                break;
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    // Every schema checked documents of most inputs (dump: one per record).
    for command in COMMANDS {
        let name = schema_name(command);
        let least = least_inputs(command);
        assert!(
            checked.get(name).copied().unwrap_or(0) >= least,
            "{checked:?}"
        );
    }
    assert!(checked["dump"] > 10_000, "{checked:?}");
}

/// The schemas reject what the JSON form forbids: an address as a number, an integer
/// above 2^53 - 1 as a number, a field no schema names.
#[test]
fn schemas_reject_unsafe_numbers_and_unknown_fields() {
    let dump = validator("dump");
    let stats = validator("stats");
    let sample = outputs()
        .iter()
        .filter(|o| o.command == ["dump", "--json"])
        .flat_map(|o| o.documents())
        .find(|d| d["type"] == "SAMPLE" && d["body"]["ip"].is_string())
        .expect("a SAMPLE with an ip");
    assert!(dump.is_valid(&sample));
    let ip = addr(&sample["body"]["ip"]);
    let mut bad = sample.clone();
    bad["body"]["ip"] = Value::from(ip);
    assert!(!dump.is_valid(&bad), "ip as a number: {bad}");
    let mut bad = sample.clone();
    bad["size"] = Value::from(MAX_SAFE_INTEGER + 1);
    assert!(!dump.is_valid(&bad), "size above 2^53 - 1: {bad}");
    let mut bad = sample;
    bad["body"]["no_such_field"] = Value::from(1);
    assert!(!dump.is_valid(&bad), "unknown field: {bad}");

    let good = serde_json::json!({"records": {"SAMPLE": 1}, "total": "9007199254740992",
        "events": [{"name": "cycles", "samples": 1, "lost_samples": 0}]});
    assert!(stats.is_valid(&good));
    let mut bad = good;
    bad["total"] = Value::from(MAX_SAFE_INTEGER + 1);
    assert!(!stats.is_valid(&bad), "{bad}");
}
