//! Decoded field values against perf: every SAMPLE that `perfdata dump --json` decodes
//! must be one that `perf script` prints, with the same pid, tid, cpu, time (ns), period,
//! event, addr and ip, for every input perf reads. A round trip cannot catch two
//! same-size fields swapped both ways; this can.
//!
//! Inputs perf 6.1 stops early on as pipes (tracing data, compressed records) are
//! converted to files first; perf reads those, and they are compared with perfdata's
//! reading of the original stream.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{fixtures_dir, name, perf_available, perf_inputs, perf_run, run_perfdata};

use crate::json_support;
use json_support::{addr, opt_uint, uint};

/// Pipes perf 6.1 cannot read to their end, read through a file perfdata makes of them.
fn via_file() -> Vec<(std::path::PathBuf, &'static [&'static str])> {
    let mut v = vec![
        (fixtures_dir().join("pipe-tracepoint.data"), &[][..]),
        (
            fixtures_dir().join("pipe-compressed.data"),
            &["--decompress"][..],
        ),
    ];
    if let Some(dir) = perfdata_tests::corpus_dir() {
        v.push((dir.join("KDAB-probe.data.stream"), &[][..]));
    }
    v
}

fn perfdata_json(args: &[&str], path: &Path) -> Vec<serde_json::Value> {
    let mut a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    a.push(path.as_os_str());
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &a, None);
    assert!(
        out.status.success(),
        "perfdata {args:?} {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // dump prints JSON Lines; info and stats one object.
    serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .map(|v| v.expect("JSON"))
        .collect()
}

/// One event as the expectation needs it.
struct Event {
    name: String,
    sample_type: String,
    period: u64,
}

/// The lines perf must print for the samples perfdata decodes, as canonical strings
/// (`pid/tid [cpu] time: period event: addr ip`, the parts each sample has).
fn expected(path: &Path) -> Vec<String> {
    let info = &perfdata_json(&["info", "--json"], path)[0];
    let stats = &perfdata_json(&["stats", "--json"], path)[0];
    let mut by_id = HashMap::new();
    let events: Vec<Event> = info["events"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            for id in e["ids"].as_array().unwrap() {
                by_id.insert(uint(id), i);
            }
            let name = stats["events"][i]["name"].as_str().unwrap();
            let input = perfdata_tests::name(path);
            let name = SCRIPT_NAMES
                .iter()
                .find(|(n, report, _)| *n == input && *report == name)
                .map_or(name, |(_, _, script)| script);
            Event {
                // perf's names, as the stats oracle checks them against perf.
                name: name.to_string(),
                sample_type: e["attr"]["sample_type"].as_str().unwrap_or("").to_string(),
                period: opt_uint(&e["attr"]["sample_period"]).unwrap_or(0),
            }
        })
        .collect();
    let mut last_value: HashMap<u64, u64> = HashMap::new();
    let mut lines = Vec::new();
    for r in perfdata_json(&["dump", "--json"], path) {
        if r["type"] != "SAMPLE" {
            continue;
        }
        let b = &r["body"];
        let ev = &events[opt_uint(&r["event"]).unwrap_or(0) as usize];
        let has = |f: &str| ev.sample_type.split(" | ").any(|t| t == f);
        let line = |ev: &Event, period: u64| {
            let mut s = Vec::new();
            if has("TID") {
                s.push(format!("{}/{}", b["tid"]["pid"], b["tid"]["tid"]));
            }
            if has("CPU") {
                s.push(format!("[{:03}]", uint(&b["cpu"]["cpu"])));
            }
            if has("TIME") {
                let t = uint(&b["time"]);
                s.push(format!("{}.{:09}:", t / 1_000_000_000, t % 1_000_000_000));
            }
            s.push(period.to_string());
            s.push(format!("{}:", ev.name));
            if has("ADDR") {
                s.push(format!("{:x}", addr(&b["addr"])));
            }
            if has("IP") {
                s.push(format!("{:x}", addr(&b["ip"])));
            }
            s.join(" ")
        };
        let period = opt_uint(&b["period"]).unwrap_or(ev.period);
        // A sample that reads counters is delivered once per counter that moved, with
        // the difference as its period (perf's deliver_sample_value).
        // A group read has `values`, a single counter's read its `value`.
        let values: Vec<&serde_json::Value> = match &b["read"] {
            serde_json::Value::Object(o) if o.contains_key("values") => {
                o["values"].as_array().unwrap().iter().collect()
            }
            serde_json::Value::Object(o) if o.contains_key("value") => vec![&b["read"]],
            _ => {
                lines.push(line(ev, period));
                continue;
            }
        };
        for v in values {
            let id = uint(&v["id"]);
            let value = uint(&v["value"]);
            let delta = value - last_value.insert(id, value).unwrap_or(0);
            if delta != 0 {
                lines.push(line(&events[by_id[&id]], delta));
            }
        }
    }
    lines.sort();
    lines
}

