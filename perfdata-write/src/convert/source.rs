//! Where a conversion's records come from: the [`Source`] trait, and [`Input`], the
//! recording at a path (a file, a directory, stdin) or a reader already open. Several
//! inputs merged by time are a source too: a k-way merge pulls from each of its inputs
//! with [`Source::next_record`] (a directory's streams are merged so, by `merge`).

use std::fs::File;

use perfdata_core::raw::OwnedRecord;
use perfdata_core::{ContainerKind, Metadata, PerfData, PerfReader, Piece, ReadOptions, RecordRef};

use super::merge::MergedStreams;
use crate::error::{Result, WriteError};

/// What a conversion needs of its source, known once the plan is made and before the
/// first record is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    /// The records inside compressed records rather than the containers (a change of
    /// byte order or compression, a stream made a file, edits).
    pub contents: bool,
    /// Records in time order where the input holds several streams (a directory
    /// written as a file, or edited by edits that follow perf's time order).
    pub time_order: bool,
}

/// A source of records with the metadata they are read with.
///
/// A conversion asks [`Source::meta`] for the input's metadata (to make its
/// [`Plan`](super::Plan)), calls [`Source::prepare`] once, then takes every record with
/// [`Source::for_each`]. A source made of other sources (a k-way merge) pulls their
/// records one at a time with [`Source::next_record`] and [`Source::payload_chunk`].
pub trait Source {
    /// The metadata as of the last record read (before any: the input's header, or a
    /// stream's first metadata records).
    fn meta(&self) -> &Metadata;

    /// Make the source hand out its records as `needs` says; an error where it cannot
    /// (a reader that keeps compressed records and cannot be opened again). Called
    /// before the first record, perhaps more than once with the same needs.
    fn prepare(&mut self, needs: Needs) -> Result<()>;

    /// The next record, `None` at the end.
    fn next_record(&mut self) -> Result<Option<RecordRef<'_>>>;

    /// More of the payload of the record [`Source::next_record`] returned last, when it
    /// is larger than a source holds ([`perfdata_core::raw::RawRecord::rest`]).
    fn payload_chunk(&mut self) -> Result<Option<&[u8]>>;

    /// Give every (remaining) record to `f`, in order, as [`Piece::Record`]; when `f`
    /// returns true (it wrote a record whose payload is still in the input), the rest
    /// of that payload follows as [`Piece::Payload`]s. The same as a loop over
    /// [`Source::next_record`]; a source may have a faster way.
    fn for_each<F>(&mut self, f: F) -> Result<()>
    where
        F: FnMut(Piece<'_, '_>) -> Result<bool>,
        Self: Sized,
    {
        each_by_pull(self, f)
    }

    /// The input file, when the source is one file read as it is stored: unchanged
    /// runs of its records are then copied into a file output by the kernel.
    fn input_file(&self) -> Option<&File> {
        None
    }

    /// An owned tree to write back, when the source is one ([`TreeSource`]): its
    /// records are encoded from the tree, and the compressed records it was read from
    /// written back as they were.
    fn tree(&self) -> Option<&PerfData> {
        None
    }
}

/// A pipe stream's metadata records (its attrs, features), read ahead up to its first
/// data record, which is returned to be handled first; `each` is called for every
/// metadata record read.
pub(crate) fn read_metadata_ahead<S: Source + ?Sized>(
    source: &mut S,
    mut each: impl FnMut(),
) -> Result<Option<OwnedRecord>> {
    if source.meta().container != ContainerKind::Pipe {
        return Ok(None);
    }
    while let Some(item) = source.next_record()? {
        if !item.raw.record_type().is_metadata() {
            return Ok(Some(item.raw.to_owned_record()));
        }
        each();
    }
    Ok(None)
}

/// [`Source::for_each`] as a loop over [`Source::next_record`].
fn each_by_pull<S: Source + ?Sized>(
    source: &mut S,
    mut f: impl FnMut(Piece<'_, '_>) -> Result<bool>,
) -> Result<()> {
    while let Some(item) = source.next_record()? {
        if f(Piece::Record(&item))? {
            while let Some(chunk) = source.payload_chunk()? {
                f(Piece::Payload(chunk))?;
            }
        }
    }
    Ok(())
}

/// The records of an input as they are read.
enum Feed {
    /// The reader's records in its order (a directory's streams one after the other).
    Reader(PerfReader),
    /// A directory's streams, merged by time.
    Merged(MergedStreams),
    /// Between the two (only while [`Input::prepare`] turns one into the other).
    Gone,
}

/// The recording at a path (a file, a directory, or `-` for stdin), or a reader
/// already open, as a conversion's [`Source`].
pub struct Input {
    feed: Feed,
    /// Whether the input can be opened again (to expand compressed records).
    reopen: bool,
}

impl Input {
    /// Open `path` (a file, a directory, or `-` for stdin). Compressed records are
    /// expanded only when the conversion needs them (an open maps the file and starts
    /// its mapping helper: opening once more cost an identity conversion of a 60 MiB
    /// file 3 ms of its 35); stdin can be read only once, and its records are always
    /// expanded (compression is then redone as it was).
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<Input> {
        let path = path.as_ref();
        let stdin = path.as_os_str() == "-";
        let read = match stdin {
            true => ReadOptions::Contents,
            false => ReadOptions::Containers,
        };
        Ok(Input {
            feed: Feed::Reader(PerfReader::open_with(path, read)?),
            reopen: !stdin,
        })
    }

