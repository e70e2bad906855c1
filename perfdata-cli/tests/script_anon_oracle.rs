//! Anonymous maps' names against perf 6.1, live: perf's `map__new` names anonymous
//! memory after a JIT's map file (`/tmp/perf-PID.map`) only when it is executable, so a
//! frame in a writable anonymous map is in `//anon`. tests/workload/anon_frames.c has a
//! frame in each kind (x86-64 only), recorded with data maps (`-d`: perf records
//! non-executable MMAP2s only then) and frame-pointer callchains; `perfdata script`
//! must print what `perf script` prints.

#![cfg(target_arch = "x86_64")]

use std::ffi::OsStr;
use std::process::Command;

use perfdata_tests::{perf_available, run_perfdata};

use crate::workload;

#[perfdata_oracle::needs(perf)]
#[test]
fn anonymous_frames_are_named_by_their_maps_protection() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_anon_frames(dir.path());
    let data = workload::record(
        dir.path(),
        "anon.data",
        &[
            "-d",
            "-e",
            "cpu-clock",
            "-c",
            "1000000",
            "--call-graph",
            "fp",
        ],
        &[&exe],
    );
    let args = ["script", "-F", "ip,sym,dso", "-i"];
    let perf = Command::new("perf")
        .args(args)
        .arg(&data)
        .output()
        .expect("perf script runs");
    assert!(perf.status.success(), "{perf:?}");
    let mut argv: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    argv.push(data.as_os_str());
    let ours = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &argv, None);
    assert!(ours.status.success(), "{ours:?}");
    let (perf, ours) = (
        String::from_utf8_lossy(&perf.stdout),
        String::from_utf8_lossy(&ours.stdout),
    );
    // perf's own view has both kinds of frame, or the comparison proves nothing.
    let frames = |dso: &str| perf.lines().filter(|l| l.ends_with(dso)).count();
    let (anon, jit) = (frames("[unknown] (//anon)"), frames(".map)"));
    assert!(
        anon > 0 && jit > 0,
        "{anon} //anon and {jit} JIT frames:\n{perf}"
    );
    // The first line that differs, not the whole output.
    if let Some((i, (o, p))) = ours
        .lines()
        .zip(perf.lines())
        .enumerate()
        .find(|(_, (o, p))| o != p)
    {
        panic!("line {}: perfdata {o:?}, perf {p:?}", i + 1);
    }
    assert_eq!(ours.lines().count(), perf.lines().count());
    assert_eq!(ours, perf);
    eprintln!("{anon} //anon frames, {jit} in /tmp/perf-PID.map");
}
