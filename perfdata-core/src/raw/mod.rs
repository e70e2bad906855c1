//! The raw layer: records framed as byte slices, with no per-field decoding.
//!
//! [`frame`] decides where one record ends (its header size plus, for
//! HEADER_TRACING_DATA and AUXTRACE, the payload that follows it). Three
//! [`RecordSource`]s frame with it: [`SliceRecords`] walks a memory-mapped data section,
//! [`StreamRecords`] a `Read` stream (stdin, a FIFO) with one reused buffer, and
//! [`Decompressor`] expands COMPRESSED and COMPRESSED2 records into the records they
//! hold; the reader composes them. [`locate`] finds a record's id, time, pid, tid and
//! cpu from fixed offsets.

mod decompress;
mod locate;
mod slice;
mod source;
mod stream;

#[cfg(test)]
mod large_tests;

use binrw::Endian;

use crate::codec::{u16_at, u32_at, u64_at};
use crate::error::Problem;
use crate::record::{RecordHeader, RecordType};

pub use decompress::{frame_window, window_log_max, Decompressor, WINDOW_LOG_MAX};
pub use locate::{locate, Located};
pub use slice::SliceRecords;
pub use source::RecordSource;
pub use stream::{StreamEnd, StreamRecords};

/// The largest record (header.size plus payload) a source buffers whole. A larger one
/// (AUXTRACE with gigabytes of Intel PT data, a huge HEADER_TRACING_DATA) comes out as its
/// `header.size` bytes, with its payload left in the input to be read in chunks of at
/// most [`PAYLOAD_CHUNK`] bytes ([`RecordSource::payload_chunk`]) or skipped: memory
/// stays bounded whatever a record claims.
pub const MAX_BUFFERED: u64 = 16 << 20;

/// The most bytes a source hands out of a streamed payload at once.
pub const PAYLOAD_CHUNK: usize = 1 << 20;

/// Where a framed record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read directly from the file or stream.
    Top,
    /// Expanded from COMPRESSED/COMPRESSED2 records; `stream_offset` is its position in
    /// the decompressed byte stream.
    Decompressed {
        /// Position in the decompressed byte stream.
        stream_offset: u64,
    },
}

/// One framed record.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// The record's header.
    pub header: RecordHeader,
    /// File offset of the record; for a decompressed record, of the compressed record
    /// that holds its first byte.
    pub offset: u64,
    /// The `header.size` bytes of the record, header included.
    pub bytes: &'a [u8],
    /// Bytes after `header.size` that belong to the record (tracing data, AUX trace),
    /// as far as they are held: see `rest`.
    pub payload: &'a [u8],
    /// Payload bytes after `payload` not held in memory (a record larger than
    /// [`MAX_BUFFERED`]): read them with `PerfReader::payload_chunk`, or leave them to
    /// be skipped by the next `next_record`.
    pub rest: u64,
    /// Whether it was read as stored or out of a compressed record.
    pub origin: Origin,
    /// 0 for the main data (or the `data` file of a directory), n + 1 for `data.n`.
    pub stream: usize,
}

impl<'a> RawRecord<'a> {
    /// The record's type.
    pub fn record_type(&self) -> RecordType {
        self.header.record_type()
    }

    /// Bytes the record takes in its stream: header.size plus the payload.
    pub fn total_len(&self) -> usize {
        self.bytes.len() + self.payload.len() + self.rest as usize
    }

    /// The whole payload's length, held or not.
    pub fn payload_len(&self) -> u64 {
        self.payload.len() as u64 + self.rest
    }

    /// A copy that outlives the source's buffer (of the bytes held: `rest` stays in
    /// the input).
    pub fn to_owned_record(&self) -> OwnedRecord {
        OwnedRecord {
            bytes: self.bytes.to_vec(),
            payload: self.payload.to_vec(),
            rest: self.rest,
            offset: self.offset,
            origin: self.origin,
            stream: self.stream,
        }
    }

