//! `-o` onto an output that exists and is no regular file (issue #24, defect 1): a FIFO,
//! a character device, `/dev/stdout` on a pipe. Every command that writes writes into
//! it, as perf does, and never replaces it: after the run the node is still the same
//! node, and the bytes that went through it are the bytes the same command writes to a
//! regular file (which parse: `perfdata check` reads every perf.data among them).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use perfdata_tests::fixtures_dir;

/// A command that writes, with `OUT` where its output path goes.
struct Case {
    args: Vec<OsString>,
    /// Its output is a perf.data file or stream (`perfdata check` must read it).
    recording: bool,
}

fn cases() -> Vec<Case> {
    let f = |name: &str| fixtures_dir().join(name).into_os_string();
    let mut cases = Vec::new();
    let mut add = |recording: bool, args: &[&OsStr]| {
        cases.push(Case {
            args: args.iter().map(|a| a.to_os_string()).collect(),
            recording,
        })
    };
    let s = OsStr::new;
    let file = f("file-cpu-clock.data");
    let pipe = f("pipe-cpu-clock.data");
    let compressed = f("file-compressed.data");
    let buildids = f("file-buildid-mmap.data");
    let callgraph = f("file-callgraph-fp.data");
    // File mode (built in a spool, copied into the node) and pipe mode (streamed).
    add(true, &[s("convert"), &file, s("-o"), s("OUT")]);
    add(true, &[s("convert"), &pipe, s("-o"), s("OUT")]);
    add(
        true,
        &[s("convert"), &file, s("--to-pipe"), s("-o"), s("OUT")],
    );
    add(
        true,
        &[s("convert"), &pipe, s("--to-file"), s("-o"), s("OUT")],
    );
    add(
        true,
        &[s("convert"), &file, s("--compress"), s("-o"), s("OUT")],
    );
    add(
        true,
        &[s("strip"), &file, s("--drop"), s("MMAP"), s("-o"), s("OUT")],
    );
    add(
        true,
        &[s("strip"), &pipe, s("--drop"), s("MMAP"), s("-o"), s("OUT")],
    );
    let anon = [s("anonymize"), &compressed, s("--salt"), s("s"), s("-o")];
    add(true, &[&anon[..], &[s("OUT")]].concat());
    let remap = [s("buildid"), s("remap"), &buildids, s("--path"), s("/=/x/")];
    add(true, &[&remap[..], &[s("-o"), s("OUT")]].concat());
    add(
        true,
        &[s("synth"), s("--samples"), s("50"), s("-o"), s("OUT")],
    );
    let synth_pipe = [s("synth"), s("--samples"), s("50"), s("--pipe")];
    add(true, &[&synth_pipe[..], &[s("-o"), s("OUT")]].concat());
    for format in ["folded", "pprof", "speedscope", "firefox", "flamegraph"] {
        let export = [s("export"), &callgraph, s("--format"), s(format)];
        add(false, &[&export[..], &[s("-o"), s("OUT")]].concat());
    }
    add(false, &[s("flamegraph"), &callgraph, s("-o"), s("OUT")]);
    cases
}

/// Run `check` on every case; fail after all ran, naming each case that failed (each
/// panic's message is printed as it happens).
fn for_every_case(check: impl Fn(&Case)) {
    let failed: Vec<_> = cases()
        .into_iter()
        .filter(|case| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case))).is_err()
        })
        .map(|case| case.args)
        .collect();
    assert!(
        failed.is_empty(),
        "{} cases failed: {failed:?}",
        failed.len()
    );
}

impl Case {
    fn args_to(&self, out: &Path) -> Vec<OsString> {
        self.args
            .iter()
            .map(|a| match a == "OUT" {
                true => out.as_os_str().to_os_string(),
                false => a.clone(),
            })
            .collect()
    }

    fn command(&self, out: &Path) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
        c.arg("-q").args(self.args_to(out)).stdin(Stdio::null());
        c
    }

    /// The bytes written to a regular file: what must go through a node.
    fn expected(&self, dir: &Path) -> Vec<u8> {
        let path = dir.join("regular.out");
        let out = self.command(&path).output().unwrap();
        assert_ok(self, &out);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(!bytes.is_empty(), "{:?}", self.args);
        bytes
    }

    /// What came through a node is what a regular file gets, and a recording parses.
    fn check_bytes(&self, dir: &Path, got: &[u8], want: &[u8], node: &str) {
        assert!(
            got == want,
            "{:?} into {node}: {} bytes came through, a regular file gets {}",
            self.args,
            got.len(),
            want.len()
        );
        if self.recording {
            let copy = dir.join("through.data");
            std::fs::write(&copy, got).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
                .arg("check")
                .arg(&copy)
                .output()
                .unwrap();
            assert_ok(self, &out);
            std::fs::remove_file(&copy).unwrap();
        }
    }
}

fn assert_ok(case: &Case, out: &Output) {
    assert!(
        out.status.success(),
        "{:?}: {}",
        case.args,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The directory holds only `names`: no temp file left beside a node.
fn assert_only(dir: &Path, names: &[&str]) {
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, names, "{}", dir.display());
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o640) }, 0);
}

/// Read everything written into the FIFO at `path` on a thread, until the writer has
/// closed it after `done` is set. The FIFO is opened before the command runs
/// (non-blocking, so that the command's open for writing finds a reader at once and a
/// command that never opens it cannot leave the thread waiting).
fn read_fifo(path: &Path, done: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<u8>> {
    let mut fifo = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            // Read before looking at `done`: once it is set, the writer has exited and
            // a read of 0 means everything it wrote was read.
            let finished = done.load(Ordering::SeqCst);
            match fifo.read(&mut buf) {
                Ok(0) if finished => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("reading the FIFO: {e}"),
            }
            // No data, or no writer yet.
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    })
}

