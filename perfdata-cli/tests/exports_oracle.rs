//! `perfdata export --format pprof|speedscope|firefox|flamegraph` against perf 6.1, run
//! live: each output is read back by an independent reader in this test (tests/exports/
//! decode.rs) and folded to `[event;]comm;outer;...;leaf` stacks with sample counts,
//! which must equal the stacks folded from `perf script -F comm,event,ip,sym`.
//!
//! The pprof files are also read by `go tool pprof -top`, whose flat count per function
//! must be perf report's (tests/go_pprof). The Firefox profiles must also pass the Firefox
//! Profiler's own definitions of its format (tests/exports/firefox.rs), these and the
//! Firefox export of every fixture and corpus file.
//!
//! Inputs: the fixtures with frame-pointer callchains, DWARF callchains, a system-wide
//! recording and three events, and the fixture workload recorded here with `-g`,
//! `--call-graph dwarf` and two events with `-g`. perfdata does not unwind DWARF stacks,
//! so for DWARF recordings both sides are cut to the sample's own frame (`perf script
//! -G`, and the leaf of each of our stacks).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{
    corpus_files, fixture_files, fixtures_dir, name, perf_available, run_perfdata, CORRUPT,
};

use crate::exports;
mod go_pprof;
mod readperf_csv;
use crate::report_rows;
use crate::workload;

use exports::decode::{self, Folded};
use exports::export;
use exports::script::{leaves, perf_folded, Depth};

/// Every format of `input`, folded back, against perf: the differences, if any, and how
/// many functions `go tool pprof` named.
fn check(input: &Path, depth: Depth, dir: &Path) -> (Vec<String>, usize) {
    let (perf, multi) = perf_folded(input, depth);
    let total: u64 = perf.values().sum();
    assert!(total > 10, "{}: perf shows {total} samples", name(input));
    let json = |b: Vec<u8>| -> serde_json::Value { serde_json::from_slice(&b).expect("JSON") };
    let svg = String::from_utf8(export(input, "flamegraph", dir)).expect("UTF-8 SVG");
    let (flame, width) = decode::flamegraph(&svg);
    let mut ours: BTreeMap<&str, Folded> = BTreeMap::new();
    ours.insert("pprof", decode::pprof(&export(input, "pprof", dir), multi));
    // Without go, the pprof file is still read by the test's own decoder above.
    let (mut problems, named) = if go_pprof::go_available() {
        go_pprof::check(input, &dir.join(format!("{}.pprof", name(input))))
    } else {
        eprintln!("SKIPPED go tool pprof: go is not installed (apt-get install golang-go)");
        (Vec::new(), 0)
    };
    ours.insert(
        "speedscope",
        decode::speedscope(&json(export(input, "speedscope", dir)), multi),
    );
    ours.insert(
        "firefox",
        decode::firefox(&json(export(input, "firefox", dir)), multi),
    );
    ours.insert("flamegraph", flame);
    if width != total {
        problems.push(format!(
            "{}: flame graph width {width}, perf {total} samples",
            name(input)
        ));
    }
    for (format, folded) in &ours {
        let folded = match depth {
            Depth::Full => folded.clone(),
            Depth::Leaf => leaves(folded, multi),
        };
        let differ: Vec<String> = perf
            .keys()
            .chain(folded.keys())
            .filter(|k| perf.get(*k) != folded.get(*k))
            .map(|k| {
                format!(
                    "    {k}: perf {:?}, {format} {:?}",
                    perf.get(k),
                    folded.get(k)
                )
            })
            .collect();
        if !differ.is_empty() {
            problems.push(format!(
                "{} as {format}:\n{}",
                name(input),
                differ.join("\n")
            ));
        }
    }
    eprintln!(
        "{}: {} stacks, {total} samples, {} formats compared",
        name(input),
        perf.len(),
        ours.len()
    );
    (problems, named)
}

