//! Expanding COMPRESSED (81) and COMPRESSED2 (83) records.
//!
//! perf compresses a whole recording stream with one zstd context and flushes (never ends
//! the frame) after each record, so the compressed records of one stream form one zstd
//! stream and a decompressed record may straddle two of them. One `Decompressor` per
//! stream, fed every compressed record in order, yields the records inside.
//!
//! A compressed record is expanded as its records are framed, one zstd call of at most
//! 128 KiB at a time: a few kilobytes of zstd can claim gigabytes (an AUXTRACE payload
//! across many compressed records), and memory must not follow the claim. What is held
//! is the record being framed (up to [`MAX_BUFFERED`]; a larger one streams its
//! payload), one zstd call's output and zstd's window, whose size the frame declares
//! and which is refused over [`WINDOW_LOG_MAX`].

use std::collections::VecDeque;

use binrw::Endian;
use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::{
    frame_within, header_of, Frame, Origin, RecordSource, Span, MAX_BUFFERED, PAYLOAD_CHUNK,
};
use crate::codec::u64_at;
use crate::error::{Error, Problem, Result};
use crate::record::RecordType;

/// The most one compressed record may expand to. perf bounds it by its mmap size
/// (HEADER_COMPRESSED.mmap_len, about 512 KiB by default); this only stops a zstd bomb
/// from taking all memory.
pub const MAX_EXPANSION: usize = 256 << 20;

/// The zstd payload of a COMPRESSED or COMPRESSED2 record (header included in `bytes`).
pub fn compressed_payload(bytes: &[u8], endian: Endian) -> Option<&[u8]> {
    match header_of(bytes, endian).record_type() {
        RecordType::Compressed => bytes.get(8..),
        RecordType::Compressed2 => {
            let n = u64_at(bytes, 8, endian)?;
            let end = 16usize.checked_add(usize::try_from(n).ok()?)?;
            bytes.get(16..end)
        }
        _ => None,
    }
}

/// Decompressed bytes produced per zstd call.
const OUT_CHUNK: usize = 128 * 1024;

/// The largest zstd window read, as a power of two: 8 MiB. The decoder keeps a window
/// of the size a frame declares and fills it as the frame expands, so a few kilobytes
/// declaring `zstd --long=27`'s 128 MiB took every command past 150 MiB. perf record
/// -z writes 512 KiB windows at its default level 1 and 8 MiB at level 19, the highest
/// that zstd allows without `--ultra`; levels 20 to 22 write 32 to 128 MiB and are
/// refused by name unless `PERFDATA_ZSTD_WINDOW_LOG_MAX` (10 to 31) raises the limit.
pub const WINDOW_LOG_MAX: u32 = 23;

/// [`WINDOW_LOG_MAX`], or what `PERFDATA_ZSTD_WINDOW_LOG_MAX` asks for.
pub fn window_log_max() -> u32 {
    static LOG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LOG.get_or_init(|| {
        std::env::var("PERFDATA_ZSTD_WINDOW_LOG_MAX")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|v| (10..=31).contains(v))
            .unwrap_or(WINDOW_LOG_MAX)
    })
}

/// The window a zstd frame header at the start of `bytes` declares (RFC 8878 3.1.1.1:
/// the window descriptor, or the content size of a single-segment frame); `None` when
/// `bytes` does not start with a whole frame header.
pub fn frame_window(bytes: &[u8]) -> Option<u64> {
    if bytes.get(..4)? != [0x28, 0xb5, 0x2f, 0xfd] {
        return None;
    }
    let fhd = *bytes.get(4)?;
    if fhd & 0x20 == 0 {
        let wd = *bytes.get(5)?;
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + base / 8 * u64::from(wd & 7));
    }
    // Single segment: the window is the content size, after the dictionary id.
    let at = 5 + [0, 1, 2, 4][usize::from(fhd & 3)];
    let size = match fhd >> 6 {
        0 => u64::from(*bytes.get(at)?),
        1 => u64::from(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?)) + 256,
        2 => u64::from(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)),
        _ => u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?),
    };
    Some(size)
}

