//! perfdata-write: turn perfdata-core models and record streams back into perf.data.
//!
//! - [`FileWriter`] writes file mode with every offset recomputed, streaming the data
//!   section and writing the header last.
//! - [`PipeWriter`] writes pipe mode without seeking.
//! - [`output::AtomicOutput`] writes to a temp file beside the target and renames it
//!   into place only when everything succeeded.
//! - [`edit`] runs record edits (keep, drop, replace) in one streaming pass over any
//!   input into any output; [`edit::Strip`] is `perfdata strip`.
//!
//! Keep only the samples (and side-band) of one process, streaming:
//!
//! ```
//! use perfdata_write::convert::{ConvertOptions, Target};
//! use perfdata_write::edit::{self, Selection, Strip};
//! use perfdata_write::output::AtomicOutput;
//! # let dir = tempfile::tempdir()?;
//! # let (input, output) = ("../fixtures/strip-multi.data", dir.path().join("out.data"));
//! # let mut probe = edit::open(input)?; // the pid of the fixture's last sample
//! # let mut pid = 0;
//! # while let Some(item) = probe.next_record()? {
//! #     if item.raw.record_type() == perfdata_core::record::RecordType::Sample {
//! #         pid = item.locate().pid.unwrap_or(0) as u64;
//! #     }
//! # }
//!
//! let reader = edit::open(input)?; // a file, a pipe stream, a directory or "-"
//! let only_pid = Strip::new(Selection {
//!     pids: Some(vec![(pid, pid)]),
//!     keep: true,
//!     ..Default::default()
//! });
//! let mut out = AtomicOutput::create(&output)?;
//! let opts = ConvertOptions::default(); // same container, compression and byte order
//! let (mut w, report) = edit::run(reader, Target::File, out.writer(), &opts, vec![Box::new(only_pid)])?;
//! std::io::Write::flush(&mut w)?;
//! drop(w);
//! out.commit(None)?; // renamed into place only now
//! let samples = report.edits.expect("edits ran").records[&perfdata_core::record::RecordType::Sample];
//! assert!(samples.kept > 0 && samples.removed > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod compress;
pub mod convert;
pub mod edit;
pub mod error;
pub mod file;
pub mod output;
pub mod pipe;
pub mod synth;

pub use convert::{write_tree, WriteTree};
pub use error::{Result, WriteError};
pub use file::{AttrEntry, AuxtracePosition, FileWriter};
pub use pipe::PipeWriter;
