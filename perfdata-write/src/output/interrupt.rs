//! What an interrupted process needs of the library, without any signal handler of
//! its own (the binary installs those): [`remove_temp_files`], async-signal-safe, for a
//! handler that must end the process at once (while it waits on a read that would not
//! return to check a [`crate::Cancel`]); helper threads that never take SIGINT or
//! SIGTERM; and the signals held back while a finished output is renamed into place.
//!
//! [`remove_temp_files`] only does what is async-signal-safe: atomics and `unlink`.
//! Temp paths are kept in a fixed table of leaked C strings, so it never allocates or
//! frees.

use std::ffi::{c_char, CString};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Outputs being written at once (a conversion writes one).
const SLOTS: usize = 8;
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static TEMP_PATHS: [AtomicPtr<c_char>; SLOTS] = [EMPTY; SLOTS];

/// Remove the named temp files of every output not yet finished (an unnamed one has
/// nothing to remove). Async-signal-safe: what a SIGINT or SIGTERM handler calls before
/// it ends the process; the outputs are then left as if never begun.
pub fn remove_temp_files() {
    for slot in &TEMP_PATHS {
        let path = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !path.is_null() {
            // SAFETY: the pointer is a NUL-terminated string leaked by `TempPathGuard`,
            // which can no longer free it (it was swapped out).
            unsafe { libc::unlink(path) };
        }
    }
}

/// A temp path [`remove_temp_files`] removes until the guard is dropped.
pub struct TempPathGuard {
    slot: Option<usize>,
}

impl TempPathGuard {
    /// Register `path` (if the table is full, the path is simply not cleaned up).
    pub fn new(path: &Path) -> Self {
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
