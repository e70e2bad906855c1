//! perfdata-write: turn perfdata-core models and record streams back into perf.data.
//!
//! - [`FileWriter`] writes file mode with every offset recomputed, streaming the data
//!   section and writing the header last.
//! - [`PipeWriter`] writes pipe mode without seeking.
//! - [`output::AtomicOutput`] writes to a temp file beside the target and renames it
//!   into place only when everything succeeded.

pub mod compress;
pub mod convert;
pub mod edit;
pub mod error;
pub mod file;
pub mod output;
pub mod pipe;

pub use error::{Result, WriteError};
pub use file::{AttrEntry, AuxtracePosition, FileWriter};
pub use pipe::PipeWriter;
