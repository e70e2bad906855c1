//! A perf.data directory (`perf record --threads`) into one file: the streams `data`,
//! `data.0`, `data.1`, ... merged by time, as perf merges them when it reads the
//! directory. Records without a time keep their place after their stream's previous
//! record.

use std::io::{Seek, Write};

use perfdata_core::raw::OwnedRecord;
use perfdata_core::{Item, PerfReader};

use super::{finish_file, output_attrs, sink::FileSink, ConvertOptions, Converter, Report, Target};
use crate::edit::EditStage;
use crate::error::Result;
use crate::file::FileWriter;

/// The next record of one stream, copied out of its reader, with the time it is merged
/// by (its own, or its stream's last one).
struct Head {
    record: OwnedRecord,
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
        record: item.raw.to_owned_record(),
        time: *last_time,
    }))
}

pub(super) fn directory_to_file<W: Write + Seek>(
    reader: PerfReader,
    out: W,
    opts: &ConvertOptions,
    edit: Option<EditStage>,
) -> Result<(W, Report)> {
    let mut meta = reader.meta().clone();
    let mut conv = Converter::new(*opts, &meta, Target::File);
    conv.edit = edit;
    let out_meta = conv.out_meta(&meta)?;
    let attrs = output_attrs(&out_meta, opts, Target::File)?;
    let mut writer = FileWriter::new(out, conv.out_endian, &attrs, &out_meta.event_types)?;
    drop(out_meta);
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
            let raw = head.record.as_raw(meta.endian);
            conv.record(&mut sink, &Item { raw, meta: &meta })?;
            conv.stream_payload(&mut sink, &mut streams[i])?;
            heads[i] = next_head(&mut streams[i], &mut last_times[i])?;
        }
        conv.finish_compression(&mut sink)?;
    }
    for s in &streams {
        meta.warnings.extend(s.meta().warnings.iter().cloned());
    }
    finish_file(writer, &mut conv, &meta)
}
