//! Where a `--call-graph dwarf` stack copy ends before the outermost frame (issue #27,
//! DM1), live against perf 6.1: `perfdata script`'s output equals `perf script`'s, every
//! sample, every frame (address, symbol and offset, DSO).
//!
//! perf's `access_mem` takes the copy's last word as outside it, and a word outside the
//! copy but in one of the thread's maps (the `[stack]`) reads as 0: perf's walk then
//! steps to a return address of 0 and prints it as `ffffffffffffffff [unknown]
//! ([unknown])` (0 less one), a frame early where the return address was the copy's
//! last word. perfdata left both out before (86 of 90 samples differed, on a 1 KiB copy).
//!
//! - tests/unwind/deep.c (`gcc -O2 -fomit-frame-pointer`: a recursion 1 to 200 frames
//!   deep) recorded with `--call-graph dwarf,1024`, so that most copies end mid-stack,
//!   at every depth; and with the default 8 KiB copy, whose deepest stacks are cut at
//!   perf's 127 frames.
//! - python3 (the interpreter's own binary, `sys.executable`: pyenv's `python3` is a
//!   shell script that execs through `env` and bash, whose forks and execs leave a few
//!   samples of a recording that perf unwinds otherwise, not understood: see
//!   docs/report.md, "Short stack copies") running a recursion, with
//!   `--call-graph dwarf,4096`; skipped where there is no python3.
//!
//! Each recording takes well under a second; perf script on them about as much.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{perf_available, perf_output, run_perfdata};

use crate::workload;

/// One sample of script's default output: its header line and its frame lines.
type Sample = (String, Vec<String>);

/// The samples of script's default output.
fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(head) = lines.next() {
        if head.trim().is_empty() {
            continue;
        }
        let mut frames = Vec::new();
        while let Some(l) = lines.next_if(|l| l.starts_with('\t')) {
            frames.push(l.trim().to_string());
        }
        out.push((head.to_string(), frames));
    }
    out
}

/// perf script's and perfdata script's samples of `input`, in order.
fn both(input: &Path) -> (Vec<Sample>, Vec<Sample>) {
    let out = perf_output(&["script"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let perf = samples(&String::from_utf8_lossy(&out.stdout));
    let args = [OsStr::new("script"), OsStr::new("-i"), input.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (perf, samples(&String::from_utf8_lossy(&out.stdout)))
}

/// Every sample's frames equal perf's; returns perf's samples.
fn assert_same_stacks(input: &Path) -> Vec<Sample> {
    let (perf, ours) = both(input);
    assert_eq!(perf.len(), ours.len(), "samples");
    let differ: Vec<String> = perf
        .iter()
        .zip(&ours)
        .enumerate()
        .filter(|(_, (p, o))| p != o)
        .map(|(i, (p, o))| format!("sample {i}: {}\n  perf {:?}\n  ours {:?}", p.0, p.1, o.1))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} samples differ from perf script's:\n{}",
        differ.len(),
        perf.len(),
        differ[..differ.len().min(5)].join("\n")
    );
    perf
}

/// The frame perf gives for a return address read as 0.
const ZERO_RETURN: &str = "ffffffffffffffff [unknown] ([unknown])";

/// Build tests/unwind/deep.c into `dir`.
fn build_deep(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/unwind/deep.c");
    let exe = dir.join("deep");
    let mut gcc = Command::new("gcc");
    gcc.args(["-O2", "-fomit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(src);
    workload::run(&mut gcc);
    exe
}

/// `perf record --call-graph dwarf,SIZE` of `command`, a sample every 0.4 ms.
fn record(dir: &Path, file: &str, size: u32, command: &[&str]) -> PathBuf {
    let graph = format!("dwarf,{size}");
    let args = ["--call-graph", &graph, "-e", "task-clock", "-c", "400000"];
    workload::record(
        dir,
        file,
        &[&args[..], &["-m", "2048", "-q"]].concat(),
        command,
    )
}

/// How many of `samples` end with perf's frame of a 0 read beyond the copy.
fn ending_at_zero(samples: &[Sample]) -> usize {
    samples
        .iter()
        .filter(|s| s.1.last().is_some_and(|f| f == ZERO_RETURN))
        .count()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn short_stack_copies_end_as_perf_ends_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = build_deep(dir.path());
    let exe = exe.to_str().expect("utf-8 path");

    let input = record(dir.path(), "short.data", 1024, &[exe, "2000"]);
    let perf = assert_same_stacks(&input);
    // The case is there: most stacks end at perf's frame of a 0 read beyond the copy.
    let ended = ending_at_zero(&perf);
    assert!(
        ended * 2 > perf.len(),
        "{ended} of {} samples end with {ZERO_RETURN}",
        perf.len()
    );
    eprintln!(
        "1 KiB copies: {} samples equal, {ended} end with perf's -1",
        perf.len()
    );

    let input = record(dir.path(), "deep.data", 8192, &[exe, "2000"]);
    let perf = assert_same_stacks(&input);
    // The kernel's frames (a page fault's) are counted apart.
    let user = |s: &Sample| {
        s.1.iter()
            .filter(|f| !f.ends_with("([kernel.kallsyms])"))
            .count()
    };
    let deepest = perf.iter().map(user).max().unwrap_or(0);
    assert_eq!(
        deepest, 127,
        "the deepest user stacks are cut at perf's 127 frames"
    );
    eprintln!("8 KiB copies: {} samples equal", perf.len());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn python_stacks_with_short_copies_are_perf_s() {
    assert!(perf_available());
    let Some(python) = Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(os.path.realpath(sys.executable))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        eprintln!("no python3: skipped");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let script = "import time\n\
                  def f(n):\n    return sum(i * i for i in range(300)) if n == 0 else f(n - 1)\n\
                  t = time.time()\n\
                  while time.time() - t < 0.3:\n    f(25)\n";
    let input = record(dir.path(), "py.data", 4096, &[&python, "-c", script]);
    let perf = assert_same_stacks(&input);
    let ended = ending_at_zero(&perf);
    assert!(
        ended > 0,
        "no sample of {} ends with {ZERO_RETURN}",
        perf.len()
    );
    eprintln!(
        "python3: {} samples equal, {ended} end with perf's -1",
        perf.len()
    );
}