    /// Whether this record is a compressed container (COMPRESSED or COMPRESSED2).
    #[inline]
    pub fn is_compressed(&self) -> bool {
        // By number: every record an edit sees is asked.
        const COMPRESSED: u32 = RecordType::Compressed.as_u32();
        const COMPRESSED2: u32 = RecordType::Compressed2.as_u32();
        matches!(self.header.type_, COMPRESSED | COMPRESSED2)
    }
}

/// A record copied out of its source's buffer, to keep while later records are read
/// (holding the first data record of a pipe stream, merging directory streams).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedRecord {
    /// The `header.size` bytes of the record, header included.
    pub bytes: Vec<u8>,
    /// Bytes after `header.size` that belong to the record.
    pub payload: Vec<u8>,
    /// Payload bytes not held (see [`RawRecord::rest`]).
    pub rest: u64,
    /// File offset of the record (see [`RawRecord::offset`]).
    pub offset: u64,
    /// Whether it was read as stored or out of a compressed record.
    pub origin: Origin,
    /// 0 for the main data, n + 1 for `data.n` of a directory.
    pub stream: usize,
}

impl OwnedRecord {
    /// The record as a [`RawRecord`] again.
    pub fn as_raw(&self, endian: Endian) -> RawRecord<'_> {
        RawRecord {
            header: header_of(&self.bytes, endian),
            offset: self.offset,
            bytes: &self.bytes,
            payload: &self.payload,
            rest: self.rest,
            origin: self.origin,
            stream: self.stream,
        }
    }
}

/// Where a framed record sits in the buffer of the source that framed it: what a source
/// returns from `advance`, so that callers can take the record out of the buffer
/// afterwards (see [`Span::record`]) without holding a borrow across calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Index of the record's first byte in the source's buffer.
    pub pos: usize,
    /// The record's `header.size`.
    pub size: usize,
    /// Bytes after `header.size` that belong to the record.
    pub payload: usize,
    /// Payload bytes not in the buffer (see [`RawRecord::rest`]).
    pub rest: u64,
    /// File offset of the record (see [`RawRecord::offset`]).
    pub offset: u64,
    /// Whether it was read as stored or out of a compressed record.
    pub origin: Origin,
    /// 0 for the main data, n + 1 for `data.n` of a directory.
    pub stream: usize,
}

impl Span {
    /// The record this span frames in `buf`.
    #[inline]
    pub fn record<'a>(&self, buf: &'a [u8], endian: Endian) -> RawRecord<'a> {
        let bytes = &buf[self.pos..self.pos + self.size];
        RawRecord {
            header: header_of(bytes, endian),
            offset: self.offset,
            bytes,
            payload: &buf[self.pos + self.size..self.pos + self.size + self.payload],
            rest: self.rest,
            origin: self.origin,
            stream: self.stream,
        }
    }

    /// Index one past the record's last byte (payload included) in the buffer.
    pub fn end(&self) -> usize {
        self.pos + self.size + self.payload
    }
}

/// The result of looking at the bytes where a record should start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A whole record: `size` bytes, then `payload` bytes.
    Complete {
        /// The record's `header.size`.
        size: usize,
        /// Bytes after it that belong to the record.
        payload: usize,
    },
    /// Not enough bytes: at least `needed` are required in total.
    Incomplete {
        /// Bytes needed in total.
        needed: u64,
    },
    /// A record larger than [`MAX_BUFFERED`] whose `size` bytes are there: its `payload`
    /// is to be streamed, not buffered.
    Large {
        /// The record's `header.size`.
        size: usize,
        /// The payload's length after it.
        payload: u64,
    },
    /// The header cannot start a record.
    Invalid(Problem),
}

