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
//! (side-band) are moved to a remaining event with the same sample_id trailer.
//!
//! With a comm selector, threads are followed in perf's time order
//! ([`RecordEdit::time_ordered`]): a sample is named as perf names it, though its
//! thread's FORK or COMM on another CPU comes later in the file.

use std::collections::{HashMap, HashSet};

use binrw::Endian;
use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::OwnedRecord;
use perfdata_core::record::{EventUpdateView, ForkView, StatView};
use perfdata_core::record::{RecordBody, RecordType, SampleLayout, TRAILER_FIELDS};
use perfdata_core::select::{task_of, Matcher, Selectors, TaskScope, ThreadComms};
use perfdata_core::{Metadata, RecordRef};

use super::binaries::MappedFiles;
use super::inherit::Inheritance;
use super::{Action, RecordEdit};
use crate::error::{Result, WriteError};

/// What to strip.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The samples selected (empty selectors select everything they could).
    pub select: Selectors,
    /// Keep what the selectors match and remove the rest.
    pub keep: bool,
    /// Keep the side-band records of removed threads.
    pub keep_sideband: bool,
    /// Record types removed whole.
    pub drop_types: Vec<RecordType>,
}

impl Selection {
    /// Whether samples are selected at all (rather than only record types dropped).
    pub fn selects_samples(&self) -> bool {
        self.select.selects_samples()
    }
}

/// SAMPLE's type number.
const SAMPLE: u32 = RecordType::Sample.as_u32();

/// The strip edit. See the module documentation.
pub struct Strip {
    sel: Selection,
    /// The selectors, resolved against the recording.
    matcher: Matcher,
    /// `sel.selects_samples()`, and whether `--drop` names SAMPLE: asked per record.
    selects_samples: bool,
    drops_samples: bool,
    /// Per input event: whether it is removed whole.
    event_removed: Vec<bool>,
    /// Removed event index -> the id its kept side-band records are moved to; a removed
    /// event without one has no remaining event with its sample_id trailer.
    id_moves: HashMap<usize, u64>,
    removed_ids: HashSet<u64>,
    /// Each thread's comm as of the current record (perf's `thread__comm_str`).
    comms: ThreadComms,
    /// Processes of threads the keep selection keeps (for their MMAPs).
    kept_pids: HashSet<u32>,
    /// A process that the record being decided is the first kept record of.
    newly_kept: Option<u32>,
    /// What children of stripped parents inherit.
    inherit: Inheritance,
    /// Files still mapped, for the BUILD_ID entries that stay.
    files: MappedFiles,
    matched: u64,
    dropped_types: u64,
}

/// The edits of `perfdata strip`: `fields` dropped from every sample, then the
/// selection, where it selects samples or drops record types. Empty when neither asks
/// for anything. (Each edit sees the input's events, so that fields dropped from an
/// event the selection removes are no error.)
pub fn strip_edits(sel: Selection, fields: Option<SampleType>) -> Vec<Box<dyn RecordEdit>> {
    let mut edits: Vec<Box<dyn RecordEdit>> = Vec::new();
    if let Some(fields) = fields {
        edits.push(Box::new(super::DropSampleFields::new(fields)));
    }
    if sel.selects_samples() || !sel.drop_types.is_empty() {
        edits.push(Box::new(Strip::new(sel)));
    }
    edits
}

impl Strip {
    /// A strip edit keeping what `sel` selects.
    pub fn new(sel: Selection) -> Self {
        Strip {
            matcher: Matcher::new(sel.select.clone()),
            selects_samples: sel.selects_samples(),
            drops_samples: sel.drop_types.contains(&RecordType::Sample),
            sel,
            event_removed: Vec::new(),
            id_moves: HashMap::new(),
            removed_ids: HashSet::new(),
            comms: ThreadComms::default(),
            kept_pids: HashSet::new(),
            newly_kept: None,
            inherit: Inheritance::default(),
            files: MappedFiles::default(),
            matched: 0,
            dropped_types: 0,
        }
    }

    /// Whether the thread selectors match thread `tid` of process `pid` (its comm as of
    /// now); `tid` None ignores --tid.
    fn thread_matches(&self, pid: i32, tid: Option<i32>, comm_tid: i32) -> bool {
        let m = &self.matcher;
        m.pid_ok(Some(pid))
            && (tid.is_none() || m.tid_ok(tid))
            && m.comm_ok(|| Some(self.comms.of(comm_tid as u32)))
    }

