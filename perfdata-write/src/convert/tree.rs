//! Writing an owned tree ([`PerfData`]) back: its records go through the convert
//! pipeline (the same writers, compression and derived features as `perfdata convert`),
//! its attrs and features come from `tree.meta`. What the records determine is
//! recomputed: offsets, record sizes, SAMPLE_TIME, the AUXTRACE index, ID_INDEX entries
//! of ids no attr has any more, and a pipe stream's header records when `meta` no
//! longer says what they say. An unchanged tree comes back as the input's bytes wherever
//! `perfdata convert` gives them back, also when read with the records inside compressed
//! records: the compressed records it was read from are written back as they were
//! ([`verbatim`]).

use std::collections::HashSet;
use std::io::{Seek, Write};

use perfdata_core::feature::{Feature, FeatureId, FeatureSection, SampleTime};
use perfdata_core::header::FileSection;
use perfdata_core::raw::{header_of, RawRecord};
use perfdata_core::record::{Record, RecordBody, RecordType};
use perfdata_core::Endian;
use perfdata_core::{ContainerKind, Entry, Metadata, PerfData, RecordRef};

use super::pipeline::{file_writer, finish_file, pipe_writer};
use super::sink::{Sink, Writer};
use super::stage::{split_payload, RecordStage};
use super::writer_sink::{FileSink, PipeSink, Sink as RecordSink};
use super::{features, output_attrs, ConvertOptions, Plan, Report, Target};
use crate::cancel::Cancel;
use crate::error::{Result, WriteError};

mod verbatim;
use verbatim::Verbatim;

/// Write `tree` into `sink` as `opts` say (see [`super::TreeSource`]).
pub(super) fn write(
    tree: &PerfData,
    opts: &ConvertOptions,
    sink: Sink<'_>,
    cancel: Option<&Cancel>,
) -> Result<Report> {
    let target = opts.target_for(tree.meta.container);
    sink.run(target, |out| match out {
        Writer::Seek(w, _) => to_file(tree, w, opts, cancel),
        Writer::Stream(w) => to_pipe(tree, w, opts, cancel),
    })
}

fn to_file<W: Write + Seek>(
    tree: &PerfData,
    out: W,
    opts: &ConvertOptions,
    cancel: Option<&Cancel>,
) -> Result<Report> {
    let meta = source_meta(tree, Target::File, opts)?;
    let plan = &Plan::new(opts, &meta).writing(Target::File);
    let opts = plan.options();
    let mut conv = RecordStage::new(plan, &meta, None)?;
    let attrs = output_attrs(&meta, opts, Target::File)?;
    let mut writer = file_writer(&conv, out, &attrs, &meta)?;
    {
        let mut sink = FileSink(&mut writer);
        // A directory's streams are merged by time, as perf reads them.
        let order = match meta.container {
            ContainerKind::Directory => merged_order(&tree.records),
            _ => (0..tree.records.len()).collect(),
        };
        let mut verbatim = Verbatim::plan(tree, plan, &meta, Target::File)?;
        for i in order {
            check(cancel)?;
            write_at(&mut conv, &mut sink, tree, i, &meta, verbatim.as_mut())?;
        }
        if let Some(v) = verbatim.as_mut() {
            v.finish(&mut conv, &mut sink, &meta)?;
        }
        conv.finish_records(&mut sink, &meta)?;
    }
    finish_file(writer, conv, plan, &meta).map(|(_, report)| report)
}

fn to_pipe<W: Write>(
    tree: &PerfData,
    out: W,
    opts: &ConvertOptions,
    cancel: Option<&Cancel>,
) -> Result<Report> {
    let meta = source_meta(tree, Target::Pipe, opts)?;
    let plan = &Plan::new(opts, &meta).writing(Target::Pipe);
    let mut conv = RecordStage::new(plan, &meta, None)?;
    let mut writer = pipe_writer(&conv, out)?;
    let warnings = if conv.keeps_metadata() {
        Vec::new()
    } else {
        features::write_pipe_header(&meta, plan, &mut writer)?
    };
    {
        let mut sink = PipeSink(&mut writer);
        let mut verbatim = Verbatim::plan(tree, plan, &meta, Target::Pipe)?;
        for i in 0..tree.records.len() {
            check(cancel)?;
            write_at(&mut conv, &mut sink, tree, i, &meta, verbatim.as_mut())?;
        }
        if let Some(v) = verbatim.as_mut() {
            v.finish(&mut conv, &mut sink, &meta)?;
        }
        conv.finish_records(&mut sink, &meta)?;
    }
    let (_, report) = conv.into_results();
    writer.finish()?;
    Ok(report.finish(&meta, warnings))
}