/// Frame the record at the start of `bytes`.
///
/// perf rejects a header.size below 8; the payload of HEADER_TRACING_DATA and of AUXTRACE
/// follows the record. perf writes HEADER_TRACING_DATA as 16 bytes (12 before perf 4.10,
/// without the pad word) with the data after it; simpleperf puts the data inside the
/// record, so a larger record has no payload after it.
#[inline]
pub fn frame(bytes: &[u8], endian: Endian) -> Frame {
    if bytes.len() < RecordHeader::SIZE {
        return Frame::Incomplete {
            needed: RecordHeader::SIZE as u64,
        };
    }
    let ty = u32_at(bytes, 0, endian).unwrap_or(0);
    let size = u16_at(bytes, 6, endian).unwrap_or(0) as usize;
    if size < RecordHeader::SIZE {
        return Frame::Invalid(Problem::RecordTooSmall {
            size: size as u64,
            min: RecordHeader::SIZE as u64,
        });
    }
    let payload = match RecordType::from_u32(ty) {
        RecordType::HeaderTracingData if (12..=16).contains(&size) => {
            if bytes.len() < 12 {
                return Frame::Incomplete { needed: 12 };
            }
            u32_at(bytes, 8, endian).unwrap_or(0) as u64
        }
        RecordType::Auxtrace => {
            if size < 16 {
                return Frame::Invalid(Problem::RecordTooSmall {
                    size: size as u64,
                    min: 48,
                });
            }
            if bytes.len() < 16 {
                return Frame::Incomplete { needed: 16 };
            }
            u64_at(bytes, 8, endian).unwrap_or(0)
        }
        _ => 0,
    };
    // A payload length is any u64 in a hostile file: the sum must not wrap.
    let total = (size as u64).saturating_add(payload);
    if total > MAX_BUFFERED {
        if bytes.len() < size {
            return Frame::Incomplete {
                needed: size as u64,
            };
        }
        return Frame::Large { size, payload };
    }
    if (bytes.len() as u64) < total {
        return Frame::Incomplete { needed: total };
    }
    Frame::Complete {
        size,
        payload: payload as usize,
    }
}

/// [`frame`] with a bound below [`MAX_BUFFERED`] on what is held whole: a record with a
/// payload whose `size + payload` exceeds `limit` is [`Frame::Large`], its payload to
/// be streamed. Several streams read at once (a directory's, merged by time) each get
/// a share of [`MAX_BUFFERED`], so that together they hold no more than one would.
pub fn frame_within(bytes: &[u8], endian: Endian, limit: u64) -> Frame {
    let framed = frame(bytes, endian);
    if limit >= MAX_BUFFERED {
        return framed;
    }
    let (size, total) = match framed {
        Frame::Complete { size, payload } => (size, (size + payload) as u64),
        // Past the header checks (which need at most 16 bytes), `needed` is the total.
        Frame::Incomplete { needed } if needed > limit.max(16) => {
            (u16_at(bytes, 6, endian).unwrap_or(0) as usize, needed)
        }
        other => return other,
    };
    // A record without a payload is at most 64 KiB (a u16 size): held whole.
    if total <= limit || total == size as u64 {
        return framed;
    }
    if bytes.len() < size {
        return Frame::Incomplete {
            needed: size as u64,
        };
    }
    Frame::Large {
        size,
        payload: total - size as u64,
    }
}

/// The least [`frame_within`] bound a stream read beside others gets.
pub const MIN_STREAM_BUFFER: u64 = 1 << 20;

/// Whether the bytes at a record boundary could start a record at all; used to tell
/// junk after the last record of a pipe stream (perf's own stderr text, say) from a
/// corrupt or truncated record. The kernel's types, perf's and simpleperf's (from 32768)
/// are all below 65536; text read as a u32 is far above.
pub fn plausible_header(bytes: &[u8], endian: Endian) -> bool {
    match u32_at(bytes, 0, endian) {
        Some(ty) => ty < 65536,
        None => bytes.len() < 4,
    }
}

