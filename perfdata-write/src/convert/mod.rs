//! `perfdata convert`: read a recording and write it again, changing its container (file,
//! pipe), its compression or its byte order on the way, one record at a time.
//!
//! Records are copied as bytes unless a transformation needs them decoded (byte order)
//! or expanded (compression changes, directory merging). Metadata records of a pipe
//! stream become header sections of a file and the other way round.

mod features;
mod merge;
mod sink;
mod stream_features;
mod transcode;
mod verify;

use std::io::{Seek, Write};

use binrw::Endian;
use perfdata_core::raw::{Origin, OwnedRecord};
use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Metadata, PerfReader, ReadOptions};

use crate::compress::{CompressFormat, Compressor, DEFAULT_MMAP_LEN};
use crate::edit::{Action, EditStage, EditSummary};
use crate::error::{Result, WriteError};
use crate::file::{AttrEntry, FileWriter};
use crate::pipe::PipeWriter;

pub use features::{output_attrs, FeatureEdits};
use sink::Sink;
use stream_features::{Place, StreamFeatures};
use transcode::split_payload;

/// The container to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    File,
    Pipe,
}

/// What to do with compressed records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Keep what was compressed compressed, and nothing else.
    #[default]
    Keep,
    /// Compress the kernel's records (what `perf record -z` compresses).
    Compress { level: i32, format: CompressFormat },
    /// Expand every compressed record and drop the COMPRESSED feature.
    Decompress,
}

/// Options of a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConvertOptions {
    /// `None`: the input's container (a directory becomes a file).
    pub target: Option<Target>,
    pub compression: Compression,
    /// `None`: the input's byte order.
    pub endian: Option<Endian>,
    /// Make a file perf 6.1 can open: attrs cut to 128 bytes (see [`output_attrs`]),
    /// simpleperf's in-data tracing record left to the TRACING_DATA feature.
    pub compat_perf_6_1: bool,
    /// Compressed records to write when keeping compression but rewriting records.
    pub keep_format: Option<CompressFormat>,
    /// Copy compressed records that do not decompress, with a warning, instead of
    /// failing (they are checked whenever they are copied as they are).
    pub keep_damaged: bool,
}

impl ConvertOptions {
    /// The container written for an input in `container`: `target`, else the input's
    /// (a directory becomes a file).
    pub fn target_for(&self, container: ContainerKind) -> Target {
        self.target.unwrap_or(match container {
            ContainerKind::Pipe => Target::Pipe,
            ContainerKind::File | ContainerKind::Directory => Target::File,
        })
    }
}

/// What a conversion did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub records_in: u64,
    pub records_out: u64,
    pub warnings: Vec<String>,
    /// What the record edits did, when the conversion ran any (see [`crate::edit`]).
    pub edits: Option<EditSummary>,
}

/// The conversion state shared by file and pipe output.
struct Converter {
    opts: ConvertOptions,
    /// Whether the input's metadata records are written as records: only when input
    /// and output are the same kind (a pipe's become a file's header sections, and a
    /// file's header sections become a pipe's metadata records).
    keep_metadata: bool,
    in_endian: Endian,
    out_endian: Endian,
    compressor: Option<Compressor>,
    /// Whether any compressed record was written (the COMPRESSED feature says how).
    wrote_compressed: bool,
    report: Report,
    sample_time: Option<(u64, u64)>,
    /// Whether `perf stat record` data went by (STAT_CONFIG, STAT, STAT_ROUND).
    saw_stat: bool,
    /// Whether AUXTRACE records went by.
    saw_auxtrace: bool,
    /// A stream written as a stream: its HEADER_FEATURE records as the output needs.
    stream_features: Option<StreamFeatures>,
    /// The record stage: edits that keep, drop or replace each record (`crate::edit`).
    edit: Option<EditStage>,
    /// Checks the compressed records copied as they are.
    verifier: verify::Verifier,
    /// The record written last has a payload still in the input (larger than
    /// `perfdata_core::raw::MAX_BUFFERED`): [`Converter::stream_payload`] copies it.
    streaming: bool,
}

impl Converter {
    fn new(opts: ConvertOptions, meta: &Metadata, target: Target) -> Self {
        let in_endian = meta.endian;
        let out_endian = opts.endian.unwrap_or(in_endian);
        Converter {
            opts,
            keep_metadata: (meta.container == ContainerKind::Pipe) == (target == Target::Pipe),
            in_endian,
            out_endian,
            compressor: None,
            wrote_compressed: false,
            report: Report::default(),
            sample_time: None,
            saw_stat: false,
            saw_auxtrace: false,
            stream_features: None,
            verifier: verify::Verifier::new(in_endian, opts.keep_damaged),
            edit: None,
            streaming: false,
        }
    }

