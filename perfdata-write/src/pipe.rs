//! Pipe-mode writing: the 16-byte header, then only records, never seeking.
//!
//! perf 6.1's order: HEADER_ATTR records, HEADER_FEATURE records, the end-of-features
//! marker (an empty HEADER_FEATURE with id 32), HEADER_TRACING_DATA with its blob after
//! it, then the data records.

use std::io::Write;

use binrw::Endian;
use perfdata_core::attr::PerfEventAttr;
use perfdata_core::encode;
use perfdata_core::feature::FeatureId;
use perfdata_core::header::{Magic, PIPE_HEADER_SIZE};
use perfdata_core::record::{FeatureRecordView, RecordView};
use perfdata_core::record::{
    HeaderAttr, HeaderFeature, HeaderTracingData, Record, RecordBody, RecordType,
};

use crate::error::{Result, WriteError};
use crate::framing::{checked_type, OwedPayload};

/// A pipe-mode writer.
///
/// ```
/// use perfdata_core::PerfReader;
/// use perfdata_write::PipeWriter;
///
/// // A pipe stream's own records (attrs, features as records) copied as they come.
/// let mut reader = PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/pipe-cpu-clock.data"))?;
/// let mut writer = PipeWriter::new(Vec::new(), reader.meta().endian)?;
/// while let Some(item) = reader.next_record()? {
///     writer.write_record(item.raw.bytes, item.raw.payload)?;
/// }
/// let bytes = writer.finish()?;
/// assert_eq!(bytes.len() as u64, std::fs::metadata(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/pipe-cpu-clock.data"))?.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PipeWriter<W: Write> {
    out: W,
    endian: Endian,
    written: u64,
    /// Whether a COMPRESSED HEADER_FEATURE went out: a reader needs it before the
    /// first compressed record.
    announced_compression: bool,
    /// Whether a HEADER_ATTR went out: perf resolves the records that name an event
    /// through the attrs sent before them.
    attr_written: bool,
    /// Copying an input stream as it is (the convert pipeline): its records stand.
    copying_stream: bool,
    /// The payload the last record still waits for.
    owed: OwedPayload,
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
        out.write_all(&encode(&PIPE_HEADER_SIZE, endian, ())?)
            .map_err(io_err)?;
        Ok(PipeWriter {
            out,
            endian,
            written: PIPE_HEADER_SIZE,
            announced_compression: false,
            attr_written: false,
            copying_stream: false,
            owed: OwedPayload::default(),
        })
    }

    /// The records written are an input stream's, copied as it had them (the convert
    /// pipeline): a stream perf wrote stands as it was.
    pub(crate) fn copying_stream(mut self) -> Self {
        self.copying_stream = true;
        self
    }

    /// The byte order written.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Bytes written so far (the offset the next record will have).
    pub fn position(&self) -> u64 {
        self.written
    }

    /// Encode and write a record built from its model (its size is computed; the
    /// encoding ends with the payload).
    fn write_model(&mut self, record: Record) -> Result<()> {
        let bytes = record.encode(self.endian)?;
        let (record_bytes, payload) = bytes.split_at(bytes.len() - record.payload.len());
        self.write_record(record_bytes, payload)
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

    /// Any record already encoded in this stream's byte order (`bytes` exactly
    /// `header.size` long), then its payload (HEADER_TRACING_DATA's blob, AUXTRACE's
    /// trace, as long as the record says). Refused, as perf 6.1 cannot read the stream
    /// after them: a record whose size field is not its length or whose payload is not
    /// as long as it says; a compressed record before the COMPRESSED feature (sent with
    /// [`PipeWriter::write_feature`]); a kernel record (SAMPLE, MMAP, ...), EVENT_UPDATE,
    /// ID_INDEX or STAT before any HEADER_ATTR record (sent with [`PipeWriter::write_attr`]).
    pub fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.owed.settled("a record")?;
        let (ty, left) = checked_type(bytes, payload, self.endian)?;
        let compressed_bit = u64::from(FeatureId::Compressed.bit());
        let names_an_event = ty.is_kernel()
            || matches!(
                ty,
                RecordType::EventUpdate | RecordType::IdIndex | RecordType::Stat
            );
        match ty {
            RecordType::HeaderAttr => self.attr_written = true,
            _ if names_an_event && !self.attr_written && !self.copying_stream => {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "a {ty} record before any ATTR record: perf cannot tell its event \
                         (write_attr first)"
                    ),
                ));
            }
            RecordType::HeaderFeature
                if FeatureRecordView::new(bytes, self.endian, 0)
                    .is_ok_and(|v| v.feat_id() == compressed_bit) =>
            {
                self.announced_compression = true;
            }
            RecordType::Compressed | RecordType::Compressed2
                if !self.announced_compression && !self.copying_stream =>
            {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "a {ty} record before the COMPRESSED feature: perf cannot decompress \
                         the stream (write_feature(FeatureId::Compressed, ..) first)"
                    ),
                ));
            }
            _ => {}
        }
        self.out.write_all(bytes).map_err(io_err)?;
        self.out.write_all(payload).map_err(io_err)?;
        self.written += (bytes.len() + payload.len()) as u64;
        self.owed.owe(ty, left);
        Ok(())
    }

    /// Append more payload to the record written last (see
    /// [`crate::file::FileWriter::write_payload`]).
    pub fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.owed.pay(more.len() as u64)?;
        self.out.write_all(more).map_err(io_err)?;
        self.written += more.len() as u64;
        Ok(())
    }

    /// Flush and hand back the output.
    pub fn finish(mut self) -> Result<W> {
        self.owed.settled("the end of the stream")?;
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compress::{CompressFormat, Compressor};
    use perfdata_core::feature::{Compressed, Feature, FeatureSection};

    const LE: Endian = Endian::Little;
    /// FINISHED_ROUND: a record with nothing but its header.
    const ROUND: [u8; 8] = [68, 0, 0, 0, 0, 0, 8, 0];

    /// A FINISHED_ROUND compressed into one COMPRESSED record.
    fn compressed_record() -> Vec<u8> {
        let mut c = Compressor::new(1, CompressFormat::Compressed, 1 << 16, LE).unwrap();
        let mut out = Vec::new();
        let mut sink = |rec: &[u8]| {
            out.push(rec.to_vec());
            Ok(())
        };
        c.push(&ROUND, &[], &mut sink).unwrap();
        c.flush(&mut sink).unwrap();
        assert_eq!(out.len(), 1);
        out.pop().unwrap()
    }

    /// A pipe-mode SAMPLE of an attr with sample_type IP: its ip after the header.
    fn sample() -> Vec<u8> {
        let mut r = vec![9, 0, 0, 0, 0, 0, 16, 0];
        r.extend_from_slice(&0x1234u64.to_le_bytes());
        r
    }

    fn refusal(w: &mut PipeWriter<Vec<u8>>, bytes: &[u8]) -> String {
        w.write_record(bytes, &[]).unwrap_err().to_string()
    }

    #[test]
    fn compressed_records_need_the_feature_first() {
        let record = compressed_record();
        let mut w = PipeWriter::new(Vec::new(), LE).unwrap();
        let err = refusal(&mut w, &record);
        assert!(
            err.contains("a COMPRESSED record before the COMPRESSED feature"),
            "{err}"
        );
        let feature = Feature::Compressed(Compressed::zstd(1, 0, 1 << 16));
        let section = FeatureSection::new(FeatureId::Compressed, feature);
        w.write_feature(FeatureId::Compressed, &section.encode(LE).unwrap())
            .unwrap();
        w.write_record(&record, &[]).unwrap();
        let out = w.finish().unwrap();
        // The stream reads back: the feature, then the compressed FINISHED_ROUND.
        let mut r = perfdata_core::PerfReader::from_vec(out, Default::default()).unwrap();
        let item = r.next_record().unwrap().unwrap();
        assert_eq!(item.raw.record_type(), RecordType::HeaderFeature);
        let item = r.next_record().unwrap().unwrap();
        assert_eq!(item.raw.record_type(), RecordType::FinishedRound);
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn records_naming_an_event_need_an_attr_first() {
        let mut w = PipeWriter::new(Vec::new(), LE).unwrap();
        let err = refusal(&mut w, &sample());
        assert!(
            err.contains("a SAMPLE record before any ATTR record"),
            "{err}"
        );
        // ID_INDEX with no entries: perf looks its ids up among the attrs all the same.
        let err = refusal(&mut w, &[69, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(err.contains("a ID_INDEX record before any ATTR"), "{err}");
        // A user record that names no event may come first.
        w.write_record(&ROUND, &[]).unwrap();
        let attr = PerfEventAttr {
            sample_type: perfdata_core::attr::SampleType::IP,
            ..Default::default()
        };
        w.write_attr(&attr, &[1]).unwrap();
        w.write_record(&sample(), &[]).unwrap();
        let out = w.finish().unwrap();
        let mut r = perfdata_core::PerfReader::from_vec(out, Default::default()).unwrap();
        let mut types = Vec::new();
        while let Some(item) = r.next_record().unwrap() {
            types.push(item.raw.record_type());
        }
        assert_eq!(
            types,
            [
                RecordType::FinishedRound,
                RecordType::HeaderAttr,
                RecordType::Sample
            ]
        );
    }

    #[test]
    fn records_must_frame_as_written() {
        let mut w = PipeWriter::new(Vec::new(), LE).unwrap();
        let err = refusal(&mut w, &[68, 0, 0, 0, 0, 0, 16, 0]);
        assert!(
            err.contains("a record of 8 bytes whose header says 16"),
            "{err}"
        );
        let err = w.write_record(&ROUND, b"trailing").unwrap_err().to_string();
        assert!(
            err.contains("followed by 8 payload bytes where it says 0"),
            "{err}"
        );
        // Nothing refused went out: the stream is still its 16-byte header.
        assert_eq!(w.position(), PIPE_HEADER_SIZE);
        // The tracing data's blob is its payload, padded to 8.
        w.write_tracing_data(b"tracing").unwrap();
        assert_eq!(w.position(), PIPE_HEADER_SIZE + 16 + 8);
    }

    #[test]
    fn a_copied_stream_stands_as_it_was() {
        // Copying an input stream (the convert pipeline), what perf wrote stays.
        let mut w = PipeWriter::new(Vec::new(), LE).unwrap().copying_stream();
        w.write_record(&compressed_record(), &[]).unwrap();
        w.write_record(&sample(), &[]).unwrap();
        // Framing is checked all the same.
        let err = refusal(&mut w, &[68, 0, 0, 0, 0, 0, 16, 0]);
        assert!(err.contains("whose header says 16"), "{err}");
    }
}
