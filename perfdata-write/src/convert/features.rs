//! The metadata of a converted recording: its attrs, and its features as file sections
//! or as pipe-mode records.
//!
//! Derived features are recomputed rather than copied stale: AUXTRACE (the file offsets
//! of the AUXTRACE records), COMPRESSED (how the output was compressed), SAMPLE_TIME
//! (added from the samples when a pipe stream had none); DIR_FORMAT is dropped when a
//! directory becomes a file.

use std::io::Write;

use binrw::Endian;
use perfdata_core::attr::{SampleType, ATTR_SIZE_PERF_6_1};
use perfdata_core::encode;
use perfdata_core::feature::{
    AuxTrace, AuxTraceEntry, Compressed, Feature, FeatureId, FeatureSection, SampleTime,
};
use perfdata_core::record::{HeaderEventType, Record, RecordBody, RecordType};
use perfdata_core::{ContainerKind, Metadata};

use super::observed::Observed;
use super::{Compression, ConvertOptions, Plan, Target};
use crate::compress::Compressor;
use crate::error::{Result, WriteError};
use crate::file::{AttrEntry, AuxtracePosition};
use crate::pipe::PipeWriter;

/// Whether a file perf reads needs IDENTIFIER added to counting events. `perf stat
/// record` writes its counting events (no sampling, no sample_id trailers) with
/// sample_type 0 to a pipe but IDENTIFIER to a file, because perf refuses a file with
/// several events none of whose sample_type locates an id. Adding the bit to such events
/// changes no record's layout: they have no samples and no trailers.
fn needs_identifier(meta: &Metadata, target: Target) -> bool {
    let id_bits = SampleType::ID | SampleType::IDENTIFIER;
    target == Target::File
        && meta.attrs().len() > 1
        && meta.attrs().iter().all(|ev| {
            let a = &ev.attr;
            a.sample_period == 0
                && !a.freq()
                && !a.sample_id_all()
                && !a.sample_type.intersects(id_bits)
        })
}

/// The inverse for a pipe: `perf stat record` streams carry sample_type 0, and perf
/// script refuses IDENTIFIER-only events there.
fn drops_identifier(meta: &Metadata, target: Target) -> bool {
    target == Target::Pipe
        && meta.attrs().iter().all(|ev| {
            let a = &ev.attr;
            a.sample_period == 0
                && !a.freq()
                && !a.sample_id_all()
                && a.sample_type == SampleType::IDENTIFIER
        })
}

/// The attrs to write. With `compat_perf_6_1`, attrs larger than perf 6.1's 128 bytes are
/// cut to 128 when nothing but zeros is lost, and refused otherwise. In a file all have
/// the size of the largest.
pub fn output_attrs(
    meta: &Metadata,
    opts: &ConvertOptions,
    target: Target,
) -> Result<Vec<AttrEntry>> {
    let mut out = Vec::with_capacity(meta.attrs().len());
    let add_identifier = needs_identifier(meta, target);
    let drop_identifier = drops_identifier(meta, target);
    for (i, ev) in meta.attrs().iter().enumerate() {
        let mut attr = ev.attr.clone();
        if opts.compat_perf_6_1 && attr.encoded_len > ATTR_SIZE_PERF_6_1 {
            if !attr.is_zero_past(ATTR_SIZE_PERF_6_1, meta.endian) {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "attr {i} ({}) uses fields past perf 6.1's 128 bytes (config3 = {:#x}); \
                         cutting it would change the event",
                        meta.event_name(i),
                        attr.config3
                    ),
                ));
            }
            attr.set_encoded_len(ATTR_SIZE_PERF_6_1);
            attr.size = ATTR_SIZE_PERF_6_1 as u32;
        }
        if add_identifier {
            attr.sample_type |= SampleType::IDENTIFIER;
        }
        if drop_identifier {
            attr.sample_type = SampleType::empty();
        }
        out.push(AttrEntry {
            attr,
            ids: ev.ids.clone(),
        });
    }
    // A file has one attr size; a stream's attrs may differ (each HEADER_ATTR says its
    // own). Smaller ones grow to the largest, the new fields zero (their defaults), as
    // perf's own readers hold every attr at its newest size.
    if target == Target::File {
        let largest = out.iter().map(|a| a.attr.encoded_len).max().unwrap_or(0);
        for a in out.iter_mut().filter(|a| a.attr.encoded_len < largest) {
            a.attr.set_encoded_len(largest);
            a.attr.size = largest as u32;
        }
    }
    Ok(out)
}

