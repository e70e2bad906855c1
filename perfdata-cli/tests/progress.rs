//! The progress bar: drawn on stderr when stderr is a terminal (a pseudo-terminal made by
//! `script -q -c`), with the input's bytes read of its size, rate and time left; never
//! when stderr is a pipe. `PERFDATA_PROGRESS_DELAY_MS=0` shows it at once (without it,
//! only work that runs over a second shows it, and the fixtures are read faster).

use std::path::Path;
use std::process::Command;

use perfdata_tests::fixtures_dir;

const INPUT: &str = "file-callgraph-dwarf.data";

/// `s` quoted for sh.
fn quote(s: &Path) -> String {
    format!("'{}'", s.display().to_string().replace('\'', r"'\''"))
}

/// indicatif's `{total_bytes}` of `n` bytes (binary units, two decimals).
fn binary_bytes(n: u64) -> String {
    format!("{:.2} KiB", n as f64 / 1024.0)
}

#[test]
fn progress_bar_shows_in_a_terminal() {
    let input = fixtures_dir().join(INPUT);
    let size = std::fs::metadata(&input).unwrap().len();
    let cmd = format!(
        "{} dump {} >/dev/null",
        quote(Path::new(env!("CARGO_BIN_EXE_perfdata"))),
        quote(&input)
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .env("PERFDATA_PROGRESS_DELAY_MS", "0")
        .output()
        .expect("script (util-linux) runs");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?} {tty} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // The bar counts bytes of the whole file, with a rate and the time left, and is
    // redrawn in place (carriage return) and cleared at the end (erase line).
    let total = binary_bytes(size);
    assert!(tty.contains(&format!("/{total} ")), "no {total} in {tty:?}");
    assert!(tty.contains("/s ") && tty.contains(" left"), "{tty:?}");
    assert!(tty.contains("\r") && tty.contains("\x1b[2K"), "{tty:?}");
}

#[test]
fn no_progress_bar_in_a_pipe() {
    let input = fixtures_dir().join(INPUT);
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("dump")
        .arg(&input)
        .env("PERFDATA_PROGRESS_DELAY_MS", "0")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.len() > 10_000, "dump printed the records");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "stderr is a pipe");
}
