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

/// The command line that runs `perfdata ARGS` on the input, stdout discarded.
fn command(args: &str, input: &Path, out: &Path) -> String {
    format!(
        "{} {} >/dev/null",
        quote(Path::new(env!("CARGO_BIN_EXE_perfdata"))),
        args.replace("IN", &quote(input))
            .replace("OUT", &quote(out))
    )
}

#[test]
fn progress_bar_shows_in_a_terminal() {
    let input = fixtures_dir().join(INPUT);
    let size = std::fs::metadata(&input).unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    // dump draws from its own loop; the others from a thread that watches the reader.
    for args in [
        "dump IN",
        "stats IN",
        "convert IN -o OUT -f",
        "strip IN -o OUT -f --time 50%-100%",
        "report IN",
        "export IN --format folded -o OUT -f",
        "check IN",
    ] {
        let cmd = command(args, &input, &out);
        let run = Command::new("script")
            .args(["-q", "-e", "-c", &cmd, "/dev/null"])
            .env("PERFDATA_PROGRESS_DELAY_MS", "0")
            .output()
            .expect("script (util-linux) runs");
        let tty = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{args}: {:?} {tty} {}",
            run.status,
            String::from_utf8_lossy(&run.stderr)
        );
        // The bar counts bytes of the whole file, with a rate and the time left, and
        // is redrawn in place (carriage return) and cleared at the end (erase line).
        let total = binary_bytes(size);
        assert!(
            tty.contains(&format!("/{total} ")),
            "{args}: no {total} in {tty:?}"
        );
        assert!(
            tty.contains("/s ") && tty.contains(" left"),
            "{args}: {tty:?}"
        );
        assert!(
            tty.contains("\r") && tty.contains("\x1b[2K"),
            "{args}: {tty:?}"
        );
    }
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
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.data");
    for args in [
        vec!["stats".as_ref(), input.as_os_str()],
        vec![
            "convert".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            target.as_os_str(),
            "-f".as_ref(),
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(&args)
            .env("PERFDATA_PROGRESS_DELAY_MS", "0")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "{args:?}: stderr is a pipe"
        );
    }
}
