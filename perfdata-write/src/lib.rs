//! perfdata-write: turn perfdata-core models and record streams back into perf.data.
//!
//! Two ways to change a recording, both giving a file perf reads (offsets, record
//! sizes and the features the records determine recomputed):
//! - [`edit`]: record edits (keep, drop, replace) in one streaming pass over any input
//!   into any output, in flat memory; [`edit::Strip`] is `perfdata strip`.
//! - [`WriteTree`]: an owned [`perfdata_core::PerfData`] tree, changed in memory and
//!   written back; unchanged, it writes the input's bytes.
//!
//! Keep only the samples (and side-band) of process 31451, streaming:
//!
//! ```
//! use perfdata_write::convert::ConvertOptions;
//! use perfdata_write::edit::{self, Selection, Selectors, Strip};
//! # let dir = tempfile::tempdir()?; let output = dir.path().join("out.data");
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/strip-multi.data");
//! let only_pid = Strip::new(Selection {
//!     select: Selectors { pids: Some(vec![(31451, 31451)]), ..Default::default() },
//!     keep: true,
//!     ..Default::default()
//! });
//! let opts = ConvertOptions::default(); // same container, compression and byte order
//! let report = edit::run_file(input, &output, &opts, vec![Box::new(only_pid)])?;
//! let samples = &report.edits.unwrap().records[&perfdata_core::record::RecordType::Sample];
//! assert_eq!((samples.kept, samples.removed), (298, 290)); // as perf script counts them
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Read a tree, rename a comm, write it back:
//!
//! ```
//! use perfdata_core::record::{PaddedString, RecordBody};
//! use perfdata_core::{PerfData, ReadOptions};
//! use perfdata_write::WriteTree;
//! # let dir = tempfile::tempdir()?; let output = dir.path().join("out.data");
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-compressed.data");
//! // Contents: the records inside compressed records, compressed again when written.
//! let mut tree = PerfData::read_with(input, ReadOptions::Contents)?;
//! for entry in &mut tree.records {
//!     if let RecordBody::Comm(comm) = &mut entry.record.body {
//!         if comm.comm.as_str_lossy() == "perfdata-spin" {
//!             comm.comm = PaddedString::new("renamed");
//!         }
//!     }
//! }
//! tree.write_file(&output)?;
//! let renamed = PerfData::read_with(&output, ReadOptions::Contents)?;
//! assert!(renamed.records.iter().any(|e| matches!(&e.record.body,
//!     RecordBody::Comm(c) if c.comm.as_str_lossy() == "renamed")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Below them:
//! - [`FileWriter`] writes file mode, streaming the data section and writing the header
//!   last; it refuses what would make an invalid file (a pipe stream's header records in
//!   the data section, compressed records without the COMPRESSED feature, events perf
//!   6.1 refuses in a file: [`perfdata_core::perf_open`]) and derives
//!   SAMPLE_TIME and the AUXTRACE index itself.
//! - [`PipeWriter`] writes pipe mode without seeking; it refuses what perf cannot read
//!   (a compressed record before the COMPRESSED feature, a record naming an event
//!   before any HEADER_ATTR). Both writers refuse a record whose size field or payload
//!   is not as long as it says. [`compress::Compressor`] makes COMPRESSED records.
//! - [`convert`] is the pipeline behind `perfdata convert`, under both ways above.
//! - [`output::AtomicOutput`] writes to a temp file beside the target and renames it
//!   into place only when everything succeeded.
#![warn(missing_docs)]

pub mod compress;
pub mod convert;
pub mod edit;
pub mod error;
pub mod file;
mod framing;
pub mod output;
pub mod pipe;
mod range_copy;

pub use convert::{write_tree, WriteTree};
pub use error::{Result, WriteError};
pub use file::{AttrEntry, AuxtracePosition, FileWriter};
pub use pipe::PipeWriter;