    /// Copy the rest of the payload of the record written last from `reader` (the
    /// reader that gave it) to `sink`, piece by piece: a payload of gigabytes (Intel PT
    /// AUXTRACE) goes from input to output without being held.
    fn stream_payload(&mut self, sink: &mut dyn Sink, reader: &mut PerfReader) -> Result<()> {
        if std::mem::take(&mut self.streaming) {
            while let Some(chunk) = reader.payload_chunk()? {
                sink.write_payload(chunk)?;
            }
        }
        Ok(())
    }

    /// The metadata the output describes: the input's, as the edits change it.
    fn out_meta<'m>(&mut self, meta: &'m Metadata) -> Result<std::borrow::Cow<'m, Metadata>> {
        match self.edit.as_mut() {
            Some(stage) => Ok(std::borrow::Cow::Owned(stage.output_meta(meta)?)),
            None => Ok(std::borrow::Cow::Borrowed(meta)),
        }
    }

    /// The compressor, made on first use: keeping compression writes the containers the
    /// input had (COMPRESSED or COMPRESSED2, as last seen) at its level and buffer size.
    fn compressor(&mut self, meta: &Metadata) -> Result<&mut Compressor> {
        if self.compressor.is_none() {
            let mmap_len = features::input_mmap_len(meta).unwrap_or(DEFAULT_MMAP_LEN);
            let (level, format) = match self.opts.compression {
                Compression::Compress { level, format } => (level, format),
                _ => {
                    let seen = match meta.compression_record {
                        Some(RecordType::Compressed2) => CompressFormat::Compressed2,
                        _ => CompressFormat::Compressed,
                    };
                    let level = features::input_level(meta).unwrap_or(1);
                    (level, self.opts.keep_format.unwrap_or(seen))
                }
            };
            self.compressor = Some(Compressor::new(level, format, mmap_len, self.out_endian)?);
        }
        Ok(self.compressor.as_mut().expect("just made"))
    }

    /// Whether records must be expanded out of compressed containers.
    fn expand(opts: &ConvertOptions, meta: &Metadata) -> bool {
        let endian_change = opts.endian.is_some_and(|e| e != meta.endian);
        // A file made from a stream derives SAMPLE_TIME from every sample, those inside
        // compressed records too.
        let pipe_to_file = meta.container == ContainerKind::Pipe
            && opts.target_for(meta.container) == Target::File;
        !matches!(opts.compression, Compression::Keep)
            || endian_change
            || meta.container == ContainerKind::Directory
            || pipe_to_file
            || opts.keep_format.is_some()
    }

    /// Whether a record goes into the compression stream. Keeping compression puts back
    /// exactly the records that came out of it; compressing takes the kernel's records
    /// (what perf's ring buffers hold and `perf record -z` compresses) and leaves perf's
    /// own records (FINISHED_ROUND, metadata, AUXTRACE with its payload) plain.
    fn compress_this(&self, ty: RecordType, origin: Origin) -> bool {
        match self.opts.compression {
            Compression::Decompress => false,
            Compression::Keep => matches!(origin, Origin::Decompressed { .. }),
            Compression::Compress { .. } => ty.is_kernel(),
        }
    }

    /// Write one record (already in the output byte order) through compression.
    fn emit(
        &mut self,
        sink: &mut dyn Sink,
        (rec, payload): (&[u8], &[u8]),
        compressed: bool,
        meta: &Metadata,
    ) -> Result<()> {
        if compressed {
            self.wrote_compressed = true;
            let c = self.compressor(meta)?;
            let mut out = |rec: &[u8]| sink.write(rec, &[]);
            c.push(rec, payload, &mut out)?;
        } else {
            if let Some(c) = self.compressor.as_mut() {
                let mut out = |rec: &[u8]| sink.write(rec, &[]);
                c.flush(&mut out)?;
            }
            sink.write(rec, payload)?;
        }
        self.report.records_out += 1;
        Ok(())
    }

    /// The edits' last word: an edit that selected nothing fails here, before the
    /// output is finished.
    fn finish_edits(&mut self, meta: &Metadata) -> Result<()> {
        match self.edit.as_mut() {
            Some(stage) => stage.finish(meta),
            None => Ok(()),
        }
    }

    fn finish_compression(&mut self, sink: &mut dyn Sink) -> Result<()> {
        if let Some(warning) = self.verifier.finish()? {
            self.report.warnings.push(warning);
        }
        if let Some(c) = self.compressor.as_mut() {
            let mut out = |rec: &[u8]| sink.write(rec, &[]);
            c.flush(&mut out)?;
        }
        Ok(())
    }

    /// The report: counts, the reader's warnings, then the conversion's own.
    fn report(&mut self, meta: &Metadata, warnings: Vec<String>) -> Report {
        let mut report = std::mem::take(&mut self.report);
        report
            .warnings
            .extend(meta.warnings.iter().map(|w| w.to_string()));
        report.warnings.extend(warnings);
        report.edits = self.edit.take().map(EditStage::into_summary);
        report
    }

    /// Process one input record for a sink: through the edits, then out.
    fn record(&mut self, sink: &mut dyn Sink, item: &perfdata_core::Item<'_>) -> Result<()> {
        self.report.records_in += 1;
        let Some(stage) = self.edit.as_mut() else {
            return self.record_out(sink, item);
        };
        match stage.apply(item)? {
            Action::Keep => self.record_out(sink, item),
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
                    self.record_out(
                        sink,
                        &perfdata_core::Item {
                            raw,
                            meta: item.meta,
                        },
                    )?;
                }
                Ok(())
            }
        }
    }

    /// Write one record that the edits (if any) kept.
    fn record_out(&mut self, sink: &mut dyn Sink, item: &perfdata_core::Item<'_>) -> Result<()> {
        let raw = &item.raw;
        let ty = raw.record_type();
        // SAMPLE_TIME is derived for files made from pipes, directories and recordings
        // that never finished (a finished file has its own), and whenever edits may
        // have removed samples.
        if ty == RecordType::Sample
            && (item.meta.container != ContainerKind::File
                || item.meta.unfinished
                || self.edit.is_some())
        {
            if let Some(t) = item.locate().time {
                self.sample_time = Some(match self.sample_time {
                    Some((a, b)) => (a.min(t), b.max(t)),
                    None => (t, t),
                });
            }
        }
        if matches!(
            ty,
            RecordType::StatConfig | RecordType::Stat | RecordType::StatRound
        ) {
            self.saw_stat = true;
        }
        self.saw_auxtrace |= ty == RecordType::Auxtrace;
        if let Some(sf) = self.stream_features.as_mut() {
            let place = match ty {
                RecordType::HeaderFeature => Place::Feature(
                    perfdata_core::codec::u64_at(raw.bytes, 8, self.in_endian).unwrap_or(0),
                ),
                RecordType::HeaderAttr => Place::Attr,
                _ => Place::Data,
            };
            let (insert, keep) = sf.before(place);
            if let Some(rec) = insert {
                self.emit(sink, (&rec, &[]), false, item.meta)?;
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
            if let Some(warning) = self.verifier.check(raw)? {
                self.report.warnings.push(warning);
            }
        }
        let encoded = self.transcode(raw, item.meta)?;
        let parts = match &encoded {
            Some(bytes) => split_payload(bytes, self.out_endian),
            None => (raw.bytes, raw.payload),
        };
        // A payload too large to hold is written plain, as it streams by.
        let compressed = self.compress_this(ty, raw.origin) && raw.rest == 0;
        // What cannot be written is named by the input record it comes from.
        self.emit(sink, parts, compressed, item.meta)
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

fn reader_options(opts: &ConvertOptions, meta: &Metadata) -> ReadOptions {
    let expand = Converter::expand(opts, meta);
    if expand {
        ReadOptions::Contents
    } else {
        ReadOptions::Containers
    }
}

/// Open `path` for a conversion whose options follow from what the input is.
pub fn open_input(
    path: &std::path::Path,
    options: impl FnOnce(&Metadata) -> ConvertOptions,
) -> Result<(PerfReader, ConvertOptions)> {
    // Whether compressed records are expanded depends on the options and the input's
    // metadata; a second open is cheap (a map and a header parse). stdin can be read
    // only once: its records are expanded (compression is then redone as it was).
    if path.as_os_str() == "-" {
        let ro = ReadOptions::Contents;
        let reader = PerfReader::open_with(path, ro)?;
        let opts = options(reader.meta());
        return Ok((reader, opts));
    }
    let probe = PerfReader::open_with(path, ReadOptions::Containers)?;
    let opts = options(probe.meta());
    let ro = reader_options(&opts, probe.meta());
    drop(probe);
    Ok((PerfReader::open_with(path, ro)?, opts))
}

/// Convert to file mode on a seekable output.
pub fn to_file<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    to_file_with(reader, out, opts, None)
}

/// [`to_file`] with a record stage of edits.
pub(crate) fn to_file_with<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
    edit: Option<EditStage>,
) -> Result<(W, Report)> {
    if reader.meta().container == ContainerKind::Directory {
        return merge::directory_to_file(reader, out, opts, edit);
    }
    let mut reader = reader;
    let mut conv = Converter::new(*opts, reader.meta(), Target::File);
    conv.edit = edit;

    // In pipe mode the attrs arrive as records before the data: read up to the first
    // data record before laying out the file, holding that record.
    let mut held: Option<OwnedRecord> = None;
    if reader.meta().container == ContainerKind::Pipe {
        while let Some(item) = reader.next_record()? {
            if item.raw.record_type().is_metadata() {
                conv.report.records_in += 1;
                continue;
            }
            held = Some(item.raw.to_owned_record());
            break;
        }
    }
    let out_meta = conv.out_meta(reader.meta())?;
    let attrs: Vec<AttrEntry> = output_attrs(&out_meta, opts, Target::File)?;
    let mut writer = FileWriter::new(out, conv.out_endian, &attrs, &out_meta.event_types)?;
    drop(out_meta);
    let nr_attrs = reader.meta().attrs.len();
    {
        let mut sink = sink::FileSink(&mut writer);
        if let Some(rec) = held {
            let meta = reader.meta();
            let raw = rec.as_raw(meta.endian);
            conv.record(&mut sink, &perfdata_core::Item { raw, meta })?;
            conv.stream_payload(&mut sink, &mut reader)?;
        }
        while let Some(item) = reader.next_record()? {
            if !conv.keep_metadata
                && item.raw.record_type() == RecordType::HeaderAttr
                && item.meta.attrs.len() > nr_attrs
            {
                return Err(WriteError::unsupported(
                    Some(item.raw.offset),
                    "a HEADER_ATTR record after the first data record: the attrs section \
                     was already laid out",
                ));
            }
            conv.record(&mut sink, &item)?;
            conv.stream_payload(&mut sink, &mut reader)?;
        }
        conv.finish_compression(&mut sink)?;
    }
    finish_file(writer, &mut conv, reader.meta())
}

