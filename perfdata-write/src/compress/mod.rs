//! Writing COMPRESSED (81) and COMPRESSED2 (83) records, as `perf record -z` does: the
//! records in batches, each batch compressed (a zstd frame of its own, see
//! `engine`), the compressed bytes cut into records whose size fits the u16 header.size.
//!
//! perf 6.1 decompresses each compressed record into a buffer of
//! HEADER_COMPRESSED.mmap_len bytes, so a batch never holds more than that.
//!
//! A compressor [`in_thread`](Compressor::in_thread) compresses batches on threads
//! while the next one fills: plain records written meanwhile ([`Compressor::plain`])
//! wait for the batch before them, so the output's order is the order of the calls.

mod engine;

use std::collections::VecDeque;

use binrw::Endian;
use perfdata_core::record::RecordType;

use crate::error::{Result, WriteError};
use engine::{Engine, Job, TWO_WORKERS_UP_TO};

/// Which compressed record type to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CompressFormat {
    /// PERF_RECORD_COMPRESSED (81): what perf 6.1 reads.
    #[default]
    Compressed,
    /// PERF_RECORD_COMPRESSED2 (83, perf 6.16): a data_size field and 8-byte padding.
    Compressed2,
}

/// perf's default mmap size for `perf record` (512 KiB of data pages plus one).
pub const DEFAULT_MMAP_LEN: usize = 528_384;

/// The decompression buffer (HEADER_COMPRESSED.mmap_len) for records compressed at
/// `level` from plain ones: what `perf record -z -m 512` writes (2 MiB of data pages
/// plus one) at the levels two threads compress, perf's default above them. Each batch
/// is a zstd frame of its own (so that two threads compress), and frames of perf's
/// default 516 KiB lose the matches into the batch before: the 384 MiB call-graph
/// recording came out 26,258,238 bytes (zstd -1: 25,431,428), in 2 MiB frames
/// 25,577,411; a level 9 context fitted to 2 MiB frames took the peak RSS to 33 MiB.
pub fn mmap_len_for_level(level: i32) -> usize {
    match level <= TWO_WORKERS_UP_TO {
        true => (2 << 20) + 4096,
        false => DEFAULT_MMAP_LEN,
    }
}

/// Largest compressed payload per record, so that header.size fits in a u16 (and, for
/// COMPRESSED2, the padded size too).
const MAX_PAYLOAD: usize = u16::MAX as usize - 16 - 7;

/// Plain records held behind a batch in flight before the compressor waits for it: they
/// are perf's small records (FINISHED_ROUND, side-band), so this is rarely reached.
const MAX_HELD: usize = 1 << 20;

/// Batches records and turns them into compressed records.
pub struct Compressor {
    engine: Engine,
    endian: Endian,
    format: CompressFormat,
    mmap_len: usize,
    batch: Vec<u8>,
    /// The batches started and not yet emitted, oldest first, each with the plain
    /// records that come after it.
    in_flight: VecDeque<Held>,
    /// Buffers back from emitted batches, to fill again (nothing is allocated per
    /// batch).
    spare: Vec<Job>,
    spare_held: Vec<Held>,
    /// A compressed record being made.
    record: Vec<u8>,
    /// Totals, for the COMPRESSED feature's ratio.
    bytes_in: u64,
    bytes_out: u64,
}

impl Compressor {
    /// A compressor at zstd `level` for records of `format`, compressing on the
    /// caller's thread.
    pub fn new(
        level: i32,
        format: CompressFormat,
        mmap_len: usize,
        endian: Endian,
    ) -> Result<Self> {
        Ok(Compressor {
            engine: Engine::inline(level)?,
            endian,
            format,
            mmap_len: Self::batch_limit(mmap_len),
            batch: Vec::new(),
            in_flight: VecDeque::new(),
            spare: Vec::new(),
            spare_held: Vec::new(),
            record: Vec::new(),
            bytes_in: 0,
            bytes_out: 0,
        })
    }

