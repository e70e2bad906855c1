//! The text reports the report text oracles compare: perf's `perf report --stdio` and
//! `perfdata report`, run on one input with the same options.

use std::path::Path;
use std::process::Command;

use perfdata_tests::name;

/// `perf report --stdio -i INPUT ARGS`, without the random tip it ends with (`#`,
/// `# (Tip: ...)`, `#`); its exit status checked.
pub fn perf_stdio(input: &Path, args: &[&str]) -> String {
    let out = Command::new("perf")
        .args(["report", "--stdio", "-i"])
        .arg(input)
        .args(args)
        .output()
        .expect("perf report runs");
    assert!(
        out.status.success(),
        "perf report {args:?} on {}",
        name(input)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    if let [.., a, tip, b] = lines.as_slice() {
        if *a == "#" && tip.starts_with("# (Tip:") && *b == "#" {
            lines.truncate(lines.len() - 3);
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `perfdata report INPUT ARGS`, its exit status checked (its stderr in the panic).
pub fn perfdata_report(input: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("report")
        .arg(input)
        .args(args)
        .output()
        .expect("perfdata runs");
    assert!(
        out.status.success(),
        "perfdata report {args:?} on {}: {}",
        name(input),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
