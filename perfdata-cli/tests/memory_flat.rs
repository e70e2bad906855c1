//! `export` (every format) and `report` (its tables and readperf's CSV tables) keep no
//! state per sample: on a synthetic recording whose distinct stacks are all seen early,
//! eight times the samples take the same peak memory (issue #24: every sample was kept,
//! 2.97 GB exporting a 448 MB recording). The peak resident size of each run comes from
//! the kernel (`wait4`'s rusage); the bound allows for what is not per sample but grows
//! with the input's bytes up to a cap, the input's pages mapped while it is read (at most
//! 28 MiB, `tests/tests/mapped_walk.rs`). `bench/memory.sh` measures the same on large
//! recordings.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Run perfdata with `args`, which must succeed; its peak resident size in KiB.
// The child is waited for by `wait4`, whose rusage std's `wait` does not give.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&OsStr]) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("perfdata runs");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; status and usage are valid.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "perfdata {args:?} failed: {status:#x}"
    );
    // Linux gives ru_maxrss in KiB.
    usage.ru_maxrss as u64
}

/// A synthetic recording of `size` bytes: one thread of four functions with callchains,
/// every function as likely as the others, so that its distinct stacks (about 16,000
/// addresses) are all sampled in the first megabytes.
fn synth(dir: &Path, size: &str) -> PathBuf {
    let spec = dir.join(format!("{size}.json"));
    std::fs::write(
        &spec,
        format!(
            r#"{{"processes": 1, "threads_per_process": 1, "dsos": 2, "functions_per_dso": 2,
               "callchain": 8, "size": {size}, "thread_weights": [1],
               "function_weights": [1, 1, 1, 1], "host": {{"nr_cpus": 1}}}}"#
        ),
    )
    .expect("spec written");
    let out = dir.join(format!("{size}.data"));
    let args = [OsStr::new("synth"), OsStr::new("--spec"), spec.as_os_str()];
    let o = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("synth runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[test]
fn report_and_export_memory_does_not_grow_with_the_samples() {
    let dir = tempfile::tempdir().expect("temp dir");
    let small = synth(dir.path(), "4194304");
    let large = synth(dir.path(), "33554432");
    let out = dir.path().join("out");
    let csv = dir.path().join("csv");
    let runs: Vec<(&str, Vec<&OsStr>)> = ["folded", "pprof", "speedscope", "firefox", "flamegraph"]
        .iter()
        .map(|f| {
            let args = ["export", "--format", f, "-o"].map(OsStr::new).to_vec();
            (*f, args)
        })
        .chain([
            ("report", vec![OsStr::new("report")]),
            (
                "report --children",
                ["report", "--children"].map(OsStr::new).to_vec(),
            ),
            (
                "report --csv",
                vec![OsStr::new("report"), OsStr::new("--csv")],
            ),
        ])
        .collect();
    let mut problems = Vec::new();
    for (name, args) in &runs {
        let peak = |input: &Path| {
            let mut a = args.clone();
            match *name {
                "report" | "report --children" => {}
                "report --csv" => a.push(csv.as_os_str()),
                _ => a.push(out.as_os_str()),
            }
            a.push(input.as_os_str());
            peak_kib(&a)
        };
        let (one, eight) = (peak(&small), peak(&large));
        eprintln!("{name}: {one} KiB, eight times the samples {eight} KiB");
        // The input's mapped pages, up to 28 MiB, and a little for the allocator.
        if eight > one + 32 * 1024 {
            problems.push(format!(
                "{name}: {one} KiB, eight times the samples {eight} KiB"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `report --json` holds no more than the text report: its rows are written one at a
/// time, not built into one JSON tree first. Before, the tree took about 3 KiB a row:
/// 279 MiB against the text report's 74 MiB on this recording of 93,000 rows (debug
/// build), 1006 MiB against 213 MiB at 50 MB. The rows themselves may grow with the
/// distinct symbols, as in the text report.
#[test]
fn report_json_takes_no_more_memory_than_the_text_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("rows.data");
    let o = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args([
            "synth",
            "--size",
            "10M",
            "--callchain",
            "8",
            "--processes",
            "8",
        ])
        .args(["--threads-per-process", "4", "--dsos", "8", "-o"])
        .arg(&input)
        .output()
        .expect("synth runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let peak = |mode: &str| peak_kib(&[OsStr::new("report"), OsStr::new(mode), input.as_os_str()]);
    let (text, json) = (peak("--stdio"), peak("--json"));
    eprintln!("report --stdio {text} KiB, --json {json} KiB");
    assert!(
        json <= text + text / 5,
        "report --json {json} KiB, the text report {text} KiB"
    );
}

/// `script` reads a regular file's samples again from the mapping when their turn
/// comes (`replay/keys.rs`), after the walk gave their pages back: the replay gives
/// them back again. Before, each page holding a sample stayed resident once read again:
/// 61 MiB for a 128 MiB recording against 23 MiB for 4 MiB (release build), 131 MiB
/// of file pages for 400 MiB.
#[test]
fn script_memory_does_not_grow_with_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = |size: &str| {
        let out = dir.path().join(format!("{size}.data"));
        let o = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(["synth", "--processes", "1", "--threads-per-process", "1"])
            .args(["--size", size, "-o"])
            .arg(&out)
            .output()
            .expect("synth runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (small, large) = (plain("4M"), plain("128M"));
    let peak = |input: &Path| peak_kib(&[OsStr::new("script"), input.as_os_str()]);
    let (one, many) = (peak(&small), peak(&large));
    eprintln!("script: {one} KiB, 32 times the bytes {many} KiB");
    // The walk's mapped pages (up to 28 MiB, as above, less here) and the allocator.
    assert!(
        many <= one + 24 * 1024,
        "script: {one} KiB, 32 times the bytes {many} KiB"
    );
}
