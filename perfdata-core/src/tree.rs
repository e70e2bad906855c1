//! The owned tree: a whole recording in memory, built from the same record iterator as
//! streaming reads.

use std::path::Path;

use crate::error::Result;
use crate::meta::Metadata;
use crate::reader::{PerfReader, ReadOptions};
use crate::record::Record;

/// A record of the tree with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// File offset (for records from compressed containers: the container's offset).
    pub offset: u64,
    /// 0 for the main data, n + 1 for `data.n` of a directory.
    pub stream: usize,
    /// The decoded record.
    pub record: Record,
}

/// A whole recording: its metadata and every record, decoded.
#[derive(Debug, Clone)]
pub struct PerfData {
    /// The recording's metadata.
    pub meta: Metadata,
    /// Every record, in reading order.
    pub records: Vec<Entry>,
}

impl PerfData {
    /// Read `path` with its records as stored (compressed containers kept whole).
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_with(path, ReadOptions::Containers)
    }

    /// Read `path`: with `ReadOptions::Contents` the tree holds the records inside
    /// compressed records, with `Containers` the containers as stored. A tree holds each
    /// record once, so `ContainersAndContents` reads as `Contents`.
    pub fn read_with(path: impl AsRef<Path>, opts: ReadOptions) -> Result<Self> {
        // A tree holds each record once: the containers, or what they hold.
        let opts = match opts {
            ReadOptions::ContainersAndContents => ReadOptions::Contents,
            other => other,
        };
        Self::from_reader(PerfReader::open_with(path, opts)?)
    }

    /// Drain `reader` into a tree. Records whose bytes do not fit their type's layout are
    /// kept raw, with a warning in `meta.warnings`.
    pub fn from_reader(mut reader: PerfReader) -> Result<Self> {
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        while let Some(item) = reader.next_record()? {
            let (record, err) = item.decode_or_raw();
            if let Some(err) = err {
                warnings.push((item.raw.offset, format!("record kept as raw bytes: {err}")));
            }
            records.push(Entry {
                offset: item.raw.offset,
                stream: item.raw.stream,
                record,
            });
        }
        let mut meta = reader.into_meta();
        for (offset, message) in warnings {
            meta.warn(Some(offset), message);
        }
        Ok(PerfData { meta, records })
    }
}
