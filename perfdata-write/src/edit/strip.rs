//! [`Strip`]: remove samples by pid, tid, comm, cpu, event and time, and the side-band
//! records of the threads and processes whose samples are all gone (`perfdata strip`).
//!
//! Selectors combine (a sample is selected when every given selector matches it);
//! selected samples are removed, or with `keep` everything else is. Side-band records
//! (COMM, FORK, EXIT, NAMESPACES, SWITCH, MMAP, MMAP2, ...) go with a thread when the
//! selection removes every sample it could have: only the thread selectors (pid, tid,
//! comm) decide that. The kernel's side-band (pid -1 and swapper, pid 0) and LOST /
//! LOST_SAMPLES always stay. An event whose samples all go is removed whole: its attr,
//! ids, EVENT_DESC, ID_INDEX, EVENT_UPDATE and STAT entries; records of its that stay
//! (side-band) are moved to a remaining event with the same sample_id layout.

use std::collections::{HashMap, HashSet};

use binrw::Endian;
use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::Located;
use perfdata_core::record::{EventIndex, RecordBody, RecordType, TRAILER_FIELDS};
use perfdata_core::{u32_at, u64_at};
use perfdata_core::{Metadata, RecordRef};

use super::binaries::MappedFiles;
use super::comms::Comms;
use super::inherit::Inheritance;
use super::select::{in_ranges, resolve_time, Glob, IdRanges, TimeRange, TimeSpec};
use super::{Action, RecordEdit};
use crate::error::{Result, WriteError};

/// What to strip. Empty selectors select everything they could.
#[derive(Debug, Clone, Default)]
pub struct Selection {
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
    /// Keep what the selectors match and remove the rest.
    pub keep: bool,
    /// Keep the side-band records of removed threads.
    pub keep_sideband: bool,
    /// Record types removed whole.
    pub drop_types: Vec<RecordType>,
}

impl Selection {
    fn has_thread_selectors(&self) -> bool {
        self.pids.is_some() || self.tids.is_some() || !self.comms.is_empty()
    }

    fn has_other_selectors(&self) -> bool {
        self.cpus.is_some() || !self.events.is_empty() || self.time.is_some()
    }

    /// Whether samples are selected at all (rather than only record types dropped).
    pub fn selects_samples(&self) -> bool {
        self.has_thread_selectors() || self.has_other_selectors()
    }
}

/// Record types by perf's names (`SWITCH,SWITCH_CPU_WIDE`).
pub fn parse_record_types(text: &str) -> Result<Vec<RecordType>> {
    text.split(',')
        .map(|name| {
            let name = name.trim();
            RecordType::all_known()
                .find(|t| t.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    WriteError::unsupported(None, format!("{name:?} is not a record type"))
                })
        })
        .collect()
}

/// SAMPLE's type number.
const SAMPLE: u32 = RecordType::Sample.as_u32();

/// Whether records of this scope belong to a thread or to its process.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Thread,
    Process,
}

/// The strip edit. See the module documentation.
pub struct Strip {
    sel: Selection,
    /// The selection's pid, tid and cpu lists, sorted for the test of every sample.
    pids: Option<IdRanges>,
    tids: Option<IdRanges>,
    cpus: Option<IdRanges>,
    /// `sel.selects_samples()`, and whether `--drop` names SAMPLE: asked per record.
    selects_samples: bool,
    drops_samples: bool,
    /// Per input event: whether the selection's event selector names it.
    event_selected: Vec<bool>,
    /// Per input event: whether it is removed whole.
    event_removed: Vec<bool>,
    /// Removed event index -> the id its kept side-band records are moved to.
    id_moves: HashMap<usize, u64>,
    removed_ids: HashSet<u64>,
    times: Vec<TimeRange>,
    /// Each thread's comm as of the current record (perf's `thread__comm_str`).
    comms: Comms,
    /// Processes of threads the keep selection keeps (for their MMAPs).
    kept_pids: HashSet<u32>,
    /// What children of stripped parents inherit.
    inherit: Inheritance,
    /// Files still mapped, for the BUILD_ID entries that stay.
    files: MappedFiles,
    matched: u64,
    dropped_types: u64,
}

impl Strip {
    /// A strip edit keeping what `sel` selects.
    pub fn new(sel: Selection) -> Self {
        let ranges = |l: &Option<Vec<(u64, u64)>>| l.as_deref().map(IdRanges::new);
        Strip {
            pids: ranges(&sel.pids),
            tids: ranges(&sel.tids),
            cpus: ranges(&sel.cpus),
            selects_samples: sel.selects_samples(),
            drops_samples: sel.drop_types.contains(&RecordType::Sample),
            sel,
            event_selected: Vec::new(),
            event_removed: Vec::new(),
            id_moves: HashMap::new(),
            removed_ids: HashSet::new(),
            times: Vec::new(),
            comms: Comms::default(),
            kept_pids: HashSet::new(),
            inherit: Inheritance::default(),
            files: MappedFiles::default(),
            matched: 0,
            dropped_types: 0,
        }
    }

