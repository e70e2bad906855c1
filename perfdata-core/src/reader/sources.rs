//! The sources a reader composes: per data stream, the top-level records (a slice of
//! the shared mapping, or a stream) and the decompressor of its compressed records.

use std::io::Read;
use std::sync::Arc;

use binrw::Endian;

use crate::error::Result;
use crate::input::Bytes;
use crate::raw::{Decompressor, RecordSource, SliceRecords, Span, StreamEnd, StreamRecords};
use crate::truncated;

/// A shared mapping seen as its bytes (what [`SliceRecords`] walks).
pub(super) struct Shared(pub(super) Arc<Bytes>);

impl std::ops::Deref for Shared {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// Where a data stream's top-level records come from.
pub(super) enum Top {
    /// A data section or a whole headerless stream in memory (mapped pages before
    /// `released` have been given back).
    Slice {
        records: SliceRecords<Shared>,
        released: usize,
    },
    Stream(StreamRecords<Box<dyn Read>>),
}

impl Top {
    /// Records of `bytes[range]`.
    pub(super) fn slice(
        bytes: Arc<Bytes>,
        range: std::ops::Range<usize>,
        endian: Endian,
        stream: usize,
    ) -> Self {
        let released = range.start;
        bytes.start_walk(range.start);
        Top::Slice {
            records: SliceRecords::over(Shared(bytes), range, endian, stream),
            released,
        }
    }

    /// Whether the source may end anywhere, with a warning for a truncated record
    /// (streams, pipe files, unfinished files) rather than an error (data sections).
    pub(super) fn ends_anywhere(&self) -> bool {
        match self {
            Top::Slice { records, .. } => records.junk_allowed(),
            Top::Stream(_) => true,
        }
    }

    /// Read beside other streams: hold at most `limit` bytes of a record (see
    /// [`crate::raw::frame_within`]). A stream (stdin) is never one of several.
    pub(super) fn set_limit(&mut self, limit: u64) {
        if let Top::Slice { records, .. } = self {
            records.set_limit(limit);
        }
    }

    /// The source has ended: give back every mapped page it touched (a directory's
    /// finished streams would otherwise stay resident while the next ones are read).
    pub(super) fn release_all(&mut self) {
        if let Top::Slice { records, released } = self {
            let end = records.backing_end();
            records.backing().0.release(*released, end);
            *released = end;
        }
    }

    /// [`SliceRecords::kernel_records`] of a slice (what has gone by given back as the
    /// walk goes); none of a stream.
    #[inline]
    pub(super) fn kernel_records<E>(
        &mut self,
        f: impl FnMut(crate::raw::RawRecord<'_>) -> std::result::Result<bool, E>,
    ) -> std::result::Result<usize, E> {
        match self {
            Top::Slice { records, released } => {
                records
                    .backing()
                    .0
                    .release_behind(released, records.backing_pos());
                records.kernel_records(crate::input::RELEASE_CHUNK, f)
            }
            Top::Stream(_) => Ok(0),
        }
    }

    /// The bytes the records are read from, if they are a slice of them.
    pub(super) fn input_bytes(&self) -> Option<Arc<Bytes>> {
        match self {
            Top::Slice { records, .. } => Some(Arc::clone(&records.backing().0)),
            Top::Stream(_) => None,
        }
    }

    /// The mapped file the records are read from, if they are.
    pub(super) fn mapped_file(&self) -> Option<&std::fs::File> {
        match self {
            Top::Slice { records, .. } => records.backing().0.file(),
            Top::Stream(_) => None,
        }
    }

    pub(super) fn end(&self) -> Option<&StreamEnd> {
        match self {
            Top::Slice { records, .. } => records.end(),
            Top::Stream(s) => s.end(),
        }
    }
}

impl RecordSource for Top {
    #[inline]
    fn advance(&mut self) -> Result<Option<Span>> {
        match self {
            Top::Slice { records, released } => {
                // Records before the next one have been handed out and dropped.
                records
                    .backing()
                    .0
                    .release_behind(released, records.backing_pos());
                let next = records.advance();
                if matches!(&next, Err(e) if records.junk_allowed() && truncated::is_truncation(e))
                {
                    records.skip_rest();
                }
                next
            }
            Top::Stream(s) => s.advance(),
        }
    }

    #[inline]
    fn buffer(&self) -> &[u8] {
        match self {
            Top::Slice { records, .. } => records.buffer(),
            Top::Stream(s) => s.buffer(),
        }
    }

    fn endian(&self) -> Endian {
        match self {
            Top::Slice { records, .. } => records.endian(),
            Top::Stream(s) => s.endian(),
        }
    }

    fn payload_left(&self) -> u64 {
        match self {
            Top::Slice { records, .. } => records.payload_left(),
            Top::Stream(s) => s.payload_left(),
        }
    }

    fn payload_chunk(&mut self) -> Result<&[u8]> {
        match self {
            Top::Slice { records, released } => {
                // A payload of gigabytes read from the mapping is given back as it goes.
                records
                    .backing()
                    .0
                    .release_behind(released, records.payload_backing_pos());
                records.payload_chunk()
            }
            Top::Stream(s) => s.payload_chunk(),
        }
    }
}

/// One data stream: its top-level records and the decompressor of the compressed ones.
pub(super) struct Source {
    pub(super) top: Top,
    pub(super) decomp: Option<Decompressor>,
    pub(super) stream: usize,
    pub(super) name: String,
    /// What its decompressor may hold ahead (see [`Decompressor::with_limit`]).
    pub(super) limit: u64,
}

impl Source {
    pub(super) fn new(top: Top, stream: usize, name: String) -> Self {
        Source {
            top,
            decomp: None,
            stream,
            limit: crate::raw::MAX_BUFFERED,
            name,
        }
    }
}
