//! [`RecordFilter`]: which records a viewer shows (`perfdata dump --pid ...`), by the
//! selectors `perfdata strip` takes, without changing any record.
//!
//! A record is shown when it carries every field a selector names and each matches:
//! with `--pid 42`, the samples of process 42 and the records about it (COMM, MMAP,
//! FORK, ..., or any record whose sample_id says pid 42); records without a pid
//! (FINISHED_ROUND, metadata) are not shown. `--comm` matches the thread's command as of
//! the record (COMM records and forks followed, perf's `thread__comm_str`), `--event` the
//! event a record's id names, `--time` its time. Record types given apart narrow what is
//! shown further.

use perfdata_core::record::RecordType;
use perfdata_core::{u32_at, Metadata, RecordRef};

use super::comms::Comms;
use super::select::{in_list, in_ranges, resolve_time, TimeRange};
use super::strip::Selection;
use crate::error::{Result, WriteError};

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct RecordFilter {
    sel: Selection,
    types: Vec<RecordType>,
    /// Per event: whether `--event` names it.
    event_selected: Vec<bool>,
    times: Vec<TimeRange>,
    /// Each thread's command as of the current record.
    comms: Comms,
}

impl RecordFilter {
    /// Show what `sel` selects (its `keep`, `keep_sideband` and `drop_types` are not
    /// used) among records of `types` (all types when empty).
    pub fn new(sel: Selection, types: Vec<RecordType>) -> Self {
        RecordFilter {
            sel,
            types,
            event_selected: Vec::new(),
            times: Vec::new(),
            comms: Comms::default(),
        }
    }

    /// Whether the filter shows every record.
    pub fn shows_all(&self) -> bool {
        self.types.is_empty() && !self.sel.selects_samples()
    }

    /// Resolve the selectors against the recording: event names (an unknown one is an
    /// error naming the events there are), percent time slices (against SAMPLE_TIME).
    pub fn start(&mut self, meta: &Metadata) -> Result<()> {
        let names = self.resolve_events(meta);
        // A stream's attrs come as records: its events are resolved as they arrive.
        let known = !meta.attrs.is_empty();
        if let Some(want) = self.sel.events.iter().find(|w| known && !names.contains(w)) {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "no event {want:?} in the recording (its events: {})",
                    names.join(", ")
                ),
            ));
        }
        if let Some(spec) = &self.sel.time {
            self.times = resolve_time(spec, meta)?;
        }
        Ok(())
    }

    /// Which events `--event` names; their names.
    fn resolve_events(&mut self, meta: &Metadata) -> Vec<String> {
        let names: Vec<String> = (0..meta.attrs.len()).map(|i| meta.event_name(i)).collect();
        self.event_selected = names
            .iter()
            .map(|n| self.sel.events.iter().any(|want| want == n))
            .collect();
        names
    }

    /// Whether to show `item`. Call it for every record in order (commands are
    /// followed through the records shown or not).
    pub fn shows(&mut self, item: &RecordRef<'_>) -> bool {
        let ty = item.raw.record_type();
        self.comms.track(ty, item.raw.bytes, item.meta.endian);
        if !self.types.is_empty() && !self.types.contains(&ty) {
            return false;
        }
        if !self.sel.selects_samples() {
            return true;
        }
        if !self.sel.events.is_empty() && self.event_selected.len() != item.meta.attrs.len() {
            self.resolve_events(item.meta);
        }
        let s = &self.sel;
        let at = item.locate();
        let (pid, tid) = match task_of(item) {
            Some(task) => (Some(task.0), Some(task.1)),
            None => (at.pid, at.tid),
        };
        let id_ok = |list: &Option<Vec<(u64, u64)>>, v: Option<i32>| match list {
            None => true,
            Some(l) => v.is_some_and(|v| u64::try_from(v).is_ok_and(|v| in_list(l, v))),
        };
        let comm_ok = s.comms.is_empty()
            || tid.is_some_and(|t| {
                let comm = self.comms.of(t as u32);
                s.comms.iter().any(|g| g.matches(&comm))
            });
        let cpu_ok = s
            .cpus
            .as_ref()
            .is_none_or(|l| at.cpu.is_some_and(|c| in_list(l, u64::from(c))));
        let event_ok = s.events.is_empty()
            || at
                .event
                .is_some_and(|e| self.event_selected.get(e) == Some(&true));
        let time_ok = s.time.is_none() || at.time.is_some_and(|t| in_ranges(&self.times, t));
        id_ok(&s.pids, pid) && id_ok(&s.tids, tid) && comm_ok && cpu_ok && event_ok && time_ok
    }
}

/// The (pid, tid) a task record is about, from its body: COMM, MMAP, MMAP2 and
/// NAMESPACES start with pid and tid; FORK and EXIT with pid, ppid, tid.
fn task_of(item: &RecordRef<'_>) -> Option<(i32, i32)> {
    let (b, e) = (item.raw.bytes, item.meta.endian);
    let word = |o| u32_at(b, o, e).map(|v| v as i32);
    match item.raw.record_type() {
        RecordType::Comm | RecordType::Mmap | RecordType::Mmap2 | RecordType::Namespaces => {
            Some((word(8)?, word(12)?))
        }
        RecordType::Fork | RecordType::Exit => Some((word(8)?, word(16)?)),
        _ => None,
    }
}