    /// The thread's comm; perf shows `:TID` for a thread it has no COMM of.
    fn comm_of(&self, tid: u32) -> std::borrow::Cow<'_, [u8]> {
        self.comms.of(tid)
    }

    /// Whether the thread selectors match (pid, tid, comm); `tid` None ignores --tid.
    fn thread_matches(&self, pid: u32, tid: Option<u32>, comm: &[u8]) -> bool {
        let s = &self.sel;
        self.pids
            .as_ref()
            .is_none_or(|l| l.contains(u64::from(pid)))
            && match (self.tids.as_ref(), tid) {
                (Some(l), Some(t)) => l.contains(u64::from(t)),
                _ => true,
            }
            && (s.comms.is_empty() || s.comms.iter().any(|g| g.matches(comm)))
    }

    /// What becomes of a sample.
    #[inline]
    fn sample(&mut self, item: &RecordRef<'_>) -> Action {
        let at = item.locate();
        let selected = self.selects_samples && self.sample_selected(at);
        self.matched += u64::from(selected);
        let removed = selected != self.sel.keep
            || at
                .event
                .is_some_and(|e| self.event_removed.get(e) == Some(&true));
        if removed {
            Action::Drop
        } else {
            Action::Keep
        }
    }

    /// Whether a sample is selected.
    fn sample_selected(&self, at: &Located) -> bool {
        let s = &self.sel;
        let pid = at.pid.unwrap_or(-1) as u32;
        let tid = at.tid.unwrap_or(-1) as u32;
        let comm = if s.comms.is_empty() {
            std::borrow::Cow::Borrowed(&[][..])
        } else {
            self.comm_of(tid)
        };
        self.thread_matches(pid, Some(tid), &comm)
            && self
                .cpus
                .as_ref()
                .is_none_or(|l| at.cpu.is_some_and(|c| l.contains(u64::from(c))))
            && (s.events.is_empty()
                || at
                    .event
                    .is_some_and(|e| self.event_selected.get(e) == Some(&true)))
            && in_ranges(&self.times, at.time.unwrap_or(0))
    }

    /// Whether the side-band record of (pid, tid) goes with its thread or process.
    fn sideband_removed(&mut self, pid: i32, tid: i32, scope: Scope) -> bool {
        if self.sel.keep_sideband || !self.sel.has_thread_selectors() || pid <= 0 {
            return false;
        }
        let (pid, tid) = (pid as u32, tid as u32);
        let comm = self.comm_of(tid).into_owned();
        if self.sel.keep {
            if scope == Scope::Process && self.sel.tids.is_some() {
                return !self.kept_pids.contains(&pid);
            }
            let t = (scope == Scope::Thread).then_some(tid);
            let kept = self.thread_matches(pid, t, &comm);
            if kept && scope == Scope::Thread {
                self.kept_pids.insert(pid);
            }
            return !kept;
        }
        if self.sel.has_other_selectors() || (scope == Scope::Process && self.sel.tids.is_some()) {
            return false;
        }
        self.thread_matches(pid, Some(tid), &comm)
    }

    /// The (pid, tid) a side-band record is about, and whether it is a thread's or a
    /// process's. `None`: not side-band of a task (kernel, lost counts, metadata).
    fn task_of(item: &RecordRef<'_>, at: &Located) -> Option<(i32, i32, Scope)> {
        let (b, e) = (item.raw.bytes, item.meta.endian);
        let word = |o| u32_at(b, o, e).map(|v| v as i32);
        match item.raw.record_type() {
            RecordType::Comm
            | RecordType::Namespaces
            | RecordType::Read
            | RecordType::ItraceStart => Some((word(8)?, word(12)?, Scope::Thread)),
            RecordType::Fork | RecordType::Exit => Some((word(8)?, word(16)?, Scope::Thread)),
            RecordType::Mmap | RecordType::Mmap2 => Some((word(8)?, word(12)?, Scope::Process)),
            RecordType::Switch
            | RecordType::SwitchCpuWide
            | RecordType::Cgroup
            | RecordType::Aux
            | RecordType::AuxOutputHwId => Some((at.pid?, at.tid?, Scope::Thread)),
            _ => None,
        }
    }

    /// Kept records of a removed event, their trailers' ids moved to a remaining event.
    fn move_ids(&self, item: &RecordRef<'_>, event: usize, action: Action) -> Action {
        let mut recs = match action {
            Action::Keep => vec![item.raw.to_owned_record()],
            Action::Replace(recs) => recs,
            Action::Drop => return Action::Drop,
        };
        for rec in &mut recs {
            self.move_record_ids(&mut rec.bytes, event, item.meta);
        }
        Action::Replace(recs)
    }

    fn move_record_ids(&self, bytes: &mut [u8], event: usize, meta: &Metadata) {
        let (Some(&new_id), Some(f)) = (self.id_moves.get(&event), meta.events.format(event))
        else {
            return;
        };
        let trailer_len = f.sample_id_len();
        if !f.sample_id_all || bytes.len() < 8 + trailer_len {
            return;
        }
        let mut pos = bytes.len() - trailer_len;
        for bit in TRAILER_FIELDS
            .iter()
            .filter(|&&b| f.sample_type.contains(b))
        {
            if matches!(*bit, SampleType::ID | SampleType::IDENTIFIER) {
                let word = match meta.endian {
                    Endian::Little => new_id.to_le_bytes(),
                    Endian::Big => new_id.to_be_bytes(),
                };
                bytes[pos..pos + 8].copy_from_slice(&word);
            }
            pos += 8;
        }
    }

    /// ID_INDEX without the removed events' ids.
    fn edit_id_index(&self, item: &RecordRef<'_>) -> Result<Action> {
        let mut record = item.decode()?;
        let RecordBody::IdIndex(index) = &mut record.body else {
            return Ok(Action::Keep);
        };
        if !index.retain_ids(|id| !self.removed_ids.contains(&id)) {
            return Ok(Action::Keep);
        }
        Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
    }

    /// Records of perf's own types that name an event by id.
    fn user_record(&self, item: &RecordRef<'_>) -> Result<Action> {
        let (b, e) = (item.raw.bytes, item.meta.endian);
        let gone = |id: Option<u64>| {
            Ok(if id.is_some_and(|id| self.removed_ids.contains(&id)) {
                Action::Drop
            } else {
                Action::Keep
            })
        };
        match item.raw.record_type() {
            RecordType::IdIndex => self.edit_id_index(item),
            RecordType::EventUpdate => gone(u64_at(b, 16, e)),
            RecordType::HeaderBuildId if self.files.orphan_record(b) => Ok(Action::Drop),
            RecordType::HeaderFeature => {
                super::edit_feature_record(item, FeatureId::EventDesc, |f| self.prune_desc(f))
            }
            RecordType::Stat => gone(u64_at(b, 8, e)),
            RecordType::HeaderAttr => {
                let idx = super::header_attr_event(item)?;
                Ok(
                    if idx.is_some_and(|i| self.event_removed.get(i) == Some(&true)) {
                        Action::Drop
                    } else {
                        Action::Keep
                    },
                )
            }
            _ => Ok(Action::Keep),
        }
    }

    /// Resolve event names; decide which events go whole and where their side-band goes.
    fn resolve_events(&mut self, meta: &Metadata) -> Result<()> {
        let n = meta.attrs.len();
        let names: Vec<String> = (0..n).map(|i| meta.event_name(i)).collect();
        self.event_selected = vec![false; n];
        for want in &self.sel.events {
            let mut found = false;
            for (i, name) in names.iter().enumerate() {
                if name == want {
                    self.event_selected[i] = true;
                    found = true;
                }
            }
            if !found {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "no event {want:?} in the recording (its events: {})",
                        names.join(", ")
                    ),
                ));
            }
        }
        let events_only =
            !self.sel.has_thread_selectors() && self.sel.cpus.is_none() && self.sel.time.is_none();
        self.event_removed = (0..n)
            .map(|i| {
                !self.sel.events.is_empty()
                    && if self.sel.keep {
                        !self.event_selected[i]
                    } else {
                        events_only && self.event_selected[i]
                    }
            })
            .collect();
        if n > 0 && self.event_removed.iter().all(|&r| r) {
            return Err(WriteError::unsupported(
                None,
                "the selection removes every event",
            ));
        }
        for i in (0..n).filter(|&i| self.event_removed[i]) {
            self.removed_ids.extend(meta.attrs[i].ids.iter().copied());
            let layout = meta
                .events
                .format(i)
                .map(|f| (f.sample_type, f.sample_id_all));
            let target = (0..n).find(|&j| {
                !self.event_removed[j]
                    && meta
                        .events
                        .format(j)
                        .map(|f| (f.sample_type, f.sample_id_all))
                        == layout
            });
            match target.and_then(|j| meta.attrs[j].ids.first()) {
                Some(&id) => {
                    self.id_moves.insert(i, id);
                }
                None if meta.attrs[i].attr.sample_id_all() && n > 1 => {
                    return Err(WriteError::unsupported(
                        None,
                        format!(
                            "event {:?} cannot be removed: no remaining event has its \
                             sample_id layout to take over its side-band records",
                            names[i]
                        ),
                    ))
                }
                None => {}
            }
        }
        Ok(())
    }

    /// EVENT_DESC without the removed events; whether anything went.
    fn prune_desc(&self, feature: &mut Feature) -> bool {
        let Feature::EventDesc(desc) = feature else {
            return false;
        };
        let before = desc.events.len();
        let mut i = 0;
        desc.events.retain(|_| {
            i += 1;
            self.event_removed.get(i - 1) != Some(&true)
        });
        desc.events.len() != before
    }

    /// Every event must carry the fields the selectors look at.
    fn check_fields(&self, meta: &Metadata) -> Result<()> {
        let s = &self.sel;
        let needs = [
            (
                s.has_thread_selectors(),
                SampleType::TID,
                "pid/tid/comm",
                "TID",
            ),
            (
                s.cpus.is_some(),
                SampleType::CPU,
                "--cpu",
                "CPU (record with --sample-cpu)",
            ),
            (s.time.is_some(), SampleType::TIME, "--time", "TIME"),
        ];
        for (i, ev) in meta.attrs.iter().enumerate() {
            for (wanted, bit, what, field) in needs {
                if wanted && !ev.attr.sample_type.contains(bit) {
                    return Err(WriteError::unsupported(
                        None,
                        format!(
                            "{what} selects by a field the samples of {:?} do not have: {field}",
                            meta.event_name(i)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl RecordEdit for Strip {
    fn start(&mut self, meta: &Metadata) -> Result<()> {
        self.check_fields(meta)?;
        self.resolve_events(meta)?;
        if let Some(spec) = &self.sel.time {
            self.times = resolve_time(spec, meta)?;
        }
        Ok(())
    }

    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        if item.raw.header.type_ == SAMPLE && !self.drops_samples {
            // Most records: by number, before anything else is looked at.
            return Ok(self.sample(item));
        }
        let ty = item.raw.record_type();
        if self.sel.drop_types.contains(&ty) {
            self.dropped_types += 1;
            return Ok(Action::Drop);
        }
        if !ty.is_kernel() {
            return self.user_record(item);
        }
        if ty == RecordType::Sample {
            return Ok(self.sample(item));
        }
        let at = item.locate();
        // The parent's comm as it was when it forked (before the child's is tracked).
        let parent_comm = match ty {
            RecordType::Fork => u32_at(item.raw.bytes, 20, item.meta.endian)
                .and_then(|ptid| self.comms.get(ptid).map(<[u8]>::to_vec)),
            _ => None,
        };
        self.comms.track(ty, item.raw.bytes, item.meta.endian);
        let mut action = Action::Keep;
        if let Some((pid, tid, scope)) = Self::task_of(item, at) {
            if self.sideband_removed(pid, tid, scope) {
                self.inherit.stripped(item);
                self.files.note(&item.raw, false);
                return Ok(Action::Drop);
            }
            action = self.inherit.kept(item, parent_comm.as_deref());
            match &action {
                Action::Replace(recs) => {
                    for r in recs {
                        self.files.note(&r.as_raw(item.meta.endian), true);
                    }
                }
                _ => self.files.note(&item.raw, true),
            }
        }
        match at.event {
            Some(e) if self.event_removed.get(e) == Some(&true) => {
                Ok(self.move_ids(item, e, action))
            }
            _ => Ok(action),
        }
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        self.files.prune(meta);
        if !self.event_removed.iter().any(|&r| r) {
            return Ok(());
        }
        let removed = |i: usize| self.event_removed.get(i) == Some(&true);
        let mut i = 0;
        meta.attrs.retain(|_| {
            i += 1;
            !removed(i - 1)
        });
        let mut events = EventIndex::new();
        for ev in &meta.attrs {
            events.push(&ev.attr, &ev.ids);
        }
        meta.events = events;
        if let Some(section) = meta.features.get_mut(&FeatureId::EventDesc) {
            self.prune_desc(&mut section.feature);
        }
        Ok(())
    }

    fn finish(&mut self, _meta: &Metadata) -> Result<()> {
        if self.sel.selects_samples() && self.matched == 0 {
            return Err(WriteError::unsupported(
                None,
                "the selection matches no sample; nothing written",
            ));
        }
        if !self.sel.drop_types.is_empty() && !self.sel.selects_samples() && self.dropped_types == 0
        {
            return Err(WriteError::unsupported(
                None,
                "the recording has no record of the types to drop; nothing written",
            ));
        }
        Ok(())
    }
}
