//! Tracepoint samples decoded against perf: for every tracepoint sample of the fixtures
//! (and of the corpus files with tracepoints), `perfdata dump` shows the trace text
//! `perf script -F trace` prints, with the same tid and time, and `--json`'s
//! `trace_fields` has every field perf names with the value perf shows.
//!
//! perf 6.1 stops early on a pipe with tracing data, so pipes are compared through a
//! file perfdata converts them to (perf reads that), against perfdata's reading of the
//! original pipe.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{fixtures_dir, name, perf_available, perf_run, run_perfdata};
use serde_json::Value;

/// Inputs with tracepoint samples: the fixtures, and those of the corpus, when present,
/// but jbeich-perf_with_tracepoint_event.data (simpleperf's, which perf refuses).
fn inputs() -> Vec<PathBuf> {
    let mut v = vec![
        fixtures_dir().join("file-tracepoint.data"),
        fixtures_dir().join("pipe-tracepoint.data"),
    ];
    if let Some(dir) = perfdata_tests::corpus_dir() {
        for n in [
            "KDAB-parallel_static_gcc-perf.data.zstd",
            "KDAB-probe.data.file",
            "KDAB-probe.data.stream",
        ] {
            v.push(dir.join(n));
        }
    }
    v
}

fn perfdata(args: &[&OsStr]) -> Vec<u8> {
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None);
    assert!(
        out.status.success(),
        "perfdata {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A sample as both sides show it: tid, time in ns, trace text.
type Line = (i64, u64, String);

/// perfdata's tracepoint samples, each with its `trace_fields`, from `dump --json`.
fn ours(path: &Path) -> Vec<(Line, Value)> {
    let out = perfdata(&[OsStr::new("dump"), OsStr::new("--json"), path.as_os_str()]);
    let mut lines = Vec::new();
    for r in serde_json::Deserializer::from_slice(&out).into_iter::<Value>() {
        let r = r.expect("JSON");
        let Some(trace) = r.get("trace") else {
            continue;
        };
        let body = &r["body"];
        let line = (
            body["tid"]["tid"].as_i64().expect("tid"),
            body["time"].as_u64().expect("time"),
            trace.as_str().expect("trace text").to_string(),
        );
        lines.push((line, r["trace_fields"].clone()));
    }
    lines
}

/// What perf script prints for the tracepoint samples, as [`Line`]s: the other event
/// types (those `types` has) given no fields, so perf prints none of their samples.
fn perfs(path: &Path, types: &[u64]) -> Vec<Line> {
    let mut args = vec!["script", "--ns"];
    for t in types {
        let none = match t {
            0 => "hw:",
            1 => "sw:",
            4 => "raw:",
            5 => "break:",
            _ => continue,
        };
        args.extend(["-F", none]);
    }
    args.extend(["-F", "trace:tid,time,event,trace"]);
    let run = perf_run(&args, path);
    assert!(run.clean(), "perf script {}: {run:?}", path.display());
    run.stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let bad = || panic!("{}: perf script line {l:?}", path.display());
            let (tid, rest) = l.trim_start().split_once(' ').unwrap_or_else(bad);
            let (time, rest) = rest.trim_start().split_once(": ").unwrap_or_else(bad);
            let (_event, trace) = rest.trim_start().split_once(": ").unwrap_or_else(bad);
            let (s, ns) = time.split_once('.').unwrap_or_else(bad);
            let time = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
            (tid.parse().unwrap(), time, trace.trim_end().to_string())
        })
        .collect()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn dump_shows_tracepoint_fields_as_perf_script() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    let mut named = 0;
    for path in inputs() {
        let mut ours = ours(&path);
        // perf reads a pipe with tracing data only to the tracing data: compare a file.
        let perf_reads = if name(&path).starts_with("pipe-") || name(&path).ends_with(".stream") {
            let file = dir.path().join(name(&path));
            perfdata(&[
                OsStr::new("convert"),
                path.as_os_str(),
                OsStr::new("--to-file"),
                OsStr::new("-o"),
                file.as_os_str(),
            ]);
            file
        } else {
            path.clone()
        };
        let info = perfdata(&[OsStr::new("info"), OsStr::new("--json"), path.as_os_str()]);
        let info: Value = serde_json::from_slice(&info).expect("info JSON");
        let types: Vec<u64> = info["events"]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| e["attr"]["type"].as_u64().expect("attr type"))
            .collect();
        let mut perf = perfs(&perf_reads, &types);
        assert!(!perf.is_empty(), "{}: perf printed no sample", name(&path));
        ours.sort_by(|a, b| a.0.cmp(&b.0));
        perf.sort();
        let lines: Vec<&Line> = ours.iter().map(|(l, _)| l).collect();
        assert_eq!(lines, perf.iter().collect::<Vec<_>>(), "{}", name(&path));
        total += ours.len();
        // Every `name=value` (or `name: value,`) perf prints is a field of trace_fields
        // with that value (a value perf prints symbolically, prev_state=D, only by name).
        for ((_, _, text), fields) in &ours {
            for (k, v) in named_values(text) {
                let f = fields
                    .get(k)
                    .unwrap_or_else(|| panic!("{}: no field {k} in {fields}", name(&path)));
                let same = match (f, int(v)) {
                    (Value::String(s), _) => s == v,
                    (Value::Number(n), Some(v)) => n.as_i64() == Some(v),
                    (Value::Number(_), None) => true,
                    _ => false,
                };
                assert!(same, "{}: {k}={v} but {f} in {fields}", name(&path));
                named += 1;
            }
        }
    }
    // The fixtures alone: 10 samples each, 47 name=value pairs each.
    assert!(
        total >= 20 && named >= 90,
        "{total} samples, {named} fields"
    );
}

/// The `name=value` and `name: value,` pairs of a trace text.
fn named_values(text: &str) -> Vec<(&str, &str)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let is_name =
        |k: &str| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some((k, v)) = w.split_once('=').filter(|(k, _)| is_name(k)) {
            out.push((k, v));
        } else if let (Some(k), Some(v)) = (w.strip_suffix(':'), words.get(i + 1)) {
            if is_name(k) {
                out.push((k, v.trim_end_matches(',')));
            }
        }
    }
    out
}

/// A value perf printed as a number: decimal, or hex after 0x.
fn int(v: &str) -> Option<i64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok().map(|n| n as i64),
        None => v.parse().ok(),
    }
}
