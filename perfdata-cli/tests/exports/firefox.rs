//! The Firefox Profiler's processed profile checked as the profiler defines it: against
//! the schema generated from its own types (schema.rs, `firefox-schema.json`, version 55,
//! the version the document must say it is) by the test's validator and by the
//! jsonschema crate, then for what its code relies on and a schema cannot say: there is
//! a thread (its loadProfile refuses a profile without one), every table's columns are
//! `length` long, every index column points into the table it names (samples ->
//! stackTable -> frameTable -> funcTable -> the thread's stringArray, resources, native
//! symbols, libs, categories and their subcategories, threads), each stack's prefix comes
//! before it (the profiler builds its call nodes in one pass that assumes so) and samples
//! are in time order (its range selections bisect them).

use serde_json::Value;

use super::schema::{firefox_schema, validate};

/// The processed profile version `firefox-schema.json` was generated for.
pub const VERSION: u64 = 55;

/// Where `doc` breaks the profiler's definitions: the schema's errors, then the
/// invariants'. One line per error.
pub fn check(doc: &Value) -> Vec<String> {
    let version = doc["meta"]["preprocessedProfileVersion"].as_u64();
    if version != Some(VERSION) {
        // Another version needs its own schema: firefox-schema.sh names the commit.
        return vec![format!(
            "meta.preprocessedProfileVersion {version:?}: the schema is of version {VERSION}"
        )];
    }
    let schema = firefox_schema();
    let mut errors = validate(&schema, doc);
    // A second opinion, the jsonschema crate (draft-07 as the schema's $schema says): a
    // rule the test's own validator got wrong would pass one of the two.
    let second = jsonschema::draft7::new(&schema).expect("the schema builds");
    for e in second.iter_errors(doc) {
        errors.push(format!("jsonschema: {}: {e}", e.instance_path()));
    }
    errors.extend(invariants(doc));
    errors
}

/// What an index column may hold besides an index in range.
#[derive(Clone, Copy)]
struct Ref {
    null: bool,
    minus_one: bool,
}

const INDEX: Ref = Ref {
    null: false,
    minus_one: false,
};
const OR_NULL: Ref = Ref {
    null: true,
    minus_one: false,
};
const OR_MINUS_ONE: Ref = Ref {
    null: false,
    minus_one: true,
};

struct Errors(Vec<String>);

impl Errors {
    /// The table at `at`, if present: its `length`, which every column (every array
    /// member) must have.
    fn table(&mut self, t: &Value, at: &str) -> Option<usize> {
        let object = t.as_object()?;
        let Some(length) = object.get("length").and_then(Value::as_u64) else {
            self.0.push(format!("{at}: no length"));
            return None;
        };
        for (name, column) in object {
            if let Some(c) = column.as_array() {
                if c.len() as u64 != length {
                    self.0
                        .push(format!("{at}.{name}: {} entries, length {length}", c.len()));
                }
            }
        }
        Some(length as usize)
    }

    /// Each entry of `t[name]` (if present) is an index below `bound`, or what `kind`
    /// allows. One error per column: its first bad entry and how many there are.
    fn refs(&mut self, t: &Value, name: &str, at: &str, bound: usize, kind: Ref) {
        let Some(column) = t.get(name).and_then(Value::as_array) else {
            return;
        };
        let bad = |v: &Value| match v {
            Value::Null => !kind.null,
            _ => match v.as_i64() {
                Some(-1) => !kind.minus_one,
                Some(i) => i < 0 || i as usize >= bound,
                None => true,
            },
        };
        let bads: Vec<usize> = (0..column.len()).filter(|&i| bad(&column[i])).collect();
        if let Some(&first) = bads.first() {
            self.0.push(format!(
                "{at}.{name}[{first}] = {} is not an index below {bound} ({} such entries)",
                column[first],
                bads.len()
            ));
        }
    }
}

/// The invariants of the profile, as the module's comment lists them.
pub fn invariants(doc: &Value) -> Vec<String> {
    let mut e = Errors(Vec::new());
    let meta = &doc["meta"];
    let threads = doc["threads"].as_array().map_or(&[][..], Vec::as_slice);
    let libs = doc["libs"].as_array().map_or(0, Vec::len);
    // The profiler's loadProfile stops at a profile without threads: a fatal error.
    if threads.is_empty() {
        e.0.push("threads: none, which the profiler refuses to load".into());
    }
    // Without meta.categories the profiler substitutes its own list: nothing to check.
    let categories = meta["categories"].as_array();
    if let Some(c) = categories {
        if !c.iter().any(|c| c["color"] == "grey") {
            e.0.push("meta.categories: no grey (default) category".into());
        }
    }
    e.table(&meta["extensions"], "meta.extensions");
    for list in ["initialVisibleThreads", "initialSelectedThreads"] {
        e.refs(meta, list, "meta", threads.len(), INDEX);
    }
    for list in ["counters", "profilerOverhead"] {
        for (i, c) in doc[list].as_array().into_iter().flatten().enumerate() {
            let main = &c["mainThreadIndex"];
            if main.as_u64().is_none_or(|m| m as usize >= threads.len()) {
                e.0.push(format!(
                    "{list}[{i}].mainThreadIndex = {main}: not a thread"
                ));
            }
            e.table(&c["samples"], &format!("{list}[{i}].samples"));
        }
    }
    for (i, t) in threads.iter().enumerate() {
        thread(&mut e, t, &format!("threads[{i}]"), libs, categories);
    }
    e.0
}

