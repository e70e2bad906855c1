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
use perfdata_core::record::{
    HeaderAttr, HeaderFeature, HeaderTracingData, Record, RecordBody, RecordType,
};

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

    /// Encode and write a record built from its model (its size is computed).
    fn write_model(&mut self, record: Record) -> Result<()> {
        let bytes = record.encode(self.endian)?;
        self.write_record(&bytes, &[])
    }

    /// HEADER_ATTR: the attr, then its ids. A reader finds the ids after `attr.size`
    /// bytes, so the size field is written as the attr's bytes are long whatever it
    /// said (a file's reader goes by the header's attr_size and may have read an attr
    /// whose own size field disagrees). Returns whether the size field was corrected.
    pub fn write_attr(&mut self, attr: &PerfEventAttr, ids: &[u64]) -> Result<bool> {
        let mut attr = attr.clone();
        let corrected = attr.size as usize != attr.encoded_len;
        attr.size = u32::try_from(attr.encoded_len).map_err(|_| {
            WriteError::unsupported(None, format!("an attr of {} bytes", attr.encoded_len))
        })?;
        let body = HeaderAttr {
            attr,
            ids: ids.to_vec(),
        };
        self.write_model(Record::new(
            RecordType::HeaderAttr,
            RecordBody::HeaderAttr(body),
        ))?;
        Ok(corrected)
    }

    /// HEADER_FEATURE with the feature's section bytes.
    pub fn write_feature(&mut self, id: FeatureId, payload: &[u8]) -> Result<()> {
        let body = HeaderFeature {
            feat_id: id.bit() as u64,
            data: payload.to_vec(),
        };
        self.write_model(Record::new(
            RecordType::HeaderFeature,
            RecordBody::HeaderFeature(body),
        ))
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
        let body = HeaderTracingData {
            size,
            rest: vec![0; 4],
        };
        let mut record = Record::new(
            RecordType::HeaderTracingData,
            RecordBody::HeaderTracingData(body),
        );
        record.payload = blob.to_vec();
        record.payload.resize(padded, 0);
        self.write_model(record)
    }

    /// Any record already encoded in this stream's byte order, then its payload.
    pub fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(io_err)?;
        self.out.write_all(payload).map_err(io_err)?;
        self.written += (bytes.len() + payload.len()) as u64;
        Ok(())
    }

    /// Append more payload to the record written last (see
    /// [`crate::file::FileWriter::write_payload`]).
    pub fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.out.write_all(more).map_err(io_err)?;
        self.written += more.len() as u64;
        Ok(())
    }

    /// Flush and hand back the output.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}