/// Feature changes a conversion implies.
#[derive(Debug, Default)]
pub struct FeatureEdits {
    /// Features to leave out of the output.
    pub drop: Vec<FeatureId>,
    /// Features to write in place of the input's.
    pub set: Vec<FeatureSection>,
    /// Rebuild AUXTRACE from where the records landed.
    pub recompute_auxtrace: bool,
    /// Write the AUXTRACE index in perf's layout (with its count), whatever the input's:
    /// perf fails on simpleperf's uncounted index ("Failed to process auxtrace index").
    pub auxtrace_in_perf_layout: bool,
    /// Write features that came from records (pipe mode, or a file's data section) and
    /// not from a file header: always from a pipe, and with compat (whose output drops
    /// the records).
    pub include_folded: bool,
    /// What the edits could not do as asked.
    pub warnings: Vec<String>,
}

impl FeatureEdits {
    /// The feature changes of an output in `target` described by `meta` (the input's
    /// metadata as the edits left it), from what the record stage `observed`.
    pub(super) fn derive(
        observed: &Observed,
        plan: &Plan,
        meta: &Metadata,
        target: Target,
    ) -> Self {
        let opts = plan.options();
        let mut edits = FeatureEdits {
            include_folded: meta.header.is_none() || opts.compat_perf_6_1,
            auxtrace_in_perf_layout: opts.compat_perf_6_1,
            ..Default::default()
        };
        if meta.container == ContainerKind::Directory {
            edits.drop.push(FeatureId::DirFormat);
        }
        // A known feature that does not decode is copied as it was read (nothing is
        // lost), but perf reads it by its layout: say that it may not.
        for s in meta.features.values() {
            let known = !matches!(s.id, FeatureId::Unknown(_));
            if known && matches!(&s.feature, Feature::Raw(b) if !b.is_empty()) {
                edits.warnings.push(format!(
                    "feature {} does not decode as its layout and is written as it was \
                     read: perf 6.1, which reads it by that layout, may refuse the file or \
                     fail on it",
                    s.id
                ));
            }
        }
        // Containers copied as they are keep the input's feature; records compressed here
        // get a feature that says how.
        match observed.compressed {
            None => {
                if meta.features.contains_key(&FeatureId::Compressed)
                    && !matches!(opts.compression, Compression::Keep)
                {
                    edits.drop.push(FeatureId::Compressed);
                }
            }
            Some(c) => {
                let feature =
                    Compressed::zstd(plan.feature_level(meta), c.ratio, c.mmap_len as u32);
                edits.set.push(FeatureSection::new(
                    FeatureId::Compressed,
                    Feature::Compressed(feature),
                ));
            }
        }
        if target == Target::File {
            if meta.features.contains_key(&FeatureId::AuxTrace) {
                edits.recompute_auxtrace = true;
            } else if observed.saw_auxtrace {
                // A pipe stream indexes no AUX trace; a file must, for perf to find it.
                edits.recompute_auxtrace = true;
                edits.set.push(FeatureSection::new(
                    FeatureId::AuxTrace,
                    Feature::AuxTrace(AuxTrace::new(Vec::new())),
                ));
            }
            // perf record flags branch stacks in a file header, never in a pipe stream.
            let branches = meta
                .attrs()
                .iter()
                .any(|a| a.attr.sample_type.contains(SampleType::BRANCH_STACK));
            if branches
                && !meta.features.contains_key(&FeatureId::BranchStack)
                && meta.container == ContainerKind::Pipe
            {
                edits.set.push(FeatureSection::new(
                    FeatureId::BranchStack,
                    Feature::BranchStack,
                ));
            }
            // A pipe stream of `perf stat record` has no STAT flag (it sends no
            // features); the file perf stat record writes has it, and perf script needs
            // it to show the counts.
            if observed.saw_stat
                && !meta.features.contains_key(&FeatureId::Stat)
                && meta.container == ContainerKind::Pipe
            {
                edits
                    .set
                    .push(FeatureSection::new(FeatureId::Stat, Feature::Stat));
            }
            // A stream's SAMPLE_TIME is sent before the samples: perf 6.1 sends zeros
            // (perf report --time then finds no first/last sample time). Recomputed
            // from the samples when it leaves any out, with a warning unless it was zero.
            // A directory's header says what perf wrote, zeros with -z; a recording
            // that never finished has no features at all: derived for both. perf may
            // widen the span past the samples (quipper's files do): a stated span that
            // holds every sample is kept. When edits removed samples, the span is that
            // of the samples written (quietly: the input's was right for the input).
            let edited = observed.removed_samples;
            let derives = meta.container != ContainerKind::File || meta.unfinished;
            match (observed.sample_time, derives || edited) {
                (Some((first, last)), true) => {
                    let stated = match meta.feature(FeatureId::SampleTime) {
                        Some(Feature::SampleTime(t)) => Some(*t),
                        _ => None,
                    };
                    let holds =
                        !edited && stated.is_some_and(|t| t.first <= first && last <= t.last);
                    if !holds {
                        if let (Some(t), false) =
                            (stated.filter(|t| *t != SampleTime::default()), edited)
                        {
                            edits.warnings.push(format!(
                                "feature SAMPLE_TIME said first {}, last {}, which leaves \
                                 out samples; recomputed from them: first {first}, last {last}",
                                t.first, t.last
                            ));
                        }
                        let derived = Feature::SampleTime(SampleTime { first, last });
                        edits
                            .set
                            .push(FeatureSection::new(FeatureId::SampleTime, derived));
                    }
                }
                (None, _) if edited => edits.drop.push(FeatureId::SampleTime),
                _ => {}
            }
        }
        edits
    }
}

