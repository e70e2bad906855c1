//! Conversions of single recordings that perf 6.1 cannot make or read itself, checked
//! with perf: a `perf record -o -` stream made a file with every feature, a compressed
//! pipe made readable, and every corpus file perf refuses made readable by --compat.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, name, perf_available, perf_output, perf_stats, run_perfdata};

fn perfdata(args: &[&str]) -> Result<(), String> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn perf_stdout(args: &[&str], input: &Path) -> String {
    let out = perf_output(args, input);
    assert!(
        out.status.success(),
        "perf {args:?} {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A pipe recording made with `perf record -o -` has all its features after --to-file,
/// which perf 6.1's own `perf inject` cannot do.
#[perfdata_oracle::needs(perf)]
#[test]
fn pipe_recording_to_file_has_every_feature() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let input = fixtures_dir().join("pipe-cpu-clock.data");
    perfdata(&[
        "convert",
        "--to-file",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let header = perf_stdout(&["report", "--header-only", "-I"], &out);
    for line in [
        "# hostname :",
        "# os release :",
        "# perf version :",
        "# arch :",
        "# nrcpus online :",
        "# cpudesc :",
        "# total memory :",
        "# cmdline :",
        "# event : name = cpu-clock",
        "# sibling sockets :",
        "# CPU 0: Core ID",
        "# node0 meminfo",
        "# pmu mappings:",
    ] {
        assert!(header.contains(line), "missing {line:?} in:\n{header}");
    }
    let stats = perf_stats(&out);
    assert!(stats.clean, "perf complains about the converted file");
    assert_eq!(stats.records.get("SAMPLE"), Some(&130));
}

/// `perf record -z -o -` makes a stream perf 6.1's `report --stats` cannot read; after
/// --to-file --decompress it reads all of it.
#[perfdata_oracle::needs(perf)]
#[test]
fn compressed_pipe_recording_becomes_readable() {
    assert!(perf_available());
    let input = fixtures_dir().join("pipe-compressed.data");
    assert!(
        !perf_stats(&input).clean,
        "perf 6.1 reads the compressed pipe: fixture changed?"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    perfdata(&[
        "convert",
        "--to-file",
        "--decompress",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let stats = perf_stats(&out);
    assert!(stats.clean, "perf complains about the converted file");
    assert_eq!(stats.records.get("SAMPLE"), Some(&265));
    assert!(!stats.records.contains_key("COMPRESSED"));
    // perf 6.1 cannot read the input's samples; `perf report -D` counted 265 of them.
    assert_eq!(perf_stdout(&["script"], &out).lines().count(), 265);
}

/// Every corpus file perf 6.1 refuses (the corrupt one aside) is read by it after
/// --compat=perf6.1, with every sample there.
#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn compat_makes_refused_corpus_files_readable() {
    assert!(perf_available());
    assert!(
        perfdata_tests::corpus_dir().is_some(),
        "PERFDATA_CORPUS is set"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut fixed = Vec::new();
    let mut failures = Vec::new();
    for path in perfdata_tests::corpus_files() {
        let n = name(&path);
        if n == perfdata_tests::CORRUPT.0 || perf_stats(&path).clean {
            continue;
        }
        let out = dir.path().join(&n);
        if let Err(e) = perfdata(&[
            "convert",
            "--compat=perf6.1",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]) {
            failures.push(format!("{n}: {e}"));
            continue;
        }
        let theirs = perf_stats(&out);
        if !theirs.clean {
            failures.push(format!("{n}: perf 6.1 still refuses it"));
            continue;
        }
        let ours = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(["stats", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let ours: serde_json::Value = serde_json::from_slice(&ours.stdout).unwrap();
        if theirs.records.get("SAMPLE").copied() != ours["records"]["SAMPLE"].as_u64() {
            failures.push(format!(
                "{n}: perf reads {:?} samples, the input has {}",
                theirs.records.get("SAMPLE"),
                ours["records"]["SAMPLE"]
            ));
        }
        fixed.push(n);
    }
    println!("perf 6.1 reads after --compat: {fixed:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every corpus file perf refuses but the corrupt one.
    let refused: Vec<String> = perfdata_tests::corpus_files()
        .iter()
        .map(|p| name(p))
        .filter(|n| {
            perfdata_tests::listed(perfdata_tests::PERF_REFUSES, n).is_some()
                && n != perfdata_tests::CORRUPT.0
        })
        .collect();
    assert_eq!(fixed, refused);
}