/// Write `size` into the 8-byte header of a framed record (`bytes` at least 8 long):
/// the one place besides [`header_of`] that knows where the header keeps it.
pub fn set_header_size(bytes: &mut [u8], size: u16, endian: Endian) {
    let b = match endian {
        Endian::Little => size.to_le_bytes(),
        Endian::Big => size.to_be_bytes(),
    };
    bytes[6..8].copy_from_slice(&b);
}

/// Decode the 8-byte header of a framed record.
pub fn header_of(bytes: &[u8], endian: Endian) -> RecordHeader {
    RecordHeader {
        type_: u32_at(bytes, 0, endian).unwrap_or(0),
        misc: u16_at(bytes, 4, endian).unwrap_or(0),
        size: u16_at(bytes, 6, endian).unwrap_or(0),
    }
}

/// A little-endian record of type `ty` and `size` bytes, zero-filled: for tests.
#[cfg(test)]
pub(crate) fn test_record(ty: u32, size: u16) -> Vec<u8> {
    let mut v = ty.to_le_bytes().to_vec();
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&size.to_le_bytes());
    v.resize(size as usize, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::test_record as rec;
    use super::*;
    use crate::error::Result;

    #[test]
    fn frames_records_and_payloads() {
        let mut data = rec(3, 24);
        let mut td = rec(66, 16);
        td[8..12].copy_from_slice(&8u32.to_le_bytes());
        data.extend_from_slice(&td);
        data.extend_from_slice(b"TRACEDAT");
        data.extend_from_slice(&rec(68, 8));
        let recs: Vec<_> = SliceRecords::new(&data, 100, Endian::Little, 0)
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].offset, 124);
        assert_eq!(recs[1].payload, b"TRACEDAT");
        assert_eq!(recs[2].offset, 148);
        assert_eq!(recs[2].record_type(), RecordType::FinishedRound);
    }

    #[test]
    fn old_12_byte_tracing_data_has_its_payload_after_it() {
        // perf 4.x: `{header; u32 size}` with no pad word (KDAB-probe.data.stream).
        let mut td = rec(66, 12);
        td[8..12].copy_from_slice(&8u32.to_le_bytes());
        td.extend_from_slice(b"TRACEDAT");
        td.extend_from_slice(&rec(68, 8));
        let recs: Vec<_> = SliceRecords::new(&td, 0, Endian::Little, 0)
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs[0].bytes.len(), recs[0].payload),
            (12, &b"TRACEDAT"[..])
        );
        assert_eq!(recs[1].offset, 20);
        // simpleperf's form, with the data inside the record, has no payload after it.
        let mut sp = rec(66, 24);
        sp[8..12].copy_from_slice(&8u32.to_le_bytes());
        let recs: Vec<_> = SliceRecords::new(&sp, 0, Endian::Little, 0)
            .collect::<Result<_>>()
            .unwrap();
        assert!(recs[0].payload.is_empty());
    }

    #[test]
    fn zero_size_is_an_error_at_its_offset() {
        let mut data = rec(3, 24);
        data.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]);
        let mut it = SliceRecords::new(&data, 1000, Endian::Little, 0);
        assert!(it.next().unwrap().is_ok());
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.offset(), Some(1024));
        assert!(it.next().is_none());
    }

    #[test]
    fn truncated_record_is_an_error() {
        let data = rec(3, 24);
        let mut it = SliceRecords::new(&data[..20], 0, Endian::Little, 0);
        let e = it.next().unwrap().unwrap_err();
        assert!(matches!(
            e.problem(),
            Some(Problem::Truncated { needed: 24, .. })
        ));
    }

    #[test]
    fn text_is_not_a_plausible_header() {
        assert!(!plausible_header(b"[ perf record: Woken", Endian::Little));
        assert!(plausible_header(&rec(9, 16), Endian::Little));
        // A SAMPLE header of size 0 is a corrupt record, not junk.
        assert!(plausible_header(&[9, 0, 0, 0, 1, 0, 0, 0], Endian::Little));
    }
}
