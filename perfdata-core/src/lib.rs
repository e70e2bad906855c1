//! perfdata-core: read Linux `perf.data` files.
//!
//! Two layers:
//! - [`raw`] frames records as byte slices, locating a record's id, time, pid, tid and
//!   cpu without decoding the rest: the fast path for counting, filtering and copying.
//! - [`record`], [`feature`], [`attr`] and [`header`] are binrw models that decode every
//!   record and header feature and encode them back to the same bytes.
//!
//! [`PerfReader`] opens files, pipe streams (stdin too) and perf.data directories, and
//! returns every record once (the records inside compressed records, not the
//! containers). [`PerfData`] holds a whole recording as an owned tree built from the
//! same record iterator.
//!
//! ```
//! use perfdata_core::{record::RecordBody, PerfReader};
//!
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-callgraph-fp.data");
//! let mut reader = PerfReader::open(input)?; // a file, a directory, or "-"
//! while let Some(item) = reader.next_record()? {
//!     let at = item.locate(); // event, id, time, pid, tid, cpu: no decoding
//!     if let RecordBody::Sample(s) = item.decode()?.body {
//!         println!("{:?} {:?} {:?}", at.time, s.ip, s.callchain.map(|c| c.ips.len()));
//!     }
//! }
//! for w in &reader.meta().warnings {
//!     eprintln!("warning: {w}");
//! }
//! # Ok::<(), perfdata_core::Error>(())
//! ```
//!
//! Writing is perfdata-write's: edits streamed from a reader into a new file, or a tree
//! changed and written back. Keep only the samples (and side-band) of process 31451:
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
//! Conversion::new(Input::open(input)?).edit(only_pid).write(Sink::path(&output)?)?;
//! let mut reader = perfdata_core::PerfReader::open(&output)?;
//! while let Some(item) = reader.next_record()? {
//!     if item.raw.record_type() == perfdata_core::record::RecordType::Sample {
//!         assert_eq!(item.locate().pid, Some(31451));
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Read a tree, rename a comm, write it back:
//!
//! ```
//! use perfdata_core::record::{PaddedString, RecordBody};
//! use perfdata_core::PerfData;
//! use perfdata_write::{Conversion, Sink, TreeSource};
//! # let dir = tempfile::tempdir()?; let output = dir.path().join("out.data");
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
//! let mut tree = PerfData::read(input)?; // compressed records? use read_with(.., Contents)
//! for entry in &mut tree.records {
//!     if let RecordBody::Comm(comm) = &mut entry.record.body {
//!         if comm.comm.as_str_lossy() == "perfdata-spin" {
//!             comm.comm = PaddedString::new("renamed");
//!         }
//!     }
//! }
//! // Offsets, sizes and derived features recomputed:
//! Conversion::new(TreeSource::new(&tree)).write(Sink::path(&output)?)?;
//! assert!(PerfData::read(&output)?.records.iter().any(|e| matches!(&e.record.body,
//!     RecordBody::Comm(c) if c.comm.as_str_lossy() == "renamed")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod attr;
pub(crate) mod bounded;
mod codec;
mod error;
pub mod feature;
pub mod header;
pub(crate) mod input;
pub mod mark;
mod meta;
pub mod names;
pub mod ordered;
mod perf_data;
pub mod perf_open;
pub mod raw;
mod reader;
pub mod record;
pub mod select;
pub mod text;
pub mod tracing;
mod truncated;

pub use binrw::Endian;
pub use codec::{decode, encode, u16_at, u32_at, u64_at};
pub use error::{Error, Problem, Result};
pub use text::c_str_lossy;

pub use meta::{ContainerKind, EventAttr, Metadata, Warning};
pub use perf_data::{Entry, PerfData, ReadContainer};
pub use reader::{InputBytes, PerfReader, Piece, ReadOptions, RecordRef};