/// Encode one feature in `endian`; a feature kept as bytes (an unknown one, or a known
/// one that did not decode) can only be copied in the byte order it came in. `at` is
/// where its bytes are in the input.
fn encode_feature(
    section: &FeatureSection,
    in_endian: Endian,
    out_endian: Endian,
    at: Option<u64>,
) -> Result<Vec<u8>> {
    if in_endian != out_endian {
        if let Feature::Raw(bytes) = &section.feature {
            if !bytes.is_empty() {
                let why = match section.id {
                    FeatureId::Unknown(_) => "has no known layout",
                    _ => "is corrupt (it does not decode as its layout)",
                };
                return Err(WriteError::unsupported(
                    at,
                    format!("feature {} {why}, so it cannot be byte-swapped", section.id),
                ));
            }
        }
    }
    Ok(section.encode(out_endian)?)
}

/// Where a file's feature section is in the input (`None` for one that came from a
/// record or was made by the conversion).
fn section_at(meta: &Metadata, id: FeatureId) -> Option<u64> {
    meta.feature_sections.get(&id).map(|s| s.offset)
}

/// A HEADER_FEATURE payload re-encoded in `out_endian` through its feature model.
pub(super) fn transcode_section(
    hf: &perfdata_core::record::HeaderFeature,
    meta: &Metadata,
    offset: u64,
    out_endian: Endian,
) -> Result<Vec<u8>> {
    if hf.data.is_empty() {
        return Ok(Vec::new());
    }
    let id = u32::try_from(hf.feat_id)
        .map(FeatureId::from_bit)
        .map_err(|_| {
            WriteError::unsupported(
                Some(offset),
                format!("HEADER_FEATURE id {} is not a feature", hf.feat_id),
            )
        })?;
    let section = FeatureSection::decode(id, &hf.data, &meta.feature_context(), offset + 16)?;
    encode_feature(&section, meta.endian, out_endian, Some(offset + 16))
}

/// The feature sections of a file, in bit order, encoded.
pub(super) fn file_features(
    meta: &Metadata,
    edits: &FeatureEdits,
    auxtrace: &[AuxtracePosition],
    out_endian: Endian,
) -> Result<Vec<(FeatureId, Vec<u8>)>> {
    let mut sections: Vec<FeatureSection> = meta
        .features
        .values()
        .filter(|s| edits.include_folded || meta.feature_sections.contains_key(&s.id))
        .filter(|s| !edits.drop.contains(&s.id) && !edits.set.iter().any(|e| e.id == s.id))
        .cloned()
        .collect();
    sections.extend(edits.set.iter().cloned());
    sections.retain(|s| s.id.bit() < 256);
    sections.sort_by_key(|s| s.id.bit());
    let mut out = Vec::with_capacity(sections.len());
    for mut section in sections {
        if section.id == FeatureId::AuxTrace && edits.recompute_auxtrace {
            if let Feature::AuxTrace(index) = &mut section.feature {
                if edits.auxtrace_in_perf_layout {
                    index.layout = perfdata_core::feature::AuxTraceLayout::Perf;
                }
                index.entries = auxtrace
                    .iter()
                    .map(|p| AuxTraceEntry {
                        file_offset: p.offset,
                        size: p.size,
                    })
                    .collect();
            }
        }
        out.push((
            section.id,
            encode_feature(
                &section,
                meta.endian,
                out_endian,
                section_at(meta, section.id),
            )?,
        ));
    }
    Ok(out)
}

