//! The views perf script refuses once the recording is open, told apart as perf 6.1
//! tells them apart: by what its `cmd_script` returns, which becomes its exit status.
//! A refusal is not an error of the recording (the listing so far is good), so it is
//! returned beside the listing ([`super::Listed::refused`]), not as an [`crate::Error`]
//! that a caller could not tell from a read failure.

/// Why perf script stopped before or during the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Refused before the first record, where perf's `cmd_script` returns -1 (exit
    /// status 255): a field the file's events do not sample
    /// (`perf_session__check_output_opt`), `-C` on a file without CPUs.
    Setup(String),
    /// Refused while the records are processed, where perf returns -EINVAL (exit status
    /// 234): a pipe's events checked at their ATTR record, the events a trace decoder
    /// adds (`process_attr`), a `--time` the recording cannot place.
    Processing(String),
}

impl Refusal {
    /// What perf says, one line or more, without a trailing newline.
    pub fn message(&self) -> &str {
        match self {
            Refusal::Setup(m) | Refusal::Processing(m) => m,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}