fn run_all(inputs: &[(PathBuf, Depth)], dir: &Path) {
    let (mut problems, mut named) = (Vec::new(), 0);
    for (input, depth) in inputs {
        let (p, n) = check(input, *depth, dir);
        problems.extend(p);
        named += n;
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if go_pprof::go_available() {
        assert!(named > 10, "go tool pprof named {named} functions");
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn fixture_exports_fold_to_perf_scripts_stacks() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let f = fixtures_dir();
    run_all(
        &[
            (f.join("file-callgraph-fp.data"), Depth::Full),
            (f.join("file-callgraph-dwarf.data"), Depth::Leaf),
            (f.join("file-system-wide.data"), Depth::Full),
            (f.join("file-multi-event.data"), Depth::Full),
        ],
        dir.path(),
    );
}

#[perfdata_oracle::needs(perf)]
#[test]
fn fresh_exports_fold_to_perf_scripts_stacks() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let spin = spin.as_str();
    let record = |file: &str, args: &[&str]| workload::record(dir.path(), file, args, &[spin]);
    let inputs = [
        (
            record("fp.data", &["-g", "-e", "cpu-clock", "-c", "100000"]),
            Depth::Full,
        ),
        (
            record(
                "dwarf.data",
                &[
                    "--call-graph",
                    "dwarf,4096",
                    "-e",
                    "cpu-clock",
                    "-c",
                    "200000",
                ],
            ),
            Depth::Leaf,
        ),
        (
            record(
                "two.data",
                &["-g", "-e", "cpu-clock", "-e", "task-clock", "-c", "100000"],
            ),
            Depth::Full,
        ),
    ];
    run_all(&inputs, dir.path());
    // The workload's call chain is named in every format (its binary is here).
    let pprof = decode::pprof(&export(&inputs[0].0, "pprof", dir.path()), false);
    assert!(
        pprof.keys().any(|k| k.ends_with(";main;mid;leaf")),
        "{pprof:?}"
    );
}

/// How many SAMPLE records `perfdata stats --json` counts in `input`.
fn sample_records(input: &Path) -> u64 {
    let args = [OsStr::new("stats"), OsStr::new("--json"), input.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(out.status.success(), "stats {}", name(input));
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stats JSON");
    stats["records"]["SAMPLE"].as_u64().unwrap_or(0)
}

/// Every fixture and every corpus file (but the one corrupt on purpose) exported as a
/// Firefox profile passes the Firefox Profiler's definitions (tests/exports/firefox.rs):
/// the stacks above check what the profiles say, this that the profiler can read every
/// shape of input (no callchains, several events, kernel frames, pipe mode, other
/// architectures). A recording without SAMPLE records must be refused instead, as the
/// profiler refuses a profile without threads.
#[test]
fn every_firefox_export_passes_the_profilers_definitions() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut inputs: Vec<PathBuf> = fixture_files();
    inputs.extend(corpus_files().into_iter().filter(|p| name(p) != CORRUPT.0));
    let (mut problems, mut threads, mut refused) = (Vec::new(), 0, 0);
    for input in &inputs {
        if sample_records(input) == 0 {
            let out_file = dir.path().join("none.firefox");
            let args = [
                OsStr::new("export"),
                input.as_os_str(),
                OsStr::new("--format"),
                OsStr::new("firefox"),
                OsStr::new("-o"),
                out_file.as_os_str(),
            ];
            let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            if out.status.success() || !stderr.contains("no samples") || out_file.exists() {
                problems.push(format!("{}: no samples, yet: {stderr}", name(input)));
            }
            refused += 1;
            continue;
        }
        let doc: serde_json::Value =
            serde_json::from_slice(&export(input, "firefox", dir.path())).expect("JSON");
        threads += doc["threads"].as_array().map_or(0, Vec::len);
        let errors = exports::firefox::check(&doc);
        if !errors.is_empty() {
            problems.push(format!("{}: {errors:#?}", name(input)));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!(
        "{} Firefox profiles, {threads} threads, checked; {refused} inputs without samples refused",
        inputs.len() - refused
    );
    assert!(threads > inputs.len(), "{threads} threads");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn csv_tables_match_perf() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let twice = format!("{spin}; {spin}");
    // Two processes forked and exec'd by a shell: FORK, COMM exec, EXIT, symbols.
    let sh = workload::record(
        dir.path(),
        "sh.data",
        &["-e", "cpu-clock", "-c", "50000"],
        &["sh", "-c", &twice],
    );
    let f = fixtures_dir();
    let inputs = [
        f.join("file-callgraph-fp.data"),
        f.join("file-system-wide.data"),
        f.join("file-multi-event.data"),
        f.join("file-compressed.data"),
        f.join("dir-threads.data"),
        sh,
    ];
    let problems: Vec<String> = inputs
        .iter()
        .flat_map(|i| readperf_csv::check(i, dir.path()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether a symbol cell of perf report names an address, not a function (`0x...`, or
/// the 16 zeros perf prints for address 0).
fn is_address(name: &str) -> bool {
    name.starts_with("0x") || (name.len() == 16 && name.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// pprof's `<event>_period` values against perf 6.1: per event, the periods of the
/// samples whose leaf is each named function add up to perf report's Period of that
/// symbol (`-F period,sym`; rows of one name in several DSOs summed, as pprof names
/// functions), and all of them to the event's total period. Inputs: a frequency-mode
/// recording made here (the periods are sampled, PERF_SAMPLE_PERIOD, the first ones
/// growing to the frequency's) and fixtures of fixed periods (`-c`: three events, one of
/// period 4; a system-wide recording). Off by one per sample, every sum is off by the
/// function's sample count.
#[perfdata_oracle::needs(perf)]
#[test]
fn pprof_periods_are_perfs() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let freq = workload::record(
        dir.path(),
        "freq.data",
        &["-g", "-e", "cpu-clock", "-F", "2999"],
        &[spin.as_str()],
    );
    let f = fixtures_dir();
    let inputs = [
        freq,
        f.join("file-callgraph-fp.data"),
        f.join("file-multi-event.data"),
        f.join("file-system-wide.data"),
    ];
    let (mut problems, mut compared) = (Vec::new(), 0);
    for input in &inputs {
        let ours = decode::pprof_leaf_values(&export(input, "pprof", dir.path()), "period");
        let perf = report_rows::perf_period_rows(input);
        if perf.keys().ne(ours.keys()) {
            problems.push(format!(
                "{}: events: perf {:?}, pprof {:?}",
                name(input),
                perf.keys(),
                ours.keys()
            ));
        }
        for (event, rows) in &perf {
            // Function -> period; "" -> the event's total.
            let mut want: BTreeMap<String, u64> = BTreeMap::new();
            for (sym, period) in rows {
                *want.entry(String::new()).or_insert(0) += period;
                let name = sym.split_once("] ").map_or("", |(_, s)| s);
                if !is_address(name) {
                    *want.entry(name.to_string()).or_insert(0) += period;
                }
            }
            let got = ours.get(event).cloned().unwrap_or_default();
            for f in want.keys().chain(got.keys()) {
                if want.get(f) != got.get(f) {
                    problems.push(format!(
                        "{} {event} {f:?}: perf {:?}, pprof {:?}",
                        name(input),
                        want.get(f),
                        got.get(f)
                    ));
                }
            }
            compared += want.len();
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Named functions and totals of 4 recordings, 6 events.
    assert!(compared > 20, "{compared} periods compared");
    eprintln!("{compared} periods compared with perf report");
}
