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

pub mod attr;
pub mod bounded;
pub mod codec;
pub mod error;
pub mod feature;
pub mod header;
pub mod input;
pub mod meta;
pub mod names;
pub mod raw;
pub mod reader;
pub mod record;
pub mod stats;
pub mod text;
pub mod tracing;
pub mod tree;

pub use binrw::Endian;
pub use error::{Error, Problem, Result};

pub use meta::{ContainerKind, EventAttr, Metadata, Warning};
pub use reader::{Item, PerfReader, ReadOptions};
pub use tree::{Entry, PerfData};