/// A FIFO: a reader on the other end receives the whole output, and the FIFO is still
/// a FIFO with its mode (on today's main it was replaced by a 0600 regular file and
/// the reader got nothing).
#[test]
fn every_command_writes_into_a_fifo_and_leaves_it_a_fifo() {
    for_every_case(|case| {
        let dir = tempfile::tempdir().unwrap();
        let want = case.expected(dir.path());
        let fifo = dir.path().join("out.fifo");
        mkfifo(&fifo);
        let before = std::fs::metadata(&fifo).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let reader = read_fifo(&fifo, Arc::clone(&done));
        let out = case.command(&fifo).output().unwrap();
        done.store(true, Ordering::SeqCst);
        let got = reader.join().unwrap();
        assert_ok(case, &out);
        let after = std::fs::metadata(&fifo).unwrap();
        assert!(after.file_type().is_fifo(), "{:?}", case.args);
        assert_eq!(after.ino(), before.ino(), "{:?}", case.args);
        assert_eq!(after.permissions().mode(), before.permissions().mode());
        assert_only(dir.path(), &["out.fifo"]);
        case.check_bytes(dir.path(), &got, &want, "a FIFO");
    });
}

/// `-o /dev/stdout` with stdout a pipe (`/proc/self/fd/1` is `pipe:[N]`, no path):
/// the output goes down the pipe, as with `-o -` (today's main: "cannot write
/// /proc/self/fd/pipe:[N]").
#[test]
fn every_command_writes_into_dev_stdout_on_a_pipe() {
    for_every_case(|case| {
        let dir = tempfile::tempdir().unwrap();
        let want = case.expected(dir.path());
        let out = case
            .command(Path::new("/dev/stdout"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_ok(case, &out);
        case.check_bytes(dir.path(), &out.stdout, &want, "/dev/stdout");
    });
}

/// A character device made with mknod (1, 3: a null device, as `/dev/null`), as root:
/// after every command it is still that device with its mode, and nothing was left
/// beside it (today's main replaced it with a regular file holding the output).
#[test]
fn every_command_writes_into_a_character_device_and_leaves_it_one() {
    let probe = tempfile::tempdir().unwrap();
    if mknod_null(&probe.path().join("null")).is_err() {
        eprintln!(
            "skipped: mknod of a character device is not permitted here (needs root); \
             the FIFO and /dev/stdout tests still run"
        );
        return;
    }
    for_every_case(|case| {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("null");
        mknod_null(&node).unwrap();
        let out = case.command(&node).output().unwrap();
        assert_ok(case, &out);
        let md = std::fs::metadata(&node).unwrap();
        assert!(md.file_type().is_char_device(), "{:?}", case.args);
        assert_eq!(md.rdev(), libc::makedev(1, 3), "{:?}", case.args);
        assert_eq!(md.permissions().mode() & 0o7777, 0o644, "{:?}", case.args);
        assert_only(dir.path(), &["null"]);
    });
}

/// `mknod PATH c 1 3` with mode 0644.
fn mknod_null(path: &Path) -> std::io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mknod(2) with a NUL-terminated path.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 3)) };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// A pseudo-terminal in raw mode: a character device whose bytes can be read back (on
/// its master side), and which cannot seek, as a terminal or a tape cannot. Every
/// command's output comes through whole and the device is still the terminal.
#[test]
fn every_command_writes_into_a_terminal_device() {
    for_every_case(|case| {
        let dir = tempfile::tempdir().unwrap();
        let want = case.expected(dir.path());
        let (master, slave_path, _slave) = raw_pty();
        let before = std::fs::metadata(&slave_path).unwrap();
        assert!(before.file_type().is_char_device());
        let reader = read_exactly(master, want.len());
        let out = case.command(&slave_path).output().unwrap();
        assert_ok(case, &out);
        // The master comes back: closing it would remove the device.
        let (got, _master) = reader.join().unwrap();
        let after = std::fs::metadata(&slave_path).unwrap();
        assert!(after.file_type().is_char_device(), "{:?}", case.args);
        assert_eq!(after.rdev(), before.rdev(), "{:?}", case.args);
        assert_only(dir.path(), &[]);
        case.check_bytes(dir.path(), &got, &want, "a terminal");
    });
}

/// A pseudo-terminal's master, its device path and an open handle of that device (kept
/// so that its raw mode stays), set raw: no output processing, every byte as written.
fn raw_pty() -> (std::fs::File, std::path::PathBuf, std::fs::File) {
    use std::os::fd::FromRawFd;
    // SAFETY: posix_openpt(3), grantpt, unlockpt and ptsname_r on the descriptor it
    // returned; tcgetattr/tcsetattr on the device opened here.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = std::fs::File::from_raw_fd(fd);
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_str()
            .unwrap()
            .to_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .unwrap();
        use std::os::fd::AsRawFd;
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut t), 0);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t), 0);
        (master, path.into(), slave)
    }
}

/// Read `len` bytes from `from` on a thread (a terminal's master has no end of file
/// while the device is open), giving up after 60 s with what came; `from` comes back
/// with them.
fn read_exactly(
    mut from: std::fs::File,
    len: usize,
) -> std::thread::JoinHandle<(Vec<u8>, std::fs::File)> {
    use std::os::fd::AsRawFd;
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while got.len() < len && std::time::Instant::now() < deadline {
            let mut p = libc::pollfd {
                fd: from.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll(2) on one descriptor owned here.
            if unsafe { libc::poll(&mut p, 1, 100) } <= 0 {
                continue;
            }
            match from.read(&mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                // No device side open any more (EIO): nothing more can come.
                Err(_) => break,
            }
        }
        (got, from)
    })
}
