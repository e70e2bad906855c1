//! What SIGINT and SIGTERM do, owned by the binary: the library only checks a
//! [`Cancel`] flag between records and removes its named temp files when asked.
//!
//! An interrupt sets the flag: a conversion stops at its next record, its output is
//! dropped unfinished (no temp file is left, the old target is untouched) and the
//! command then dies of the signal as if it had not been caught (so the shell sees
//! status 130 or 143, [`die_if_interrupted`]). A command waiting on a read that does not
//! return (a stream that stalls) never reaches its next record: a watcher thread then
//! removes the named temp files itself and ends the process after [`GRACE`]. A second
//! interrupt ends it at once.
//!
//! While the input is a stream (a pipe or stdin), the first SIGINT means "the stream is
//! ending" instead: a terminal's Ctrl-C reaches `perf record -o - | perfdata ...` as a
//! whole, perf flushes and closes its stream, and perfdata must read it to the end and
//! write a complete output. A second SIGINT aborts.
//!
//! The handler only does what is async-signal-safe: atomics, `write`, `unlink`,
//! `signal` and `raise`.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

use perfdata_write::output::interrupt::{remove_temp_files, spawn_without_signals};
use perfdata_write::Cancel;

/// How a SIGINT is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnInterrupt {
    /// Stop the command, leaving no output (SIGTERM always does this).
    Abort,
    /// The input is a stream that the interrupt also ends: keep reading it to its end
    /// and finish the output; only a second SIGINT aborts.
    EndOfStream,
}

/// How long a command has to reach its next record once interrupted before the
/// watcher ends it.
const GRACE: Duration = Duration::from_millis(300);

static CANCEL: AtomicBool = AtomicBool::new(false);
/// The signal that cancelled the command (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static END_OF_STREAM: AtomicBool = AtomicBool::new(false);
static SIGINTS: AtomicUsize = AtomicUsize::new(0);
/// The write end of the watcher's pipe (-1: no watcher).
static WAKE: AtomicI32 = AtomicI32::new(-1);

/// The flag the commands' conversions check.
pub fn cancel() -> Cancel {
    Cancel::from_static(&CANCEL)
}

/// Install the SIGINT and SIGTERM handlers and the watcher (once, at start).
pub fn install(policy: OnInterrupt) {
    END_OF_STREAM.store(policy == OnInterrupt::EndOfStream, Ordering::SeqCst);
    let mut fds = [-1 as c_int; 2];
    // SAFETY: pipe2(2) into an array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0 {
        let [read_end, write_end] = fds;
        WAKE.store(write_end, Ordering::SeqCst);
        spawn_without_signals(move || watch(read_end));
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a plain sigaction with a handler that is async-signal-safe;
        // SA_RESTART makes a read of stdin interrupted by the first SIGINT go on.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as extern "C" fn(c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// After a command: when an interrupt cancelled it, die of that signal as if it had
/// not been caught.
pub fn die_if_interrupted() {
    let sig = SIGNAL.load(Ordering::SeqCst);
    if sig != 0 {
        die(sig);
    }
}

/// Remove what is left unfinished and die of `sig`.
fn die(sig: c_int) {
    remove_temp_files();
    // SAFETY: back to the default action and die of the same signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

extern "C" fn handler(sig: c_int) {
    if sig == libc::SIGINT
        && END_OF_STREAM.load(Ordering::SeqCst)
        && SIGINTS.fetch_add(1, Ordering::SeqCst) == 0
    {
        let msg = b"perfdata: interrupted: reading the input stream to its end \
                    (interrupt again to abort)\n";
        // SAFETY: write(2) is async-signal-safe; a short write loses only the message.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
        return;
    }
    if CANCEL.swap(true, Ordering::SeqCst) {
        // The second interrupt: at once.
        die(sig);
        return;
    }
    SIGNAL.store(sig, Ordering::SeqCst);
    let fd = WAKE.load(Ordering::SeqCst);
    if fd < 0 {
        die(sig);
        return;
    }
    // SAFETY: write(2) of one byte to the watcher's pipe.
    unsafe { libc::write(fd, [0u8].as_ptr().cast(), 1) };
}

/// The watcher: once woken by an interrupt, give the command [`GRACE`] to stop at its
/// next record, then end the process (it waits on a read that does not return).
fn watch(read_end: c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: read(2) of one byte into a local.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    std::thread::sleep(GRACE);
    let sig = SIGNAL.load(Ordering::SeqCst);
    remove_temp_files();
    // SAFETY: the default action again, then the signal to the process: delivered to
    // the main thread (this one blocks it), which dies of it.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
    }
}
