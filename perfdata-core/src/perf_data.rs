//! The owned tree: a whole recording in memory, built from the same record iterator as
//! streaming reads. Change its records, attrs and features, then write it with
//! `perfdata_write::TreeSource` (perfdata-write), which recomputes what the records
//! determine: offsets, record sizes, SAMPLE_TIME, the AUXTRACE index, ID_INDEX.

use std::path::Path;

use crate::error::Result;
use crate::meta::Metadata;
use crate::raw::{Origin, OwnedRecord};
use crate::reader::{PerfReader, ReadOptions};
use crate::record::{Record, RecordType};

/// A record of the tree with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// File offset (for records from compressed containers: the container's offset).
    pub offset: u64,
    /// 0 for the main data, n + 1 for `data.n` of a directory.
    pub stream: usize,
    /// Whether it came out of a compressed record (written compressed again when the
    /// output keeps compression).
    pub origin: Origin,
    /// The decoded record.
    pub record: Record,
}

impl Entry {
    /// A record to add to a tree: it goes where the records around it go (compressed
    /// if they are).
    pub fn new(record: Record) -> Self {
        Entry {
            offset: 0,
            stream: 0,
            origin: Origin::Top,
            record,
        }
    }
}

/// A compressed record that held some of a tree's records when it was read, kept as
/// stored: what lets the tree, unchanged, be written back byte for byte (compressing
/// its records again would not give perf's bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadContainer {
    /// Index in [`PerfData::records`] of the first record read after it.
    pub at: usize,
    /// How many records came out of it then (from `at` on; a record that starts in one
    /// container and ends in the next comes out of the next).
    pub contents: usize,
    /// The COMPRESSED or COMPRESSED2 record.
    pub record: OwnedRecord,
}

/// A whole recording: its metadata and every record, decoded.
///
/// `meta` is the truth for the attrs (`meta.attrs()`, with their ids), the features
/// (`meta.features`) and old event types; `records` for the data. A pipe stream's
/// header records (HEADER_ATTR, HEADER_FEATURE, ...) are kept among the records, and are
/// written as they are only while they say what `meta` says.
///
/// ```
/// use perfdata_core::PerfData;
/// use perfdata_core::record::RecordBody;
///
/// let tree = PerfData::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// let comms: Vec<String> = tree
///     .records
///     .iter()
///     .filter_map(|e| match &e.record.body {
///         RecordBody::Comm(c) => Some(c.comm.as_str_lossy()),
///         _ => None,
///     })
///     .collect();
/// assert_eq!(comms, ["perf-exec", "perfdata-spin"]);
/// # Ok::<(), perfdata_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PerfData {
    /// The recording's metadata.
    pub meta: Metadata,
    /// Every record, in reading order.
    pub records: Vec<Entry>,
    /// The first and last sample time as read: when the samples still span it, the
    /// input's SAMPLE_TIME stands (perf may state a wider span, or zeros).
    read_span: Option<(u64, u64)>,
    /// The compressed records of a tree read with its contents.
    containers: Vec<ReadContainer>,
}

impl PerfData {
    /// Read `path` with its records as stored: compressed records kept whole (written
    /// back as they were), but for a directory's, which each stream compressed on its
    /// own and which a file made of the directory holds compressed again. To change the
    /// records inside compressed records, read with [`ReadOptions::Contents`].
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let opts = match path.is_dir() {
            true => ReadOptions::Contents,
            false => ReadOptions::Containers,
        };
        Self::read_with(path, opts)
    }

    /// Read `path`: with `ReadOptions::Contents` the tree holds the records inside
    /// compressed records (and keeps the containers aside, see
    /// [`PerfData::read_containers`]), with `Containers` the containers as stored. A tree
    /// holds each record once, so `ContainersAndContents` reads as `Contents`.
    pub fn read_with(path: impl AsRef<Path>, opts: ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        // A directory's streams are each compressed on their own: a file made of them
        // is compressed again whatever, so its containers are not kept.
        let opts = match opts {
            ReadOptions::Contents if path.is_dir() => ReadOptions::Contents,
            ReadOptions::Contents => ReadOptions::ContainersAndContents,
            other => other,
        };
        Self::from_reader(PerfReader::open_with(path, opts)?)
    }

    /// Drain `reader` into a tree. Records whose bytes do not fit their type's layout are
    /// kept raw, with a warning in `meta.warnings`. A reader that returns compressed
    /// records and their contents (`ContainersAndContents`) gives a tree of the contents
    /// with the containers kept aside.
    pub fn from_reader(mut reader: PerfReader) -> Result<Self> {
        let mut records = Vec::new();
        let mut containers: Vec<ReadContainer> = Vec::new();
        let mut warnings = Vec::new();
        let mut span = None;
        let aside = reader.options() == ReadOptions::ContainersAndContents;
        while let Some(item) = reader.next_record()? {
            if aside && item.raw.is_compressed() {
                containers.push(ReadContainer {
                    at: records.len(),
                    contents: 0,
                    record: item.raw.to_owned_record(),
                });
                continue;
            }
            if let (Origin::Decompressed { .. }, Some(c)) = (item.raw.origin, containers.last_mut())
            {
                c.contents += 1;
            }
            if item.raw.record_type() == RecordType::Sample {
                span = widen(span, item.locate().time);
            }
            let (record, err) = item.decode_or_raw();
            if let Some(err) = err {
                warnings.push((item.raw.offset, format!("record kept as raw bytes: {err}")));
            }
            records.push(Entry {
                offset: item.raw.offset,
                stream: item.raw.stream,
                origin: item.raw.origin,
                record,
            });
        }
        let mut meta = reader.into_meta();
        for (offset, message) in warnings {
            meta.warn(Some(offset), message);
        }
        Ok(PerfData {
            meta,
            records,
            read_span: span,
            containers,
        })
    }

    /// A tree made from parts (a new recording, or one read otherwise): its SAMPLE_TIME
    /// is the span of its samples when it is written.
    pub fn new(meta: Metadata, records: Vec<Entry>) -> Self {
        PerfData {
            meta,
            records,
            read_span: None,
            containers: Vec::new(),
        }
    }

    /// The first and last sample time when the tree was read (`None` for a tree made
    /// with [`PerfData::new`], or without timed samples).
    pub fn read_sample_span(&self) -> Option<(u64, u64)> {
        self.read_span
    }

    /// The compressed records the tree's records came out of, as read (empty unless it
    /// was read with `ReadOptions::Contents` from a file or stream with compressed
    /// records). A writer may copy them instead of compressing again, when the records
    /// are still what came out of them where they came out.
    pub fn read_containers(&self) -> &[ReadContainer] {
        &self.containers
    }
}

/// `span` widened to hold `time`.
pub fn widen(span: Option<(u64, u64)>, time: Option<u64>) -> Option<(u64, u64)> {
    match (span, time) {
        (Some((a, b)), Some(t)) => Some((a.min(t), b.max(t))),
        (None, Some(t)) => Some((t, t)),
        (span, None) => span,
    }
}
