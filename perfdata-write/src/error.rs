//! The one error type of perfdata-write.

use std::io;

/// An error while writing perf.data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// Reading the input failed (the error names the input's byte offset).
    #[error(transparent)]
    Read(#[from] perfdata_core::Error),
    /// Writing the output failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// The input has something the requested output cannot hold; `offset` is where it
    /// is in the input when it is a record.
    #[error("{}{what}", offset.map(|o| format!("at input byte offset {o} ({o:#x}), ")).unwrap_or_default())]
    Unsupported { offset: Option<u64>, what: String },
}

impl WriteError {
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        WriteError::Io {
            context: context.into(),
            source,
        }
    }

    pub fn unsupported(offset: Option<u64>, what: impl Into<String>) -> Self {
        WriteError::Unsupported {
            offset,
            what: what.into(),
        }
    }
}

pub type Result<T, E = WriteError> = std::result::Result<T, E>;
