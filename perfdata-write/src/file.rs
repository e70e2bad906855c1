//! File-mode writing, streamed: the data section goes straight to the output and the
//! header is written last, by seeking back.
//!
//! The layout is perf's own (FORMAT-NOTES section 1): header at 0; the id arrays of every
//! attr from 104; the attrs section; old-style event types if any; the data section; the
//! feature index at data.offset + data.size, then the payloads back to back in bit order.
//! A file perf wrote this way comes out byte for byte as it went in.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};

use binrw::Endian;
use perfdata_core::attr::{FileAttr, PerfEventAttr};
use perfdata_core::feature::{
    AuxTrace, AuxTraceEntry, Feature, FeatureId, FeatureSection, SampleTime,
};
use perfdata_core::header::{
    EventType, FeatureBitmap, FileHeader, FileSection, Magic, FILE_HEADER_SIZE,
};
use perfdata_core::raw::{header_of, locate, Decompressor, Origin, RawRecord, RecordSource};
use perfdata_core::record::{EventIndex, RecordHeader, RecordType};
use perfdata_core::{encode, EventAttr, Metadata};

use crate::error::{Result, WriteError};
use crate::framing::{checked_type, OwedPayload};
use crate::range_copy::RangeCopy;

/// An event to write: its attr and ids.
#[derive(Debug, Clone)]
pub struct AttrEntry {
    /// The attr.
    pub attr: PerfEventAttr,
    /// The sample ids of the attr's events (its ids section).
    pub ids: Vec<u64>,
}

impl From<&EventAttr> for AttrEntry {
    fn from(ev: &EventAttr) -> Self {
        AttrEntry {
            attr: ev.attr.clone(),
            ids: ev.ids.clone(),
        }
    }
}

impl From<EventAttr> for AttrEntry {
    fn from(ev: EventAttr) -> Self {
        AttrEntry {
            attr: ev.attr,
            ids: ev.ids,
        }
    }
}

impl AttrEntry {
    /// Every event of a recording, in its order: the attrs section of a copy.
    pub fn all(meta: &Metadata) -> Vec<AttrEntry> {
        meta.attrs().iter().map(AttrEntry::from).collect()
    }
}

/// Records that only a pipe stream carries: a file holds the same content in its
/// header sections (attrs, event types, TRACING_DATA and the other features), and perf
/// does not expect them in a file's data section.
fn pipe_only(ty: RecordType) -> Option<&'static str> {
    match ty {
        RecordType::HeaderAttr => Some("attrs are the attrs section: give them to FileWriter::new"),
        RecordType::HeaderEventType => {
            Some("event types are the event_types section: give them to FileWriter::new")
        }
        RecordType::HeaderTracingData => {
            Some("tracing data is the TRACING_DATA feature: give it to finish")
        }
        RecordType::HeaderFeature => Some("features are feature sections: give them to finish"),
        _ => None,
    }
}

/// Where an AUXTRACE record landed: what the AUXTRACE feature indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxtracePosition {
    /// File offset of the AUXTRACE record.
    pub offset: u64,
    /// The record's header.size (perf indexes the record, not the trace bytes after it).
    pub size: u64,
}

/// A file-mode writer over a seekable output.
///
/// ```
/// use perfdata_core::PerfReader;
/// use perfdata_write::FileWriter;
///
/// // Copy the records of a recording into a new file; the writer derives SAMPLE_TIME.
/// let mut reader = PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// let mut writer = FileWriter::for_meta(std::io::Cursor::new(Vec::new()), reader.meta())?;
/// while let Some(item) = reader.next_record()? {
///     writer.write_record(item.raw.bytes, item.raw.payload)?;
/// }
/// let bytes = writer.finish(Vec::new())?.into_inner();
/// let copy = PerfReader::from_vec(bytes, Default::default())?;
/// assert_eq!(copy.meta().attrs().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileWriter<W: Write + Seek> {
    out: W,
    endian: Endian,
    attr_size: u64,
    attrs_section: FileSection,
    event_types_section: FileSection,
    data_offset: u64,
    pos: u64,
    auxtrace: Vec<AuxtracePosition>,
    /// The compressed record type written, if any: the file then needs COMPRESSED.
    compressed: Option<RecordType>,
    /// The events, for perf's checks at open; `None`: keep what perf refused in the input.
    attrs: Option<Vec<perfdata_core::attr::PerfEventAttr>>,
    /// What [`FileWriter::finish`] derives from the records written; `None` when the
    /// caller derives the features itself (the convert pipeline).
    derive: Option<Derive>,
    /// Copying an input file's data section as it is: records perf keeps in a file
    /// (simpleperf's tracing data) are allowed there (the convert pipeline).
    copying_file: bool,
    /// The payload the last record still waits for.
    owed: OwedPayload,
    /// Copies runs of unchanged input records in the kernel (see
    /// [`FileWriter::copy_runs_from`]).
    copy: Option<RangeCopy>,
}

