//! Where a conversion's records come from: the reader, or for a directory written as a
//! file, its streams merged by time ([`super::merge`]).

use perfdata_core::raw::OwnedRecord;
use perfdata_core::{ContainerKind, Metadata, PerfReader, RecordRef};

use super::merge::MergedStreams;
use crate::error::Result;

/// A source of input records with the metadata they are read with.
pub(super) enum Source {
    /// The reader's records in its order (a directory's streams one after the other).
    Reader {
        reader: PerfReader,
        /// A record read ahead (see [`Source::read_metadata_ahead`]).
        held: Option<OwnedRecord>,
    },
    /// A directory's streams, merged by time.
    Merged(MergedStreams),
}

impl Source {
    /// The reader's records in its order.
    pub fn in_order(reader: PerfReader) -> Self {
        Source::Reader { reader, held: None }
    }

    /// The records a file is made of: a directory's streams merged by time.
    pub fn for_file(reader: PerfReader) -> Result<Self> {
        Ok(match reader.meta().container {
            ContainerKind::Directory => Source::Merged(MergedStreams::new(reader)?),
            ContainerKind::File | ContainerKind::Pipe => Source::in_order(reader),
        })
    }

    /// The metadata as of the last record read.
    pub fn meta(&self) -> &Metadata {
        match self {
            Source::Reader { reader, .. } => reader.meta(),
            Source::Merged(m) => m.meta(),
        }
    }

    /// In pipe mode the attrs arrive as records before the data: read the metadata
    /// records up to the first data record, which is held for [`Source::for_each`].
    /// Returns how many records were read past.
    pub fn read_metadata_ahead(&mut self) -> Result<u64> {
        let Source::Reader { reader, held } = self else {
            return Ok(0);
        };
        if reader.meta().container != ContainerKind::Pipe {
            return Ok(0);
        }
        let mut skipped = 0;
        while let Some(item) = reader.next_record()? {
            if item.raw.record_type().is_metadata() {
                skipped += 1;
                continue;
            }
            *held = Some(item.raw.to_owned_record());
            break;
        }
        Ok(skipped)
    }

    /// Give every (remaining) record to `f`, in order, as [`Piece::Record`]; when `f`
    /// returns true (it wrote a record whose payload is still in the input), the rest
    /// of that payload follows as [`Piece::Payload`]s.
    pub fn for_each(&mut self, mut f: impl FnMut(Piece<'_, '_>) -> Result<bool>) -> Result<()> {
        match self {
            Source::Reader { reader, held } => {
                if let Some(rec) = held.take() {
                    let meta = reader.meta();
                    let item = RecordRef::new(rec.as_raw(meta.endian), meta);
                    if f(Piece::Record(&item))? {
                        stream_rest(reader, &mut f)?;
                    }
                }
                reader.for_each(f)?;
            }
            Source::Merged(merged) => {
                while let Some(rec) = merged.next_record()? {
                    let meta = merged.meta();
                    let item = RecordRef::new(rec.as_raw(meta.endian), meta);
                    if f(Piece::Record(&item))? {
                        stream_rest(merged.last_stream(), &mut f)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a source hands on: a record, or more of the payload of the last one.
pub(super) use perfdata_core::Piece;

/// Hand the rest of the payload of the record `reader` returned last to `f`.
fn stream_rest(
    reader: &mut PerfReader,
    f: &mut impl FnMut(Piece<'_, '_>) -> Result<bool>,
) -> Result<()> {
    while let Some(chunk) = reader.payload_chunk()? {
        f(Piece::Payload(chunk))?;
    }
    Ok(())
}
