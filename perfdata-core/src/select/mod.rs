//! Selectors, as `perf script` and `perf report` take them: `--pid`, `--tid`, `--comm`,
//! `--cpu`, `--event`, `--time`. One implementation for every command that selects
//! samples: strip, dump's filters and report's.
//!
//! [`Selectors`] are what was asked (parsed with [`parse_id_list`],
//! [`parse_time_ranges`], [`Glob`]); a [`Matcher`] is them resolved against a
//! recording (event names, percent time slices) and tests a record's fields. A sample's
//! command is its thread's as of the sample in perf's time order: [`ThreadComms`] fed
//! through [`crate::ordered`].

mod filter;
mod syntax;
mod threads;

use std::borrow::Cow;

pub use filter::{parse_record_types, RecordFilter};
pub use syntax::{
    comm_matches, in_list, in_ranges, parse_cpu_list, parse_id_list, parse_time_ranges,
    resolve_time, Glob, IdRanges, TimeRange, TimeSpec,
};
pub use threads::{task_of, Task, TaskScope, ThreadComms};

use crate::raw::Located;
use crate::{Error, Metadata, Result};

/// What to select. Empty selectors select everything they could; a sample is selected
/// when every selector given matches it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selectors {
    /// Process ids (inclusive ranges).
    pub pids: Option<Vec<(u64, u64)>>,
    /// Thread ids.
    pub tids: Option<Vec<(u64, u64)>>,
    /// Comm names, exact or globs; a sample matches when any does.
    pub comms: Vec<Glob>,
    /// CPUs (inclusive ranges).
    pub cpus: Option<Vec<(u64, u64)>>,
    /// Event names as `perf script` prints them.
    pub events: Vec<String>,
    /// Times, as `perf script --time` takes them.
    pub time: Option<TimeSpec>,
}

impl Selectors {
    /// Whether a thread selector (pid, tid, comm) is given.
    pub fn has_thread_selectors(&self) -> bool {
        self.pids.is_some() || self.tids.is_some() || !self.comms.is_empty()
    }

    /// Whether a selector other than the thread's (cpu, event, time) is given.
    pub fn has_other_selectors(&self) -> bool {
        self.cpus.is_some() || !self.events.is_empty() || self.time.is_some()
    }

    /// Whether any selector is given.
    pub fn selects_samples(&self) -> bool {
        self.has_thread_selectors() || self.has_other_selectors()
    }
}

/// [`Selectors`] resolved against a recording: the test of each record's fields.
#[derive(Debug, Clone)]
pub struct Matcher {
    sel: Selectors,
    /// The id lists, sorted for the test every sample makes.
    pids: Option<IdRanges>,
    tids: Option<IdRanges>,
    cpus: Option<IdRanges>,
    /// Per event: whether `--event` names it.
    event_selected: Vec<bool>,
    times: Vec<TimeRange>,
}

impl Matcher {
    /// A matcher of `sel`; [`Matcher::resolve`] it before testing events or times.
    pub fn new(sel: Selectors) -> Self {
        let ranges = |l: &Option<Vec<(u64, u64)>>| l.as_deref().map(IdRanges::new);
        Matcher {
            pids: ranges(&sel.pids),
            tids: ranges(&sel.tids),
            cpus: ranges(&sel.cpus),
            sel,
            event_selected: Vec::new(),
            times: Vec::new(),
        }
    }

    /// The selectors.
    pub fn selectors(&self) -> &Selectors {
        &self.sel
    }

    /// Resolve event names (an unknown one is an error naming the events there are; a
    /// stream whose attrs are still to come is resolved as they come, see
    /// [`Matcher::follow_events`]) and percent time slices (against SAMPLE_TIME).
    pub fn resolve(&mut self, meta: &Metadata) -> Result<()> {
        let names = self.resolve_events(meta);
        let known = !meta.attrs().is_empty();
        if let Some(want) = self.sel.events.iter().find(|w| known && !names.contains(w)) {
            return Err(Error::Select(format!(
                "no event {want:?} in the recording (its events: {})",
                names.join(", ")
            )));
        }
        if let Some(spec) = &self.sel.time {
            self.times = resolve_time(spec, meta)?;
        }
        Ok(())
    }

    /// The events of a stream's HEADER_ATTR records read since: call with each record's
    /// metadata.
    #[inline]
    pub fn follow_events(&mut self, meta: &Metadata) {
        if !self.sel.events.is_empty() && self.event_selected.len() != meta.attrs().len() {
            self.resolve_events(meta);
        }
    }

    /// Which events `--event` names; the recording's event names.
    fn resolve_events(&mut self, meta: &Metadata) -> Vec<String> {
        let names: Vec<String> = (0..meta.attrs().len())
            .map(|i| meta.event_name(i))
            .collect();
        self.event_selected = names
            .iter()
            .map(|n| self.sel.events.iter().any(|want| want == n))
            .collect();
        names
    }

    /// Whether `--event` names event `e`.
    pub fn event_selected(&self, e: usize) -> bool {
        self.event_selected.get(e) == Some(&true)
    }

    /// The `--pid` test: a record without a pid (or of a negative one) matches no list.
    #[inline]
    pub fn pid_ok(&self, pid: Option<i32>) -> bool {
        id_ok(self.pids.as_ref(), pid)
    }

    /// The `--tid` test.
    #[inline]
    pub fn tid_ok(&self, tid: Option<i32>) -> bool {
        id_ok(self.tids.as_ref(), tid)
    }

    /// The `--comm` test; `comm` gives the thread's command (None: the record names no
    /// thread), asked only when there are comm selectors.
    #[inline]
    pub fn comm_ok<'c>(&self, comm: impl FnOnce() -> Option<Cow<'c, [u8]>>) -> bool {
        self.sel.comms.is_empty() || comm().is_some_and(|c| comm_matches(&self.sel.comms, &c))
    }

    /// The `--cpu` test.
    #[inline]
    pub fn cpu_ok(&self, cpu: Option<u32>) -> bool {
        self.cpus
            .as_ref()
            .is_none_or(|l| cpu.is_some_and(|c| l.contains(u64::from(c))))
    }

    /// The `--event` test.
    #[inline]
    pub fn event_ok(&self, event: Option<usize>) -> bool {
        self.sel.events.is_empty() || event.is_some_and(|e| self.event_selected(e))
    }

    /// The `--time` test (perf's: a time of 0 is in every range).
    #[inline]
    pub fn time_ok(&self, time: Option<u64>) -> bool {
        self.sel.time.is_none() || time.is_some_and(|t| in_ranges(&self.times, t))
    }

    /// Every selector, for a record of thread `tid` of process `pid`, located at `at`
    /// (cpu, event, time), the thread's command from `comms`.
    #[inline]
    pub fn matches(
        &self,
        pid: Option<i32>,
        tid: Option<i32>,
        at: &Located,
        comms: &ThreadComms,
    ) -> bool {
        self.pid_ok(pid)
            && self.tid_ok(tid)
            && self.comm_ok(|| tid.map(|t| comms.of(t as u32)))
            && self.cpu_ok(at.cpu)
            && self.event_ok(at.event)
            && self.time_ok(at.time)
    }
}

/// An id test: no list, or an id (not negative) in it.
#[inline]
fn id_ok(list: Option<&IdRanges>, id: Option<i32>) -> bool {
    list.is_none_or(|l| id.is_some_and(|v| u64::try_from(v).is_ok_and(|v| l.contains(v))))
}
