//! Pipe-mode writing: the 16-byte header, then only records, never seeking.
//!
//! perf 6.1's order: HEADER_ATTR records, HEADER_FEATURE records, the end-of-features
//! marker (an empty HEADER_FEATURE with id 32), HEADER_TRACING_DATA with its blob after
//! it, then the data records.

use std::io::Write;

use binrw::Endian;
use perfdata_core::attr::PerfEventAttr;
use perfdata_core::codec::encode;
use perfdata_core::feature::FeatureId;
use perfdata_core::header::{Magic, PIPE_HEADER_SIZE};
use perfdata_core::record::{RecordHeader, RecordType};

use crate::error::{Result, WriteError};

/// A pipe-mode writer.
pub struct PipeWriter<W: Write> {
    out: W,
    endian: Endian,
    written: u64,
}

fn io_err(e: std::io::Error) -> WriteError {
    WriteError::io("writing the output stream", e)
}

impl<W: Write> PipeWriter<W> {
    /// The largest feature section a HEADER_FEATURE record can carry (its size is a u16).
    pub const MAX_FEATURE_PAYLOAD: usize = u16::MAX as usize - 16;

    /// Write the pipe header.
    pub fn new(mut out: W, endian: Endian) -> Result<Self> {
        out.write_all(&Magic::V2.bytes(endian)).map_err(io_err)?;
        out.write_all(&encode(&PIPE_HEADER_SIZE, endian, ()))
            .map_err(io_err)?;
        Ok(PipeWriter {
            out,
            endian,
            written: PIPE_HEADER_SIZE,
        })
    }

    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Bytes written so far (the offset the next record will have).
    pub fn position(&self) -> u64 {
        self.written
    }

    fn header(&self, ty: RecordType, size: usize) -> Result<Vec<u8>> {
        let size = u16::try_from(size).map_err(|_| {
            WriteError::unsupported(
                None,
                format!("a {ty} record of {size} bytes does not fit the u16 record size"),
            )
        })?;
        Ok(encode(&RecordHeader::new(ty, 0, size), self.endian, ()))
    }

    /// HEADER_ATTR: the attr, then its ids.
    pub fn write_attr(&mut self, attr: &PerfEventAttr, ids: &[u64]) -> Result<()> {
        let mut body = encode(attr, self.endian, ());
        for id in ids {
            body.extend_from_slice(&encode(id, self.endian, ()));
        }
        let mut rec = self.header(RecordType::HeaderAttr, 8 + body.len())?;
        rec.extend_from_slice(&body);
        self.write_record(&rec, &[])
    }

    /// HEADER_FEATURE with the feature's section bytes.
    pub fn write_feature(&mut self, id: FeatureId, payload: &[u8]) -> Result<()> {
        let mut rec = self.header(RecordType::HeaderFeature, 16 + payload.len())?;
        rec.extend_from_slice(&encode(&(id.bit() as u64), self.endian, ()));
        rec.extend_from_slice(payload);
        self.write_record(&rec, &[])
    }

    /// The end-of-features marker perf 6.1 sends: an empty HEADER_FEATURE with id 32.
    pub fn write_feature_end(&mut self) -> Result<()> {
        self.write_feature(FeatureId::from_bit(FeatureId::PERF_6_1_LAST), &[])
    }

    /// HEADER_TRACING_DATA: `{u32 size; u32 pad}`, then the blob padded to 8.
    pub fn write_tracing_data(&mut self, blob: &[u8]) -> Result<()> {
        let padded = blob.len().div_ceil(8) * 8;
        let size = u32::try_from(padded)
            .map_err(|_| WriteError::unsupported(None, "tracing data larger than 4 GiB"))?;
        let mut rec = self.header(RecordType::HeaderTracingData, 16)?;
        rec.extend_from_slice(&encode(&size, self.endian, ()));
        rec.extend_from_slice(&[0u8; 4]);
        let mut payload = blob.to_vec();
        payload.resize(padded, 0);
        self.write_record(&rec, &payload)
    }

    /// Any record already encoded in this stream's byte order, then its payload.
    pub fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(io_err)?;
        self.out.write_all(payload).map_err(io_err)?;
        self.written += (bytes.len() + payload.len()) as u64;
        Ok(())
    }

    /// Flush and hand back the output.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}
