//! [`UnwindEdit`]: `perfdata unwind`, the unwinding written back. Each sample with a
//! user stack copy gets its unwound callchain (the kernel part as recorded, then
//! PERF_CONTEXT_USER and the user frames, as a frame-pointer callchain is laid out), and
//! loses its REGS_USER and STACK_USER; the attrs lose them too and gain
//! PERF_SAMPLE_CALLCHAIN where they lacked it. Side-band records are kept.
//!
//! The edit is the replay's machinery run as an edit stage: it asks for perf's time
//! order ([`RecordEdit::time_ordered`]), replays the side-band records onto a process
//! model as they come and unwinds each sample against the maps of its moment with the
//! [`Unwinder`] that report uses, so both give the same frames.

use std::cell::RefCell;
use std::rc::Rc;

use perfdata_core::attr::SampleType;
use perfdata_core::record::{Callchain, RecordBody, RecordType};
use perfdata_core::{Metadata, RecordRef};
use perfdata_write::edit::{Action, DropSampleFields, RecordEdit};
use perfdata_write::WriteError;

use super::{UnwindOptions, UnwindStats, Unwinder};
use crate::process::Machine;
use crate::replay;

/// The fields the unwinding replaces by callchains.
const USER_STATE: SampleType = SampleType::REGS_USER.union(SampleType::STACK_USER);

/// Unwinds every sample's user stack copy into its callchain (see the module's note).
///
/// ```no_run
/// use perfdata_report::unwind::{UnwindEdit, UnwindOptions};
/// use perfdata_write::convert::{Conversion, Input, Sink};
///
/// let edit = UnwindEdit::new(&UnwindOptions::default());
/// let stats = edit.stats();
/// Conversion::new(Input::open("perf.data")?)
///     .edit(edit)
///     .write(Sink::path("unwound.data")?)?;
/// println!("{}", stats.borrow().summary());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct UnwindEdit {
    opts: UnwindOptions,
    machine: Machine,
    unwinder: Option<Unwinder>,
    /// The attrs' part: REGS_USER and STACK_USER out, CALLCHAIN in.
    attrs: DropSampleFields,
    stats: Rc<RefCell<UnwindStats>>,
}

impl UnwindEdit {
    /// An edit that finds binaries as `opts` say.
    pub fn new(opts: &UnwindOptions) -> UnwindEdit {
        UnwindEdit {
            opts: opts.clone(),
            machine: Machine::new(),
            unwinder: None,
            attrs: DropSampleFields::new(USER_STATE).adding(SampleType::CALLCHAIN),
            stats: Rc::default(),
        }
    }

    /// What became of the samples, filled in when the conversion ends.
    pub fn stats(&self) -> Rc<RefCell<UnwindStats>> {
        self.stats.clone()
    }

    /// A sample with its unwound callchain, without its user state.
    fn sample(&mut self, item: &RecordRef<'_>) -> perfdata_write::Result<Action> {
        let Some(event) = item.locate().event else {
            return Ok(Action::Keep);
        };
        if !self.attrs.loses(event) {
            return Ok(Action::Keep);
        }
        let user = replay::user_state(item);
        let mut record = item.decode()?;
        let RecordBody::Sample(s) = &mut record.body else {
            return Ok(Action::Keep);
        };
        let recorded = s.callchain.take().map(|c| c.ips).unwrap_or_default();
        let chain = match (user, self.unwinder.as_mut()) {
            (Some(user), Some(unwinder)) => {
                let (pid, tid) = s.tid.map_or((-1, -1), |t| (t.pid, t.tid));
                let thread = self.machine.findnew_thread(pid, tid);
                let mut frames = unwinder.unwind(&self.machine, thread, &user);
                // perf's frame of a return address read as 0 (0 less one) cannot be
                // written: in a recorded callchain it is a context marker, and perf
                // would discard the sample's whole chain for it.
                frames.retain(|&at| at != u64::MAX);
                replay::with_user_frames(&recorded, &frames)
            }
            _ => recorded,
        };
        s.callchain = Some(Callchain::new(chain));
        s.regs_user = None;
        s.stack_user = None;
        Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
    }
}

impl RecordEdit for UnwindEdit {
    fn start(&mut self, meta: &Metadata) -> perfdata_write::Result<()> {
        let unwindable = meta
            .attrs()
            .iter()
            .any(|ev| ev.attr.sample_type.contains(USER_STATE));
        if !unwindable {
            return Err(WriteError::unsupported(
                None,
                "no event has user stack copies (REGS_USER and STACK_USER): \
                 only a `perf record --call-graph dwarf` recording can be unwound",
            ));
        }
        self.attrs.start(meta)?;
        self.unwinder = Some(Unwinder::new(replay::arch_of(meta), &self.opts));
        replay::add_feature_build_ids(meta, &mut self.machine);
        Ok(())
    }

    fn record(&mut self, item: &RecordRef<'_>) -> perfdata_write::Result<Action> {
        match item.raw.record_type() {
            RecordType::Sample => self.sample(item),
            RecordType::HeaderAttr | RecordType::HeaderFeature => self.attrs.record(item),
            _ => {
                replay::replay_sideband(&mut self.machine, item)?;
                Ok(Action::Keep)
            }
        }
    }

    fn time_ordered(&self) -> bool {
        // The maps of each sample's moment, as perf's replay has them.
        true
    }

    fn edit_meta(&self, meta: &mut Metadata) -> perfdata_write::Result<()> {
        self.attrs.edit_meta(meta)
    }

    fn finish(&mut self, _meta: &Metadata) -> perfdata_write::Result<()> {
        if let Some(u) = &self.unwinder {
            *self.stats.borrow_mut() = u.stats().clone();
        }
        Ok(())
    }
}
