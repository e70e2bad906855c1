//! Records of bytes held whole: a memory-mapped data section, a pipe stream in a file, or
//! a buffer in memory.

use std::ops::{Deref, Range};

use binrw::Endian;

use super::StreamEnd;
use super::{
    frame_within, header_of, plausible_header, Frame, Origin, RawRecord, RecordSource, Span,
    MAX_BUFFERED, PAYLOAD_CHUNK,
};
use crate::error::{Error, Result};

/// Records of `range` of a byte buffer `B` (a slice, or a shared mapping).
pub struct SliceRecords<B> {
    data: B,
    range: Range<usize>,
    /// Position of the next record, relative to `range.start`.
    pos: usize,
    /// File offset of `data[range.start]`.
    base: u64,
    endian: Endian,
    stream: usize,
    /// Bytes that cannot start a record end the source with a warning (pipe streams,
    /// unfinished files) instead of an error (data sections).
    junk_allowed: bool,
    finished: Option<StreamEnd>,
    /// The streamed payload of the last record: where its unread part starts (relative
    /// to `range.start`) and how long it is.
    payload_pos: usize,
    payload_left: u64,
    /// The largest record handed out whole (see [`super::frame_within`]).
    limit: u64,
}

impl<'a> SliceRecords<&'a [u8]> {
    /// Records of all of `data`, whose first byte is at file offset `base`.
    pub fn new(data: &'a [u8], base: u64, endian: Endian, stream: usize) -> Self {
        let len = data.len();
        SliceRecords::over(data, 0..len, endian, stream).based_at(base)
    }

    /// Bytes not yet framed.
    pub fn remaining(&self) -> &'a [u8] {
        let data: &'a [u8] = self.data;
        &data[self.range.start + self.pos..self.range.end]
    }
}

impl<B: Deref<Target = [u8]>> SliceRecords<B> {
    /// Records of `data[range]`; a record's offset is its index in `data`.
    pub fn over(data: B, range: Range<usize>, endian: Endian, stream: usize) -> Self {
        SliceRecords {
            base: range.start as u64,
            data,
            range,
            pos: 0,
            endian,
            stream,
            junk_allowed: false,
            finished: None,
            payload_pos: 0,
            payload_left: 0,
            limit: MAX_BUFFERED,
        }
    }

