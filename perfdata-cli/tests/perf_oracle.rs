//! `perfdata stats --json` against `perf report --stats`, run live: for every corpus file
//! and fixture that perf reads without complaint, every record type's count and every
//! event's SAMPLE count must be the same. The inputs perf cannot read are an exact list
//! (`PERF_REFUSES`): one more or one fewer fails.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{
    all_inputs, listed, name, perf_available, perf_stats, run_perfdata, PERF_REFUSES,
};

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

/// CI must run the oracle: there a missing perf fails instead of skipping.
#[test]
fn perf_is_installed_in_ci() {
    if std::env::var_os("CI").is_some() {
        assert!(perf_available(), "perf is not on the PATH");
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn stats_match_perf_report_stats() {
    assert!(perf_available());
    let mut compared = Vec::new();
    let mut refused = Vec::new();
    let mut failures = Vec::new();
    for path in all_inputs() {
        let n = name(&path);
        let perf = perf_stats(&path);
        match (perf.clean, listed(PERF_REFUSES, &n)) {
            (false, Some(_)) => {
                refused.push(n);
                continue;
            }
            (true, Some(why)) => {
                failures.push(format!(
                    "{n}: perf reads it cleanly now, but PERF_REFUSES says: {why}"
                ));
                continue;
            }
            (false, None) => {
                failures.push(format!(
                    "{n}: perf report --stats complains, and it is not in PERF_REFUSES"
                ));
                continue;
            }
            (true, None) => {}
        }
        let total: u64 = perf.records.values().sum();
        assert!(total > 0, "{n}: perf counted no record");
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
    println!("compared with perf ({}): {compared:?}", compared.len());
    println!(
        "in PERF_REFUSES, not compared ({}): {refused:?}",
        refused.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(!compared.is_empty());
}

/// The samples LOST_SAMPLES records say were lost (their `lost` field), summed over the
/// events, equal the "Total Lost Samples" perf report prints, on every input that has
/// such a record (perf sums the field, not the records).
#[perfdata_oracle::needs(perf)]
#[test]
fn lost_samples_sum_as_perf_reports() {
    let mut compared = 0;
    for path in all_inputs() {
        let n = name(&path);
        let perf = perf_stats(&path);
        if !perf.clean || !perf.records.contains_key("LOST_SAMPLES") {
            continue;
        }
        let out = std::process::Command::new("perf")
            .args(["report", "--stdio", "-i"])
            .arg(&path)
            .output()
            .expect("perf report runs");
        let want: u64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("# Total Lost Samples: "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{n}: perf report prints no Total Lost Samples"));
        let ours: u64 = perfdata_stats(&path)["events"]
            .as_array()
            .expect("events is an array")
            .iter()
            .map(|e| e["lost_samples"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(ours, want, "{n}: lost samples");
        compared += 1;
    }
    if perfdata_tests::corpus_dir().is_some() {
        assert!(compared > 0, "the corpus has a LOST_SAMPLES recording");
    }
}