/// Features perf 6.1 does not send as HEADER_FEATURE: the tracing data and build ids
/// travel as their own records, AUXTRACE indexes file offsets a stream does not have,
/// DIR_FORMAT describes a directory.
fn sent_as_header_feature(id: FeatureId) -> bool {
    !matches!(
        id,
        FeatureId::TracingData | FeatureId::BuildId | FeatureId::AuxTrace | FeatureId::DirFormat
    )
}

/// The COMPRESSED feature a stream compressed by this conversion announces (`None`
/// when the conversion does not compress): the level and the batch size the
/// compressor keeps to, which a pipe reader takes as its decompression buffer.
pub(super) fn pipe_compressed_section(meta: &Metadata, plan: &Plan) -> Option<FeatureSection> {
    let Compression::Compress { level, .. } = plan.compression() else {
        return None;
    };
    let batch = Compressor::batch_limit(plan.buffer_size(meta));
    let c = Compressed::zstd(level.max(0) as u32, 0, batch as u32);
    Some(FeatureSection::new(
        FeatureId::Compressed,
        Feature::Compressed(c),
    ))
}

/// The records that open a pipe stream made from a file: HEADER_ATTR, HEADER_FEATURE,
/// the end marker, HEADER_TRACING_DATA, HEADER_BUILD_ID and HEADER_EVENT_TYPE. Returns
/// warnings for what a stream cannot carry.
pub(super) fn write_pipe_header<W: Write>(
    meta: &Metadata,
    plan: &Plan,
    writer: &mut PipeWriter<W>,
) -> Result<Vec<String>> {
    let (opts, out_endian) = (plan.options(), plan.endian());
    let mut warnings = Vec::new();
    for (i, a) in output_attrs(meta, opts, Target::Pipe)?.iter().enumerate() {
        if writer.write_attr(&a.attr, &a.ids)? {
            warnings.push(format!(
                "attr {i} said its size is {} but holds {} bytes; its HEADER_ATTR says {1}",
                a.attr.size, a.attr.encoded_len
            ));
        }
    }
    let mut sections: Vec<FeatureSection> = meta.features.values().cloned().collect();
    // The COMPRESSED feature says how the records that follow are compressed.
    if opts.compression != Compression::Keep {
        sections.retain(|s| s.id != FeatureId::Compressed);
    }
    sections.extend(pipe_compressed_section(meta, plan));
    sections.sort_by_key(|s| s.id.bit());
    for section in sections {
        if !sent_as_header_feature(section.id) {
            continue;
        }
        if let FeatureId::Unknown(bit) = section.id {
            warnings.push(format!(
                "feature bit {bit} is not perf's; perf's pipe readers reject it, so it is not written"
            ));
            continue;
        }
        let payload = encode_feature(
            &section,
            meta.endian,
            out_endian,
            section_at(meta, section.id),
        )?;
        // perf sends no empty feature (an empty HEADER_FEATURE is its end marker), and
        // a record's size is a u16.
        if payload.is_empty() {
            continue;
        }
        if payload.len() > PipeWriter::<W>::MAX_FEATURE_PAYLOAD {
            warnings.push(format!(
                "feature {} is {} bytes, more than a pipe-mode record can hold; not written",
                section.id,
                payload.len()
            ));
            continue;
        }
        writer.write_feature(section.id, &payload)?;
    }
    writer.write_feature_end()?;
    match meta.feature(FeatureId::TracingData) {
        Some(Feature::TracingData(blob)) | Some(Feature::Raw(blob)) => {
            writer.write_tracing_data(blob)?
        }
        _ => {}
    }
    if let Some(Feature::BuildId(list)) = meta.feature(FeatureId::BuildId) {
        if list.old_abi {
            warnings.push("old-ABI build ids (no pid) are written with perf's pid".into());
        }
        for entry in &list.entries {
            let mut entry = entry.clone();
            entry.header.type_ = RecordType::HeaderBuildId.as_u32();
            let bytes = encode(&entry, out_endian, (false, true))?;
            writer.write_record(&bytes, &[])?;
        }
    }
    for et in &meta.event_types {
        let body = RecordBody::HeaderEventType(HeaderEventType::from_event_type(et));
        let record = Record::new(RecordType::HeaderEventType, body);
        writer.write_record(&record.encode(out_endian)?, &[])?;
    }
    Ok(warnings)
}