    /// Compress on a thread of its own, beside the caller's reading of the next batch:
    /// `convert --compress=1` of a 60 MiB recording takes 0.066-0.072 s rather than
    /// 0.082-0.086 s inline (`zstd -1`: 0.073-0.075 s; medians of 9 paired runs on 2
    /// cores). Compressed records then come out of a later call than the one that
    /// filled their batch, always before any record written after them.
    ///
    /// Called on a compressor that has compressed nothing yet (its stream would end in
    /// an open frame otherwise): refused after the first batch.
    pub fn in_thread(mut self) -> Result<Self> {
        if self.bytes_in > 0 || !self.in_flight.is_empty() {
            return Err(WriteError::unsupported(
                None,
                "a compressor moves to threads before its first batch",
            ));
        }
        self.engine = self.engine.into_thread()?;
        Ok(self)
    }

    /// The batch size used for a reader buffer of `mmap_len`: never more than the
    /// buffer (perf decompresses each record into it), and under 4 MiB so that memory
    /// stays small whatever a file's feature says.
    pub fn batch_limit(mmap_len: usize) -> usize {
        mmap_len.clamp(1, 4 << 20)
    }

    /// The decompression buffer the output needs (what the COMPRESSED feature says).
    pub fn mmap_len(&self) -> usize {
        self.mmap_len
    }

    /// perf's ratio: decompressed bytes per compressed byte, rounded (of the batches
    /// emitted so far: call after [`Compressor::flush`]).
    pub fn ratio(&self) -> u32 {
        if self.bytes_out == 0 {
            0
        } else {
            ((self.bytes_in as f64 / self.bytes_out as f64) + 0.5) as u32
        }
    }

    /// Add a record to the current batch; full batches are compressed and handed to
    /// `emit` as finished compressed records.
    pub fn push(
        &mut self,
        record: &[u8],
        payload: &[u8],
        emit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let len = record.len() + payload.len();
        if !self.batch.is_empty() && self.batch.len() + len > self.mmap_len {
            self.start_batch(emit)?;
        }
        if len > self.mmap_len {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "a {}-byte record is larger than the {}-byte decompression buffer",
                    len, self.mmap_len
                ),
            ));
        }
        self.batch.extend_from_slice(record);
        self.batch.extend_from_slice(payload);
        Ok(())
    }

    /// Add bytes of the record stream that need not be a whole record (a record larger
    /// than a batch, written piece by piece), cutting batches where they fill. perf
    /// never writes such records compressed, and perf 6.1 cannot read one back; the
    /// synthetic builder makes them to test readers whose memory must not follow a
    /// record's size.
    pub fn push_stream(
        &mut self,
        mut bytes: &[u8],
        emit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        while !bytes.is_empty() {
            let room = self.mmap_len - self.batch.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.batch.extend_from_slice(now);
            if self.batch.len() == self.mmap_len {
                self.start_batch(emit)?;
            }
            bytes = later;
        }
        Ok(())
    }

    /// A record written plain, after everything pushed so far. Returns `true` when the
    /// compressor holds it, to hand to `emit` after the compressed records before it;
    /// `false` when those were all emitted and the caller writes it now (a record with
    /// a payload, a large one, or none in flight).
    pub fn plain(
        &mut self,
        record: &[u8],
        payload: &[u8],
        emit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        self.start_batch(emit)?;
        let held: usize = self.in_flight.iter().map(|h| h.bytes.len()).sum();
        if let Some(last) = self.in_flight.back_mut() {
            if payload.is_empty() && held + record.len() <= MAX_HELD {
                last.bytes.extend_from_slice(record);
                last.ends.push(last.bytes.len());
                return Ok(true);
            }
        }
        self.finish_batches(emit)?;
        Ok(false)
    }

    /// Compress the current batch (if any) and emit its compressed records, and every
    /// record before them: when this returns, all that was given is emitted.
    pub fn flush(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        self.start_batch(emit)?;
        self.finish_batches(emit)
    }

    /// Start compressing the current batch, after emitting the oldest in flight if as
    /// many as the engine takes are.
    fn start_batch(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        if self.in_flight.len() >= self.engine.depth() {
            self.finish_oldest(emit)?;
        }
        let (mut next, out) = match self.spare.pop() {
            Some(job) => (job.batch, job.out),
            None => (Vec::new(), Vec::new()),
        };
        next.clear();
        let batch = std::mem::replace(&mut self.batch, next);
        self.engine.start(Job { batch, out })?;
        let held = self.spare_held.pop().unwrap_or_default();
        self.in_flight.push_back(held);
        Ok(())
    }

    /// Emit every batch in flight, in order.
    fn finish_batches(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        while !self.in_flight.is_empty() {
            self.finish_oldest(emit)?;
        }
        Ok(())
    }

    /// Emit the compressed records of the oldest batch in flight, then the plain
    /// records held behind it.
    fn finish_oldest(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let Some(mut held) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let job = self.engine.take()?;
        self.bytes_in += job.batch.len() as u64;
        self.bytes_out += job.out.len() as u64;
        for piece in job.out.chunks(MAX_PAYLOAD) {
            record_into(&mut self.record, piece, self.format, self.endian);
            emit(&self.record)?;
        }
        let mut start = 0;
        for &end in &held.ends {
            emit(&held.bytes[start..end])?;
            start = end;
        }
        held.bytes.clear();
        held.ends.clear();
        self.spare_held.push(held);
        self.spare.push(job);
        Ok(())
    }
}

