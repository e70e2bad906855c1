//! The one error type of perfdata-core.
//!
//! Every error that comes from the bytes of a file names the byte offset it was found at
//! and what was being read there (a record type, a feature, a header field), so that a
//! user can look at the file with `xxd -s OFFSET` and see the problem.

use std::fmt;
use std::io;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error while reading or decoding perf.data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system failed to read or open something.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (usually names the path).
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The bytes of the file are not what the format allows.
    #[error("at byte offset {offset} ({offset:#x}), {context}: {problem}")]
    Format {
        /// Offset in the file (or in the decompressed stream, see `context`).
        offset: u64,
        /// What was being read: "record MMAP2", "feature HOSTNAME", "file header", ...
        context: String,
        /// What is wrong.
        problem: Problem,
    },
    /// A model's own write checks refused it (a count that no longer fits its field or
    /// disagrees with its list after an edit): nothing of a file, so no offset.
    #[error("encoding {what}: {reason}")]
    Encode {
        /// What was being encoded: "feature EVENT_DESC", "record body MMAP2", a type.
        what: String,
        /// The check that failed.
        reason: String,
    },
    /// A selector (`--pid`, `--tid`, `--comm`, `--cpu`, `--event`, `--time`) that does
    /// not parse, or names what the recording does not have: nothing of a file, so no
    /// offset.
    #[error("{0}")]
    Select(String),
}

/// What is wrong with a piece of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The first 8 bytes are not a perf.data magic.
    BadMagic([u8; 8]),
    /// The file ends before the thing being read does.
    Truncated {
        /// Bytes the thing needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// A record header declares a size smaller than its type allows.
    RecordTooSmall {
        /// The declared size.
        size: u64,
        /// The smallest size of the type.
        min: u64,
    },
    /// A section or record points past the end of the file or of its container.
    PastEnd {
        /// Where it ends.
        end: u64,
        /// Where the file or container ends.
        limit: u64,
    },
    /// A count or size would need more memory than the input could possibly hold.
    TooLarge {
        /// The count or size.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The most the input could hold.
        limit: u64,
    },
    /// A binrw model refused the bytes.
    Decode(String),
    /// The zstd stream of compressed records is broken.
    Decompress(String),
    /// Something the format allows but this reader does not handle.
    Unsupported(String),
    /// Anything else, described in words.
    Invalid(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::BadMagic(m) => write!(
                f,
                "not a perf.data file: magic {:?} is neither PERFILE2, 2ELIFREP nor PERFFILE",
                String::from_utf8_lossy(m)
            ),
            // A count whose bytes overflow (a flipped `nr`) is said as such, not as the
            // 20-digit number standing in for it.
            Problem::Truncated {
                needed: u64::MAX,
                available,
            } => write!(
                f,
                "truncated: a count needs 2^64 bytes or more but only {available} remain"
            ),
            Problem::Truncated { needed, available } => write!(
                f,
                "truncated: needs {needed} bytes but only {available} remain"
            ),
            Problem::RecordTooSmall { size, min } => write!(
                f,
                "record size {size} is smaller than the {min} bytes its type needs"
            ),
            Problem::PastEnd { end, limit } => {
                write!(f, "extends to byte {end}, past the end at {limit}")
            }
            Problem::TooLarge { what, value, limit } => write!(
                f,
                "{what} of {value} is larger than the input allows ({limit})"
            ),
            Problem::Decode(msg) => write!(f, "does not decode: {msg}"),
            Problem::Decompress(msg) => write!(f, "zstd decompression failed: {msg}"),
            Problem::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Problem::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl Error {
    /// A format error at `offset` while reading `context`.
    pub fn format(offset: u64, context: impl Into<String>, problem: Problem) -> Self {
        Error::Format {
            offset,
            context: context.into(),
            problem,
        }
    }

    /// The input ended at `offset + available` where `needed` bytes were required.
    pub fn truncated(offset: u64, context: impl Into<String>, needed: u64, available: u64) -> Self {
        Self::format(offset, context, Problem::Truncated { needed, available })
    }

    /// An I/O error with a description of what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A binrw failure while decoding `context` from bytes that start at `offset`.
    ///
    /// binrw positions are relative to the slice it was given; they are added to
    /// `offset` so the message points into the file.
    pub fn decode(offset: u64, context: impl Into<String>, err: binrw::Error) -> Self {
        let (pos, msg) = binrw_position(&err);
        Self::format(offset + pos, context, Problem::Decode(msg))
    }

    /// A model's write checks failed while encoding `what`.
    pub fn encode(what: impl Into<String>, err: &binrw::Error) -> Self {
        Error::Encode {
            what: what.into(),
            reason: binrw_position(err).1,
        }
    }

    /// The byte offset this error names, if it names one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Format { offset, .. } => Some(*offset),
            Error::Io { .. } | Error::Encode { .. } | Error::Select(_) => None,
        }
    }

    /// The problem, for format errors.
    pub fn problem(&self) -> Option<&Problem> {
        match self {
            Error::Format { problem, .. } => Some(problem),
            Error::Io { .. } | Error::Encode { .. } | Error::Select(_) => None,
        }
    }
}

/// binrw errors carry their position in the slice being parsed; pull it out and render
/// the rest as a single line.
fn binrw_position(err: &binrw::Error) -> (u64, String) {
    use binrw::Error as E;
    let pos = match err {
        E::BadMagic { pos, .. } => Some(*pos),
        E::AssertFail { pos, .. } => Some(*pos),
        E::Custom { pos, .. } => Some(*pos),
        E::NoVariantMatch { pos } => Some(*pos),
        E::EnumErrors { pos, .. } => Some(*pos),
        _ => None,
    };
    let msg = match err {
        E::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            "ends before its layout does".to_string()
        }
        E::Custom { err, .. } => err.to_string(),
        E::AssertFail { message, .. } => message.clone(),
        E::Backtrace(bt) => return binrw_position(&bt.error),
        other => other.to_string().lines().next().unwrap_or("").to_string(),
    };
    (pos.unwrap_or(0), msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_error_names_offset_and_context() {
        let e = Error::format(
            49104,
            "record header",
            Problem::RecordTooSmall { size: 0, min: 8 },
        );
        let s = e.to_string();
        assert_eq!(
            s,
            "at byte offset 49104 (0xbfd0), record header: record size 0 is smaller than the 8 bytes its type needs"
        );
        assert_eq!(e.offset(), Some(49104));
    }

    #[test]
    fn an_overflowing_count_is_said_as_one() {
        let short = |needed| {
            Error::format(
                2768,
                "record SAMPLE",
                Problem::Truncated {
                    needed,
                    available: 24,
                },
            )
            .to_string()
        };
        assert_eq!(
            short(u64::MAX),
            "at byte offset 2768 (0xad0), record SAMPLE: truncated: a count needs 2^64 bytes or more but only 24 remain"
        );
        assert_eq!(
            short(4096),
            "at byte offset 2768 (0xad0), record SAMPLE: truncated: needs 4096 bytes but only 24 remain"
        );
    }
}