    /// Open `path` read as `read` says (see [`ReadOptions`]): for a caller that knows
    /// the conversion needs the records inside compressed records (edits do), opened
    /// once.
    pub fn open_with(path: impl AsRef<std::path::Path>, read: ReadOptions) -> Result<Input> {
        let path = path.as_ref();
        Ok(Input {
            feed: Feed::Reader(PerfReader::open_with(path, read)?),
            reopen: path.as_os_str() != "-",
        })
    }

    /// A reader already open: it is read as it was opened (a conversion that needs the
    /// records inside compressed records refuses one that keeps the containers).
    pub fn from_reader(reader: PerfReader) -> Input {
        Input {
            feed: Feed::Reader(reader),
            reopen: false,
        }
    }

    /// How far the input has been read, in bytes (see [`PerfReader::progress`]): the
    /// counter of the reader as [`Source::prepare`] left it (a directory's, whose
    /// streams merged by time count nothing).
    pub fn progress(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        match &self.feed {
            Feed::Reader(r) => r.progress(),
            Feed::Merged(m) => m.progress(),
            Feed::Gone => Default::default(),
        }
    }
}

impl Source for Input {
    fn meta(&self) -> &Metadata {
        match &self.feed {
            Feed::Reader(r) => r.meta(),
            Feed::Merged(m) => m.meta(),
            Feed::Gone => unreachable!("an input is never left taken apart"),
        }
    }

    fn prepare(&mut self, needs: Needs) -> Result<()> {
        let Feed::Reader(reader) = &mut self.feed else {
            return Ok(());
        };
        if needs.contents && !reader.options().decompress() {
            if !self.reopen {
                return Err(WriteError::unsupported(
                    None,
                    "this conversion needs the records inside compressed records: open \
                     the input with ReadOptions::Contents",
                ));
            }
            *reader = PerfReader::open_with(reader.path(), ReadOptions::Contents)?;
        }
        if needs.time_order && reader.meta().container == ContainerKind::Directory {
            let Feed::Reader(reader) = std::mem::replace(&mut self.feed, Feed::Gone) else {
                unreachable!("matched above");
            };
            self.feed = Feed::Merged(MergedStreams::new(reader)?);
        }
        Ok(())
    }

    fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        match &mut self.feed {
            Feed::Reader(r) => Ok(r.next_record()?),
            Feed::Merged(m) => m.next_record(),
            Feed::Gone => Ok(None),
        }
    }

    fn payload_chunk(&mut self) -> Result<Option<&[u8]>> {
        match &mut self.feed {
            Feed::Reader(r) => Ok(r.payload_chunk()?),
            Feed::Merged(m) => Ok(m.last_stream().payload_chunk()?),
            Feed::Gone => Ok(None),
        }
    }

    fn for_each<F>(&mut self, f: F) -> Result<()>
    where
        F: FnMut(Piece<'_, '_>) -> Result<bool>,
    {
        // The reader's fast lane for the kernel's records of a mapped file.
        if let Feed::Reader(r) = &mut self.feed {
            return r.for_each(f);
        }
        each_by_pull(self, f)
    }

    fn input_file(&self) -> Option<&File> {
        match &self.feed {
            Feed::Reader(r) => r.input_file(),
            _ => None,
        }
    }
}

/// An owned tree ([`PerfData`]) written back as a [`Source`]: its attrs and features
/// come from `tree.meta`, its records from `tree.records` written by a [`super::Conversion`].
pub struct TreeSource<'a> {
    tree: &'a PerfData,
    next: usize,
    /// The record handed out last, encoded.
    current: Option<OwnedRecord>,
}

impl<'a> TreeSource<'a> {
    /// The records of `tree`, in its order.
    pub fn new(tree: &'a PerfData) -> Self {
        TreeSource {
            tree,
            next: 0,
            current: None,
        }
    }
}

impl Source for TreeSource<'_> {
    fn meta(&self) -> &Metadata {
        &self.tree.meta
    }

    fn prepare(&mut self, _needs: Needs) -> Result<()> {
        Ok(())
    }

    fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        let Some(entry) = self.tree.records.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        let endian = self.tree.meta.endian;
        let bytes = entry.record.encode(endian)?;
        let (rec, payload) = super::stage::split_payload(&bytes, endian);
        let current = self.current.insert(OwnedRecord {
            bytes: rec.to_vec(),
            payload: payload.to_vec(),
            rest: 0,
            offset: entry.offset,
            origin: entry.origin,
            stream: entry.stream,
        });
        Ok(Some(RecordRef::new(
            current.as_raw(endian),
            &self.tree.meta,
        )))
    }

    fn payload_chunk(&mut self) -> Result<Option<&[u8]>> {
        Ok(None)
    }

    fn tree(&self) -> Option<&PerfData> {
        Some(self.tree)
    }
}
