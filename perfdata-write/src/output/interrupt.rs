//! What SIGINT and SIGTERM do while an output is being written: remove the temp files
//! of unfinished outputs, then die of the signal as if it had not been caught (so the
//! shell sees status 130 or 143). While the input is a stream (a pipe or stdin), the
//! first SIGINT means "the stream is ending" instead: a terminal's Ctrl-C reaches
//! `perf record -o - | perfdata ...` as a whole, perf flushes and closes its stream, and
//! perfdata must read it to the end and write a complete output. A second SIGINT aborts.
//!
//! The handler only does what is async-signal-safe: atomics, `unlink`, `write` to
//! stderr, `signal` and `raise`. Temp paths are kept in a fixed table of leaked C
//! strings, so the handler never allocates or frees.

use std::ffi::{c_char, c_int, CString};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// How a SIGINT is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnInterrupt {
    /// Remove unfinished outputs and die (SIGTERM always does this).
    Abort,
    /// The input is a stream that the interrupt also ends: keep reading it to its end
    /// and finish the output; only a second SIGINT aborts.
    EndOfStream,
}

/// Outputs being written at once (a conversion writes one).
const SLOTS: usize = 8;
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static TEMP_PATHS: [AtomicPtr<c_char>; SLOTS] = [EMPTY; SLOTS];
static END_OF_STREAM: AtomicBool = AtomicBool::new(false);
static SIGINTS: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();

/// Install the SIGINT and SIGTERM handlers (once per process; later calls only change
/// the policy). Without them, an interrupted conversion leaves its named temp file.
pub fn install(policy: OnInterrupt) {
    END_OF_STREAM.store(policy == OnInterrupt::EndOfStream, Ordering::SeqCst);
    INSTALL.call_once(|| {
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
    });
}

/// Whether a SIGINT asked a stream input to end (see [`OnInterrupt::EndOfStream`]).
pub fn stream_interrupted() -> bool {
    SIGINTS.load(Ordering::SeqCst) > 0
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
    for slot in &TEMP_PATHS {
        let path = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: the pointer is a NUL-terminated string leaked by `TempPathGuard`,
            // which can no longer free it (it was swapped out).
            unsafe { libc::unlink(path) };
        }
    }
    // SAFETY: back to the default action and die of the same signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// A temp path the signal handler removes until the guard is dropped.
pub(crate) struct TempPathGuard {
    slot: Option<usize>,
}

impl TempPathGuard {
    /// Register `path` (if the table is full, the path is simply not cleaned up).
    pub(crate) fn new(path: &Path) -> Self {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
            return TempPathGuard { slot: None };
        };
        let raw = c.into_raw();
        for (i, slot) in TEMP_PATHS.iter().enumerate() {
            if slot
                .compare_exchange(
                    std::ptr::null_mut(),
                    raw,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                return TempPathGuard { slot: Some(i) };
            }
        }
        // SAFETY: `raw` came from `into_raw` above and was not stored.
        drop(unsafe { CString::from_raw(raw) });
        TempPathGuard { slot: None }
    }
}

impl Drop for TempPathGuard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            let raw = TEMP_PATHS[i].swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !raw.is_null() {
                // SAFETY: stored by `new` from `into_raw`; swapped out, so ours alone.
                drop(unsafe { CString::from_raw(raw) });
            }
        }
    }
}

/// A thread that never takes SIGINT or SIGTERM (it starts with them blocked): the
/// handler then always runs on the thread that reads the input, as it did before there
/// were helper threads, and blocking signals there holds every interrupt back.
pub fn spawn_without_signals<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let _blocked = SignalsBlocked::new();
    std::thread::spawn(f)
}

/// SIGINT and SIGTERM held back while a finished output is linked and renamed into
/// place, so an interrupt there leaves the finished output rather than a stray link.
pub(crate) struct SignalsBlocked {
    old: libc::sigset_t,
}

impl SignalsBlocked {
    pub(crate) fn new() -> Self {
        // SAFETY: plain signal mask calls on sets we own.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            SignalsBlocked { old }
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}
