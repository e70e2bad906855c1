//! The exports of a recording made with plain `perf record` (no event given: perf names
//! it `cpu-clock:ppp` where there is no PMU, `cycles` elsewhere) of tests/srcline/hot.c
//! built here with `-g -O2`, read as their consumers read them:
//!
//! - `go tool pprof` (Debian's golang-go): `-top` headlines the program and gives its hot
//!   function perf report's share, `-list` shows the function's source from its first
//!   line with the samples on their lines, `-lines -top` gives each source line perf
//!   report's `srcline` share (with `--inline`, the innermost line, as perf's srcline).
//! - the clock's units: pprof's `cpu` in nanoseconds (the sample type and period type Go's
//!   CPU profiles have), speedscope's `nanoseconds`, the Firefox Profiler's CPU deltas,
//!   whose sum must be the samples' period sum (perf report's total period).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::exports;
use crate::workload;

use exports::decode::{fields, gunzip, int, messages, string_table};

/// hot.c's path, as DWARF names it (the compiler is given this absolute path).
fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/hot.c")
}

/// hot.c built with `-g -O2` and recorded by plain `perf record` (300 ms of CPU):
/// (the binary, the recording).
fn plain_recording(dir: &Path) -> (PathBuf, PathBuf) {
    let exe = workload::build_hot(dir, "-O2");
    let data = workload::record(
        dir,
        "plain.data",
        &[],
        &[exe.to_str().expect("utf-8 path"), "300"],
    );
    (exe, data)
}

/// The recording's only event, as `perf evlist` names it.
fn event(data: &Path) -> String {
    stdout_of(Command::new("perf").args(["evlist", "-i"]).arg(data))
        .trim()
        .to_string()
}

/// What a command prints, its exit status checked (its stderr in the panic).
fn stdout_of(command: &mut Command) -> String {
    let out = command.output().expect("the command runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `perf report --stdio --sort KEY` of `data`: each row's cell (without the `[.] `
/// mode) and its Overhead (a share of the period).
fn perf_shares(data: &Path, key: &str) -> BTreeMap<String, f64> {
    let text = stdout_of(
        Command::new("perf")
            .args(["report", "--stdio", "--sort", key, "-i"])
            .arg(data),
    );
    let mut rows = BTreeMap::new();
    for l in text.lines() {
        let l = l.trim();
        let Some((pct, cell)) = l.split_once("%  ") else {
            continue;
        };
        let Ok(pct) = pct.trim().parse::<f64>() else {
            continue;
        };
        let cell = cell.trim();
        let cell = cell.split_once("] ").map_or(cell, |(_, s)| s).trim();
        *rows.entry(cell.to_string()).or_insert(0.0) += pct;
    }
    rows
}

/// The sum of the samples' periods, as `perf script -F period` prints them.
fn period_sum(data: &Path) -> u64 {
    stdout_of(
        Command::new("perf")
            .args(["script", "-F", "period", "-i"])
            .arg(data),
    )
    .lines()
    .map(|l| l.trim().parse::<u64>().expect("a period"))
    .sum()
}

/// `go tool pprof ARGS PROFILE` (sample index `cpu`, every node shown), its stdout.
fn pprof(profile: &Path, args: &[&str]) -> String {
    stdout_of(
        Command::new("go")
            .args(["tool", "pprof", "-sample_index=cpu", "-nodefraction=0"])
            .args(["-nodecount=100000"])
            .args(args)
            .arg(profile),
    )
}

/// The rows of a `-top` report: (name, flat%), name being everything after the five
/// number columns.
fn top_rows(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let pct = cols[1].trim_end_matches('%').parse().expect("flat%");
            (cols[5..].join(" "), pct)
        })
        .collect()
}