/// What perf printed, in the same canonical form: whitespace folded.
fn printed(path: &Path) -> Vec<String> {
    let mut args = vec!["script".to_string(), "--ns".to_string(), "-G".to_string()];
    args.extend(perfdata_tests::script_fields(
        "pid,tid,cpu,time,period,event,addr,ip",
    ));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = perf_run(&args, path);
    assert_eq!(
        run.status,
        Some(0),
        "perf script {}: {}",
        path.display(),
        run.stderr
    );
    let mut lines: Vec<String> = run.stdout.lines().filter_map(canonical).collect();
    lines.sort();
    lines
}

/// A line of perf script in the expectation's form: the fields up to the event name,
/// then addr and ip, the hex words at the end (perf prints a tracepoint's or a probe's
/// own fields between the two, whatever `-F` says).
fn canonical(line: &str) -> Option<String> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let is_time = |t: &str| {
        t.strip_suffix(':')
            .and_then(|t| t.split_once('.'))
            .is_some_and(|(s, ns)| s.bytes().all(|b| b.is_ascii_digit()) && ns.len() == 9)
    };
    let event = tokens
        .iter()
        .position(|t| t.ends_with(':') && !is_time(t))?;
    let tail = tokens[event + 1..]
        .iter()
        .rev()
        .take_while(|t| {
            t.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
        .take(2)
        .count();
    let mut kept: Vec<&str> = tokens[..=event].to_vec();
    kept.extend(&tokens[tokens.len() - tail..]);
    Some(kept.join(" "))
}

fn compare(label: &str, ours: &[String], perf: &[String]) -> Option<String> {
    if ours == perf {
        return None;
    }
    fn count(v: &[String]) -> BTreeMap<&str, i64> {
        let mut m: BTreeMap<&str, i64> = BTreeMap::new();
        for l in v {
            *m.entry(l.as_str()).or_default() += 1;
        }
        m
    }
    let (a, b) = (count(ours), count(perf));
    let only_ours: Vec<_> = a
        .iter()
        .filter(|(k, n)| b.get(*k) != Some(n))
        .take(3)
        .collect();
    let only_perf: Vec<_> = b
        .iter()
        .filter(|(k, n)| a.get(*k) != Some(n))
        .take(3)
        .collect();
    Some(format!(
        "{label}: {} samples decoded, perf printed {}\n  perfdata only: {only_ours:?}\n  perf only: {only_perf:?}",
        ours.len(),
        perf.len()
    ))
}

/// Inputs whose samples perf does not print as they are stored (beyond the SAMPLE
/// fields compared here), with why.
const NOT_COMPARED: &[(&str, &str)] = &[
    ("KDAB-perf.data.true.v1", "84 records, no SAMPLE"),
    (
        "google-perf.data.intel_pt-4.14",
        "perf script prints the samples it synthesizes from the Intel PT trace (146), not \
         only the 15 stored",
    ),
    (
        "stat-record.data",
        "no SAMPLE: perf script prints perf stat's counts",
    ),
    (
        "pipe-stat-record.data",
        "no SAMPLE: perf script prints perf stat's counts",
    ),
];

/// Event names perf script prints otherwise than `perf report --stats` (which the stats
/// oracle compares perfdata's names with): for these pipes perf 6.1's script leaves out
/// the `H` (exclude_guest) modifier. (input, report's name, script's name).
const SCRIPT_NAMES: &[(&str, &str, &str)] = &[
    (
        "google-perf.data.piped.header_features_aligned-6.12",
        "cycles:uH",
        "cycles:u",
    ),
    (
        "google-perf.data.piped.header_feautres_group_desc-6.8",
        "cycles:uH",
        "cycles:u",
    ),
    (
        "google-perf.data.piped.header_feautres_group_desc-6.8",
        "instructions:uH",
        "instructions:u",
    ),
];

#[perfdata_oracle::needs(perf)]
#[test]
fn decoded_samples_are_the_ones_perf_prints() {
    assert!(perf_available());
    let mut compared = Vec::new();
    let mut failures = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<(std::path::PathBuf, Option<std::path::PathBuf>)> =
        perf_inputs().into_iter().map(|p| (p, None)).collect();
    for (pipe, args) in via_file() {
        let file = dir.path().join(name(&pipe));
        let mut a: Vec<&OsStr> = vec![
            OsStr::new("convert"),
            pipe.as_os_str(),
            OsStr::new("--to-file"),
        ];
        a.extend(args.iter().map(OsStr::new));
        a.extend([OsStr::new("-o"), file.as_os_str()]);
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &a, None);
        assert!(
            out.status.success(),
            "{}: {}",
            pipe.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        inputs.push((pipe, Some(file)));
    }
    for (path, perf_reads) in &inputs {
        let n = name(path);
        if perfdata_tests::listed(NOT_COMPARED, &n).is_some() {
            continue;
        }
        let ours = expected(path);
        let perf = printed(perf_reads.as_deref().unwrap_or(path));
        if let Some(f) = compare(&n, &ours, &perf) {
            failures.push(f);
        } else if ours.is_empty() {
            failures.push(format!(
                "{n}: no sample to compare, and NOT_COMPARED does not list it"
            ));
        } else {
            compared.push(format!("{n} ({})", ours.len()));
        }
    }
    println!(
        "compared sample by sample ({}): {compared:?}",
        compared.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
