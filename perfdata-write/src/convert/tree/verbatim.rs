//! An unchanged tree read with its contents (`ReadOptions::Contents`) writes back the
//! compressed records it was read from, as they were. Compressing the same records
//! again gives other bytes (perf's zstd is one stream over the whole recording, flushed
//! where perf's ring buffer was), so without them a tree read to be edited would never
//! write its input back.
//!
//! The containers stand for their records only while every record that came out of them
//! is still there, unchanged and where it came out: the records are checked against
//! the containers decompressed again. Otherwise all of them are compressed again, as
//! the tree's records (perf's decompression is one stream, so a copied container cannot
//! follow a recompressed one).

use perfdata_core::raw::{Decompressor, Origin, RecordSource};
use perfdata_core::{ContainerKind, Entry, Metadata, PerfData, ReadContainer, RecordRef};

use super::super::stage::RecordStage;
use super::super::writer_sink::Sink;
use super::super::{Plan, Target};
use super::encoded;
use crate::error::Result;

/// The containers written in place of the records that came out of them.
pub(super) struct Verbatim<'t> {
    containers: &'t [ReadContainer],
    /// The next container to write.
    next: usize,
}

impl<'t> Verbatim<'t> {
    /// The tree's containers, when they can be written instead of its records that came
    /// out of them: the conversion keeps compression, byte order and container kind of a
    /// finished recording, and the records are still the containers' contents.
    pub(super) fn plan(
        tree: &'t PerfData,
        plan: &Plan,
        meta: &Metadata,
        target: Target,
    ) -> Result<Option<Self>> {
        let containers = tree.read_containers();
        let same_kind = match meta.container {
            ContainerKind::File => target == Target::File,
            ContainerKind::Pipe => target == Target::Pipe,
            ContainerKind::Directory => false,
        };
        // `expand`: among others, a recording that never finished, whose COMPRESSED
        // feature and SAMPLE_TIME come from the records the conversion sees.
        if containers.is_empty()
            || !same_kind
            || plan.expands()
            || !in_place(&tree.records, containers)
            || !unchanged(&tree.records, containers, meta)?
        {
            return Ok(None);
        }
        Ok(Some(Verbatim {
            containers,
            next: 0,
        }))
    }

    /// Write what comes before record `index`: the containers read before it. Returns
    /// whether the record itself is written (not when a container holds it).
    pub(super) fn before(
        &mut self,
        index: usize,
        entry: &Entry,
        conv: &mut RecordStage,
        sink: &mut dyn Sink,
        meta: &Metadata,
    ) -> Result<bool> {
        while let Some(c) = self.containers.get(self.next).filter(|c| c.at <= index) {
            let raw = c.record.as_raw(meta.endian);
            conv.record(sink, &RecordRef::new(raw, meta))?;
            self.next += 1;
        }
        Ok(matches!(entry.origin, Origin::Top))
    }

    /// Write the containers read after the last record.
    pub(super) fn finish(
        &mut self,
        conv: &mut RecordStage,
        sink: &mut dyn Sink,
        meta: &Metadata,
    ) -> Result<()> {
        for c in &self.containers[self.next..] {
            let raw = c.record.as_raw(meta.endian);
            conv.record(sink, &RecordRef::new(raw, meta))?;
        }
        self.next = self.containers.len();
        Ok(())
    }
}

/// Whether the records that came out of containers are exactly those at the indices
/// they came out at: the same number of records, none moved in or out.
fn in_place(records: &[Entry], containers: &[ReadContainer]) -> bool {
    let mut from_container = vec![false; records.len()];
    for c in containers {
        let Some(range) = from_container.get_mut(c.at..c.at + c.contents) else {
            return false;
        };
        range.fill(true);
    }
    records
        .iter()
        .zip(from_container)
        .all(|(e, inside)| matches!(e.origin, Origin::Decompressed { .. }) == inside)
}

/// Whether the records that came out of containers still encode to the bytes the
/// containers hold, in order.
fn unchanged(records: &[Entry], containers: &[ReadContainer], meta: &Metadata) -> Result<bool> {
    let mut expected = records
        .iter()
        .filter(|e| matches!(e.origin, Origin::Decompressed { .. }));
    let mut d = Decompressor::new(meta.endian, 0)?;
    for c in containers {
        d.feed(&c.record.bytes, c.record.offset)?;
        while let Some(raw) = d.next_record()? {
            let Some(entry) = expected.next() else {
                return Ok(false);
            };
            let Some(bytes) = encoded(entry, meta)? else {
                return Ok(false);
            };
            let (rec, payload) = bytes.split_at(raw.bytes.len().min(bytes.len()));
            if rec != raw.bytes || payload != raw.payload {
                return Ok(false);
            }
        }
    }
    Ok(expected.next().is_none() && d.pending() == 0)
}
