//! The record stage of a conversion: each input record goes through the edits (if any),
//! is byte-swapped when the byte order changes, is (re)compressed as the options say and
//! goes to the sink, while [`Observed`] notes what the feature derivation needs.

use std::borrow::Cow;

use binrw::Endian;
use perfdata_core::raw::{Origin, RawRecord};
use perfdata_core::record::{DecodeContext, Record, RecordBody, RecordType, Sample};
use perfdata_core::record::{FeatureRecordView, RecordView};
use perfdata_core::{ContainerKind, Metadata, RecordRef};

use super::observed::{CompressorState, Observed};
use super::stream_features::{Place, StreamFeatures};
use super::writer_sink::Sink;
use super::{features, verify, Compression, ConvertOptions, Plan, Report, Target};
use crate::compress::Compressor;
use crate::edit::{Action, Applied, EditStage};
use crate::error::{Result, WriteError};

/// The record stage's state, shared by file and pipe output.
pub(super) struct RecordStage {
    plan: Plan,
    opts: ConvertOptions,
    /// Whether the input's metadata records are written as records: only when input
    /// and output are the same kind (a pipe's become a file's header sections, and a
    /// file's header sections become a pipe's metadata records).
    keep_metadata: bool,
    in_endian: Endian,
    out_endian: Endian,
    compressor: Option<Compressor>,
    observed: Observed,
    report: Report,
    /// A stream written as a stream: its HEADER_FEATURE records as the output needs.
    stream_features: Option<StreamFeatures>,
    /// The edits that keep, drop or replace each record (`crate::edit`), boxed: taken
    /// out while the records it held are written.
    edit: Option<Box<EditStage>>,
    /// Checks the compressed records copied as they are.
    verifier: verify::Verifier,
    /// The record written last has a payload still in the input (larger than
    /// `perfdata_core::raw::MAX_BUFFERED`): [`RecordStage::payload`] copies the rest.
    streaming: bool,
    /// Kernel records the edits keep are written as read: the same byte order, no
    /// compression added, no stream features to place.
    writes_kernel_records_as_read: bool,
    /// Moreover, no edits and no sample times to gather: kernel records go straight to
    /// the writer ([`RecordStage::pass_through`]).
    passes_kernel_records: bool,
    /// Whether edits run (kept apart: the edit stage is taken out while the records it
    /// held are written).
    edits: bool,
}

impl RecordStage {
    pub fn new(plan: &Plan, meta: &Metadata, edit: Option<EditStage>) -> Result<Self> {
        let (opts, target) = (*plan.options(), plan.target());
        let in_endian = meta.endian;
        let out_endian = plan.endian();
        let keep_metadata = (meta.container == ContainerKind::Pipe) == (target == Target::Pipe);
        let stream_features = if keep_metadata && target == Target::Pipe {
            Some(StreamFeatures::new(meta, plan)?)
        } else {
            None
        };
        let writes_kernel_records_as_read = in_endian == out_endian
            && stream_features.is_none()
            && !matches!(opts.compression, Compression::Compress { .. });
        let passes_kernel_records = writes_kernel_records_as_read
            && edit.is_none()
            && meta.container == ContainerKind::File
            && !meta.unfinished;
        Ok(RecordStage {
            writes_kernel_records_as_read,
            passes_kernel_records,
            plan: *plan,
            opts,
            keep_metadata,
            in_endian,
            out_endian,
            compressor: None,
            observed: Observed::default(),
            report: Report::default(),
            stream_features,
            verifier: verify::Verifier::new(in_endian),
            edits: edit.is_some(),
            edit: edit.map(Box::new),
            streaming: false,
        })
    }

    /// The byte order written.
    pub fn out_endian(&self) -> Endian {
        self.out_endian
    }

    /// Whether kernel records go straight to the writer, as read: no edits, no change
    /// of byte order, no compression added ([`RecordStage::pass_through`]).
    pub fn passes_kernel_records(&self) -> bool {
        self.passes_kernel_records
    }

    /// Whether the input's metadata records are copied as records.
    pub fn keeps_metadata(&self) -> bool {
        self.keep_metadata
    }

    /// Count a record read but not passed through the stage (a stream's metadata
    /// records read ahead of a file's header).
    pub fn count_read(&mut self) {
        self.report.records_in += 1;
    }