/// Stop before the next record once `cancel` is set.
fn check(cancel: Option<&Cancel>) -> Result<()> {
    match cancel {
        Some(c) if c.is_cancelled() => Err(WriteError::Cancelled),
        _ => Ok(()),
    }
}

/// Write record `index` of the tree, or the compressed records read before it that
/// stand for it (see [`Verbatim`]).
fn write_at(
    conv: &mut RecordStage,
    sink: &mut dyn RecordSink,
    tree: &PerfData,
    index: usize,
    meta: &Metadata,
    verbatim: Option<&mut Verbatim>,
) -> Result<()> {
    let entry = &tree.records[index];
    if let Some(v) = verbatim {
        if !v.before(index, entry, conv, sink, meta)? {
            return Ok(());
        }
    }
    let Some(bytes) = encoded(entry, meta)? else {
        return Ok(());
    };
    let raw = raw(&bytes, entry, meta.endian);
    conv.record(sink, &RecordRef::new(raw, meta)).map(drop)
}

/// One record of the tree encoded as it is written (its size recomputed; an ID_INDEX
/// without the ids no attr has), payload last; `None` when nothing is left of it.
fn encoded(entry: &Entry, meta: &Metadata) -> Result<Option<Vec<u8>>> {
    let at = |e: &dyn std::fmt::Display| {
        let ty = entry.record.record_type();
        WriteError::unsupported(Some(entry.offset), format!("record {ty}: {e}"))
    };
    let edited = match without_stale_ids(&entry.record, meta) {
        Some(None) => return Ok(None),
        Some(edited) => edited,
        None => None,
    };
    let record = edited.as_ref().unwrap_or(&entry.record);
    Ok(Some(record.encode(meta.endian).map_err(|e| at(&e))?))
}

/// An encoded record of the tree (header, then payload) framed as the reader frames
/// records, from where its entry came from.
fn raw<'a>(bytes: &'a [u8], entry: &Entry, endian: Endian) -> RawRecord<'a> {
    let (rec, payload) = split_payload(bytes, endian);
    RawRecord {
        header: header_of(rec, endian),
        offset: entry.offset,
        bytes: rec,
        payload,
        origin: entry.origin,
        stream: entry.stream,
        rest: 0,
    }
}

/// An ID_INDEX record without the entries of ids no attr has: `None` when it needs no
/// change, `Some(None)` when no entry is left.
fn without_stale_ids(record: &Record, meta: &Metadata) -> Option<Option<Record>> {
    let RecordBody::IdIndex(index) = &record.body else {
        return None;
    };
    let known: HashSet<u64> = meta
        .attrs()
        .iter()
        .flat_map(|a| a.ids.iter().copied())
        .collect();
    let mut index = index.clone();
    if !index.retain_ids(|id| known.contains(&id)) {
        return None;
    }
    if index.entries.is_empty() {
        return Some(None);
    }
    let mut out = record.clone();
    out.body = RecordBody::IdIndex(index);
    Some(Some(out))
}

/// A COMPRESSED or COMPRESSED2 record.
fn is_container(record: &Record) -> bool {
    matches!(
        record.record_type(),
        RecordType::Compressed | RecordType::Compressed2
    )
}

/// The time a record is merged by: its own (a sample's, or its sample_id trailer's).
fn record_time(record: &Record) -> Option<u64> {
    match &record.body {
        RecordBody::Sample(s) => s.time,
        _ => record.sample_id.as_ref().and_then(|id| id.time),
    }
}

