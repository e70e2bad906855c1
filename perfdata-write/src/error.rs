//! The one error type of perfdata-write.

use std::io;

/// An error while writing perf.data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// perfdata-core failed: reading the input (the error names the input's byte
    /// offset), or encoding a model whose own checks refused it after an edit (the
    /// error names the feature or record).
    #[error(transparent)]
    Read(#[from] perfdata_core::Error),
    /// Writing the output failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being written.
        context: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The input has something the requested output cannot hold; `offset` is where it
    /// is in the input when it is a record.
    #[error("{}{what}", offset.map(|o| format!("at input byte offset {o} ({o:#x}), ")).unwrap_or_default())]
    Unsupported {
        /// The input byte offset of the record, when it is one.
        offset: Option<u64>,
        /// What cannot be written.
        what: String,
    },
    /// The conversion was cancelled ([`crate::Cancel`]) before it finished: nothing was
    /// put in place of the target.
    #[error("cancelled")]
    Cancelled,
    /// An error of one input of several (a merge's), said with its name.
    #[error("{input}: {source}")]
    Input {
        /// The input's path as given (`-` for stdin).
        input: String,
        /// What went wrong with it.
        #[source]
        source: Box<WriteError>,
    },
}

impl WriteError {
    /// An I/O error while `context`.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        WriteError::Io {
            context: context.into(),
            source,
        }
    }

    /// This error as one of input `name`'s, unless it names that input already (a
    /// cancellation is nobody's).
    pub fn of_input(self, name: &str) -> Self {
        match self {
            WriteError::Cancelled | WriteError::Input { .. } => self,
            e if e.to_string().contains(name) => e,
            e => WriteError::Input {
                input: name.to_string(),
                source: Box::new(e),
            },
        }
    }

    /// Input the writer cannot write, at input byte `offset` when known.
    pub fn unsupported(offset: Option<u64>, what: impl Into<String>) -> Self {
        WriteError::Unsupported {
            offset,
            what: what.into(),
        }
    }
}

/// The crate's result, with [`WriteError`].
pub type Result<T, E = WriteError> = std::result::Result<T, E>;