/// `n` bytes in the largest whole unit (`128 MiB`, `512 KiB`), else in bytes.
fn size_words(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// One stream's decompression state.
pub struct Decompressor {
    dctx: Decoder<'static>,
    /// The zstd bytes of the compressed record being expanded, and how far.
    input: Vec<u8>,
    in_pos: usize,
    /// All of `input` went through zstd and zstd holds nothing more back.
    drained: bool,
    /// The next zstd byte starts a frame (whose window is checked first).
    frame_start: bool,
    /// The compressed record being expanded: its file offset, type and what it gave so
    /// far.
    container: (u64, RecordType, u64),
    buf: Vec<u8>,
    start: usize,
    /// Offset in the decompressed stream of `buf[start]`.
    stream_offset: u64,
    /// (decompressed-stream offset where a container's output begins, its file offset).
    segments: VecDeque<(u64, u64)>,
    /// Unread bytes of the last record's streamed payload, and where that record starts
    /// in the decompressed stream.
    payload_left: u64,
    large_start: u64,
    /// The type of the record whose payload streams.
    large_type: RecordType,
    endian: Endian,
    stream: usize,
    /// The most decompressed bytes held ahead of the reader, and the largest record held
    /// whole (larger ones stream their payload): [`MAX_BUFFERED`], or a share of it when
    /// several streams are read at once.
    limit: u64,
}

impl Decompressor {
    /// A decompressor for the compressed records of stream `stream`.
    pub fn new(endian: Endian, stream: usize) -> Result<Self> {
        let context = |e| Error::io("creating a zstd decompression context", e);
        let mut dctx = Decoder::new().map_err(context)?;
        // zstd refuses a larger window itself (its message has no size): see `expand`.
        dctx.set_parameter(zstd::zstd_safe::DParameter::WindowLogMax(window_log_max()))
            .map_err(context)?;
        Ok(Decompressor {
            dctx,
            input: Vec::new(),
            in_pos: 0,
            drained: true,
            frame_start: true,
            container: (0, RecordType::Compressed, 0),
            buf: Vec::new(),
            start: 0,
            stream_offset: 0,
            segments: VecDeque::new(),
            payload_left: 0,
            large_start: 0,
            large_type: RecordType::Auxtrace,
            endian,
            stream,
            limit: MAX_BUFFERED,
        })
    }

    /// Hold at most `limit` bytes ahead (at least [`super::MIN_STREAM_BUFFER`]): for a
    /// stream read beside others, see [`frame_within`].
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = limit.clamp(super::MIN_STREAM_BUFFER, MAX_BUFFERED);
        self
    }

    /// Decompressed bytes of a record that is not whole yet: those buffered, or, inside
    /// a streamed payload, all of that record's bytes so far.
    pub fn pending(&self) -> usize {
        if self.payload_left > 0 {
            (self.total_out() - self.large_start) as usize
        } else {
            self.buffered()
        }
    }

    fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Total decompressed bytes produced so far.
    pub fn total_out(&self) -> u64 {
        self.stream_offset + self.buffered() as u64
    }

    /// Feed the compressed record `record` (header included) found at `offset`.
    pub fn feed(&mut self, record: &[u8], offset: u64) -> Result<()> {
        let ty = header_of(record, self.endian).record_type();
        let input = compressed_payload(record, self.endian).ok_or_else(|| {
            Error::format(
                offset,
                format!("record {ty}"),
                Problem::Invalid("COMPRESSED2 data_size is larger than the record".into()),
            )
        })?;
        // What the previous record still holds comes first.
        while !self.drained {
            self.expand()?;
        }
        self.input.clear();
        self.input.extend_from_slice(input);
        self.in_pos = 0;
        self.drained = false;
        self.container = (offset, ty, 0);
        self.segments.push_back((self.total_out(), offset));
        // One zstd call now (a new frame's window is checked, named by this record);
        // the rest as records are framed and payloads read. Expanding up to the limit
        // here held 16 MiB of a streamed payload ahead of its reader.
        self.expand()?;
        Ok(())
    }

    /// One zstd call: up to [`OUT_CHUNK`] more bytes at the end of the buffer.
    fn expand(&mut self) -> Result<usize> {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 0 && self.start >= self.buf.len() / 2 {
            // Drop what has been framed; only a partial record's bytes move.
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let (offset, ty, given) = self.container;
        let context = || format!("record {ty}");
        if self.frame_start {
            self.check_window(offset, ty)?;
        }
        let old = self.buf.len();
        self.buf.resize(old + OUT_CHUNK, 0);
        let mut inbuf = InBuffer::around(&self.input[self.in_pos..]);
        let mut out = OutBuffer::around(&mut self.buf[old..]);
        let run = self.dctx.run(&mut inbuf, &mut out);
        let written = out.pos();
        let consumed = inbuf.pos();
        self.in_pos += consumed;
        self.buf.truncate(old + written);
        let hint =
            run.map_err(|e| Error::format(offset, context(), Problem::Decompress(e.to_string())))?;
        // 0: a frame ended and was flushed whole; the next byte starts another.
        if consumed > 0 || hint == 0 {
            self.frame_start = hint == 0;
        }
        let given = given + written as u64;
        self.container.2 = given;
        if given > MAX_EXPANSION as u64 {
            return Err(Error::format(
                offset,
                context(),
                Problem::TooLarge {
                    what: "decompressed size of one record",
                    value: given,
                    limit: MAX_EXPANSION as u64,
                },
            ));
        }
        // Done when all input is consumed and the call did not fill the output (so zstd
        // has nothing more buffered to give).
        if self.in_pos == self.input.len() && written < OUT_CHUNK {
            self.drained = true;
        }
        Ok(written)
    }

    /// Refuse, by its size, a frame starting here whose window is over the limit
    /// ([`window_log_max`]), before zstd reserves it. A header cut across two
    /// compressed records is left to zstd, which refuses it with its own words.
    fn check_window(&self, offset: u64, ty: RecordType) -> Result<()> {
        let limit = 1u64 << window_log_max();
        match frame_window(&self.input[self.in_pos..]) {
            Some(window) if window > limit => Err(Error::format(
                offset,
                format!("record {ty}"),
                Problem::Unsupported(format!(
                    "its zstd frame needs a {} window, over the {} limit that bounds \
                     memory (perf record -z writes up to 8 MiB at levels 1 to 19, 32 to \
                     128 MiB at 20 to 22); PERFDATA_ZSTD_WINDOW_LOG_MAX={} reads it",
                    size_words(window),
                    size_words(limit),
                    window.next_power_of_two().trailing_zeros().max(10),
                )),
            )),
            _ => Ok(()),
        }
    }

    /// The record not whole yet (see [`Decompressor::pending`]): its type, once its
    /// header is there, and the bytes it needs in all (its size and the payload it
    /// claims, as far as they are known; a header's 8 before that).
    pub fn pending_record(&self) -> (Option<RecordType>, u64) {
        if self.payload_left > 0 {
            let needed = self.pending() as u64 + self.payload_left;
            return (Some(self.large_type), needed);
        }
        let avail = &self.buf[self.start..];
        if avail.len() < 8 {
            return (None, 8);
        }
        let needed = match super::frame(avail, self.endian) {
            Frame::Incomplete { needed } => needed,
            _ => avail.len() as u64,
        };
        (Some(header_of(avail, self.endian).record_type()), needed)
    }

    /// The error of a decompressed stream (of `name`, when given) that ends inside a
    /// record: named by the compressed record where that record starts, with its type
    /// and the bytes it needs against those there.
    pub fn cut_record_error(&self, name: Option<&str>) -> Error {
        let (ty, needed) = self.pending_record();
        let at = self.total_out() - self.pending() as u64;
        let what = ty.map_or("record".to_string(), |t| format!("{t} record"));
        let of = name.map_or(String::new(), |n| format!(" of {n}"));
        Error::format(
            self.pending_container(),
            format!("the {what} at byte {at} of the decompressed stream{of}"),
            Problem::Truncated {
                needed,
                available: self.pending() as u64,
            },
        )
    }

    /// The file offset of the compressed record that holds the start of the record
    /// still waiting for its rest (see [`Decompressor::pending`]).
    pub fn pending_container(&self) -> u64 {
        let pos = self.total_out() - self.pending() as u64;
        self.segments
            .iter()
            .take_while(|s| s.0 <= pos)
            .last()
            .or(self.segments.front())
            .map_or(0, |s| s.1)
    }

    /// The file offset of the container holding decompressed-stream offset `pos`.
    fn container_of(&mut self, pos: u64) -> u64 {
        while self.segments.len() > 1 && self.segments[1].0 <= pos {
            self.segments.pop_front();
        }
        self.segments.front().map_or(0, |s| s.1)
    }

    /// Make streamed payload bytes ready: the number buffered, 0 when the next
    /// compressed record is needed first (or no payload is left).
    pub fn fill_payload(&mut self) -> Result<usize> {
        if self.payload_left == 0 {
            return Ok(0);
        }
        while self.buffered() == 0 && !self.drained {
            self.expand()?;
        }
        Ok(self.buffered())
    }

    /// Consume up to `max` buffered payload bytes; where they start in `buf`.
    fn take_payload(&mut self, max: usize) -> (usize, usize) {
        let n = self.payload_left.min(self.buffered().min(max) as u64) as usize;
        let at = self.start;
        self.start += n;
        self.stream_offset += n as u64;
        self.payload_left -= n as u64;
        (at, n)
    }
}

impl Decompressor {
    /// Frame the record at `start`: `size + payload` bytes held, `rest` left to stream.
    fn take_span(&mut self, size: usize, payload: usize, rest: u64) -> Span {
        let pos = self.stream_offset;
        let span = Span {
            pos: self.start,
            size,
            payload,
            rest,
            offset: self.container_of(pos),
            origin: Origin::Decompressed { stream_offset: pos },
            stream: self.stream,
        };
        self.start += size + payload;
        self.stream_offset += (size + payload) as u64;
        span
    }
}

impl RecordSource for Decompressor {
    /// Frame the next whole decompressed record; `Ok(None)` when the rest waits for
    /// more input.
    fn advance(&mut self) -> Result<Option<Span>> {
        // Skip what was not read of a streamed payload.
        while self.payload_left > 0 {
            if self.fill_payload()? == 0 {
                return Ok(None);
            }
            self.take_payload(usize::MAX);
        }
        loop {
            let avail = &self.buf[self.start..];
            if avail.is_empty() && self.drained {
                return Ok(None);
            }
            match frame_within(avail, self.endian, self.limit) {
                Frame::Complete { size, payload } => {
                    return Ok(Some(self.take_span(size, payload, 0)));
                }
                Frame::Large { size, payload } => {
                    self.large_start = self.stream_offset;
                    self.large_type = header_of(avail, self.endian).record_type();
                    let span = self.take_span(size, 0, payload);
                    self.payload_left = payload;
                    return Ok(Some(span));
                }
                Frame::Incomplete { .. } if self.drained => return Ok(None),
                Frame::Incomplete { .. } => {
                    self.expand()?;
                }
                Frame::Invalid(problem) => {
                    let pos = self.stream_offset;
                    let offset = self.container_of(pos);
                    return Err(Error::format(
                        offset,
                        format!("record header at byte {pos} of the decompressed stream"),
                        problem,
                    ));
                }
            }
        }
    }

    fn buffer(&self) -> &[u8] {
        &self.buf
    }

    fn endian(&self) -> Endian {
        self.endian
    }

    fn payload_left(&self) -> u64 {
        self.payload_left
    }

    fn payload_chunk(&mut self) -> Result<&[u8]> {
        self.fill_payload()?;
        let (at, n) = self.take_payload(PAYLOAD_CHUNK);
        Ok(&self.buf[at..at + n])
    }
}
