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

/// `perfdata convert --to-file - -o OUT` fed the first half of `stream` on stdin. Once
/// this returns, all but a pipe buffer of it was read: the conversion is under way, its
/// output open, and it waits for more.
fn half_fed_conversion(
    out: &Path,
    stream: &[u8],
    stderr: Stdio,
    named_temp: bool,
) -> (Child, std::process::ChildStdin) {
    let mut child = Command::new(EXE)
        .args(["convert", "--to-file", "-", "-o"])
        .arg(out)
        .env("PERFDATA_NAMED_TEMP", if named_temp { "1" } else { "0" })
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&stream[..stream.len() / 2]).unwrap();
    (child, stdin)
}

/// `perfdata convert --to-file - -o out.data` killed while it waits for the rest of its
/// stdin: the output is open (and partly written), and nothing named is left.
#[test]
fn conversion_killed_mid_stream_leaves_only_the_old_target() {
    let stream = big_pipe_stream(8 << 20);
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let (dir, out) = dir_with_old_target();
        let (mut child, stdin) = half_fed_conversion(&out, &stream, Stdio::null(), false);
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

/// A counter of `/proc/PID/io` (`rchar`, `wchar`): bytes process `pid` has read or
/// written so far (0 once it is gone).
fn proc_io(pid: u32, field: &str) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(": "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Wait until `child` has read or written (`field`) `bytes`; it must not end before.
fn wait_for_io(child: &mut Child, field: &str, bytes: u64) {
    while proc_io(child.id(), field) < bytes {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the process ended before {field} reached {bytes}"
        );
        std::thread::yield_now();
    }
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
        wait_for_io(&mut child, "wchar", 4 << 20);
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert_eq!(listing(dir.path()), ["in.data", "out.data"], "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), OLD, "signal {sig}");
    }
}

/// SAMPLE records of a little-endian pipe stream, counted here.
fn count_samples(stream: &[u8]) -> u64 {
    let (mut at, mut n) = (16, 0);
    while at + 8 <= stream.len() {
        n += u64::from(stream[at..at + 4] == 9u32.to_le_bytes());
        at += u16::from_le_bytes(stream[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    n
}

/// `perfdata convert --to-file - -o out.data` fed half a stream, then sent SIGINT once it
/// has started; returns the child, its stdin and its stderr once it said it took the
/// interrupt as the end of the stream.
fn interrupted_stream_reader(
    out: &Path,
    stream: &[u8],
    named_temp: bool,
) -> (
    Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStderr>,
) {
    use std::io::BufRead;
    let (mut child, stdin) = half_fed_conversion(out, stream, Stdio::piped(), named_temp);
    signal(&child, libc::SIGINT);
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(
        line.contains("reading the input stream to its end"),
        "{line:?}"
    );
    (child, stdin, stderr)
}

/// Reading a stream, the first SIGINT means "the stream is ending": the rest is read
/// and the output written whole. A second SIGINT aborts, leaving the old target.
#[test]
fn a_stream_reader_takes_the_first_sigint_as_the_end_of_the_stream() {
    let stream = big_pipe_stream(4 << 20);
    let (dir, out) = dir_with_old_target();
    let (mut child, mut stdin, _stderr) = interrupted_stream_reader(&out, &stream, false);
    stdin.write_all(&stream[stream.len() / 2..]).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let stats = Command::new(EXE)
        .args(["stats", "--json"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(stats.status.success());
    let v: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(v["records"]["SAMPLE"], count_samples(&stream));

    std::fs::write(&out, OLD).unwrap();
    let (mut child, stdin, _stderr) = interrupted_stream_reader(&out, &stream, false);
    signal(&child, libc::SIGINT);
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_eq!(listing(dir.path()), ["out.data"]);
    assert_eq!(std::fs::read(&out).unwrap(), OLD);
}

/// The README's example as a terminal's Ctrl-C meets it: SIGINT to the whole process
/// group of `perf record -o - | tee -i raw | perfdata convert --to-file -o out -`. perf
/// flushes its stream and perfdata writes a file perf 6.1 reads with every sample perf
/// wrote (`tee -i` ignores the interrupt and keeps a copy of the stream).
#[perfdata_oracle::needs(perf)]
#[test]
fn ctrl_c_to_perf_record_and_perfdata_keeps_every_sample() {
    use std::os::unix::process::CommandExt;
    assert!(perfdata_tests::perf_available());
    let dir = tempfile::tempdir().unwrap();
    let (raw, out) = (dir.path().join("raw.pipe"), dir.path().join("out.data"));
    let mut perf = Command::new("perf")
        .args([
            "record",
            "-q",
            "-o",
            "-",
            "-e",
            "cpu-clock",
            "-c",
            "100000",
            "--",
        ])
        .args(["sh", "-c", "while :; do :; done"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = perf.id() as i32;
    let mut tee = Command::new("tee")
        .arg("-i")
        .arg(&raw)
        .stdin(perf.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .process_group(group)
        .spawn()
        .unwrap();
    let mut perfdata = Command::new(EXE)
        .args(["convert", "--to-file", "-o"])
        .arg(&out)
        .arg("-")
        .stdin(tee.stdout.take().unwrap())
        .stderr(Stdio::piped())
        .process_group(group)
        .spawn()
        .unwrap();
    wait_for_io(&mut perfdata, "rchar", 64 << 10);
    // SAFETY: killpg(2) on the group made above, whose leader has not been waited for.
    assert_eq!(unsafe { libc::killpg(group, libc::SIGINT) }, 0);
    let result = perfdata.wait_with_output().unwrap();
    perf.wait().unwrap();
    assert!(tee.wait().unwrap().success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{:?}: {stderr}", result.status);
    assert!(
        stderr.contains("reading the input stream to its end"),
        "{stderr}"
    );
    let wrote = perfdata_tests::perf_stats(&raw);
    let read = perfdata_tests::perf_stats(&out);
    assert!(read.clean, "perf rejects the output");
    assert_eq!(wrote.samples.len(), 1, "{:?}", wrote.samples);
    assert!(wrote.samples[0].1 > 100, "{:?}", wrote.samples);
    assert_eq!(read.samples, wrote.samples);
}

/// Where the file system has no unnamed files (forced here with PERFDATA_NAMED_TEMP=1)
/// the output is a named temp file: SIGTERM, and SIGINT twice while reading a stream,
/// remove it; a finished conversion renames it into place.
#[test]
fn named_temp_files_are_removed_on_sigint_and_sigterm() {
    let stream = big_pipe_stream(8 << 20);
    let named_temp_exists = |dir: &Path| {
        let names = listing(dir);
        names.len() == 2 && names[0].starts_with(".perfdata-") && names[0].ends_with(".tmp")
    };
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let (dir, out) = dir_with_old_target();
        // SIGINT: the second, once the first was taken as the end of the stream.
        let (mut child, stdin) = if sig == libc::SIGINT {
            let (child, stdin, _) = interrupted_stream_reader(&out, &stream, true);
            (child, stdin)
        } else {
            half_fed_conversion(&out, &stream, Stdio::null(), true)
        };
        assert!(named_temp_exists(dir.path()), "{:?}", listing(dir.path()));
        signal(&child, sig);
        let status = child.wait().unwrap();
        drop(stdin);
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert_eq!(listing(dir.path()), ["out.data"], "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), OLD);
    }
    let (dir, out) = dir_with_old_target();
    let (mut child, mut stdin) = half_fed_conversion(&out, &stream, Stdio::null(), true);
    stdin.write_all(&stream[stream.len() / 2..]).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(listing(dir.path()), ["out.data"]);
    assert_ne!(std::fs::read(&out).unwrap(), OLD);
}