/// A pprof duration (`249.50ms`, `1.20s`, `48ms`, `.` for none) in nanoseconds.
fn nanos(v: &str) -> f64 {
    if v == "." {
        return 0.0;
    }
    let at = v.find(|c: char| c.is_ascii_alphabetic()).expect("a unit");
    let (n, unit) = v.split_at(at);
    let n: f64 = n.parse().expect("a number");
    n * match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "mins" => 60e9,
        "hrs" => 3600e9,
        u => panic!("unit {u}"),
    }
}

fn write(dir: &Path, file: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, bytes).expect("written");
    path
}

#[perfdata_oracle::needs(perf, go)]
#[test]
fn go_tool_pprof_top_list_and_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (exe, data) = plain_recording(dir.path());
    let src = source();
    let plain = write(
        dir.path(),
        "plain.pb.gz",
        &exports::export(&data, "pprof", dir.path()),
    );
    let inline = write(
        dir.path(),
        "inline.pb.gz",
        &exports::export_with(&data, "pprof", dir.path(), &["--inline"]),
    );

    // -top: the program is mapping 1; work's share is perf report's.
    let top = pprof(&plain, &["-top"]);
    let exe_name = exe.file_name().unwrap().to_str().unwrap();
    assert!(top.contains(&format!("File: {exe_name}\n")), "{top}");
    assert!(top.contains("Type: cpu\n"), "{top}");
    let perf_syms = perf_shares(&data, "sym");
    let work = top_rows(&top)
        .into_iter()
        .find(|(n, _)| n == "work")
        .unwrap_or_else(|| panic!("no work in {top}"))
        .1;
    assert!(work > 50.0, "{top}");
    assert!(
        (work - perf_syms["work"]).abs() <= 0.011,
        "work: pprof {work}%, perf {}%",
        perf_syms["work"]
    );

    // -lines -top with inlines: each of hot.c's lines has perf's srcline share.
    let perf_lines = perf_shares(&data, "srcline");
    let mut pprof_lines: BTreeMap<String, f64> = BTreeMap::new();
    for (name, pct) in top_rows(&pprof(&inline, &["-lines", "-top"])) {
        // `function file:line[ (inline)]`; a function without a file (the kernel's) is
        // its name; a line with no time of its own (a call) is no row of perf's.
        let name = name.trim_end_matches(" (inline)");
        let Some((_, place)) = name.rsplit_once(' ').filter(|_| pct > 0.0) else {
            continue;
        };
        if let Some(line) = place.strip_prefix(&format!("{}:", src.display())) {
            *pprof_lines.entry(format!("hot.c:{line}")).or_insert(0.0) += pct;
        }
    }
    let perf_hot: BTreeMap<String, f64> = perf_lines
        .into_iter()
        .filter(|(k, _)| k.starts_with("hot.c:"))
        .collect();
    assert_eq!(
        pprof_lines.keys().collect::<Vec<_>>(),
        perf_hot.keys().collect::<Vec<_>>(),
        "pprof {pprof_lines:?}, perf {perf_hot:?}"
    );
    for (line, pct) in &perf_hot {
        assert!(
            (pprof_lines[line] - pct).abs() <= 0.011,
            "{line}: pprof {pprof_lines:?}, perf {perf_hot:?}"
        );
    }
    // The inlined mix() lines (13-15) carry most of the time, as in perf.
    let mix: f64 = ["13", "14", "15"]
        .iter()
        .filter_map(|l| perf_hot.get(&format!("hot.c:{l}")))
        .sum();
    assert!(mix > 50.0, "{perf_hot:?}");

    // -list work, without inlines: the source from work's first line (19), its time
    // on the loop's lines, the call of the inlined mix() (23) the hottest, with the
    // share of mix's lines in perf.
    let list = pprof(&plain, &["-list", "^work$"]);
    assert!(
        list.contains(&format!(
            "ROUTINE ======================== work in {}\n",
            src.display()
        )),
        "{list}"
    );
    // `  flat  cum  LINE:text` rows.
    let rows: Vec<(f64, u32, &str)> = list
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let (line, _) = cols.get(2)?.split_once(':')?;
            let text = l.split_once(&format!("{line}:"))?.1.trim();
            Some((nanos(cols[0]), line.parse().ok()?, text))
        })
        .collect();
    assert_eq!(rows.first().map(|r| r.1), Some(19), "{list}");
    assert!(rows[0].2.starts_with("__attribute__((noinline))"), "{list}");
    let hottest = rows
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("rows");
    assert_eq!((hottest.1, hottest.2), (23, "x = mix(x + i);"), "{list}");
    let total: f64 = rows.iter().map(|r| r.0).sum();
    let share = 100.0 * hottest.0 / (period_sum(&data) as f64);
    assert!(
        (share - mix).abs() <= 0.02,
        "line 23: {share}%, perf mix {mix}%"
    );
    assert!((100.0 * total / period_sum(&data) as f64 - work).abs() <= 0.02);
}

