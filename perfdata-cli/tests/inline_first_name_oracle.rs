//! Inlined frames of functions DWARF names without a linkage name, against perf 6.1,
//! live, byte for byte: tests/srcline/first_name.cpp built here with `g++ -O2 -g`
//! (templates of an anonymous namespace: partition and less inlined into quicksort, out
//! of line) and recorded with `--call-graph dwarf`.
//!
//! binutils 2.40's addr2line (perf keeps one per DSO for the session) names the first
//! address it is asked in each such function by the ELF symbol covering it, and later
//! ones by DWARF's name; a function whose DWARF starts where its symbol does takes the
//! symbol's name for good. So perf script shows the first sample in an inlined
//! `partition<int>` as a plain `(anonymous namespace)::quicksort<int>` frame, later ones
//! as `partition<int> (inlined)` above it, and quicksort's own code by its symbol.

use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{perf_available, perf_output, run_perfdata};

use crate::report_text;
use crate::workload;

fn perf_script(input: &Path) -> String {
    let out = perf_output(&["script"], input);
    assert!(out.status.success(), "perf script");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn our_script(input: &Path) -> String {
    let all = [OsStr::new("script"), input.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(
        out.status.success(),
        "perfdata script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first line where `ours` differs from `perf`, with some before it, if any.
fn first_difference(perf: &str, ours: &str) -> Option<String> {
    let (p, o): (Vec<&str>, Vec<&str>) = (perf.lines().collect(), ours.lines().collect());
    if p == o {
        return None;
    }
    let at = p
        .iter()
        .zip(&o)
        .position(|(a, b)| a != b)
        .unwrap_or(p.len().min(o.len()));
    let from = at.saturating_sub(4);
    Some(format!(
        "line {}\nperf:\n{}\nours:\n{}",
        at + 1,
        p[from..(at + 2).min(p.len())].join("\n"),
        o[from..(at + 2).min(o.len())].join("\n"),
    ))
}

#[perfdata_oracle::needs(perf)]
#[test]
fn inlined_names_follow_binutils_first_answer() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(exe) = workload::build_first_name(dir.path()) else {
        eprintln!("skipped: no g++");
        return;
    };
    let exe = exe.to_str().expect("utf-8 path");
    let args = [
        "-N",
        "-q",
        "-e",
        "task-clock",
        "-c",
        "250000",
        "--call-graph",
        "dwarf",
    ];
    let data = workload::record(dir.path(), "dwarf.data", &args, &[exe, "200"]);

    // perf shows partition inlined above quicksort, and quicksort as a leaf by its
    // symbol: the test means something only so.
    let perf = perf_script(&data);
    let dso = format!("({exe})");
    let lines: Vec<&str> = perf.lines().map(str::trim).collect();
    let symbol = |line: &str| line.split_once(' ').map_or("", |(_, s)| s).to_string();
    let inlined = lines
        .windows(2)
        .filter(|w| symbol(w[0]).starts_with("partition<int>+0x") && w[0].ends_with(" (inlined)"))
        .filter(|w| {
            symbol(w[1]).starts_with("(anonymous namespace)::quicksort<int>+0x")
                && w[1].ends_with(&dso)
        })
        .count();
    let by_symbol = lines
        .windows(2)
        .filter(|w| {
            symbol(w[0]).starts_with("(anonymous namespace)::quicksort<int>+0x")
                && symbol(w[1]).starts_with("sort_round+0x")
        })
        .count();
    assert!(inlined > 20, "perf shows partition inlined {inlined} times");
    assert!(
        by_symbol > 20,
        "perf shows quicksort as a leaf {by_symbol} times"
    );
    let ours = our_script(&data);
    if let Some(d) = first_difference(&perf, &ours) {
        panic!("perf script differs at {d}");
    }

    let canonical = |text: &str| report_text::canonical(text, report_text::Ties::AsSets).join("\n");
    for view in [&[][..], &["--no-children"][..]] {
        let perf = canonical(&report_text::perf_stdio(&data, view));
        let ours = canonical(&report_text::perfdata_report(&data, view));
        if let Some(d) = first_difference(&perf, &ours) {
            panic!("perf report {view:?} differs at {d}");
        }
    }
    eprintln!("{inlined} partition frames inlined, {by_symbol} quicksort leaves; perf script and report equal");
}
