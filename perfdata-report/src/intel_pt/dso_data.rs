//! Which failed walks perf 6.1 reports: its walker (intel-pt.c
//! `intel_pt_walk_next_insn`) returns -EINVAL ("Failed to get instruction", reported)
//! when the ip has no map or the DSO's code cannot be read, but -ENOENT (not reported)
//! when the DSO's data status is already DSO_DATA_STATUS_ERROR and the walker saw that
//! once before (`dso__data_status_seen(dso, DSO_DATA_STATUS_SEEN_ITRACE)`).
//!
//! The status turns to error at the first failed read of the DSO's data by anyone, and
//! three readers fail here: the walker itself; perf script, which fetches the
//! instruction at each sample's ip it prints (`perf_sample__fprintf_insn` →
//! `arch_fetch_insn` → `thread__memcpy`), recorded and synthesized samples alike; and a
//! `[vdso]` MMAP, for which perf reads the ELF type of every `/` DSO mapped by the
//! thread so far (`machine__thread_dso_type` in `__machine__findnew_vdso_compat`). So a
//! DSO first read by the walker is reported twice, and one read before (the kernel after
//! a printed kernel sample, the exec'd binary and its interpreter after the vdso map)
//! once. A copy of the corpus recording with the `[vdso]` MMAP2 renamed shows it: perf
//! then reports ld-2.23.so and coreutils twice.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::state::{InsnWalker, WalkError};

/// A DSO's data status as the walker sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Status {
    /// DSO_DATA_STATUS_ERROR: a read failed.
    error: bool,
    /// The walker saw the error status once (DSO_DATA_STATUS_SEEN_ITRACE).
    seen: bool,
}

/// The data status of DSOs (by a caller's key, e.g. the DSO's path), none readable.
#[derive(Debug, Clone, Default)]
pub struct DsoData {
    status: HashMap<String, Status>,
}

impl DsoData {
    /// A failed read by someone else than the walker: the status turns to error.
    pub fn failed_read(&mut self, dso: &str) {
        self.status.entry(dso.to_string()).or_default().error = true;
    }

    /// The walker's outcome for an ip in `dso` (`None`: no map, or a map without a DSO).
    pub fn walk(&mut self, dso: Option<&str>) -> WalkError {
        let Some(dso) = dso else {
            return WalkError::Unreadable;
        };
        let s = self.status.entry(dso.to_string()).or_default();
        if s.error {
            if s.seen {
                return WalkError::KnownBad;
            }
            s.seen = true;
        }
        // The read fails: the status is (now) an error.
        s.error = true;
        WalkError::Unreadable
    }
}

/// A walker that cannot read any code, with perf's reporting rule: `dso_of` names the
/// DSO an ip is mapped to (`None`: no map). The status is shared: perf keeps one per
/// DSO for every queue and every other reader.
pub struct UnreadableDsos<F: FnMut(u64) -> Option<String>> {
    /// The DSOs' status, shared with the other readers.
    pub data: Rc<RefCell<DsoData>>,
    /// The map lookup.
    pub dso_of: F,
}

impl<F: FnMut(u64) -> Option<String>> InsnWalker for UnreadableDsos<F> {
    fn walk(&mut self, ip: u64, to_ip: u64, _nr: bool) -> Result<(), WalkError> {
        if to_ip != 0 && ip == to_ip {
            return Ok(());
        }
        let dso = (self.dso_of)(ip);
        Err(self.data.borrow_mut().walk(dso.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_twice_unless_read_before() {
        let mut d = DsoData::default();
        // First read by the walker: reported, then once more, then not.
        assert_eq!(d.walk(Some("libc")), WalkError::Unreadable);
        assert_eq!(d.walk(Some("libc")), WalkError::Unreadable);
        assert_eq!(d.walk(Some("libc")), WalkError::KnownBad);
        // Read before (a printed sample, a vdso map): reported once.
        d.failed_read("ld");
        assert_eq!(d.walk(Some("ld")), WalkError::Unreadable);
        assert_eq!(d.walk(Some("ld")), WalkError::KnownBad);
        // No map: always reported.
        assert_eq!(d.walk(None), WalkError::Unreadable);
        assert_eq!(d.walk(None), WalkError::Unreadable);
    }
}
