//! The `--call-graph dwarf` workloads the unwinding oracle tests record: a C program
//! built `gcc -O2 -fomit-frame-pointer` (levels.c), a Rust release binary (levels.rs),
//! `ls -R /usr` (libc), a C program busy in a SIGPROF handler (signals.c: stacks
//! through glibc's sigreturn trampoline), and one that vforks in a loop (vfork.c: glibc's
//! `__vfork` keeps its return address in a register).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Build the C and Rust workloads into `dir`; `build_id`: the C binary's, instead of
/// the one ld computes (the same for every build, so in perf's build-id cache once
/// any test recorded it).
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build(dir: &Path, build_id: Option<&str>) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/unwind");
    let c = dir.join("levels");
    let mut gcc = Command::new("gcc");
    gcc.args(build_id.map(|b| format!("-Wl,--build-id=0x{b}")))
        .args(["-O2", "-fomit-frame-pointer", "-o"])
        .arg(&c)
        .arg(src.join("levels.c"));
    super::workload::run(&mut gcc);
    let rs = dir.join("levels-rs");
    let mut rustc = Command::new("rustc");
    rustc
        .args(["-C", "opt-level=3", "-o"])
        .arg(&rs)
        .arg(src.join("levels.rs"));
    super::workload::run(&mut rustc);
    (c, rs)
}

/// Build the signal handler workload (signals.c) into `dir`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_signals(dir: &Path) -> PathBuf {
    build_c(dir, "signals")
}

/// Build the vforking workload (vfork.c) into `dir`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_vfork(dir: &Path) -> PathBuf {
    build_c(dir, "vfork")
}

/// Build tests/unwind/NAME.c `gcc -O2 -fomit-frame-pointer` into `dir/NAME`.
fn build_c(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/unwind/{name}.c"));
    let exe = dir.join(name);
    let mut gcc = Command::new("gcc");
    gcc.args(["-O2", "-fomit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(src);
    super::workload::run(&mut gcc);
    exe
}

/// `perf record --call-graph dwarf EXTRA` of `command` into `dir/file`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn record_dwarf(dir: &Path, file: &str, extra: &[&str], command: &[&str]) -> PathBuf {
    // A sample's 8 KiB stack copy is much to write: a sample every 0.4 ms and 8 MiB
    // buffers keep perf from losing chunks on a busy machine.
    let mut args = vec![
        "--call-graph",
        "dwarf",
        "-e",
        "task-clock",
        "-c",
        "400000",
        "-m",
        "2048",
    ];
    args.extend_from_slice(extra);
    super::workload::record(dir, file, &args, command)
}

/// The four recordings: the C program, the Rust one, `ls -R /usr` and the signal
/// handler's (about 2,000 samples, 60% of them in the handler).
#[allow(dead_code)] // not every test that shares this module uses it
pub fn recordings(dir: &Path) -> Vec<PathBuf> {
    let (c, rs) = build(dir, None);
    let signals = build_signals(dir);
    let path = |p: &Path| p.to_str().expect("utf-8 path").to_string();
    vec![
        record_dwarf(dir, "c.data", &[], &[&path(&c), "500"]),
        record_dwarf(dir, "rust.data", &[], &[&path(&rs), "3000"]),
        // A sample every 100 us (perf takes the last -c): about 2000 samples, so that
        // one sample is less than the 0.1% rows are compared above.
        record_dwarf(dir, "ls.data", &["-c", "100000"], &["ls", "-R", "/usr"]),
        record_dwarf(dir, "signals.data", &[], &[&path(&signals), "3000"]),
    ]
}

/// The C workload built with a build id of its own and recorded with `-N`, so that no
/// build-id cache has the binary: (the binary, the recording).
#[allow(dead_code)] // not every test that shares this module uses it
pub fn record_uncached(dir: &Path) -> (PathBuf, PathBuf) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    let (c, _) = build(dir, Some(&format!("{nanos:040x}")));
    let exe = c.to_str().expect("utf-8 path");
    let input = record_dwarf(dir, "c.data", &["-N"], &[exe, "500"]);
    (c, input)
}

/// The `unwind` object of `perfdata report --json input`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn unwind_stats(input: &Path) -> serde_json::Value {
    let args = [
        OsStr::new("report"),
        OsStr::new("--json"),
        input.as_os_str(),
    ];
    let out = perfdata_tests::run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    doc["unwind"].clone()
}
