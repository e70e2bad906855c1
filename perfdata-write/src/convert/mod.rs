//! `perfdata convert`: read a recording and write it again, changing its container (file,
//! pipe), its compression or its byte order on the way, one record at a time.
//!
//! A conversion runs one way, each stage a module:
//!
//! 1. [`options`](ConvertOptions): what was asked, completed from the input's metadata
//!    by [`ConvertOptions::resolve`] (what `compat_perf_6_1` implies).
//! 2. `source`: the input's records (a directory's streams merged by time by `merge`).
//! 3. `stage`: the record stage: the edits of [`crate::edit`] (keep, drop, replace), the
//!    byte order, compression, and the sink (file or pipe writer); it notes what went
//!    by in an `Observed` summary (sample times, STAT and AUXTRACE records, the
//!    compressor's state).
//! 4. `features`: the output's features derived from the input's metadata and that
//!    summary, and the header written last.
//!
//! Records are copied as bytes unless a transformation needs them decoded (byte order)
//! or expanded (compression changes, directory merging). Metadata records of a pipe
//! stream become header sections of a file and the other way round.

mod features;
mod merge;
mod observed;
mod options;
mod sink;
mod source;
mod stage;
mod stream_features;
mod tree;
mod verify;

use std::fs::File;
use std::io::{Seek, Write};

use perfdata_core::record::RecordType;
use perfdata_core::{Metadata, PerfReader, ReadOptions};

use crate::edit::{EditStage, EditSummary};
use crate::error::{Result, WriteError};
use crate::file::{AttrEntry, FileWriter};
use crate::pipe::PipeWriter;

pub use features::{output_attrs, FeatureEdits};
pub use options::{Compression, ConvertOptions, Target};
use source::{Piece, Source};
use stage::RecordStage;
pub(crate) use tree::atomically;
pub use tree::{write_tree, WriteTree};

/// What a conversion did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Records read.
    pub records_in: u64,
    /// Records written (compressed records counted as the records they hold).
    pub records_out: u64,
    /// The reader's warnings, then the conversion's own.
    pub warnings: Vec<String>,
    /// What the record edits did, when the conversion ran any (see [`crate::edit`]).
    pub edits: Option<EditSummary>,
    /// Bytes of unchanged records the kernel copied from the input file to the output
    /// (see [`to_target_in`]); the rest went through memory.
    pub bytes_copied: u64,
}

impl Report {
    /// The report of a finished conversion: the stage's report, then the reader's
    /// warnings, then those of the feature derivation.
    fn finish(mut self, meta: &Metadata, warnings: Vec<String>) -> Report {
        self.warnings
            .extend(meta.warnings.iter().map(|w| w.to_string()));
        self.warnings.extend(warnings);
        self
    }
}

/// Open `path` for a conversion with `opts`; returns the reader and the options
/// resolved for the input ([`ConvertOptions::resolve`]).
pub fn open_input(
    path: &std::path::Path,
    opts: &ConvertOptions,
) -> Result<(PerfReader, ConvertOptions)> {
    // Whether compressed records are expanded depends on the options and the input's
    // metadata; the probe is the reader when they are not (an open maps the file and
    // starts its mapping helper: a second one cost an identity conversion of a 60 MiB
    // file 3 ms of its 35). stdin can be read only once: its records are expanded
    // (compression is then redone as it was).
    if path.as_os_str() == "-" {
        let reader = PerfReader::open_with(path, ReadOptions::Contents)?;
        let resolved = opts.resolve(reader.meta());
        return Ok((reader, resolved));
    }
    let probe = PerfReader::open_with(path, ReadOptions::Containers)?;
    let resolved = opts.resolve(probe.meta());
    if !resolved.expands(probe.meta()) {
        return Ok((probe, resolved));
    }
    drop(probe);
    Ok((
        PerfReader::open_with(path, ReadOptions::Contents)?,
        resolved,
    ))
}

/// Convert to file mode on a seekable output.
pub fn to_file<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    to_file_with(reader, out, None, opts, None)
}

