//! perfdata-core: read Linux `perf.data` files.
//!
//! Two layers:
//! - [`raw`] frames records as byte slices, locating a record's id, time, pid, tid and
//!   cpu without decoding the rest: the fast path for counting, filtering and copying.
//! - [`record`], [`feature`], [`attr`] and [`header`] are binrw models that decode every
//!   record and header feature and encode them back to the same bytes.
//!
//! [`reader::PerfReader`] opens files, pipe streams (stdin too) and perf.data
//! directories, and [`tree::PerfData`] holds a whole file as an owned tree built from
//! the same record iterator.
//!
//! ```no_run
//! use perfdata_core::{record::RecordBody, PerfReader};
//!
//! let mut reader = PerfReader::open("perf.data")?; // a file, a directory, or "-"
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

pub mod attr;
pub(crate) mod bounded;
pub mod buildids;
pub mod check;
mod codec;
mod error;
pub mod feature;
pub mod header;
pub mod info;
pub(crate) mod input;
mod meta;
mod names;
pub mod raw;
mod reader;
pub mod record;
pub mod stats;
mod text;
pub mod tracing;
mod tree;
mod truncated;

pub use binrw::Endian;
pub use codec::{decode, encode, try_encode, u16_at, u32_at, u64_at};
pub use error::{Error, Problem, Result};
pub use text::c_str_lossy;

pub use meta::{ContainerKind, EventAttr, Metadata, Warning};
pub use reader::{Item, PerfReader, ReadOptions};
pub use tree::{Entry, PerfData};
