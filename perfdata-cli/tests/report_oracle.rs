//! `perfdata report` against `perf report --stdio -n` of perf 6.1, run live: for every
//! event, every row perf shows above 0.1% must be ours with the same cells and sample
//! count, and every row of ours above 0.1% must be perf's.
//!
//! Inputs: the fixtures perf reports on (their binaries are not here, so user addresses
//! stay unresolved on both sides, and their kernel is not this one), and recordings made
//! here of the fixture workload compiled into a temporary directory, so that its
//! symbols, the C library's, the loader's and (same host) the kernel's are resolved.
//! perf runs with `--no-children -g none` so that call-graph recordings give self rows.

use std::path::PathBuf;

use perfdata_tests::{name, perf_available};

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows, reported_fixtures, GROUPED};

/// Compare every input for every sort; on a failure `context` says more (where the
/// recordings were kept).
fn check_all(inputs: &[PathBuf], sorts: &[&str], context: impl FnOnce() -> String) {
    let mut failures = Vec::new();
    let mut compared = 0;
    for input in inputs {
        let extra: &[&str] = if GROUPED.contains(&name(input).as_str()) {
            &["--no-group"]
        } else {
            &[]
        };
        for sort in sorts {
            eprintln!("{} --sort {sort}", name(input));
            match compare(input, sort, extra) {
                Ok(0) => failures.push(format!("{} --sort {sort}: no rows", name(input))),
                Ok(n) => compared += n,
                Err(e) => failures.push(format!("{} --sort {sort}: {e}", name(input))),
            }
        }
    }
    if !failures.is_empty() {
        panic!("{}\n{}", failures.join("\n"), context());
    }
    assert!(compared > 0);
    eprintln!("{compared} rows compared over {} inputs", inputs.len());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn fixtures_match_perf_report() {
    assert!(perf_available());
    let inputs = reported_fixtures();
    assert!(inputs.len() >= 15, "fixtures: {inputs:?}");
    check_all(&inputs, &["comm,dso,sym", "pid,dso"], String::new);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn fresh_recordings_match_perf_report_with_symbols() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let spin = spin.as_str();
    let twice = format!("{spin}; {spin}");
    let inputs = [
        workload::record(
            dir.path(),
            "plain.data",
            &["-e", "cpu-clock", "-c", "100000"],
            &[spin],
        ),
        // Two processes forked and exec'd by a shell: FORK, COMM exec, EXIT.
        workload::record(
            dir.path(),
            "sh.data",
            &["-e", "cpu-clock", "-c", "50000"],
            &["sh", "-c", &twice],
        ),
        workload::record(
            dir.path(),
            "fp.data",
            &["-g", "-e", "cpu-clock", "-c", "100000"],
            &[spin],
        ),
    ];
    // Each run records anew: a failing run's recordings and workload are kept.
    check_all(&inputs, &["comm,dso,sym", "pid,dso"], || keep(dir.path()));
    // The workload's own functions are named (its binary is here, build id and all).
    let ours = our_rows(&inputs[0], "comm,dso,sym", &[]);
    let named: Vec<&Vec<String>> = ours
        .values()
        .flat_map(|rows| rows.keys())
        .filter(|c| c[1] == "spin" && c[2] == "[.] leaf")
        .collect();
    assert_eq!(named.len(), 1, "{ours:?}");
}

/// Copy the files of `dir` (a test's temporary directory) where they outlive the test;
/// says where.
fn keep(dir: &std::path::Path) -> String {
    let to = std::env::temp_dir().join(format!("perfdata-report-oracle-{}", std::process::id()));
    let copied = std::fs::create_dir_all(&to).and_then(|_| {
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
        Ok(())
    });
    match copied {
        Ok(()) => format!("recordings and workload kept in {}", to.display()),
        Err(e) => format!("recordings not kept ({e})"),
    }
}