/// One thread's tables and indices; `libs` and `categories` are the profile's.
fn thread(e: &mut Errors, t: &Value, at: &str, libs: usize, categories: Option<&Vec<Value>>) {
    let strings = t["stringArray"].as_array().map_or(0, Vec::len);
    let path = |table: &str| format!("{at}.{table}");
    let mut len = |table: &str| e.table(&t[table], &path(table)).unwrap_or(0);
    let stacks = len("stackTable");
    let frames = len("frameTable");
    let funcs = len("funcTable");
    let resources = len("resourceTable");
    let symbols = len("nativeSymbols");
    for table in [
        "samples",
        "markers",
        "jsAllocations",
        "nativeAllocations",
        "jsTracer",
    ] {
        len(table);
    }
    for table in ["samples", "jsAllocations", "nativeAllocations"] {
        e.refs(&t[table], "stack", &path(table), stacks, OR_NULL);
    }
    let samples = &t["samples"];
    time_order(e, samples, &path("samples"));

    let stack_table = &t["stackTable"];
    e.refs(stack_table, "frame", &path("stackTable"), frames, INDEX);
    // A stack's prefix is an earlier stack: the index bound is the stack's own.
    for (i, p) in stack_table["prefix"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if !p.is_null() && p.as_u64().is_none_or(|p| p as usize >= i) {
            e.0.push(format!(
                "{at}.stackTable.prefix[{i}] = {p} is not null nor an earlier stack"
            ));
            break;
        }
    }

    let frame_table = &t["frameTable"];
    let fat = path("frameTable");
    e.refs(frame_table, "func", &fat, funcs, INDEX);
    e.refs(frame_table, "nativeSymbol", &fat, symbols, OR_NULL);
    if let Some(categories) = categories {
        e.refs(frame_table, "category", &fat, categories.len(), OR_NULL);
        subcategories(e, frame_table, &fat, categories);
    }

    let func_table = &t["funcTable"];
    let fut = path("funcTable");
    e.refs(func_table, "name", &fut, strings, INDEX);
    e.refs(func_table, "fileName", &fut, strings, OR_NULL);
    e.refs(func_table, "resource", &fut, resources, OR_MINUS_ONE);

    let resource_table = &t["resourceTable"];
    let rat = path("resourceTable");
    e.refs(resource_table, "lib", &rat, libs, OR_NULL);
    e.refs(resource_table, "name", &rat, strings, INDEX);
    e.refs(resource_table, "host", &rat, strings, OR_NULL);

    let native_symbols = &t["nativeSymbols"];
    let nat = path("nativeSymbols");
    e.refs(native_symbols, "libIndex", &nat, libs, INDEX);
    e.refs(native_symbols, "name", &nat, strings, INDEX);

    let markers = &t["markers"];
    e.refs(markers, "name", &path("markers"), strings, INDEX);
    if let Some(categories) = categories {
        e.refs(
            markers,
            "category",
            &path("markers"),
            categories.len(),
            INDEX,
        );
    }
}

/// A frame with a category has a subcategory of that category (0 is always "Other").
fn subcategories(e: &mut Errors, frame_table: &Value, at: &str, categories: &[Value]) {
    let (Some(cats), Some(subs)) = (
        frame_table["category"].as_array(),
        frame_table["subcategory"].as_array(),
    ) else {
        return;
    };
    for (i, (c, s)) in cats.iter().zip(subs).enumerate() {
        let Some(c) = c.as_u64().and_then(|c| categories.get(c as usize)) else {
            continue;
        };
        let count = c["subcategories"].as_array().map_or(0, Vec::len);
        if s.as_u64().is_none_or(|s| s as usize >= count) {
            e.0.push(format!(
                "{at}.subcategory[{i}] = {s}: category {} has {count} subcategories",
                c["name"]
            ));
            return;
        }
    }
}

/// Samples have times (`time`, or `timeDeltas` from 0), never going back.
fn time_order(e: &mut Errors, samples: &Value, at: &str) {
    let times: Vec<f64> = if let Some(t) = samples["time"].as_array() {
        t.iter().filter_map(Value::as_f64).collect()
    } else if let Some(d) = samples["timeDeltas"].as_array() {
        d.iter()
            .filter_map(Value::as_f64)
            .scan(0.0, |now, d| {
                *now += d;
                Some(*now)
            })
            .collect()
    } else {
        if samples.is_object() {
            e.0.push(format!("{at}: neither time nor timeDeltas"));
        }
        return;
    };
    if let Some(i) = times.windows(2).position(|w| w[1] < w[0]) {
        e.0.push(format!(
            "{at}: sample {} at {} ms, before sample {i} at {} ms",
            i + 1,
            times[i + 1],
            times[i]
        ));
    }
}