/// Plain records that come after a batch in flight: their bytes, and where each ends.
#[derive(Default)]
struct Held {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// The compressed record holding `piece`, written into `rec`.
fn record_into(rec: &mut Vec<u8>, piece: &[u8], format: CompressFormat, endian: Endian) {
    let (ty, body_len) = match format {
        CompressFormat::Compressed => (RecordType::Compressed, piece.len()),
        CompressFormat::Compressed2 => (RecordType::Compressed2, 8 + piece.len().div_ceil(8) * 8),
    };
    let size = 8 + body_len;
    let big = endian == Endian::Big;
    let (ty, size16) = (ty.as_u32(), size as u16);
    rec.clear();
    rec.extend_from_slice(&if big {
        ty.to_be_bytes()
    } else {
        ty.to_le_bytes()
    });
    rec.extend_from_slice(&[0, 0]);
    rec.extend_from_slice(&if big {
        size16.to_be_bytes()
    } else {
        size16.to_le_bytes()
    });
    if format == CompressFormat::Compressed2 {
        let len = piece.len() as u64;
        rec.extend_from_slice(&if big {
            len.to_be_bytes()
        } else {
            len.to_le_bytes()
        });
    }
    rec.extend_from_slice(piece);
    rec.resize(size, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata_core::raw::{Decompressor, RecordSource};

    fn record(ty: u32, size: u16, fill: u8) -> Vec<u8> {
        let mut v = ty.to_le_bytes().to_vec();
        v.extend_from_slice(&0u16.to_le_bytes());
        v.extend_from_slice(&size.to_le_bytes());
        v.resize(size as usize, fill);
        v
    }

    #[test]
    fn compressed_records_decompress_to_the_input_in_both_formats() {
        for format in [CompressFormat::Compressed, CompressFormat::Compressed2] {
            let mut c = Compressor::new(3, format, 64 * 1024, Endian::Little).unwrap();
            let mut out: Vec<Vec<u8>> = Vec::new();
            let mut input = Vec::new();
            for i in 0..5000u32 {
                let r = record(9, 8 + 8 * (i % 40) as u16, (i * 7) as u8);
                input.extend_from_slice(&r);
                c.push(&r, &[], &mut |rec| {
                    out.push(rec.to_vec());
                    Ok(())
                })
                .unwrap();
            }
            c.flush(&mut |rec| {
                out.push(rec.to_vec());
                Ok(())
            })
            .unwrap();
            assert!(out.len() > 1);
            let mut d = Decompressor::new(Endian::Little, 0).unwrap();
            let mut got = Vec::new();
            for (i, rec) in out.iter().enumerate() {
                let size = u16::from_le_bytes([rec[6], rec[7]]) as usize;
                assert_eq!(size, rec.len());
                if format == CompressFormat::Compressed2 {
                    assert_eq!(size % 8, 0);
                }
                d.feed(rec, i as u64).unwrap();
                while let Some(r) = d.next_record().unwrap() {
                    got.extend_from_slice(r.bytes);
                }
            }
            assert_eq!(got, input);
            assert!(c.ratio() >= 2, "ratio {}", c.ratio());
        }
    }

    /// Records pushed, with a plain 8-byte record (a FINISHED_ROUND) after every 37th
    /// and a plain record with a payload after every 1000th: what was emitted, in order,
    /// and the bytes in that order after decompression.
    fn run(c: &mut Compressor) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut expected = Vec::new();
        for i in 0..20_000u32 {
            let r = record(9, 8 + 8 * (i % 40) as u16, (i * 7) as u8);
            expected.extend_from_slice(&r);
            let mut emit = |rec: &[u8]| {
                out.push(rec.to_vec());
                Ok(())
            };
            c.push(&r, &[], &mut emit).unwrap();
            let (plain, payload) = match i {
                i if i % 1000 == 999 => (record(71, 16, 1), vec![2u8; 24]),
                i if i % 37 == 36 => (record(68, 8, 0), Vec::new()),
                _ => continue,
            };
            if !c.plain(&plain, &payload, &mut emit).unwrap() {
                out.push([plain.as_slice(), &payload].concat());
            }
        }
        c.flush(&mut |rec| {
            out.push(rec.to_vec());
            Ok(())
        })
        .unwrap();
        (out, expected)
    }

    #[test]
    fn threads_emit_what_the_inline_compressor_does_and_plain_records_in_order() {
        let new = || Compressor::new(1, CompressFormat::Compressed, 64 * 1024, Endian::Little);
        let (inline, expected) = run(&mut new().unwrap());
        let mut threaded = new().unwrap().in_thread().unwrap();
        let (from_threads, _) = run(&mut threaded);
        assert!(threaded.ratio() >= 2, "ratio {}", threaded.ratio());
        // The same records, in the same order, however compressed (one frame inline,
        // a frame per batch on threads).
        let pushed_before: Vec<usize> = (0..20_000)
            .filter(|i| i % 1000 == 999 || i % 37 == 36)
            .map(|i| i + 1)
            .collect();
        for out in [&inline, &from_threads] {
            let (got, plain_after) = expand(out, &expected);
            assert_eq!(got, expected);
            // Each plain record right after the records pushed before it.
            assert_eq!(plain_after, pushed_before);
        }
        assert_ne!(inline, from_threads);
    }

    /// A compressor that compressed a batch is not moved to threads: its frame is open.
    #[test]
    fn a_compressor_in_use_stays_on_its_thread() {
        let mut c =
            Compressor::new(1, CompressFormat::Compressed, 64 * 1024, Endian::Little).unwrap();
        c.push(&record(9, 64, 1), &[], &mut |_| Ok(())).unwrap();
        c.flush(&mut |_| Ok(())).unwrap();
        assert!(c.in_thread().is_err());
    }

    /// Decompressed, the compressed records of `out` (with one context, as perf does)
    /// and the plain ones between them: the records of `expected` they hold, and for
    /// each plain record, how many of those came before it.
    fn expand(out: &[Vec<u8>], expected: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let mut d = Decompressor::new(Endian::Little, 0).unwrap();
        let (mut got, mut plain_after) = (Vec::new(), Vec::new());
        for (i, rec) in out.iter().enumerate() {
            match u32::from_le_bytes(rec[..4].try_into().unwrap()) {
                81 => {
                    d.feed(rec, i as u64).unwrap();
                    while let Some(r) = d.next_record().unwrap() {
                        got.extend_from_slice(r.bytes);
                    }
                }
                68 | 71 => plain_after.push(records_in(expected, got.len())),
                other => panic!("record type {other}"),
            }
        }
        (got, plain_after)
    }

    /// How many of the records in `stream` lie in its first `len` bytes.
    fn records_in(stream: &[u8], len: usize) -> usize {
        let (mut at, mut n) = (0, 0);
        while at < len {
            at += u16::from_le_bytes([stream[at + 6], stream[at + 7]]) as usize;
            n += 1;
        }
        n
    }
}
