//! Running perf as the edit oracle tests do.

use std::path::Path;
use std::process::Command;

pub mod kernel;
pub mod strip;

/// What perf printed and whether it was clean.
pub struct PerfRun {
    pub stdout: String,
    /// stderr without the kernel build-id notice that recordings made under an earlier
    /// kernel of this VM cause (the same for a recording and its edited copy).
    pub stderr: String,
    pub success: bool,
}

impl PerfRun {
    /// Exit 0 and nothing else on stderr.
    pub fn clean(&self) -> bool {
        self.success && self.stderr.trim().is_empty()
    }
}

/// Run `perf ARGS -i input` with no pager.
pub fn perf_run(args: &[&str], input: &Path) -> PerfRun {
    let out = Command::new("perf")
        .args(args)
        .arg("-i")
        .arg(input)
        .env("PERF_PAGER", "cat")
        .output()
        .expect("perf runs");
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("No kallsyms or vmlinux with build-id"))
        .collect::<Vec<_>>()
        .join("\n");
    PerfRun {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        success: out.status.success(),
    }
}
