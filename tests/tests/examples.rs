//! The library crates' examples, run: each example binary on a fixture, its output
//! checked against perf 6.1's view of the same file (or of the file the example wrote).
//!
//! `cargo test --workspace` builds every example before it runs the tests; run alone
//! (`cargo test -p perfdata-tests --test suite examples::`), an example that was not built yet
//! is built here first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available, perf_run, perf_stats};

/// The example `name` of package `package`, built: next to this test's own binary
/// (`target/debug/examples/`), built with cargo when it is not there.
fn example(package: &str, name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from target/<profile>/deps");
    let path = profile_dir.join("examples").join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // Built in the profile the tests run in (`--release` too), where it is looked for.
        let release = profile_dir.ends_with("release").then_some("--release");
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", package, "--example", name])
            .args(release)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building example {name} failed");
    }
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// Run an example; it must succeed. Returns its stdout.
fn run(exe: &Path, args: &[&std::ffi::OsStr]) -> String {
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("the example runs");
    assert!(
        out.status.success(),
        "{} failed: {}",
        exe.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the example prints text")
}

/// `perf script -F pid` of `path`: samples per pid.
fn perf_samples_per_pid(path: &Path) -> BTreeMap<i32, u64> {
    let run = perf_run(&["script", "-F", "pid"], path);
    assert!(run.clean(), "perf script: {:?} {}", run.status, run.stderr);
    let mut out = BTreeMap::new();
    for line in run.stdout.lines() {
        let pid: i32 = line.trim().parse().expect("perf prints a pid per sample");
        *out.entry(pid).or_default() += 1;
    }
    assert!(!out.is_empty(), "perf script printed no sample");
    out
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn read_counts_records_as_perf_report_stats() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-cpu-clock.data");
    let stdout = run(&example("perfdata-core", "read"), &[input.as_os_str()]);
    let stats = perf_stats(&input);
    assert!(stats.clean);
    let mut checked = 0;
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["samples", event, count] => {
                let perf = stats.samples.iter().find(|(e, _)| e == event);
                assert_eq!(perf.map(|(_, n)| n.to_string()), Some(count.to_string()));
                checked += 1;
            }
            [name, count] => {
                // perf counts its own synthesized records too; those it lists must agree.
                if let Some(n) = stats.records.get(*name) {
                    assert_eq!(n.to_string(), *count, "{name}");
                    checked += 1;
                }
            }
            ["time", first, last] => {
                assert!(first.parse::<u64>().unwrap() <= last.parse::<u64>().unwrap())
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    assert!(stats.records.get("SAMPLE").is_some_and(|&n| n > 0));
    assert!(checked >= 3, "{stdout}");
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn stream_edit_keeps_one_process() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-multi.data");
    let before = perf_samples_per_pid(&input);
    assert!(before.len() > 1, "the fixture has several processes");
    let (&pid, &count) = before.iter().next().expect("a pid");
    let removed: u64 = before.values().sum::<u64>() - count;
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("one.data");
    let stdout = run(
        &example("perfdata-write", "stream_edit"),
        &[
            input.as_os_str(),
            output.as_os_str(),
            pid.to_string().as_ref(),
        ],
    );
    assert_eq!(
        stdout.trim(),
        format!("samples kept {count} removed {removed}")
    );
    assert_eq!(
        perf_samples_per_pid(&output),
        BTreeMap::from([(pid, count)])
    );
}

/// `perf script -F comm` of `path`: samples per comm.
fn perf_samples_per_comm(path: &Path) -> BTreeMap<String, u64> {
    let run = perf_run(&["script", "-F", "comm"], path);
    assert!(run.clean(), "perf script: {:?} {}", run.status, run.stderr);
    let mut out = BTreeMap::new();
    for line in run.stdout.lines() {
        *out.entry(line.trim().to_string()).or_default() += 1;
    }
    assert!(!out.is_empty(), "perf script printed no sample");
    out
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn tree_edit_renames_a_command() {
    assert!(perf_available());
    // A compressed recording: the COMM records are inside compressed records.
    let input = fixtures_dir().join("file-compressed.data");
    let mut expected = perf_samples_per_comm(&input);
    let spin = expected
        .remove("perfdata-spin")
        .expect("the fixture's command");
    assert!(spin > 0);
    expected.insert("renamed".into(), spin);
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("renamed.data");
    let stdout = run(
        &example("perfdata-write", "tree_edit"),
        &[
            input.as_os_str(),
            output.as_os_str(),
            "perfdata-spin".as_ref(),
            "renamed".as_ref(),
        ],
    );
    assert!(
        stdout.starts_with("renamed ") && !stdout.starts_with("renamed 0 "),
        "{stdout}"
    );
    assert_eq!(perf_samples_per_comm(&output), expected);
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn synth_writes_the_samples_asked_for() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("synth.data");
    let stdout = run(
        &example("perfdata-synth", "synth"),
        &[output.as_os_str(), "500".as_ref()],
    );
    assert_eq!(stdout.trim(), "samples 500");
    let stats = perf_stats(&output);
    assert!(stats.clean);
    assert_eq!(stats.records.get("SAMPLE"), Some(&500));
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn per_process_counts_samples_as_perf_script() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-multi.data");
    let stdout = run(
        &example("perfdata-report", "per_process"),
        &[input.as_os_str()],
    );
    let ours: BTreeMap<i32, u64> = stdout
        .lines()
        .map(|l| {
            let (pid, n) = l.split_once(' ').expect("PID COUNT");
            (pid.parse().unwrap(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(ours, perf_samples_per_pid(&input));
}