/// A small profile as the profiler's version 55 types define it: one thread, two
/// stacks (`main` and `main;leaf`), three samples.
#[cfg(test)]
fn minimal_profile() -> Value {
    serde_json::json!({
        "meta": {
            "interval": 1.0, "startTime": 0.0, "processType": 0, "product": "p",
            "stackwalk": 1, "version": 24, "preprocessedProfileVersion": 55,
            "markerSchema": [],
            "categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]}],
            "extensions": {"length": 0, "baseURL": [], "id": [], "name": []}
        },
        "libs": [],
        "threads": [{
            "processType": "default", "processStartupTime": 0.0,
            "processShutdownTime": null, "registerTime": 0.0, "unregisterTime": null,
            "pausedRanges": [], "name": "t", "isMainThread": true, "pid": "1", "tid": 1,
            "samples": {"length": 3, "weightType": "samples", "weight": null,
                "stack": [0, 1, null], "timeDeltas": [0.0, 1.0, 1.0]},
            "markers": {"length": 0, "data": [], "name": [], "startTime": [],
                "endTime": [], "phase": [], "category": []},
            "stackTable": {"length": 2, "frame": [0, 1], "prefix": [null, 0]},
            "frameTable": {"length": 2, "address": [-1, -1], "inlineDepth": [0, 0],
                "category": [0, null], "subcategory": [0, null], "func": [0, 1],
                "nativeSymbol": [null, null], "innerWindowID": [0, 0],
                "line": [null, null], "column": [null, null]},
            "stringArray": ["main", "leaf"],
            "funcTable": {"length": 2, "name": [0, 1], "isJS": [false, false],
                "relevantForJS": [false, false], "resource": [-1, -1],
                "fileName": [null, null], "lineNumber": [null, null],
                "columnNumber": [null, null]},
            "resourceTable": {"length": 0, "lib": [], "name": [], "host": [], "type": []},
            "nativeSymbols": {"length": 0, "libIndex": [], "address": [], "name": [],
                "functionSize": []}
        }]
    })
}

#[test]
fn a_minimal_profile_passes() {
    assert_eq!(check(&minimal_profile()), Vec::<String>::new());
}

#[test]
fn broken_profiles_are_rejected() {
    fn remove(v: &mut Value, key: &str) {
        v.as_object_mut().expect("an object").remove(key);
    }
    type Mutation = fn(&mut Value);
    // Each mutation, and a piece of the error it must give.
    let cases: [(Mutation, &str); 15] = [
        (
            |p| remove(&mut p["meta"], "stackwalk"),
            "$.meta: no stackwalk",
        ),
        (
            |p| p["meta"]["pausedRanges"] = serde_json::json!([]),
            "property pausedRanges is not allowed",
        ),
        (
            |p| p["threads"][0]["pid"] = 1.into(),
            "$.threads[0].pid: 1 is not of type \"string\"",
        ),
        (
            |p| p["threads"][0]["samples"]["weightType"] = "parsecs".into(),
            "weightType",
        ),
        (
            |p| p["threads"][0]["stackTable"]["frame"][1] = Value::Null,
            "stackTable.frame[1]",
        ),
        (
            |p| p["meta"]["preprocessedProfileVersion"] = 56.into(),
            "the schema is of version 55",
        ),
        (
            |p| p["threads"][0]["stackTable"]["length"] = 3.into(),
            "stackTable.frame: 2 entries, length 3",
        ),
        (
            |p| p["threads"][0]["samples"]["stack"][0] = 2.into(),
            "samples.stack[0] = 2",
        ),
        (
            |p| p["threads"][0]["stackTable"]["prefix"][0] = 1.into(),
            "prefix[0] = 1 is not null nor an earlier",
        ),
        (
            |p| p["threads"][0]["frameTable"]["func"][1] = 2.into(),
            "frameTable.func[1] = 2",
        ),
        (
            |p| p["threads"][0]["funcTable"]["name"][0] = 2.into(),
            "funcTable.name[0] = 2",
        ),
        (
            |p| p["threads"][0]["frameTable"]["subcategory"][0] = 1.into(),
            "subcategory[0] = 1",
        ),
        (
            |p| p["threads"][0]["samples"]["timeDeltas"][2] = (-2.0).into(),
            "before sample 1",
        ),
        (
            |p| p["meta"]["categories"][0]["color"] = "red".into(),
            "no grey",
        ),
        (|p| p["threads"] = serde_json::json!([]), "threads: none"),
    ];
    for (i, (mutate, expected)) in cases.into_iter().enumerate() {
        let mut p = minimal_profile();
        mutate(&mut p);
        let errors = check(&p);
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{expected:?} not in {errors:?}"
        );
        // The first five break the schema: the jsonschema crate must see it too.
        if i < 5 {
            let second = errors.iter().any(|e| e.starts_with("jsonschema:"));
            assert!(second, "jsonschema passed what gave {errors:?}");
        }
    }
}