/// The order in which a directory's records are written: its streams merged by time,
/// a record without a time after its stream's previous one, ties to the lower stream
/// (as `perfdata convert` merges a directory).
fn merged_order(records: &[Entry]) -> Vec<usize> {
    let mut last = std::collections::HashMap::new();
    let mut keyed: Vec<(u64, usize, usize)> = Vec::with_capacity(records.len());
    for (i, e) in records.iter().enumerate() {
        let t = last.entry(e.stream).or_insert(0u64);
        if let Some(time) = record_time(&e.record) {
            *t = time;
        }
        keyed.push((*t, e.stream, i));
    }
    // Within a stream the keys never decrease where its times are in order; a stable
    // sort by (time, stream) is then the merge of the streams.
    keyed.sort_by_key(|&(t, stream, _)| (t, stream));
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

/// The span of the tree's samples.
fn sample_span(records: &[Entry]) -> Option<(u64, u64)> {
    records
        .iter()
        .filter_map(|e| match &e.record.body {
            RecordBody::Sample(s) => s.time,
            _ => None,
        })
        .fold(None, |span, t| {
            Some(span.map_or((t, t), |(a, b): (u64, u64)| (a.min(t), b.max(t))))
        })
}

/// The features a file's data records carry (perf inject's HEADER_BUILD_ID records,
/// simpleperf's tracing data): written as those records, not again as sections.
fn carried_by_records(tree: &PerfData) -> HashSet<FeatureId> {
    let mut out = HashSet::new();
    for e in &tree.records {
        match &e.record.body {
            RecordBody::HeaderBuildId(_) => {
                out.insert(FeatureId::BuildId);
            }
            RecordBody::HeaderTracingData(_) => {
                out.insert(FeatureId::TracingData);
            }
            RecordBody::HeaderFeature(hf) => {
                if let Ok(bit) = u32::try_from(hf.feat_id) {
                    out.insert(FeatureId::from_bit(bit));
                }
            }
            _ => {}
        }
    }
    out
}

/// The metadata the conversion reads the tree with: `tree.meta`, its event index made
/// from its attrs, SAMPLE_TIME recomputed when the samples moved, and what says which
/// features and header records are written.
fn source_meta(tree: &PerfData, target: Target, opts: &ConvertOptions) -> Result<Metadata> {
    // What convert would expand (a byte-order or compression change, a directory's or
    // a stream's records into a file) cannot be done on records kept compressed.
    if Plan::expands_as_asked(opts, &tree.meta) {
        if let Some(e) = tree.records.iter().find(|e| is_container(&e.record)) {
            return Err(WriteError::unsupported(
                Some(e.offset),
                "this output needs the records inside the tree's compressed records: \
                 read it with ReadOptions::Contents",
            ));
        }
    }
    let mut meta = tree.meta.clone();
    // A finished file states SAMPLE_TIME (the conversion derives it for the others).
    let span = sample_span(&tree.records);
    if meta.container == ContainerKind::File && !meta.unfinished && span != tree.read_sample_span()
    {
        match span {
            Some((first, last)) => {
                let t = Feature::SampleTime(SampleTime { first, last });
                let section = FeatureSection::new(FeatureId::SampleTime, t);
                meta.features.insert(FeatureId::SampleTime, section);
            }
            None => {
                meta.features.shift_remove(&FeatureId::SampleTime);
            }
        }
    }
    if meta.header.is_some() {
        // A file writes the feature sections its header had (a record's copy of one
        // stays a record); a feature added to the tree is a new section.
        let carried = carried_by_records(tree);
        let features = &meta.features;
        meta.feature_sections
            .retain(|id, _| features.contains_key(id));
        for id in meta.features.keys() {
            if !meta.feature_sections.contains_key(id) && !carried.contains(id) {
                meta.feature_sections.insert(*id, FileSection::default());
            }
        }
    }
    if meta.container == ContainerKind::Pipe
        && target == Target::Pipe
        && !header_records_agree(tree, &meta)?
    {
        // Written as a file's metadata is: the stream's header from `meta`, the
        // header records of the tree left out.
        meta.container = ContainerKind::File;
    }
    Ok(meta)
}

/// Whether a pipe tree's header records say what its `meta` says: the same attrs and
/// ids, features and event types.
fn header_records_agree(tree: &PerfData, meta: &Metadata) -> Result<bool> {
    let mut folded = meta.clone();
    folded.set_attrs(Vec::new());
    folded.features.clear();
    folded.event_types.clear();
    for e in &tree.records {
        if !e.record.record_type().is_metadata() {
            continue;
        }
        let bytes = e.record.encode(meta.endian)?;
        folded.fold(&raw(&bytes, e, meta.endian))?;
    }
    let events = |m: &Metadata| -> Vec<_> {
        m.attrs()
            .iter()
            .map(|a| (a.attr.clone(), a.ids.clone()))
            .collect()
    };
    let features = |m: &Metadata| -> Vec<_> {
        let mut f: Vec<_> = m
            .features
            .values()
            .map(|s| (s.id.bit(), s.encode(m.endian).ok()))
            .collect();
        f.sort();
        f
    };
    Ok(events(&folded) == events(meta)
        && features(&folded) == features(meta)
        && folded.event_types == meta.event_types)
}