/// The end of every file conversion: the features (derived ones recomputed) and the
/// header, then the report.
fn finish_file<W: Write + Seek>(
    writer: FileWriter<W>,
    conv: &mut Converter,
    meta: &Metadata,
) -> Result<(W, Report)> {
    conv.finish_edits(meta)?;
    let out_meta = conv.out_meta(meta)?;
    let edits = FeatureEdits::for_output(conv, &out_meta, Target::File);
    let feats = features::file_features(
        &out_meta,
        &edits,
        writer.auxtrace_positions(),
        conv.out_endian,
    )?;
    let out = writer.finish(&feats, &out_meta.feature_index_slack)?;
    Ok((out, conv.report(meta, edits.warnings)))
}

/// Convert to `target` on a seekable output.
pub fn to_target<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    match target {
        Target::File => to_file(reader, out, opts),
        Target::Pipe => to_pipe(reader, out, opts),
    }
}

/// Convert to pipe mode.
pub fn to_pipe<W: Write>(reader: PerfReader, out: W, opts: &ConvertOptions) -> Result<(W, Report)> {
    to_pipe_with(reader, out, opts, None)
}

/// [`to_pipe`] with a record stage of edits.
pub(crate) fn to_pipe_with<W: Write>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
    edit: Option<EditStage>,
) -> Result<(W, Report)> {
    let mut reader = reader;
    let mut conv = Converter::new(*opts, reader.meta(), Target::Pipe);
    conv.edit = edit;
    let mut writer = PipeWriter::new(out, conv.out_endian)?;
    // A file's header sections become the records that open a stream; a stream's
    // own metadata records pass through.
    let warnings = if conv.keep_metadata {
        conv.stream_features = Some(StreamFeatures::new(reader.meta(), opts, conv.out_endian)?);
        Vec::new()
    } else {
        let out_meta = conv.out_meta(reader.meta())?;
        features::write_pipe_header(&out_meta, opts, &mut writer, conv.out_endian)?
    };
    {
        let mut sink = sink::PipeSink(&mut writer);
        while let Some(item) = reader.next_record()? {
            conv.record(&mut sink, &item)?;
            conv.stream_payload(&mut sink, &mut reader)?;
        }
        conv.finish_compression(&mut sink)?;
    }
    conv.finish_edits(reader.meta())?;
    let report = conv.report(reader.meta(), warnings);
    Ok((writer.finish()?, report))
}
