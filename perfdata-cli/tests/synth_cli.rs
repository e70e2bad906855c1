//! `perfdata synth` without perf: the same seed gives the same bytes, a JSON spec is
//! the options it names, bad arguments fail cleanly, and what perf 6.1 cannot read
//! (a compressed pipe) reads back with perfdata.

use crate::synth_support;

use std::ffi::OsStr;

use perfdata_tests::run_perfdata;
use synth_support::*;

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (i, args) in [
        &["--callchain", "3"][..],
        &[
            "--pipe",
            "--compress=3",
            "--endian",
            "big",
            "--events",
            "cpu-clock,tracepoint",
        ],
        &["--size", "300K", "--events", "{cpu-clock,task-clock}:S"],
        &["--dir", "--extras", "--callchain", "2"],
    ]
    .into_iter()
    .enumerate()
    {
        let with_seed = |name: &str, seed: &'static str| {
            let mut a = args.to_vec();
            a.extend_from_slice(&["--seed", seed]);
            read_all(&synth(dir.path(), &format!("{name}{i}"), &a))
        };
        let (a, b, c) = (
            with_seed("a", "7"),
            with_seed("b", "7"),
            with_seed("c", "8"),
        );
        assert!(a.len() > 10_000);
        assert!(a == b, "{args:?}: same seed, different bytes");
        assert!(a != c, "{args:?}: different seeds, same bytes");
    }
}

#[test]
fn compressed_pipe_reads_back_with_every_sample() {
    // perf 6.1 cannot decompress records in pipe mode; perfdata's reader can.
    let dir = tempfile::tempdir().unwrap();
    let path = synth(
        dir.path(),
        "pz",
        &["--pipe", "--compress", "--samples", "777"],
    );
    let out = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[OsStr::new("stats"), OsStr::new("--json"), path.as_os_str()],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"]["SAMPLE"], 777);
    assert!(v["records"]["COMPRESSED"].as_u64().unwrap() > 0);
    assert_eq!(v["events"][0]["samples"], 777);
}

#[test]
fn bad_arguments_fail_with_a_message_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    for (args, message) in [
        (&["--processes", "0"][..], "at least one process"),
        (&["--events", "bogus"], "unknown event preset \"bogus\""),
        (&["--events", "{cpu-clock"], "unclosed group"),
        (&["--callchain", "0"], "depth of 1 or more"),
        (&["--fields", "raw"], "RAW samples need a tracepoint"),
        (&["--fields", "nonsense"], "unknown sample_type field"),
        (&["--fields", "weight,weight_struct"], "share one field"),
        (&["--dir", "--pipe"], "cannot be used with"),
        (&["--size", "12Q"], "unknown unit"),
        (
            &["--dso-dir", "/nonexistent-synth-dir"],
            "cannot write /nonexistent-synth-dir/libsynth0.so",
        ),
    ] {
        let mut all: Vec<&OsStr> = vec![OsStr::new("synth"), OsStr::new("-o"), out.as_os_str()];
        all.extend(args.iter().map(OsStr::new));
        let r = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} left an output");
    }
    // A directory is not written over an existing path.
    std::fs::write(&out, b"keep").unwrap();
    let all = [
        OsStr::new("synth"),
        OsStr::new("-o"),
        out.as_os_str(),
        OsStr::new("--dir"),
    ];
    let r = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("exists"));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep");
}

#[test]
fn a_file_to_stdout_is_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = synth(dir.path(), "f", &["--callchain", "2", "--seed", "4"]);
    let args: Vec<&OsStr> = ["synth", "-o", "-", "--callchain", "2", "--seed", "4"]
        .iter()
        .map(OsStr::new)
        .collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.len() > 10_000);
    assert_eq!(out.stdout, std::fs::read(path).unwrap());
}

#[test]
fn a_json_spec_is_the_options_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let from_json = synth_spec(
        dir.path(),
        "j",
        r#"{"seed": 5, "callchain": 3, "processes": 3, "events": "cpu-clock,tracepoint",
            "big_endian": true, "compress": 2}"#,
        &["--pipe"],
    );
    let from_args = synth(
        dir.path(),
        "a",
        &[
            "--seed",
            "5",
            "--callchain",
            "3",
            "--processes",
            "3",
            "--events",
            "cpu-clock,tracepoint",
            "--endian",
            "big",
            "--compress=2",
            "--pipe",
        ],
    );
    let bytes = std::fs::read(&from_json).unwrap();
    assert!(bytes.len() > 10_000);
    assert!(bytes == std::fs::read(from_args).unwrap());
    // An unknown field is an error naming it.
    let spec = dir.path().join("bad.json");
    std::fs::write(&spec, r#"{"sampels": 5}"#).unwrap();
    let args = [
        OsStr::new("synth"),
        OsStr::new("-o"),
        OsStr::new("-"),
        OsStr::new("--spec"),
        spec.as_os_str(),
    ];
    let r = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("unknown field `sampels`"));
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    for container in ["--pipe", "--round-every=1000"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(["synth", "-o", "-", "--size", "8M", container])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 8];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // The pipe is closed here, as `| head -c 8` does.
        let out = child.wait_with_output().unwrap();
        assert_eq!(&head, b"PERFILE2");
        assert!(
            out.status.success(),
            "{container}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
