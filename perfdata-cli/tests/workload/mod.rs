//! Recordings made by a test: the fixture workload compiled into a temporary directory
//! (so its binary is there for symbolisation) and recorded with perf.

use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::fixtures_dir;

/// Compile fixtures/workload.c as fixtures/README.md says, into `dir/spin`.
pub fn build_spin(dir: &Path) -> String {
    let spin = dir.join("spin");
    let gcc = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&spin)
        .arg(fixtures_dir().join("workload.c"))
        .output()
        .expect("gcc runs");
    assert!(
        gcc.status.success(),
        "{}",
        String::from_utf8_lossy(&gcc.stderr)
    );
    spin.to_str().expect("utf-8 path").to_string()
}

/// `perf record ARGS -o dir/file -- COMMAND`, its exit status checked.
pub fn record(dir: &Path, file: &str, args: &[&str], command: &[&str]) -> PathBuf {
    let out = dir.join(file);
    let st = Command::new("perf")
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(command)
        .output()
        .expect("perf record runs");
    assert!(
        st.status.success(),
        "perf record {args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}