    /// Hand out records of more than `limit` bytes (payload included) as their header
    /// and a streamed payload, for a source read beside others (see
    /// [`super::frame_within`]); [`MAX_BUFFERED`] at most.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit.clamp(super::MIN_STREAM_BUFFER, MAX_BUFFERED);
    }

    /// Index in the backing buffer where the records end.
    pub fn backing_end(&self) -> usize {
        self.range.end
    }

    fn based_at(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// End at bytes that cannot start a record, as a stream may (see [`StreamEnd`]).
    pub fn allow_junk(&mut self) {
        self.junk_allowed = true;
    }

    /// Whether junk ends the records instead of failing.
    pub fn junk_allowed(&self) -> bool {
        self.junk_allowed
    }

    /// File offset of the next record.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The buffer the slice is part of (what the range indexes into).
    pub fn backing(&self) -> &B {
        &self.data
    }

    /// Index in the backing buffer of the next record.
    pub fn backing_pos(&self) -> usize {
        self.range.start + self.pos
    }

    /// Index in the backing buffer of the next streamed payload byte.
    pub fn payload_backing_pos(&self) -> usize {
        self.range.start + self.payload_pos
    }

    /// How the records ended, once `advance` has returned `Ok(None)`.
    pub fn end(&self) -> Option<&StreamEnd> {
        self.finished.as_ref()
    }

    /// Skip the rest: after a truncated last record, say.
    pub fn skip_rest(&mut self) {
        self.pos = self.range.len();
    }

    /// The fast lane of a walk: hand `f` the kernel's records that follow (types below
    /// [`RecordType::USER_TYPE_START`](crate::record::RecordType::USER_TYPE_START):
    /// no payload, whole within the buffer), for at most `max_bytes`, and stop before
    /// anything else (a record of perf's own, one cut short or too small, junk), which
    /// [`RecordSource::advance`] frames and judges as always. One bounds check and one
    /// header read per record. Returns how many records `f` got; `f` returning `false`
    /// stops the run after its record.
    #[inline]
    pub fn kernel_records<E>(
        &mut self,
        max_bytes: usize,
        mut f: impl FnMut(RawRecord<'_>) -> std::result::Result<bool, E>,
    ) -> std::result::Result<usize, E> {
        self.payload_left = 0;
        let data = &self.data[self.range.clone()];
        let stop = data.len().min(self.pos.saturating_add(max_bytes));
        let mut n = 0;
        while self.pos + super::RecordHeader::SIZE <= stop {
            let bytes = &data[self.pos..];
            let header = header_of(bytes, self.endian);
            let size = header.size as usize;
            if header.type_ >= crate::record::RecordType::USER_TYPE_START
                || size < super::RecordHeader::SIZE
                || size > bytes.len()
            {
                break;
            }
            let offset = self.base + self.pos as u64;
            self.pos += size;
            n += 1;
            let raw = RawRecord {
                header,
                offset,
                bytes: &bytes[..size],
                payload: &[],
                rest: 0,
                origin: Origin::Top,
                stream: self.stream,
            };
            if !f(raw)? {
                break;
            }
        }
        Ok(n)
    }
}

impl<B: Deref<Target = [u8]>> RecordSource for SliceRecords<B> {
    #[inline]
    fn advance(&mut self) -> Result<Option<Span>> {
        let data = &self.data[self.range.clone()];
        // An unread streamed payload is skipped by moving on: it is all in `data`.
        self.payload_left = 0;
        if self.pos >= data.len() {
            self.finished.get_or_insert(StreamEnd::Clean);
            return Ok(None);
        }
        let rest = &data[self.pos..];
        let offset = self.base + self.pos as u64;
        let err = match frame_within(rest, self.endian, self.limit) {
            Frame::Complete { size, payload } => {
                let span = Span {
                    pos: self.pos,
                    size,
                    payload,
                    rest: 0,
                    offset,
                    origin: Origin::Top,
                    stream: self.stream,
                };
                self.pos += size + payload;
                return Ok(Some(span));
            }
            Frame::Large { size, payload } if (rest.len() - size) as u64 >= payload => {
                self.payload_pos = self.pos + size;
                self.payload_left = payload;
                let span = Span {
                    pos: self.pos,
                    size,
                    payload: 0,
                    rest: payload,
                    offset,
                    origin: Origin::Top,
                    stream: self.stream,
                };
                // Within `data` (checked above), so it fits a usize.
                self.pos += size + payload as usize;
                return Ok(Some(span));
            }
            Frame::Large { size, payload } => {
                let context = format!("record {}", header_of(rest, self.endian).record_type());
                Error::truncated(
                    offset,
                    context,
                    (size as u64).saturating_add(payload),
                    rest.len() as u64,
                )
            }
            Frame::Incomplete { needed } => {
                let context = format!("record {}", header_of(rest, self.endian).record_type());
                Error::truncated(offset, context, needed, rest.len() as u64)
            }
            Frame::Invalid(problem) => Error::format(offset, "record header", problem),
        };
        if self.junk_allowed && !plausible_header(rest, self.endian) {
            self.finished = Some(StreamEnd::Junk {
                offset,
                len: rest.len() as u64,
            });
            self.pos = data.len();
            return Ok(None);
        }
        Err(err)
    }

    #[inline]
    fn buffer(&self) -> &[u8] {
        &self.data[self.range.clone()]
    }

    fn endian(&self) -> Endian {
        self.endian
    }

    fn payload_left(&self) -> u64 {
        self.payload_left
    }

    fn payload_chunk(&mut self) -> Result<&[u8]> {
        let n = self.payload_left.min(PAYLOAD_CHUNK as u64) as usize;
        let at = self.range.start + self.payload_pos;
        self.payload_pos += n;
        self.payload_left -= n as u64;
        Ok(&self.data[at..at + n])
    }
}

impl<'a> Iterator for SliceRecords<&'a [u8]> {
    type Item = Result<RawRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished.is_some() {
            return None;
        }
        match self.advance() {
            Ok(Some(span)) => {
                let data: &'a [u8] = self.data;
                Some(Ok(span.record(&data[self.range.clone()], self.endian)))
            }
            Ok(None) => None,
            Err(e) => {
                self.finished = Some(StreamEnd::Clean);
                Some(Err(e))
            }
        }
    }
}
