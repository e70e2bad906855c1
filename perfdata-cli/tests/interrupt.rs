//! Interrupted conversions (SIGINT, SIGTERM, SIGKILL) leave no file but the old target:
//! the output is an unnamed temp file until it is finished, and the signal handlers
//! remove a named one.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use perfdata_tests::fixtures_dir;

const EXE: &str = env!("CARGO_BIN_EXE_perfdata");
const OLD: &[u8] = b"the old target";

/// A valid pipe stream of at least `min` bytes: the fixture `pipe-cpu-clock.data`
/// followed by its SAMPLE records again and again.
fn big_pipe_stream(min: usize) -> Vec<u8> {
    let mut bytes = std::fs::read(fixtures_dir().join("pipe-cpu-clock.data")).unwrap();
    let mut samples = Vec::new();
    let mut at = 16;
    while at + 8 <= bytes.len() {
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let size = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
        assert!(size >= 8, "record at {at} has size {size}");
        if ty == 9 {
            samples.extend_from_slice(&bytes[at..at + size]);
        }
        at += size;
    }
    assert_eq!(samples.len() % 8, 0);
    assert!(samples.len() > 1000, "{} bytes of samples", samples.len());
    while bytes.len() < min {
        bytes.extend_from_slice(&samples);
    }
    bytes
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// A directory holding `out.data` with the old target's bytes.
fn dir_with_old_target() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    std::fs::write(&out, OLD).unwrap();
    (dir, out)
}

/// `perfdata convert --to-file - -o out.data` killed while it waits for the rest of its
/// stdin: the output is open (and partly written), and nothing named is left.
#[test]
fn conversion_killed_mid_stream_leaves_only_the_old_target() {
    let stream = big_pipe_stream(8 << 20);
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let (dir, out) = dir_with_old_target();
        let mut child = Command::new(EXE)
            .args(["convert", "--to-file", "-", "-o"])
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // Once this returns, all but a pipe buffer of it was read: the conversion is
        // under way and waits for more.
        stdin.write_all(&stream[..stream.len() / 2]).unwrap();
        assert_eq!(
            listing(dir.path()),
            ["out.data"],
            "a named temp file exists mid-run (signal {sig})"
        );
        signal(&child, sig);
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert_eq!(listing(dir.path()), ["out.data"], "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), OLD, "signal {sig}");
    }
}

/// Bytes written so far by process `pid` (0 once it is gone).
fn bytes_written(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// SIGINT and SIGTERM in the middle of a file conversion (a byte-order change, which
/// decodes every record) once it has written 4 MiB of its output.
#[test]
fn interrupted_file_conversion_leaves_only_the_old_target() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.data");
    let mut child = Command::new(EXE)
        .args(["convert", "--to-file", "-", "-o"])
        .arg(&input)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let stream = big_pipe_stream(48 << 20);
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
    let out = dir.path().join("out.data");
    for sig in [libc::SIGINT, libc::SIGTERM] {
        std::fs::write(&out, OLD).unwrap();
        let mut child = Command::new(EXE)
            .args(["convert", "--endian", "big"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while bytes_written(child.id()) < 4 << 20 {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the conversion ended before it was interrupted: make the input larger"
            );
            std::thread::yield_now();
        }
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert_eq!(listing(dir.path()), ["in.data", "out.data"], "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), OLD, "signal {sig}");
    }
}