/// The features a file's records determine, gathered as they are written.
struct Derive {
    events: EventIndex,
    /// First and last sample time.
    span: Option<(u64, u64)>,
    /// Expands COMPRESSED records to find the samples inside.
    decompressor: Option<Decompressor>,
}

impl Derive {
    fn sample(&mut self, raw: &RawRecord<'_>, endian: Endian) {
        if raw.record_type() != RecordType::Sample {
            return;
        }
        if let Some(t) = locate(raw, &self.events, endian).time {
            self.span = Some(self.span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
    }

    fn record(&mut self, raw: &RawRecord<'_>, endian: Endian) -> Result<()> {
        if !raw.is_compressed() {
            self.sample(raw, endian);
            return Ok(());
        }
        if self.decompressor.is_none() {
            self.decompressor = Some(Decompressor::new(endian, 0)?);
        }
        let d = self.decompressor.as_mut().expect("just made");
        d.feed(raw.bytes, raw.offset)?;
        let mut inner = Vec::new();
        while let Some(r) = d.next_record()? {
            inner.push(r.to_owned_record());
        }
        for r in &inner {
            self.sample(&r.as_raw(endian), endian);
        }
        Ok(())
    }
}

fn io_err(e: std::io::Error) -> WriteError {
    WriteError::io("writing the output file", e)
}

impl<W: Write + Seek> FileWriter<W> {
    /// Start a file: a placeholder header, the ids and attrs, and old-style event types
    /// (empty for anything perf wrote since 3.x). Records follow with `write_record`.
    pub fn new(
        mut out: W,
        endian: Endian,
        attrs: &[AttrEntry],
        event_types: &[EventType],
    ) -> Result<Self> {
        let attr_len = attrs
            .first()
            .map_or(perfdata_core::attr::ATTR_SIZE_PERF_6_1, |a| {
                a.attr.encoded_len
            });
        if let Some((i, a)) = attrs
            .iter()
            .enumerate()
            .find(|(_, a)| a.attr.encoded_len != attr_len)
        {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "attr {i} is {} bytes but attr 0 is {attr_len}: a file has one attr size",
                    a.attr.encoded_len
                ),
            ));
        }
        // perf (and the reader) need at least PERF_ATTR_SIZE_VER0 bytes of attr in a
        // file; a pipe's HEADER_ATTR may say less.
        if attr_len < perfdata_core::attr::ATTR_SIZE_VER0 && !attrs.is_empty() {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "attrs of {attr_len} bytes: a file's attrs are at least {} bytes \
                     (PERF_ATTR_SIZE_VER0)",
                    perfdata_core::attr::ATTR_SIZE_VER0
                ),
            ));
        }
        let events = EventIndex::of(attrs.iter().map(|a| (&a.attr, a.ids.as_slice())));
        out.seek(SeekFrom::Start(0)).map_err(io_err)?;
        out.write_all(&[0u8; FILE_HEADER_SIZE as usize])
            .map_err(io_err)?;
        let mut pos = FILE_HEADER_SIZE;
        let mut sections = Vec::with_capacity(attrs.len());
        for a in attrs {
            let size = a.ids.len() as u64 * 8;
            sections.push(FileSection { offset: pos, size });
            let mut buf = Vec::with_capacity(size as usize);
            for id in &a.ids {
                buf.extend_from_slice(&encode(id, endian, ())?);
            }
            out.write_all(&buf).map_err(io_err)?;
            pos += size;
        }
        let attr_size = attr_len as u64 + 16;
        let attrs_section = FileSection {
            offset: pos,
            size: attr_size * attrs.len() as u64,
        };
        for (a, ids) in attrs.iter().zip(sections) {
            let file_attr = FileAttr {
                attr: a.attr.clone(),
                ids,
            };
            out.write_all(&encode(&file_attr, endian, ())?)
                .map_err(io_err)?;
        }
        pos += attrs_section.size;
        let event_types_section = if event_types.is_empty() {
            FileSection::default()
        } else {
            let s = FileSection {
                offset: pos,
                size: EventType::SIZE * event_types.len() as u64,
            };
            for event_type in event_types {
                out.write_all(&encode(event_type, endian, ())?)
                    .map_err(io_err)?;
            }
            pos += s.size;
            s
        };
        Ok(FileWriter {
            out,
            endian,
            attr_size,
            attrs_section,
            event_types_section,
            data_offset: pos,
            pos,
            auxtrace: Vec::new(),
            compressed: None,
            attrs: Some(attrs.iter().map(|a| a.attr.clone()).collect()),
            derive: Some(Derive {
                events,
                span: None,
                decompressor: None,
            }),
            copying_file: false,
            owed: OwedPayload::default(),
            copy: None,
        })
    }

    /// A file with the attrs and event types of `meta`, in its byte order: where a copy
    /// of a recording starts.
    pub fn for_meta(out: W, meta: &Metadata) -> Result<Self> {
        Self::new(out, meta.endian, &AttrEntry::all(meta), &meta.event_types)
    }

    /// A conversion of a file perf 6.1 refuses for its events keeps them as they were.
    pub(crate) fn keeping_what_perf_refused(mut self) -> Self {
        self.attrs = None;
        self
    }

    /// The caller derives the features itself and finishes with
    /// [`FileWriter::finish_encoded`] (the convert pipeline, with the input's features
    /// at hand; the synthetic-trace builder, which knows its samples).
    pub fn caller_derives(mut self) -> Self {
        self.derive = None;
        self
    }

    /// The records written are an input file's data section copied as it was: a
    /// record perf or simpleperf left there (simpleperf's tracing data) stays.
    pub(crate) fn copying_file_data(mut self) -> Self {
        self.copying_file = true;
        self
    }

    /// Let records given with [`FileWriter::write_input_record`] be copied from `input`
    /// by the kernel (`copy_file_range`) where they follow each other in it, rather than
    /// through memory. `output` must be a handle of the file this writer's output goes
    /// to (`File::try_clone` of it): the copies are written into it at the writer's
    /// position. Where the two file systems cannot copy between them, the bytes go
    /// through memory after all.
    pub fn copy_runs_from(mut self, input: File, output: File) -> Self {
        self.copy = Some(RangeCopy::new(input, output));
        self
    }

    /// The records written next, up to input offset `end`, are expected to be the
    /// input's own bytes, one run (an identity conversion's data section): their copy
    /// is handed to the kernel whole at the first of them, not piece by piece behind
    /// the records written. Records that turn out otherwise are still written right (the
    /// copy is stopped and cut back where the run ends). Without
    /// [`FileWriter::copy_runs_from`], nothing.
    pub(crate) fn expect_input_run_to(&mut self, end: u64) -> Result<()> {
        match self.copy.as_mut() {
            Some(copy) => copy.expect_run_to(end),
            None => Ok(()),
        }
    }

    /// Bytes the kernel copied from the input (see [`FileWriter::copy_runs_from`]).
    pub fn bytes_copied(&self) -> u64 {
        self.copy.as_ref().map_or(0, RangeCopy::copied)
    }

    /// The byte order written.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Bytes of data written so far.
    pub fn data_size(&self) -> u64 {
        self.pos - self.data_offset
    }

    /// Append a record already encoded in this file's byte order (header included,
    /// `bytes` exactly `header.size` long), followed by its payload (tracing data, AUX
    /// trace bytes). Refused: a record whose size field is not its length, and the
    /// records only a pipe stream carries (HEADER_ATTR, HEADER_EVENT_TYPE,
    /// HEADER_TRACING_DATA, HEADER_FEATURE), whose content a file holds in its header.
    pub fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.write_record_from(bytes, payload, None)
    }

    /// [`FileWriter::write_record`] of a record that is, with its payload, the bytes of
    /// the input file at offset `at` (given to [`FileWriter::copy_runs_from`]).
    pub fn write_input_record(&mut self, bytes: &[u8], payload: &[u8], at: u64) -> Result<()> {
        self.write_record_from(bytes, payload, Some(at))
    }

    /// [`FileWriter::write_input_record`] of a kernel record as the reader framed it
    /// (type below 64, `bytes` its whole `header.size`, no payload): none of the checks
    /// can fail for it, so the conversion's most common write skips them (a record
    /// that is not one goes through them after all).
    pub(crate) fn write_kernel_record(&mut self, bytes: &[u8], at: u64) -> Result<()> {
        let header = header_of(bytes, self.endian);
        let framed = bytes.len() >= RecordHeader::SIZE
            && header.type_ < RecordType::USER_TYPE_START
            && usize::from(header.size) == bytes.len();
        if !framed || self.derive.is_some() || !self.owed.is_settled() {
            return self.write_record_from(bytes, &[], Some(at));
        }
        let len = bytes.len() as u64;
        let copied = match self.copy.as_mut() {
            Some(copy) => copy.take(&mut self.out, at, len)?,
            None => false,
        };
        if !copied {
            self.out.write_all(bytes).map_err(io_err)?;
        }
        self.pos += len;
        Ok(())
    }

    fn write_record_from(&mut self, bytes: &[u8], payload: &[u8], at: Option<u64>) -> Result<()> {
        self.owed.settled("a record")?;
        let (ty, left) = checked_type(bytes, payload, self.endian)?;
        if let Some(why) = pipe_only(ty).filter(|_| !self.copying_file) {
            return Err(WriteError::unsupported(
                None,
                format!("a {ty} record in a file's data section: it is pipe-only ({why})"),
            ));
        }
        if matches!(ty, RecordType::Compressed | RecordType::Compressed2) {
            self.compressed.get_or_insert(ty);
        }
        if let Some(d) = self.derive.as_mut() {
            let raw = RawRecord {
                header: header_of(bytes, self.endian),
                offset: self.pos,
                bytes,
                payload,
                origin: Origin::Top,
                stream: 0,
                rest: left,
            };
            d.record(&raw, self.endian)?;
        }
        if ty == RecordType::Auxtrace {
            self.auxtrace.push(AuxtracePosition {
                offset: self.pos,
                size: bytes.len() as u64,
            });
        }
        let len = (bytes.len() + payload.len()) as u64;
        let copied = match (self.copy.as_mut(), at) {
            // A payload still to come is written as it comes: the run ends here.
            (Some(copy), Some(at)) if left == 0 => copy.take(&mut self.out, at, len)?,
            (Some(copy), _) => copy.flush(&mut self.out).map(|_| false)?,
            (None, _) => false,
        };
        if !copied {
            self.out.write_all(bytes).map_err(io_err)?;
            self.out.write_all(payload).map_err(io_err)?;
        }
        self.pos += len;
        self.owed.owe(ty, left);
        Ok(())
    }

    /// End a run of copied records: what is written next goes after it.
    fn end_run(&mut self) -> Result<()> {
        match self.copy.as_mut() {
            Some(copy) => copy.flush(&mut self.out),
            None => Ok(()),
        }
    }

    /// End the run and wait for every copy of the kernel's to be done: the data
    /// section is whole (and [`FileWriter::bytes_copied`] final) once this returns.
    pub(crate) fn finish_copies(&mut self) -> Result<()> {
        self.end_run()?;
        match self.copy.as_mut() {
            Some(copy) => copy.finish(),
            None => Ok(()),
        }
    }

    /// Append more payload to the record written last: a payload too large to hold
    /// (see `perfdata_core::raw::MAX_BUFFERED`) is written as it is read.
    pub fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.owed.pay(more.len() as u64)?;
        self.end_run()?;
        self.out.write_all(more).map_err(io_err)?;
        self.pos += more.len() as u64;
        Ok(())
    }

    /// Where the AUXTRACE records written so far are.
    pub fn auxtrace_positions(&self) -> &[AuxtracePosition] {
        &self.auxtrace
    }

    /// Write the features and the header, and hand back the output. The features the
    /// records determine are the writer's: SAMPLE_TIME is the span of the samples
    /// written (left out when none has a time), the AUXTRACE index says where the
    /// AUXTRACE records went (added when there are any). Refused: compressed records
    /// without a COMPRESSED feature (perf could not read them), a feature given twice,
    /// events perf 6.1 refuses in a file ([`perfdata_core::perf_open::refusal`]).
    pub fn finish(self, mut features: Vec<FeatureSection>) -> Result<W> {
        features.sort_by_key(|s| s.id.bit());
        if let Some(w) = features.windows(2).find(|w| w[0].id == w[1].id) {
            return Err(WriteError::unsupported(
                None,
                format!("feature {} given twice", w[0].id),
            ));
        }
        let span = self.derive.as_ref().and_then(|d| d.span);
        features.retain(|s| s.id != FeatureId::SampleTime);
        if let Some((first, last)) = span {
            let t = Feature::SampleTime(SampleTime { first, last });
            features.push(FeatureSection::new(FeatureId::SampleTime, t));
        }
        if !self.auxtrace.is_empty() && !features.iter().any(|s| s.id == FeatureId::AuxTrace) {
            let index = Feature::AuxTrace(AuxTrace::new(Vec::new()));
            features.push(FeatureSection::new(FeatureId::AuxTrace, index));
        }
        features.sort_by_key(|s| s.id.bit());
        let mut encoded = Vec::with_capacity(features.len());
        for mut s in features {
            if let Feature::AuxTrace(index) = &mut s.feature {
                index.entries = self
                    .auxtrace
                    .iter()
                    .map(|p| AuxTraceEntry {
                        file_offset: p.offset,
                        size: p.size,
                    })
                    .collect();
            }
            encoded.push((s.id, s.encode(self.endian)?));
        }
        self.finish_encoded(&encoded, &[])
    }

    /// [`FileWriter::finish`] with the features already encoded, in ascending bit order,
    /// none derived. `index_slack` is written between the index and the first payload
    /// (perf's zero entries for features it failed to write, kept by conversions).
    pub fn finish_encoded(
        mut self,
        features: &[(FeatureId, Vec<u8>)],
        index_slack: &[u8],
    ) -> Result<W> {
        self.owed.settled("the features")?;
        self.finish_copies()?;
        if let Some(ty) = self.compressed {
            if !features.iter().any(|(id, _)| *id == FeatureId::Compressed) {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "{ty} records written without the COMPRESSED feature: perf cannot \
                         decompress them (\"Couldn't decompress data\")"
                    ),
                ));
            }
        }
        // Events perf cannot tell apart, tracepoints without their formats.
        let feature = |want| features.iter().find(|(id, _)| *id == want);
        let attrs: Option<Vec<_>> = self.attrs.as_ref().map(|a| a.iter().collect());
        let tracing = feature(FeatureId::TracingData).map(|(_, b)| b.as_slice());
        let stat = feature(FeatureId::Stat).is_some();
        let why = attrs.and_then(|a| perfdata_core::perf_open::refusal(&a, stat, tracing));
        if let Some(why) = why {
            return Err(WriteError::unsupported(None, why));
        }
        // An empty data section (size 0) is what a killed `perf record` leaves: perf
        // warns it "was not properly terminated" and the reader takes the features
        // after it for records. A FINISHED_ROUND (perf writes them all the time, and
        // it says nothing) keeps a file without records a finished file.
        if self.pos == self.data_offset {
            let round = RecordHeader::new(RecordType::FinishedRound, 0, 8);
            let bytes = encode(&round, self.endian, ())?;
            self.out.write_all(&bytes).map_err(io_err)?;
            self.pos += bytes.len() as u64;
        }
        let data = FileSection {
            offset: self.data_offset,
            size: self.pos - self.data_offset,
        };
        let mut bits = FeatureBitmap::default();
        let mut payload_at = self.pos + 16 * features.len() as u64 + index_slack.len() as u64;
        let mut index = Vec::with_capacity(features.len() * 16);
        let mut last_bit = None;
        for (id, payload) in features {
            let bit = id.bit();
            if bit >= 256 || last_bit.is_some_and(|b| b >= bit) {
                return Err(WriteError::unsupported(
                    None,
                    format!("feature {id}: features must be in ascending bit order below 256"),
                ));
            }
            last_bit = Some(bit);
            bits.set(bit, true);
            let sec = FileSection {
                offset: payload_at,
                size: payload.len() as u64,
            };
            index.extend_from_slice(&encode(&sec, self.endian, ())?);
            payload_at += sec.size;
        }
        self.out.write_all(&index).map_err(io_err)?;
        self.out.write_all(index_slack).map_err(io_err)?;
        for (_, payload) in features {
            self.out.write_all(payload).map_err(io_err)?;
        }
        let header = FileHeader {
            magic: Magic::V2.bytes(self.endian),
            size: FILE_HEADER_SIZE,
            attr_size: self.attr_size,
            attrs: self.attrs_section,
            data,
            event_types: self.event_types_section,
            features: Some(bits),
        };
        self.out.seek(SeekFrom::Start(0)).map_err(io_err)?;
        self.out
            .write_all(&encode(&header, self.endian, ())?)
            .map_err(io_err)?;
        self.out.seek(SeekFrom::Start(payload_at)).map_err(io_err)?;
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
