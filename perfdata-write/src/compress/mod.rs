//! Writing COMPRESSED (81) and COMPRESSED2 (83) records, as `perf record -z` does: one
//! zstd context for the whole stream, flushed (never ended) after each batch of records,
//! the compressed bytes cut into records whose size fits the u16 header.size.
//!
//! perf 6.1 decompresses each compressed record into a buffer of
//! HEADER_COMPRESSED.mmap_len bytes, so a batch never holds more than that.

use binrw::Endian;
use perfdata_core::record::RecordType;
use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

use crate::error::{Result, WriteError};

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

/// Largest compressed payload per record, so that header.size fits in a u16 (and, for
/// COMPRESSED2, the padded size too).
const MAX_PAYLOAD: usize = u16::MAX as usize - 16 - 7;

/// Batches records and turns them into compressed records.
pub struct Compressor {
    enc: Encoder<'static>,
    endian: Endian,
    format: CompressFormat,
    mmap_len: usize,
    batch: Vec<u8>,
    /// The compressed bytes of a batch, and a record of them: kept between batches so
    /// that compressing allocates nothing per batch.
    compressed: Vec<u8>,
    record: Vec<u8>,
    /// Totals, for the COMPRESSED feature's ratio.
    bytes_in: u64,
    bytes_out: u64,
}

impl Compressor {
    /// A compressor at zstd `level` for records of `format`.
    pub fn new(
        level: i32,
        format: CompressFormat,
        mmap_len: usize,
        endian: Endian,
    ) -> Result<Self> {
        let enc =
            Encoder::new(level).map_err(|e| WriteError::io("creating a zstd compressor", e))?;
        Ok(Compressor {
            enc,
            endian,
            format,
            mmap_len: Self::batch_limit(mmap_len),
            batch: Vec::new(),
            compressed: Vec::new(),
            record: Vec::new(),
            bytes_in: 0,
            bytes_out: 0,
        })
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

    /// perf's ratio: decompressed bytes per compressed byte, rounded.
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
            self.flush(emit)?;
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
                self.flush(emit)?;
            }
            bytes = later;
        }
        Ok(())
    }

    /// Compress the current batch (if any) and emit its compressed records.
    pub fn flush(&mut self, emit: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let zerr = |e: std::io::Error| WriteError::io("zstd compression", e);
        // zstd writes straight into the spare room of one buffer, large enough for the
        // batch's worst case (more room is made should it not be).
        let out = &mut self.compressed;
        out.clear();
        out.reserve(zstd::compress_bound(self.batch.len()) + 1024);
        let mut input = InBuffer::around(&self.batch);
        while input.pos() < self.batch.len() {
            make_room(out);
            let pos = out.len();
            self.enc
                .run(&mut input, &mut OutBuffer::around_pos(out, pos))
                .map_err(zerr)?;
        }
        loop {
            make_room(out);
            let pos = out.len();
            let remaining = self
                .enc
                .flush(&mut OutBuffer::around_pos(out, pos))
                .map_err(zerr)?;
            if remaining == 0 {
                break;
            }
        }
        self.bytes_in += self.batch.len() as u64;
        self.bytes_out += out.len() as u64;
        self.batch.clear();
        for piece in self.compressed.chunks(MAX_PAYLOAD) {
            record_into(&mut self.record, piece, self.format, self.endian);
            emit(&self.record)?;
        }
        Ok(())
    }
}

/// At least 64 KiB of spare room in `out` for zstd to write into.
fn make_room(out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 64 << 10 {
        out.reserve(64 << 10);
    }
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
}