    /// The metadata the output describes: the input's, as the edits change it.
    pub fn out_meta<'m>(&mut self, meta: &'m Metadata) -> Result<Cow<'m, Metadata>> {
        match self.edit.as_mut() {
            Some(stage) => Ok(Cow::Owned(stage.output_meta(meta)?)),
            None => Ok(Cow::Borrowed(meta)),
        }
    }

    /// Process one input record: through the edits, then out. Returns whether the
    /// rest of its payload, still in the input, is wanted ([`RecordStage::payload`]).
    ///
    /// Generic over the sink so that the pass-through of a kernel record (the most
    /// common record of the most common conversion) is inlined down to the writer.
    #[inline]
    pub fn record<S: Sink + ?Sized>(&mut self, sink: &mut S, item: &RecordRef<'_>) -> Result<bool> {
        self.streaming = false;
        if self.pass_through(sink, item)? {
            return Ok(false);
        }
        self.record_in(sink.as_dyn(), item)?;
        Ok(self.streaming)
    }

    /// A conversion that changes no kernel record (most records: SAMPLE above all)
    /// writes one read as stored straight out: it has no payload, no metadata and
    /// nothing to note, and it is the input's bytes (`record_out` would come to the same
    /// write after checks that cannot fail for it). Whether it went.
    #[inline]
    fn pass_through<S: Sink + ?Sized>(
        &mut self,
        sink: &mut S,
        item: &RecordRef<'_>,
    ) -> Result<bool> {
        let raw = &item.raw;
        if !self.passes_kernel_records
            || raw.header.type_ >= RecordType::USER_TYPE_START
            || raw.origin != Origin::Top
            || self.compressor.is_some()
        {
            return Ok(false);
        }
        self.report.records_in += 1;
        self.report.records_out += 1;
        sink.write_kernel_input(raw.bytes, raw.offset)?;
        Ok(true)
    }

    /// More of the payload of the record written last (a payload of gigabytes, Intel
    /// PT's AUXTRACE, goes from input to output piece by piece, never held).
    pub fn payload(&mut self, sink: &mut dyn Sink, more: &[u8]) -> Result<()> {
        match self.streaming {
            true => sink.write_payload(more),
            false => Ok(()),
        }
    }

    fn record_in(&mut self, sink: &mut dyn Sink, item: &RecordRef<'_>) -> Result<()> {
        self.report.records_in += 1;
        let Some(stage) = self.edit.as_mut() else {
            return self.record_out(sink, item, true);
        };
        let applied = stage.apply(item)?;
        // Records held for perf's order go out first, in the input's order.
        if stage.has_ready() {
            self.write_ready(sink, item.meta)?;
        }
        match applied {
            Applied::Now(action) => self.record_edited(sink, item, action),
            Applied::Held => Ok(()),
        }
    }

    /// Write the records the edit stage held and has decided, in the input's order.
    fn write_ready(&mut self, sink: &mut dyn Sink, meta: &Metadata) -> Result<()> {
        let Some(mut stage) = self.edit.take() else {
            return Ok(());
        };
        let mut result = Ok(());
        while result.is_ok() {
            match stage.pop_ready(meta, |item, action| self.record_edited(sink, item, action)) {
                Some(r) => result = r,
                None => break,
            }
        }
        self.edit = Some(stage);
        result
    }

    /// Write what the edits made of an input record.
    fn record_edited(
        &mut self,
        sink: &mut dyn Sink,
        item: &RecordRef<'_>,
        action: Action,
    ) -> Result<()> {
        match action {
            Action::Keep => self.record_out(sink, item, true),
            Action::Drop => Ok(()),
            Action::Replace(_) if item.raw.rest > 0 => Err(WriteError::unsupported(
                Some(item.raw.offset),
                format!(
                    "an edit rewrites record {}, whose {}-byte payload is too large to hold",
                    item.raw.record_type(),
                    item.raw.payload_len()
                ),
            )),
            Action::Replace(recs) => {
                for rec in &recs {
                    let raw = rec.as_raw(item.meta.endian);
                    let item = RecordRef::new(raw, item.meta);
                    self.record_out(sink, &item, false)?;
                }
                Ok(())
            }
        }
    }

    /// The end of the records: the verifier's last word and the compressor flushed.
    /// Records the edits still held are decided and written first.
    pub fn finish_records(&mut self, sink: &mut dyn Sink, meta: &Metadata) -> Result<()> {
        if let Some(stage) = self.edit.as_mut() {
            stage.flush(meta)?;
            self.write_ready(sink, meta)?;
        }
        self.verifier.finish()?;
        if let Some(c) = self.compressor.as_mut() {
            let mut out = |rec: &[u8]| sink.write(rec, &[]);
            c.flush(&mut out)?;
        }
        Ok(())
    }

    /// The edits' last word: an edit that selected nothing fails here, before the
    /// output is finished.
    pub fn finish_edits(&mut self, meta: &Metadata) -> Result<()> {
        match self.edit.as_mut() {
            Some(stage) => stage.finish(meta),
            None => Ok(()),
        }
    }

    /// What the stage saw, for the feature derivation, and its report (counts, its
    /// warnings, the edits' summary).
    pub fn into_results(mut self) -> (Observed, Report) {
        let mut observed = self.observed;
        observed.removed_samples = self.edit.as_ref().is_some_and(|e| e.removed_samples());
        if let (Some(state), Some(c)) = (observed.compressed.as_mut(), self.compressor.as_ref()) {
            *state = CompressorState {
                ratio: c.ratio(),
                mmap_len: c.mmap_len(),
            };
        }
        self.report.edits = self.edit.take().map(|e| e.into_summary());
        (observed, self.report)
    }

    /// The compressor, made on first use: keeping compression writes the containers the
    /// input had (COMPRESSED or COMPRESSED2, as last seen) at its level and buffer size.
    fn compressor(&mut self, meta: &Metadata) -> Result<&mut Compressor> {
        if self.compressor.is_none() {
            let c = self.plan.compressor(meta);
            // zstd works on a batch while the next one is read and framed.
            let c =
                Compressor::new(c.level, c.format, c.buffer_size, self.out_endian)?.in_thread()?;
            self.compressor = Some(c);
        }
        Ok(self.compressor.as_mut().expect("just made"))
    }

    /// Re-encode a record in the output byte order (a copy when the order is the same).
    /// `None` when the record is written as it is (the common, copy-free case).
    fn transcode(&self, raw: &RawRecord<'_>, meta: &Metadata) -> Result<Option<Vec<u8>>> {
        if self.in_endian == self.out_endian {
            return Ok(None);
        }
        // A payload too large to hold (AUXTRACE's trace) is bytes kept in their order,
        // as perf reads them: only the record is swapped, and the payload streams after
        // it as it is.
        let ctx = DecodeContext {
            endian: self.in_endian,
            events: meta.events(),
        };
        let mut record = Record::decode(raw.bytes, raw.payload, raw.offset, &ctx)?;
        match &mut record.body {
            RecordBody::Sample(sample) => swap_memory_images(sample),
            RecordBody::HeaderFeature(feature_record) => {
                // The payload is a feature section: swap it through its model.
                feature_record.data =
                    features::transcode_section(feature_record, meta, raw.offset, self.out_endian)?;
            }
            RecordBody::Raw(_) => {
                return Err(WriteError::unsupported(
                    Some(raw.offset),
                    format!(
                        "record {} has no known layout, so its fields cannot be byte-swapped",
                        raw.record_type()
                    ),
                ))
            }
            _ => {}
        }
        Ok(Some(record.encode(self.out_endian)?))
    }

    /// Whether a record goes into the compression stream. Keeping compression puts back
    /// exactly the records that came out of it; compressing takes the kernel's records
    /// (what perf's ring buffers hold and `perf record -z` compresses) and FINISHED_ROUND,
    /// and leaves perf's other records (metadata, AUXTRACE with its payload) plain.
    /// `perf record -z` writes its rounds plain, between the compressed records of each
    /// ring-buffer flush; here a plain record ends a batch, and a batch ending every
    /// ~120 KiB (a flush of the zstd stream each) made compression 1.5x slower than
    /// `zstd -1` on a 60 MiB recording. perf reads a round inside a compressed record as
    /// it reads one outside.
    fn compress_this(&self, ty: RecordType, origin: Origin) -> bool {
        match self.opts.compression {
            Compression::Decompress => false,
            Compression::Keep => matches!(origin, Origin::Decompressed { .. }),
            Compression::Compress { .. } => ty.is_kernel() || ty == RecordType::FinishedRound,
        }
    }

    /// Write one record (already in the output byte order), into the compression
    /// stream or plain.
    fn emit(
        &mut self,
        sink: &mut dyn Sink,
        (rec, payload): (&[u8], &[u8]),
        route: Route,
        meta: &Metadata,
    ) -> Result<()> {
        let (at, streams) = match route {
            Route::Plain { at, streams } => (at, streams),
            Route::Compressed => (None, false),
        };
        if route == Route::Compressed {
            // The state is filled in when the stage finishes.
            self.observed.compressed.get_or_insert(CompressorState {
                ratio: 0,
                mmap_len: 0,
            });
            let c = self.compressor(meta)?;
            let mut out = |rec: &[u8]| sink.write(rec, &[]);
            c.push(rec, payload, &mut out)?;
        } else {
            if let Some(c) = self.compressor.as_mut() {
                // After the compressed records before it: held until they are made, or
                // written now once they are out (always, when its payload streams after
                // it: the payload's writes must find it written).
                let mut out = |rec: &[u8]| sink.write(rec, &[]);
                let held = if streams {
                    c.flush(&mut out).map(|()| false)?
                } else {
                    c.plain(rec, payload, &mut out)?
                };
                if held {
                    self.report.records_out += 1;
                    return Ok(());
                }
            }
            match at {
                Some(at) => sink.write_input(rec, payload, at)?,
                None => sink.write(rec, payload)?,
            }
        }
        self.report.records_out += 1;
        Ok(())
    }

    /// Whether a sample's time goes into a derived SAMPLE_TIME: for files made from
    /// pipes, directories and recordings that never finished (a finished file has its
    /// own), and whenever edits may have removed samples.
    fn times_samples(&self, meta: &Metadata) -> bool {
        meta.container != ContainerKind::File || meta.unfinished || self.edits
    }

    /// Write one record that the edits (if any) kept; `input` when it is the input's
    /// record (not one an edit made).
    fn record_out(&mut self, sink: &mut dyn Sink, item: &RecordRef<'_>, input: bool) -> Result<()> {
        let raw = &item.raw;
        let ty = raw.record_type();
        let time = if ty == RecordType::Sample && self.times_samples(item.meta) {
            item.locate().time
        } else {
            None
        };
        self.observed.record(ty, time);
        if input
            && self.writes_kernel_records_as_read
            && raw.header.type_ < RecordType::USER_TYPE_START
            && raw.origin == Origin::Top
            && self.compressor.is_none()
        {
            // As in pass_through: nothing below applies to it.
            self.report.records_out += 1;
            return sink.write_kernel_input(raw.bytes, raw.offset);
        }
        if let Some(sf) = self.stream_features.as_mut() {
            let place = match ty {
                RecordType::HeaderFeature => Place::Feature(
                    FeatureRecordView::new(raw.bytes, self.in_endian, raw.offset)
                        .map_or(0, |v| v.feat_id()),
                ),
                RecordType::HeaderAttr => Place::Attr,
                _ => Place::Data,
            };
            let (insert, keep) = sf.before(place);
            if let Some(rec) = insert {
                let route = Route::Plain {
                    at: None,
                    streams: false,
                };
                self.emit(sink, (&rec, &[]), route, item.meta)?;
            }
            if !keep {
                return Ok(());
            }
        }
        if ty.is_metadata() && !self.keep_metadata {
            return Ok(());
        }
        // perf 6.1 cannot read simpleperf's tracing data record inside a file's data;
        // its content is in the TRACING_DATA feature of the output.
        if ty == RecordType::HeaderTracingData
            && self.opts.compat_perf_6_1
            && item.meta.header.is_some()
        {
            return Ok(());
        }
        if raw.is_compressed() {
            self.verifier.check(raw)?;
        }
        let encoded = self.transcode(raw, item.meta)?;
        let parts = match &encoded {
            Some(bytes) => split_payload(bytes, self.out_endian),
            None => (raw.bytes, raw.payload),
        };
        // A payload too large to hold is written plain, as it streams by.
        let route = if self.compress_this(ty, raw.origin) && raw.rest == 0 {
            Route::Compressed
        } else {
            Route::Plain {
                // The input file's own bytes may be copied from it.
                at: (input && encoded.is_none() && raw.origin == Origin::Top).then_some(raw.offset),
                streams: raw.rest > 0,
            }
        };
        // What cannot be written is named by the input record it comes from.
        self.emit(sink, parts, route, item.meta)
            .map_err(|e| match e {
                WriteError::Unsupported { offset: None, what } => {
                    WriteError::unsupported(Some(raw.offset), what)
                }
                other => other,
            })?;
        self.streaming = raw.rest > 0;
        Ok(())
    }
}

