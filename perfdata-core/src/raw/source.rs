//! The one interface of the three record sources (a slice, a stream, a decompressor):
//! frame the next record as a [`Span`] into the source's own buffer. A span, unlike a
//! borrowed record, can be held while the reader updates its metadata or decides which
//! source's buffer to read; [`RecordSource::next_record`] is the borrowed form.
//!
//! A record larger than [`super::MAX_BUFFERED`] is framed as its `header.size` bytes
//! with the payload left in the input (sans-IO: the caller decides whether the payload
//! is wanted): [`RecordSource::payload_chunk`] hands it out piece by piece, and the next
//! `advance` skips whatever was not taken.

use binrw::Endian;

use super::{RawRecord, Span};
use crate::error::Result;

/// A source of framed records.
pub trait RecordSource {
    /// Frame the next record, reading or expanding more input as the source needs.
    /// `Ok(None)` at the end (for a [`super::Decompressor`]: until it is fed more).
    fn advance(&mut self) -> Result<Option<Span>>;

    /// The buffer that the spans returned by [`RecordSource::advance`] index into; valid
    /// until the next call to `advance`.
    fn buffer(&self) -> &[u8];

    /// The byte order records are framed in.
    fn endian(&self) -> Endian;

    /// Bytes of the last framed record's payload not yet handed out (its
    /// [`RawRecord::rest`], less what [`RecordSource::payload_chunk`] gave). The next
    /// `advance` skips them.
    fn payload_left(&self) -> u64;

    /// The next part of the last record's unread payload, at most
    /// [`super::PAYLOAD_CHUNK`] bytes; empty when none is left or, for a
    /// [`super::Decompressor`], when it must be fed the next compressed record first.
    fn payload_chunk(&mut self) -> Result<&[u8]>;

    /// The next record, borrowing the source's buffer until the next call.
    fn next_record(&mut self) -> Result<Option<RawRecord<'_>>> {
        let endian = self.endian();
        Ok(self
            .advance()?
            .map(move |span| span.record(self.buffer(), endian)))
    }
}