    /// What becomes of a sample.
    #[inline]
    fn sample(&mut self, item: &RecordRef<'_>) -> Action {
        let at = item.locate();
        let selected =
            self.selects_samples && self.matcher.matches(at.pid, at.tid, at, &self.comms);
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

    /// Whether the side-band record of (pid, tid) goes with its thread or process.
    fn sideband_removed(&mut self, pid: i32, tid: i32, scope: TaskScope) -> bool {
        let select = &self.sel.select;
        if self.sel.keep_sideband || !select.has_thread_selectors() || pid <= 0 {
            return false;
        }
        if self.sel.keep {
            if scope == TaskScope::Process && by_tid(&self.sel) {
                return !self.kept_pids.contains(&(pid as u32));
            }
            let t = (scope == TaskScope::Thread).then_some(tid);
            let kept = self.thread_matches(pid, t, tid);
            if kept && scope == TaskScope::Thread && self.kept_pids.insert(pid as u32) {
                self.newly_kept = Some(pid as u32);
            }
            return !kept;
        }
        if select.has_other_selectors() || (scope == TaskScope::Process && select.tids.is_some()) {
            return false;
        }
        self.thread_matches(pid, Some(tid), tid)
    }

    /// Kept records of a removed event, their trailers' ids moved to a remaining event
    /// with the same trailer layout (an error where there is none).
    fn move_ids(&self, item: &RecordRef<'_>, event: usize, action: Action) -> Result<Action> {
        let mut recs = match action {
            Action::Keep => vec![item.raw.to_owned_record()],
            Action::Replace(recs) => recs,
            Action::Drop => return Ok(Action::Drop),
        };
        let Some(layout) = item.meta.events().layout(event) else {
            return Ok(Action::Replace(recs));
        };
        let f = layout.format();
        if !f.sample_id_all {
            return Ok(Action::Replace(recs));
        }
        let Some(&new_id) = self.id_moves.get(&event) else {
            return Err(WriteError::unsupported(
                Some(item.raw.offset),
                format!(
                    "event {:?} cannot be removed: its {} record stays and no remaining \
                     event has its sample_id layout ({}) to carry it",
                    item.meta.event_name(event),
                    item.raw.record_type(),
                    (f.sample_type & trailer_mask())
                        .iter_names()
                        .map(|(name, _)| name)
                        .collect::<Vec<_>>()
                        .join("|")
                ),
            ));
        };
        for rec in &mut recs {
            move_record_id(&mut rec.bytes, layout, new_id, item.meta.endian);
        }
        Ok(Action::Replace(recs))
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
        let gone = |id: Option<u64>| {
            Ok(if id.is_some_and(|id| self.removed_ids.contains(&id)) {
                Action::Drop
            } else {
                Action::Keep
            })
        };
        match item.raw.record_type() {
            RecordType::IdIndex => self.edit_id_index(item),
            RecordType::EventUpdate => gone(item.view::<EventUpdateView>().ok().map(|v| v.id())),
            RecordType::HeaderBuildId if self.files.orphan_record(item) => Ok(Action::Drop),
            RecordType::HeaderFeature => {
                super::edit_feature_record(item, FeatureId::EventDesc, |f| self.prune_desc(f))
            }
            RecordType::Stat => gone(item.view::<StatView>().ok().map(|v| v.id())),
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
        self.matcher.resolve(meta)?;
        let n = meta.attrs().len();
        let select = &self.sel.select;
        let events_only =
            !select.has_thread_selectors() && select.cpus.is_none() && select.time.is_none();
        self.event_removed = (0..n)
            .map(|i| {
                let selected = self.matcher.event_selected(i);
                !select.events.is_empty()
                    && if self.sel.keep {
                        !selected
                    } else {
                        events_only && selected
                    }
            })
            .collect();
        if n > 0 && self.event_removed.iter().all(|&r| r) {
            return Err(WriteError::unsupported(
                None,
                "the selection removes every event",
            ));
        }
        // A removed event's records that stay (side-band of a tracking event) are moved
        // to a remaining event whose sample_id trailer is laid out alike: perf finds the
        // event by the trailer's id and reads the trailer by that event's layout. Where
        // there is none, only such a record is an error (see `move_ids`).
        let layout = |i: usize| {
            meta.events()
                .format(i)
                .map(|f| (f.sample_id_all, f.sample_type & trailer_mask()))
        };
        for i in (0..n).filter(|&i| self.event_removed[i]) {
            self.removed_ids.extend(meta.attrs()[i].ids.iter().copied());
            let target = (0..n).find(|&j| !self.event_removed[j] && layout(j) == layout(i));
            if let Some(&id) = target.and_then(|j| meta.attrs()[j].ids.first()) {
                self.id_moves.insert(i, id);
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
        let s = &self.sel.select;
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
        for (i, ev) in meta.attrs().iter().enumerate() {
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
        self.resolve_events(meta)
    }

    fn time_ordered(&self) -> bool {
        // A comm selector names each thread as perf does at the sample; a pid or tid
        // selector keeps children of stripped parents, which inherit the parent's comm
        // and maps as of their FORK in perf's order (the exec COMM of a parent on one
        // CPU can come after its child's FORK on another in the file: the kept child
        // was named `perf-exec` where perf says `threads`, now and then, in
        // strip_oracle). Holding the records costs `strip --pid` 60% more time (0.30 to
        // 0.49 CPU seconds on a 515 MiB call-graph recording, see docs/commands.md).
        // cpu, event and time selectors decide a record by its own fields alone.
        self.sel.select.has_thread_selectors()
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
        // The parent's comm as it was when it forked (before the child's is tracked).
        let parent_comm = match ty {
            RecordType::Fork => item
                .view::<ForkView>()
                .ok()
                .and_then(|f| self.comms.get(f.ptid() as u32).map(<[u8]>::to_vec)),
            _ => None,
        };
        self.comms.track(ty, item.raw.bytes, item.meta.endian);
        let mut action = Action::Keep;
        if let Some(task) = task_of(item) {
            if self.sideband_removed(task.pid, task.tid, task.scope) {
                self.inherit.stripped(item);
                self.files.note(&item.raw, item.meta.endian, false);
                return Ok(Action::Drop);
            }
            action = self.inherit.kept(item, parent_comm.as_deref())?;
            if let Some(pid) = self.newly_kept.take().filter(|_| by_tid(&self.sel)) {
                // Its maps went while none of its threads was kept: they come back.
                let maps = self.inherit.adopt(item, pid, task.tid as u32);
                action = with_records(item, action, maps);
            }
            match &action {
                Action::Replace(recs) => {
                    for r in recs {
                        self.files
                            .note(&r.as_raw(item.meta.endian), item.meta.endian, true);
                    }
                }
                _ => self.files.note(&item.raw, item.meta.endian, true),
            }
        }
        match item.locate().event {
            Some(e) if self.event_removed.get(e) == Some(&true) => self.move_ids(item, e, action),
            _ => Ok(action),
        }
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        self.files.prune(meta);
        if !self.event_removed.iter().any(|&r| r) {
            return Ok(());
        }
        let removed = |i: usize| self.event_removed.get(i) == Some(&true);
        meta.edit_attrs(|attrs| {
            let mut i = 0;
            attrs.retain(|_| {
                i += 1;
                !removed(i - 1)
            })
        });
        if let Some(section) = meta.features.get_mut(&FeatureId::EventDesc) {
            self.prune_desc(&mut section.feature);
        }
        Ok(())
    }

    fn finish(&mut self, _meta: &Metadata) -> Result<()> {
        if self.selects_samples && self.matched == 0 {
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

/// Whether the selection keeps threads by tid: a process's maps are kept with its
/// threads that are.
fn by_tid(sel: &Selection) -> bool {
    sel.keep && sel.select.tids.is_some()
}

/// `action` on `item`, followed by `more` records.
fn with_records(item: &RecordRef<'_>, action: Action, more: Vec<OwnedRecord>) -> Action {
    if more.is_empty() {
        return action;
    }
    let mut recs = match action {
        Action::Keep => vec![item.raw.to_owned_record()],
        Action::Replace(recs) => recs,
        Action::Drop => Vec::new(),
    };
    recs.extend(more);
    Action::Replace(recs)
}

/// The sample_type bits of the sample_id trailer.
fn trailer_mask() -> SampleType {
    TRAILER_FIELDS
        .iter()
        .fold(SampleType::empty(), |mask, &bit| mask | bit)
}

/// Set the id (ID and IDENTIFIER) of the sample_id trailer of a record of an event laid
/// out by `layout` to `new_id`.
fn move_record_id(bytes: &mut [u8], layout: &SampleLayout, new_id: u64, endian: Endian) {
    let trailer_len = layout.sample_id_len();
    if bytes.len() < 8 + trailer_len {
        return;
    }
    let start = bytes.len() - trailer_len;
    let t = layout.trailer_slots();
    let word = match endian {
        Endian::Little => new_id.to_le_bytes(),
        Endian::Big => new_id.to_be_bytes(),
    };
    for at in [t.id, t.identifier].into_iter().flatten() {
        bytes[start + at..start + at + 8].copy_from_slice(&word);
    }
}
