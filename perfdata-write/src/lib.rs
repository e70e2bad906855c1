//! perfdata-write: turn perfdata-core models and record streams back into perf.data.
//!
//! One way to run a conversion, [`Conversion`]: a [`Source`] (a recording at a path
//! or stdin, [`Input`]; an owned tree, [`TreeSource`]; several inputs merged), record
//! edits (keep, drop, replace; [`edit`]), options (container, compression, byte
//! order) and a [`Sink`] (a file put in place atomically, a stream, a writer). The
//! output is a file perf reads: offsets, record sizes and the features the records
//! determine recomputed; records stream through, in flat memory.
//!
//! Keep only the samples (and side-band) of process 31451, streaming:
//!
//! ```
//! use perfdata_write::edit::{Selection, Selectors, Strip};
//! use perfdata_write::{Conversion, Input, Sink};
//! # let dir = tempfile::tempdir()?; let output = dir.path().join("out.data");
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/strip-multi.data");
//! let only_pid = Strip::new(Selection {
//!     select: Selectors { pids: Some(vec![(31451, 31451)]), ..Default::default() },
//!     keep: true,
//!     ..Default::default()
//! });
//! // The same container, compression and byte order as the input.
//! let report = Conversion::new(Input::open(input)?)
//!     .edit(only_pid)
//!     .write(Sink::path(&output)?)?;
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
//! use perfdata_write::{Conversion, Sink, TreeSource};
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
//! Conversion::new(TreeSource::new(&tree)).write(Sink::path(&output)?)?;
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
//! - [`convert`] is the pipeline behind [`Conversion`] and its resolved [`convert::Plan`].
//! - [`output::AtomicOutput`] writes to a temp file beside the target and renames it
//!   into place only when everything succeeded; a [`Cancel`] flag stops a conversion
//!   (the binary's signal handlers set it).
#![warn(missing_docs)]

mod cancel;
pub mod compress;
pub mod convert;
pub mod edit;
pub mod error;
pub mod file;
mod framing;
pub mod merge;
pub mod output;
pub mod pipe;
mod range_copy;

pub use cancel::Cancel;
pub use convert::{Conversion, Input, Sink, Source, TreeSource};
pub use error::{Result, WriteError};
pub use file::{AttrEntry, AuxtracePosition, FileWriter};
pub use merge::{Merge, MergeOptions};
pub use pipe::PipeWriter;