/// [`to_file`] with a record stage of edits; `out_file`, when given, is a handle of the
/// file `out` writes to, into which runs of unchanged records are copied from the input
/// file by the kernel ([`FileWriter::copy_runs_from`]).
pub(crate) fn to_file_with<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    out_file: Option<File>,
    opts: &ConvertOptions,
    edit: Option<EditStage>,
) -> Result<(W, Report)> {
    let opts = opts.resolve(reader.meta());
    let copy = match (reader.input_file(), out_file) {
        (Some(input), Some(output)) => input.try_clone().ok().map(|input| (input, output)),
        _ => None,
    };
    let mut source = Source::for_file(reader)?;
    let mut stage = RecordStage::new(opts, source.meta(), Target::File, edit)?;
    for _ in 0..source.read_metadata_ahead()? {
        stage.count_read();
    }
    let out_meta = stage.out_meta(source.meta())?;
    let attrs: Vec<AttrEntry> = output_attrs(&out_meta, &opts, Target::File)?;
    let newer = newer_attrs(source.meta(), &attrs);
    let mut writer = file_writer(&stage, out, &attrs, &out_meta)?;
    if let Some((input, output)) = copy {
        writer = writer.copy_runs_from(input, output);
        // Nothing changes any record (and nothing expands one): the data section is
        // expected to come out as it is, and its copy starts at once.
        if stage.passes_kernel_records() && !opts.expands(source.meta()) {
            if let Some(data) = source.meta().header.as_ref().map(|h| h.data) {
                writer.expect_input_run_to(data.offset.saturating_add(data.size))?;
            }
        }
    }
    drop(out_meta);
    let nr_attrs = source.meta().attrs().len();
    {
        let mut sink = sink::FileSink(&mut writer);
        source.for_each(|piece| {
            let item = match piece {
                Piece::Record(item) => item,
                Piece::Payload(more) => return stage.payload(&mut sink, more).map(|_| false),
            };
            if !stage.keeps_metadata()
                && item.raw.record_type() == RecordType::HeaderAttr
                && item.meta.attrs().len() > nr_attrs
            {
                return Err(WriteError::unsupported(
                    Some(item.raw.offset),
                    "a HEADER_ATTR record after the first data record: the attrs section \
                     was already laid out",
                ));
            }
            stage.record(&mut sink, item)
        })?;
        stage.finish_records(&mut sink, source.meta())?;
    }
    let (out, mut report) = finish_file(writer, stage, &opts, source.meta())?;
    report.warnings.extend(newer);
    Ok((out, report))
}

/// A stream's attrs larger than perf 6.1's 128 bytes, kept as they are in a file (a
/// newer perf's, or a size field that says more): perf 6.1 reads them in the stream,
/// but refuses the file, which the conversion says.
fn newer_attrs(input: &Metadata, attrs: &[AttrEntry]) -> Option<String> {
    let size = attrs.first()?.attr.encoded_len;
    (input.container == perfdata_core::ContainerKind::Pipe
        && size > perfdata_core::attr::ATTR_SIZE_PERF_6_1)
        .then(|| {
            format!(
                "attrs of {size} bytes, more than perf 6.1's 128: perf 6.1 refuses the file \
                 (\"file uses a more recent and unsupported ABI\"); a newer perf reads it, \
                 and --compat=perf6.1 cuts the attrs to 128 bytes"
            )
        })
}

/// The end of every file conversion: the edits' last word, the features (derived ones
/// recomputed from what the stage observed) and the header, then the report.
fn finish_file<W: Write + Seek>(
    mut writer: FileWriter<W>,
    mut stage: RecordStage,
    opts: &ConvertOptions,
    meta: &Metadata,
) -> Result<(W, Report)> {
    let out_endian = stage.out_endian();
    stage.finish_edits(meta)?;
    let out_meta = stage.out_meta(meta)?;
    let (observed, mut report) = stage.into_results();
    writer.finish_copies()?;
    report.bytes_copied = writer.bytes_copied();
    let edits = FeatureEdits::derive(&observed, opts, &out_meta, Target::File);
    let feats =
        features::file_features(&out_meta, &edits, writer.auxtrace_positions(), out_endian)?;
    let out = writer.finish_encoded(&feats, &out_meta.feature_index_slack)?;
    Ok((out, report.finish(meta, edits.warnings)))
}