/// Where [`RecordStage::emit`] sends a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// Into the compression stream.
    Compressed,
    /// Written as it is: `at` its offset in the input file when it is the input's
    /// bytes there, unchanged; `streams` when more of its payload follows.
    Plain { at: Option<u64>, streams: bool },
}

/// The user stack and AUX snapshot of a sample are memory images: a big-endian machine's
/// stack holds big-endian words. perf reads a foreign-endian sample by swapping all of it
/// as u64 words and then undoing that only for RAW data, so to show perf the same memory
/// after a byte-order change, these images are swapped word by word as well.
fn swap_memory_images(sample: &mut Sample) {
    fn swap_words(bytes: &mut [u8]) {
        for word in bytes.chunks_exact_mut(8) {
            word.reverse();
        }
    }
    if let Some(stack) = &mut sample.stack_user {
        swap_words(&mut stack.data);
    }
    if let Some(aux) = &mut sample.aux {
        swap_words(&mut aux.data);
    }
}

/// Split an encoded record into its `header.size` bytes and the payload after them.
pub(super) fn split_payload(bytes: &[u8], endian: Endian) -> (&[u8], &[u8]) {
    let size = perfdata_core::raw::header_of(bytes, endian).size as usize;
    if size >= 8 && size <= bytes.len() {
        bytes.split_at(size)
    } else {
        (bytes, &[])
    }
}
