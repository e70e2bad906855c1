//! The two ways records go through a conversion: into a file (header sections laid out
//! first, header written last) or into a pipe-mode stream.

use std::fs::File;
use std::io::{Seek, Write};

use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Metadata, Piece, RecordRef};

use super::features::{self, output_attrs, FeatureEdits};
use super::source::Source;
use super::stage::RecordStage;
use super::writer_sink::{FileSink, PipeSink};
use super::{Plan, Report, Target};
use crate::cancel::Cancel;
use crate::edit::EditStage;
use crate::error::{Result, WriteError};
use crate::file::{AttrEntry, FileWriter};
use crate::pipe::PipeWriter;

/// Stop at the next record once `cancel` is set.
#[inline]
fn check(cancel: Option<&Cancel>) -> Result<()> {
    match cancel {
        Some(c) if c.is_cancelled() => Err(WriteError::Cancelled),
        _ => Ok(()),
    }
}

/// Convert to file mode on a seekable output; `out_file`, when given, is a handle of
/// the file `out` writes to, into which runs of unchanged records are copied from the
/// input file by the kernel ([`FileWriter::copy_runs_from`]).
pub(super) fn to_file<S: Source, W: Write + Seek>(
    source: &mut S,
    plan: &Plan,
    out: W,
    out_file: Option<File>,
    edit: Option<EditStage>,
    cancel: Option<&Cancel>,
) -> Result<(W, Report)> {
    let copy = match (source.input_file(), out_file) {
        (Some(input), Some(output)) => input.try_clone().ok().map(|input| (input, output)),
        _ => None,
    };
    let mut stage = RecordStage::new(plan, source.meta(), edit)?;
    // In pipe mode the attrs arrive as records before the data: the metadata records up
    // to the first data record are read ahead (and counted), that record held.
    let mut held = super::source::read_metadata_ahead(source, || stage.count_read())?;
    let out_meta = stage.out_meta(source.meta())?;
    let attrs: Vec<AttrEntry> = output_attrs(&out_meta, plan.options(), Target::File)?;
    let newer = newer_attrs(source.meta(), &attrs);
    let mut writer = file_writer(&stage, out, &attrs, &out_meta)?;
    if let Some((input, output)) = copy {
        writer = writer.copy_runs_from(input, output);
        // Nothing changes any record (and nothing expands one): the data section is
        // expected to come out as it is, and its copy starts at once.
        if stage.passes_kernel_records() && !plan.expands() {
            if let Some(data) = source.meta().header.as_ref().map(|h| h.data) {
                writer.expect_input_run_to(data.offset.saturating_add(data.size))?;
            }
        }
    }
    drop(out_meta);
    let nr_attrs = source.meta().attrs().len();
    {
        let mut sink = FileSink(&mut writer);
        let mut each = |piece: Piece<'_, '_>| {
            let item = match piece {
                Piece::Record(item) => item,
                Piece::Payload(more) => return stage.payload(&mut sink, more).map(|_| false),
            };
            check(cancel)?;
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
        };
        if let Some(rec) = held.take() {
            let meta = source.meta();
            if each(Piece::Record(&RecordRef::new(
                rec.as_raw(meta.endian),
                meta,
            )))? {
                while let Some(chunk) = source.payload_chunk()? {
                    each(Piece::Payload(chunk))?;
                }
            }
        }
        source.for_each(&mut each)?;
        stage.finish_records(&mut sink, source.meta())?;
    }
    let (out, mut report) = finish_file(writer, stage, plan, source.meta())?;
    report.warnings.extend(newer);
    Ok((out, report))
}

/// A stream's attrs larger than perf 6.1's 128 bytes, kept as they are in a file (a
/// newer perf's, or a size field that says more): perf 6.1 reads them in the stream,
/// but refuses the file, which the conversion says.
fn newer_attrs(input: &Metadata, attrs: &[AttrEntry]) -> Option<String> {
    let size = attrs.first()?.attr.encoded_len;
    (input.container == ContainerKind::Pipe && size > perfdata_core::attr::ATTR_SIZE_PERF_6_1).then(
        || {
            format!(
                "attrs of {size} bytes, more than perf 6.1's 128: perf 6.1 refuses the file \
                 (\"file uses a more recent and unsupported ABI\"); a newer perf reads it, \
                 and --compat=perf6.1 cuts the attrs to 128 bytes"
            )
        },
    )
}

/// The end of every file conversion: the edits' last word, the features (derived ones
/// recomputed from what the stage observed) and the header, then the report.
pub(super) fn finish_file<W: Write + Seek>(
    mut writer: FileWriter<W>,
    mut stage: RecordStage,
    plan: &Plan,
    meta: &Metadata,
) -> Result<(W, Report)> {
    let out_endian = plan.endian();
    stage.finish_edits(meta)?;
    let out_meta = stage.out_meta(meta)?;
    let (observed, mut report) = stage.into_results();
    writer.finish_copies()?;
    report.bytes_copied = writer.bytes_copied();
    let edits = FeatureEdits::derive(&observed, plan, &out_meta, Target::File);
    let feats =
        features::file_features(&out_meta, &edits, writer.auxtrace_positions(), out_endian)?;
    let out = writer.finish_encoded(&feats, &out_meta.feature_index_slack)?;
    Ok((out, report.finish(meta, edits.warnings)))
}

/// The file writer of a conversion: the features are derived by the conversion, and a
/// file's data records are copied as the input had them.
pub(super) fn file_writer<W: Write + Seek>(
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
    if meta.container == ContainerKind::Pipe {
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
pub(super) fn pipe_writer<W: Write>(stage: &RecordStage, out: W) -> Result<PipeWriter<W>> {
    let writer = PipeWriter::new(out, stage.out_endian())?;
    Ok(match stage.keeps_metadata() {
        true => writer.copying_stream(),
        false => writer,
    })
}

/// Convert to pipe mode.
pub(super) fn to_pipe<S: Source, W: Write>(
    source: &mut S,
    plan: &Plan,
    out: W,
    edit: Option<EditStage>,
    cancel: Option<&Cancel>,
) -> Result<(W, Report)> {
    let mut stage = RecordStage::new(plan, source.meta(), edit)?;
    let mut writer = pipe_writer(&stage, out)?;
    // A file's header sections become the records that open a stream; a stream's
    // own metadata records pass through.
    let warnings = if stage.keeps_metadata() {
        Vec::new()
    } else {
        let out_meta = stage.out_meta(source.meta())?;
        features::write_pipe_header(&out_meta, plan, &mut writer)?
    };
    {
        let mut sink = PipeSink(&mut writer);
        source.for_each(|piece| match piece {
            Piece::Record(item) => {
                check(cancel)?;
                stage.record(&mut sink, item)
            }
            Piece::Payload(more) => stage.payload(&mut sink, more).map(|_| false),
        })?;
        stage.finish_records(&mut sink, source.meta())?;
    }
    let meta = source.meta();
    stage.finish_edits(meta)?;
    let (_, report) = stage.into_results();
    Ok((writer.finish()?, report.finish(meta, warnings)))
}