/// The file writer of a conversion: the features are derived by the conversion, and a
/// file's data records are copied as the input had them.
fn file_writer<W: Write + Seek>(
    stage: &RecordStage,
    out: W,
    attrs: &[AttrEntry],
    meta: &Metadata,
) -> Result<FileWriter<W>> {
    let mut writer = FileWriter::new(out, stage.out_endian(), attrs, &meta.event_types)?;
    if input_refused(meta).is_some() {
        writer = writer.keeping_what_perf_refused();
    }
    Ok(match stage.keeps_metadata() {
        true => writer.caller_derives().copying_file_data(),
        false => writer.caller_derives(),
    })
}

/// Why perf 6.1 refuses the input itself for its events (`perf_open`), when it is a file
/// or directory: its conversion keeps what it had (perf reads the output no less than
/// the input), where a conversion that would bring the refusal about is refused.
fn input_refused(meta: &Metadata) -> Option<String> {
    if meta.container == perfdata_core::ContainerKind::Pipe {
        return None;
    }
    use perfdata_core::feature::FeatureId;
    let attrs: Vec<_> = meta.attrs().iter().map(|a| &a.attr).collect();
    let stat = meta.feature(FeatureId::Stat).is_some();
    // perf wants the formats from the header's TRACING_DATA, before any record (the
    // tracing data of simpleperf's files is a record in the data section).
    let in_header = meta.header.as_ref().is_some_and(|h| {
        h.feature_bits(meta.endian)
            .is_set(FeatureId::TracingData.bit())
    });
    let tracing = perfdata_core::tracing::tracing_blob(meta).filter(|_| in_header);
    perfdata_core::perf_open::refusal(&attrs, stat, tracing)
}

/// The pipe writer of a conversion: a stream's records are copied as the input had
/// them.
fn pipe_writer<W: Write>(stage: &RecordStage, out: W) -> Result<PipeWriter<W>> {
    let writer = PipeWriter::new(out, stage.out_endian())?;
    Ok(match stage.keeps_metadata() {
        true => writer.copying_stream(),
        false => writer,
    })
}

/// Convert to `target` on a seekable output.
pub fn to_target<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    to_target_in(reader, target, out, None, opts)
}

/// [`to_target`] where `out_file` is a handle of the file `out` writes to
/// (`File::try_clone` of it): a file output then gets the runs of records it copies
/// unchanged from an input file copied by the kernel (`copy_file_range`), not through
/// memory. The bytes written are the same either way.
pub fn to_target_in<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    out_file: Option<File>,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    match target {
        Target::File => to_file_with(reader, out, out_file, opts, None),
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
    let opts = opts.resolve(reader.meta());
    // Edits in perf's time order see a directory's streams merged by time, as a file
    // output has them, and write them so.
    let mut source = match &edit {
        Some(e) if e.time_ordered() => Source::for_file(reader)?,
        _ => Source::in_order(reader),
    };
    let mut stage = RecordStage::new(opts, source.meta(), Target::Pipe, edit)?;
    let out_endian = stage.out_endian();
    let mut writer = pipe_writer(&stage, out)?;
    // A file's header sections become the records that open a stream; a stream's
    // own metadata records pass through.
    let warnings = if stage.keeps_metadata() {
        Vec::new()
    } else {
        let out_meta = stage.out_meta(source.meta())?;
        features::write_pipe_header(&out_meta, &opts, &mut writer, out_endian)?
    };
    {
        let mut sink = sink::PipeSink(&mut writer);
        source.for_each(|piece| match piece {
            Piece::Record(item) => stage.record(&mut sink, item),
            Piece::Payload(more) => stage.payload(&mut sink, more).map(|_| false),
        })?;
        stage.finish_records(&mut sink, source.meta())?;
    }
    let meta = source.meta();
    stage.finish_edits(meta)?;
    let (_, report) = stage.into_results();
    Ok((writer.finish()?, report.finish(meta, warnings)))
}
