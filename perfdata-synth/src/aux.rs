//! AUXTRACE with a payload of any size, written piece by piece: what an Intel PT
//! recording holds (gigabytes of AUX data), made without the hardware, to measure and
//! test that readers and converters stream such payloads instead of holding them.

use perfdata_core::record::{Auxtrace, Record, RecordBody, RecordType};

use super::rng::Rng;
use super::writer::{SynthTarget, SynthWriter};
use perfdata_write::error::Result;

/// The payload repeats a random block of this size, each copy starting with its index
/// (so a lost, repeated or misplaced block changes the payload's hash), which zstd
/// compresses to almost nothing.
const BLOCK: usize = 64 * 1024;

impl<T: SynthTarget> SynthWriter<T> {
    /// One AUXTRACE record (CPU 0, AUX buffer 0) and `len` bytes of trace data made from
    /// `seed`, written in blocks: memory does not grow with `len`. When compressing,
    /// the record and its data go into the compressed records too (perf leaves AUXTRACE
    /// plain), so that a small file expands to a record of `len` bytes.
    pub fn auxtrace(&mut self, len: u64, seed: u64) -> Result<()> {
        self.finished_round()?;
        let body = RecordBody::Auxtrace(Auxtrace {
            size: len,
            reference: seed,
            tid: -1,
            ..Auxtrace::default()
        });
        self.buf.clear();
        Record::new(RecordType::Auxtrace, body).encode_into(self.endian, &mut self.buf)?;
        let mut block = vec![0u8; BLOCK];
        let mut rng = Rng::new(seed, 0xa0c5);
        for word in block.chunks_exact_mut(8) {
            word.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let target = &mut self.target;
        let mut emit = |rec: &[u8]| target.write_record(rec, &[]);
        match self.compressor.as_mut() {
            Some(c) => c.push_stream(&self.buf, &mut emit)?,
            None => emit(&self.buf)?,
        }
        let mut left = len;
        let mut index = 0u64;
        while left > 0 {
            block[..8].copy_from_slice(&index.to_le_bytes());
            let piece = &block[..left.min(BLOCK as u64) as usize];
            match self.compressor.as_mut() {
                Some(c) => c.push_stream(piece, &mut |rec| target.write_record(rec, &[]))?,
                None => target.write_payload(piece)?,
            }
            left -= piece.len() as u64;
            index += 1;
        }
        self.record_bytes += self.buf.len() as u64 + len;
        self.records += 1;
        self.finished_round()
    }
}
