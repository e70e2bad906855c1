//! `perfdata stats --json` against `perf report --stats`, run live: for every corpus file
//! and fixture that perf reads without complaint, every record type's count and every
//! event's SAMPLE count must be the same.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{all_inputs, corpus_files, name, perf_available, perf_stats, run_perfdata};

fn perfdata_stats(path: &Path) -> serde_json::Value {
    let args = [OsStr::new("stats"), OsStr::new("--json"), path.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "perfdata stats {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stats --json is JSON")
}

#[test]
fn stats_match_perf_report_stats() {
    if !perf_available() {
        return;
    }
    let mut compared = Vec::new();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    for path in all_inputs() {
        let n = name(&path);
        let perf = perf_stats(&path);
        if !perf.clean {
            skipped.push(n);
            continue;
        }
        let ours = perfdata_stats(&path);
        let records: BTreeMap<String, u64> = serde_json::from_value(ours["records"].clone())
            .expect("records is an object of counts");
        if records != perf.records {
            failures.push(format!(
                "{n}: records differ\n  perf:     {:?}\n  perfdata: {records:?}",
                perf.records
            ));
        }
        let samples: Vec<(String, u64)> = ours["events"]
            .as_array()
            .expect("events is an array")
            .iter()
            .filter(|e| e["samples"].as_u64() != Some(0))
            .map(|e| {
                (
                    e["name"].as_str().unwrap_or("").to_string(),
                    e["samples"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        if samples != perf.samples {
            failures.push(format!(
                "{n}: samples per event differ\n  perf:     {:?}\n  perfdata: {samples:?}",
                perf.samples
            ));
        }
        compared.push(n);
    }
    println!("compared with perf: {compared:?}");
    println!("perf does not read these cleanly, not compared: {skipped:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The corpus manifest lists 28 files perf 6.1 reads; make sure the oracle really ran.
    if !corpus_files().is_empty() {
        let corpus_compared = compared
            .iter()
            .filter(|n| corpus_files().iter().any(|p| &name(p) == *n))
            .count();
        assert!(
            corpus_compared >= 25,
            "only {corpus_compared} corpus files compared"
        );
    }
}
