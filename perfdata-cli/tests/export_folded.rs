//! `perfdata export --format folded` against stacks folded, in this test, from
//! `perf script -F comm,event,ip,sym` of perf 6.1 run live (tests/exports/script.rs):
//! the same stacks with the same counts.

use std::path::{Path, PathBuf};

use perfdata_tests::{fixtures_dir, name, perf_available};

use crate::exports;
use crate::workload;

use exports::export;
use exports::script::{perf_folded, Depth};

fn record_fp(dir: &Path) -> PathBuf {
    let spin = workload::build_spin(dir);
    let args = ["-g", "-e", "cpu-clock", "-c", "100000"];
    workload::record(dir, "fp.data", &args, &[spin.as_str()])
}

#[perfdata_oracle::needs(perf)]
#[test]
fn folded_stacks_match_perf_script() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let fresh = record_fp(dir.path());
    for input in [fixtures_dir().join("file-callgraph-fp.data"), fresh.clone()] {
        let (perf, ours) = (
            perf_folded(&input, Depth::Full).0,
            exports::folded(&input, dir.path()),
        );
        assert!(
            perf.values().sum::<u64>() > 50,
            "{}: {perf:?}",
            name(&input)
        );
        let differ: Vec<String> = perf
            .keys()
            .chain(ours.keys())
            .filter(|k| perf.get(*k) != ours.get(*k))
            .map(|k| format!("{k}: perf {:?}, perfdata {:?}", perf.get(k), ours.get(k)))
            .collect();
        assert!(
            differ.is_empty(),
            "{}:\n{}",
            name(&input),
            differ.join("\n")
        );
    }
    // The workload's call chain is named on the fresh recording.
    let ours = exports::folded(&fresh, dir.path());
    assert!(
        ours.keys().any(|k| k.ends_with(";main;mid;leaf")),
        "{ours:?}"
    );
}

#[test]
fn dash_writes_to_standard_output() {
    // `-o -` is standard output (it wrote a file named "-" in the working directory).
    let dir = tempfile::tempdir().expect("temp dir");
    let input = fixtures_dir().join("file-callgraph-fp.data");
    let in_file = export(&input, "folded", dir.path());
    assert!(!in_file.is_empty());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["export", "--format", "folded", "-o", "-"])
        .arg(&input)
        .current_dir(dir.path())
        .output()
        .expect("perfdata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, in_file);
    assert!(!dir.path().join("-").exists());
}
