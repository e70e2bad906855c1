//! Expanding COMPRESSED (81) and COMPRESSED2 (83) records.
//!
//! perf compresses a whole recording stream with one zstd context and flushes (never ends
//! the frame) after each record, so the compressed records of one stream form one zstd
//! stream and a decompressed record may straddle two of them. One `Decompressor` per
//! stream, fed every compressed record in order, yields the records inside.

use std::collections::VecDeque;

use binrw::Endian;
use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::{frame, header_of, Frame, Origin, RecordSource, Span};
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

/// One stream's decompression state.
pub struct Decompressor {
    dctx: Decoder<'static>,
    buf: Vec<u8>,
    start: usize,
    /// Offset in the decompressed stream of `buf[start]`.
    stream_offset: u64,
    /// (decompressed-stream offset where a container's output begins, its file offset).
    segments: VecDeque<(u64, u64)>,
    endian: Endian,
    stream: usize,
}

impl Decompressor {
    pub fn new(endian: Endian, stream: usize) -> Result<Self> {
        let dctx =
            Decoder::new().map_err(|e| Error::io("creating a zstd decompression context", e))?;
        Ok(Decompressor {
            dctx,
            buf: Vec::new(),
            start: 0,
            stream_offset: 0,
            segments: VecDeque::new(),
            endian,
            stream,
        })
    }

    /// Decompressed bytes waiting for the rest of their record.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Total decompressed bytes produced so far.
    pub fn total_out(&self) -> u64 {
        self.stream_offset + self.pending() as u64
    }

    /// Feed the compressed record `record` (header included) found at `offset`.
    pub fn feed(&mut self, record: &[u8], offset: u64) -> Result<()> {
        let context = || format!("record {}", header_of(record, self.endian).record_type());
        let input = compressed_payload(record, self.endian).ok_or_else(|| {
            Error::format(
                offset,
                context(),
                Problem::Invalid("COMPRESSED2 data_size is larger than the record".into()),
            )
        })?;
        // Drop what has been framed; only a partial record's bytes move.
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let seg_start = self.stream_offset + self.buf.len() as u64;
        self.segments.push_back((seg_start, offset));

        let before = self.buf.len();
        let mut inbuf = InBuffer::around(input);
        let mut chunk = vec![0u8; 128 * 1024];
        loop {
            let mut out = OutBuffer::around(&mut chunk[..]);
            self.dctx.run(&mut inbuf, &mut out).map_err(|e| {
                Error::format(offset, context(), Problem::Decompress(e.to_string()))
            })?;
            let written = out.pos();
            self.buf.extend_from_slice(&chunk[..written]);
            if self.buf.len() - before > MAX_EXPANSION {
                return Err(Error::format(
                    offset,
                    context(),
                    Problem::TooLarge {
                        what: "decompressed size of one record",
                        value: (self.buf.len() - before) as u64,
                        limit: MAX_EXPANSION as u64,
                    },
                ));
            }
            // Done when all input is consumed and the last call did not fill the output
            // (so zstd has nothing more buffered to give).
            if inbuf.pos() == input.len() && written < chunk.len() {
                break;
            }
        }
        Ok(())
    }

    /// The file offset of the compressed record that holds the start of the record
    /// still waiting for its rest (see [`Decompressor::pending`]).
    pub fn pending_container(&self) -> u64 {
        let pos = self.stream_offset;
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
}

impl RecordSource for Decompressor {
    /// Frame the next whole decompressed record; `Ok(None)` when the rest waits for
    /// more input.
    fn advance(&mut self) -> Result<Option<Span>> {
        let avail = &self.buf[self.start..];
        if avail.is_empty() {
            return Ok(None);
        }
        match frame(avail, self.endian) {
            Frame::Complete { size, payload } => {
                let pos = self.stream_offset;
                let offset = self.container_of(pos);
                let span = Span {
                    pos: self.start,
                    size,
                    payload,
                    offset,
                    origin: Origin::Decompressed { stream_offset: pos },
                    stream: self.stream,
                };
                self.start += size + payload;
                self.stream_offset += (size + payload) as u64;
                Ok(Some(span))
            }
            Frame::Incomplete { .. } => Ok(None),
            Frame::Invalid(problem) => {
                let pos = self.stream_offset;
                let offset = self.container_of(pos);
                Err(Error::format(
                    offset,
                    format!("record header at byte {pos} of the decompressed stream"),
                    problem,
                ))
            }
        }
    }

    fn buffer(&self) -> &[u8] {
        &self.buf
    }

    fn endian(&self) -> Endian {
        self.endian
    }
}
