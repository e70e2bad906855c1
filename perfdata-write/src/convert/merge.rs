//! A perf.data directory (`perf record --threads`) into one file: the streams `data`,
//! `data.0`, `data.1`, ... merged by time, as perf merges them when it reads the
//! directory. Records without a time keep their place after their stream's previous
//! record.

use std::io::{Seek, Write};

use perfdata_core::raw::{header_of, Origin, RawRecord};
use perfdata_core::{Item, PerfReader};

use super::{
    output_attrs, sink::FileSink, ConvertOptions, Converter, FeatureEdits, Report, Target,
};
use crate::error::Result;
use crate::file::FileWriter;

/// The next record of one stream, copied out of its reader.
struct Head {
    bytes: Vec<u8>,
    payload: Vec<u8>,
    offset: u64,
    origin: Origin,
    stream: usize,
    time: u64,
}

fn next_head(reader: &mut PerfReader, last_time: &mut u64) -> Result<Option<Head>> {
    let Some(item) = reader.next_record()? else {
        return Ok(None);
    };
    if let Some(t) = item.locate().time {
        *last_time = t;
    }
    Ok(Some(Head {
        bytes: item.raw.bytes.to_vec(),
        payload: item.raw.payload.to_vec(),
        offset: item.raw.offset,
        origin: item.raw.origin,
        stream: item.raw.stream,
        time: *last_time,
    }))
}

pub(super) fn directory_to_file<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    let mut meta = reader.meta().clone();
    let mut conv = Converter::new(*opts, &meta)?;
    let attrs = output_attrs(&meta, opts, Target::File)?;
    let mut writer = FileWriter::new(out, conv.out_endian, &attrs, &meta.event_types)?;
    let mut streams = reader.into_streams();
    let mut last_times = vec![0u64; streams.len()];
    let mut heads: Vec<Option<Head>> = Vec::with_capacity(streams.len());
    for (reader, last) in streams.iter_mut().zip(last_times.iter_mut()) {
        heads.push(next_head(reader, last)?);
    }
    {
        let mut sink = FileSink(&mut writer);
        // The earliest head; ties go to the lower stream (side-band `data` first).
        while let Some(i) = heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|h| (h.time, i)))
            .min()
            .map(|(_, i)| i)
        {
            let head = heads[i].take().expect("chosen head exists");
            let raw = RawRecord {
                header: header_of(&head.bytes, meta.endian),
                offset: head.offset,
                bytes: &head.bytes,
                payload: &head.payload,
                origin: head.origin,
                stream: head.stream,
            };
            conv.record(&mut sink, &Item { raw, meta: &meta }, true)?;
            heads[i] = next_head(&mut streams[i], &mut last_times[i])?;
        }
        conv.finish_compression(&mut sink)?;
    }
    for s in &streams {
        meta.warnings.extend(s.meta().warnings.iter().cloned());
    }
    let edits = FeatureEdits::for_output(&conv, &meta, Target::File);
    let feats = super::features::file_features(
        &meta,
        &edits,
        writer.auxtrace_positions(),
        conv.out_endian,
    )?;
    let mut report = std::mem::take(&mut conv.report);
    report
        .warnings
        .extend(meta.warnings.iter().map(|w| w.to_string()));
    report.warnings.extend(edits.warnings);
    let out = writer.finish(&feats, &meta.feature_index_slack)?;
    Ok((out, report))
}