/// A profile.proto's sample types and period type, as (type, unit) strings.
fn pprof_types(gz: &[u8]) -> (Vec<(String, String)>, (String, String), i64) {
    let raw = gunzip(gz);
    let top = fields(&raw);
    let strings = string_table(&top);
    let pair = |m: &[u8]| {
        let f = fields(m);
        (
            strings[int(&f, 1) as usize].clone(),
            strings[int(&f, 2) as usize].clone(),
        )
    };
    let types = messages(&top, 1).iter().map(|m| pair(m)).collect();
    let period_type = pair(messages(&top, 11).first().expect("a period type"));
    (types, period_type, int(&top, 12) as i64)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn clock_exports_count_nanoseconds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (exe, mut data) = plain_recording(dir.path());
    if event(&data) != "cpu-clock:ppp" {
        // A machine with a PMU records cycles: the event plain perf record names where
        // there is none, asked for by name.
        let exe = exe.to_str().expect("utf-8 path");
        data = workload::record(
            dir.path(),
            "ppp.data",
            &["-e", "cpu-clock:ppp"],
            &[exe, "300"],
        );
    }
    assert_eq!(event(&data), "cpu-clock:ppp");
    let periods = period_sum(&data);
    assert!(periods > 100_000_000, "{periods} ns of samples");

    // pprof: Go's CPU profile types.
    let (types, period_type, period) = pprof_types(&exports::export(&data, "pprof", dir.path()));
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        types,
        [
            pair("cpu-clock:ppp_samples", "count"),
            pair("cpu", "nanoseconds")
        ]
    );
    assert_eq!(period_type, pair("cpu", "nanoseconds"));
    // The mean period of a 4000 Hz clock: 250 us, give or take.
    assert!((200_000..300_000).contains(&period), "period {period}");

    // speedscope: nanoseconds, the weights adding up to the periods.
    let doc: Value =
        serde_json::from_slice(&exports::export(&data, "speedscope", dir.path())).expect("JSON");
    let mut weights = 0u64;
    for p in doc["profiles"].as_array().expect("profiles") {
        assert_eq!(p["unit"], "nanoseconds", "{}", p["name"]);
        weights += p["weights"]
            .as_array()
            .expect("weights")
            .iter()
            .map(|w| w.as_u64().expect("integer weight"))
            .sum::<u64>();
    }
    assert_eq!(weights, periods);

    // Firefox: the CPU deltas are the periods, in the unit the meta names.
    let doc: Value =
        serde_json::from_slice(&exports::export(&data, "firefox", dir.path())).expect("JSON");
    let unit = doc["meta"]["sampleUnits"]["threadCPUDelta"]
        .as_str()
        .expect("a CPU delta unit");
    let per_ns = match unit {
        "ns" => 1.0,
        "µs" => 1e-3,
        u => panic!("CPU delta unit {u}"),
    };
    let cpu: f64 = doc["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .flat_map(|t| t["samples"]["threadCPUDelta"].as_array().expect("deltas"))
        .map(|d| d.as_f64().unwrap_or(0.0))
        .sum();
    assert_eq!(cpu, periods as f64 * per_ns, "CPU time in {unit}");
}
