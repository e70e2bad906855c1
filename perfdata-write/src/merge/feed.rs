//! One input of a merge, read in perf's time order: its records go through perf's
//! ordered-events queue (a FINISHED_ROUND lets out what the round before it bounded), so
//! that each input hands out its records as perf would deliver them, each rewritten for
//! the merged recording and tagged with the time it is merged by.

use std::collections::VecDeque;

use perfdata_core::ordered::{Delivery, OrderedQueue, WINDOW_LIMIT};
use perfdata_core::raw::OwnedRecord;
use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Metadata, RecordRef};

use super::events::EventMap;
use super::rewrite::{rewrite, Shift};
use crate::convert::{Input, Needs, Source};
use crate::error::{Result, WriteError};

/// Records of perf's own types that a merge leaves out of input `input`: what they say
/// is in the merged metadata (a pipe's HEADER_* records), the rounds (regenerated), and
/// the threads and CPUs perf opened its events on (THREAD_MAP, CPU_MAP), the first
/// input's as its features are.
fn left_out(ty: RecordType, input: usize) -> bool {
    ty.is_metadata()
        || ty == RecordType::FinishedRound
        || (input > 0 && matches!(ty, RecordType::ThreadMap | RecordType::CpuMap))
}

/// Records a merge cannot rewrite: AUX area traces (their payloads stream past, and the
/// AUXTRACE index points into the input) and `perf stat record` counts.
fn refused(ty: RecordType) -> bool {
    matches!(
        ty,
        RecordType::Auxtrace
            | RecordType::AuxtraceInfo
            | RecordType::AuxtraceError
            | RecordType::Aux
            | RecordType::StatConfig
            | RecordType::Stat
            | RecordType::StatRound
    )
}

/// One input: its records in perf's delivery order, rewritten.
pub(super) struct Feed {
    /// The input's name (its path) for messages.
    pub name: String,
    input: Input,
    /// A pipe stream's first data record, read to find where its metadata ends.
    held: Option<OwnedRecord>,
    queue: OrderedQueue<OwnedRecord>,
    /// Bytes the queue holds.
    queued_bytes: usize,
    /// Records delivered (in perf's order), with the time each is merged by.
    ready: VecDeque<(u64, OwnedRecord)>,
    /// The time of the record delivered last (a record without time follows it).
    last_time: u64,
    /// Whether FINISHED_ROUND lets records out (not for a directory, whose streams are
    /// read side by side: the queue then lets out its earlier half when full).
    rounds: bool,
    done: bool,
    pub shift: Shift,
}

impl Feed {
    /// Open `path` for merging: the records inside compressed records, a directory's
    /// streams merged by time, a pipe stream's metadata read up to its first data
    /// record.
    pub fn open(path: &std::path::Path, input: usize) -> Result<Feed> {
        let name = path.display().to_string();
        // One input of several: its errors name it.
        let opened = || -> Result<_> {
            let mut source = Input::open(path)?;
            source.prepare(Needs {
                contents: true,
                time_order: true,
            })?;
            let held = crate::convert::read_metadata_ahead(&mut source, || {})?;
            Ok((source, held))
        };
        let (source, held) = opened().map_err(|e| e.of_input(&name))?;
        let rounds = source.meta().container != ContainerKind::Directory;
        Ok(Feed {
            name,
            input: source,
            held,
            queue: OrderedQueue::new(),
            queued_bytes: 0,
            ready: VecDeque::new(),
            last_time: 0,
            rounds,
            done: false,
            shift: Shift {
                input,
                ..Default::default()
            },
        })
    }

    /// The input's metadata (as of the records read).
    pub fn meta(&self) -> &Metadata {
        self.input.meta()
    }

    /// The time the next record is merged by, reading until one is delivered; `None`
    /// at the end.
    pub fn peek(&mut self, map: &EventMap, out: &Metadata) -> Result<Option<u64>> {
        while self.ready.is_empty() && !self.done {
            // A record of one input of several: its error names it.
            self.step(map, out).map_err(|e| e.of_input(&self.name))?;
        }
        Ok(self.ready.front().map(|(t, _)| *t))
    }

    /// The next record delivered (after [`Feed::peek`] said there is one).
    pub fn take(&mut self) -> Option<OwnedRecord> {
        self.ready.pop_front().map(|(_, r)| r)
    }

    fn deliver(&mut self, time: Option<u64>, rec: OwnedRecord) {
        if let Some(t) = time {
            self.last_time = t;
        }
        self.ready.push_back((self.last_time, rec));
    }

    fn let_out(&mut self, items: Vec<OwnedRecord>, out: &Metadata) {
        for rec in items {
            self.queued_bytes -= rec.bytes.len() + rec.payload.len();
            let time =
                perfdata_core::raw::locate(&rec.as_raw(out.endian), out.events(), out.endian).time;
            self.deliver(time, rec);
        }
    }

    /// Read one record of the input and deliver what perf would deliver then.
    fn step(&mut self, map: &EventMap, out: &Metadata) -> Result<()> {
        let held = self.held.take();
        let item = match &held {
            Some(rec) => Some(RecordRef::new(
                rec.as_raw(self.input.meta().endian),
                self.input.meta(),
            )),
            None => self.input.next_record()?,
        };
        let Some(item) = item else {
            let rest: Vec<_> = self.queue.drain().collect();
            self.let_out(rest, out);
            self.done = true;
            return Ok(());
        };
        let ty = item.raw.record_type();
        if refused(ty) {
            return Err(WriteError::unsupported(
                Some(item.raw.offset),
                format!(
                    "{}: record {ty}: AUX area traces and perf stat counts are not merged",
                    self.name
                ),
            ));
        }
        if ty == RecordType::Read && !map.ids[self.shift.input].is_empty() {
            return Err(WriteError::unsupported(
                Some(item.raw.offset),
                format!(
                    "{}: a READ record's values may hold sample ids, and this input's ids \
                     clash with an earlier input's: ids inside read values are not remapped",
                    self.name
                ),
            ));
        }
        if item.raw.rest > 0 {
            return Err(WriteError::unsupported(
                Some(item.raw.offset),
                format!(
                    "{}: record {ty} has a payload too large to hold for merging",
                    self.name
                ),
            ));
        }
        if ty == RecordType::FinishedRound {
            if self.rounds {
                let out_items: Vec<_> = self.queue.round().collect();
                self.let_out(out_items, out);
            }
            return Ok(());
        }
        if left_out(ty, self.shift.input) {
            return Ok(());
        }
        let delivery = Delivery::of(&item);
        let rec = rewrite(&item.raw, item.meta, out, map, &self.shift)?;
        match delivery {
            Delivery::At(t) => {
                self.queued_bytes += rec.bytes.len() + rec.payload.len();
                self.queue.push(self.shift.time(t), rec);
                if self.queued_bytes > WINDOW_LIMIT {
                    let half: Vec<_> = self.queue.half().collect();
                    self.let_out(half, out);
                }
            }
            _ => self.deliver(None, rec),
        }
        Ok(())
    }
}
