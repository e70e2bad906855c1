//! A perf.data directory (`perf record --threads`) as one record source: the streams
//! `data`, `data.0`, `data.1`, ... merged by time, as perf merges them when it reads the
//! directory. Records without a time keep their place after their stream's previous
//! record.

use perfdata_core::raw::OwnedRecord;
use perfdata_core::{Metadata, PerfReader, RecordRef};

use crate::error::Result;

/// The next record of one stream, copied out of its reader, with the time it is merged
/// by (its own, or its stream's last one).
struct Head {
    record: OwnedRecord,
    time: u64,
}

/// The streams of a directory, read in time order.
pub(super) struct MergedStreams {
    /// The directory's metadata; the streams' warnings join it when they are done.
    meta: Metadata,
    streams: Vec<PerfReader>,
    last_times: Vec<u64>,
    heads: Vec<Option<Head>>,
    /// The stream whose head was handed out last: its next head is read only when the
    /// next record is asked for, so that the rest of a payload too large to hold can
    /// still be read from it ([`MergedStreams::last_stream`]).
    taken: Option<usize>,
    /// The record handed out last.
    current: Option<OwnedRecord>,
    /// The directory reader's progress counter (see [`PerfReader::progress`]).
    progress: std::sync::Arc<std::sync::atomic::AtomicU64>,
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

impl MergedStreams {
    /// Open the streams of a directory `reader` and read the first record of each.
    pub fn new(reader: PerfReader) -> Result<Self> {
        let meta = reader.meta().clone();
        let progress = reader.progress();
        let mut streams = reader.into_streams();
        let mut last_times = vec![0u64; streams.len()];
        let mut heads = Vec::with_capacity(streams.len());
        for (reader, last) in streams.iter_mut().zip(last_times.iter_mut()) {
            heads.push(next_head(reader, last)?);
        }
        Ok(MergedStreams {
            meta,
            streams,
            last_times,
            heads,
            taken: None,
            current: None,
            progress,
        })
    }

    /// The directory reader's progress counter.
    pub fn progress(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        std::sync::Arc::clone(&self.progress)
    }

    /// The directory's metadata (with the streams' warnings once they are all read).
    pub fn meta(&self) -> &Metadata {
        &self.meta
    }

    /// The earliest record of all streams; ties go to the lower stream (side-band
    /// `data` first). `None` at the end, when the streams' warnings join the metadata.
    pub fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        if let Some(i) = self.taken.take() {
            self.heads[i] = next_head(&mut self.streams[i], &mut self.last_times[i])?;
        }
        let earliest = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|h| (h.time, i)))
            .min()
            .map(|(_, i)| i);
        let Some(i) = earliest else {
            for s in &self.streams {
                self.meta.warnings.extend(s.meta().warnings.iter().cloned());
            }
            self.streams.clear();
            return Ok(None);
        };
        let head = self.heads[i].take().expect("chosen head exists");
        self.taken = Some(i);
        let current = self.current.insert(head.record);
        Ok(Some(RecordRef::new(
            current.as_raw(self.meta.endian),
            &self.meta,
        )))
    }

    /// The stream of the record handed out last.
    pub fn last_stream(&mut self) -> &mut PerfReader {
        let i = self.taken.expect("a record was handed out");
        &mut self.streams[i]
    }
}
