//! [`RecordFilter`]: which records a viewer shows (`perfdata dump --pid ...`), by the
//! selectors `perfdata strip` takes, without changing any record.
//!
//! A record is shown when it carries every field a selector names and each matches:
//! with `--pid 42`, the samples of process 42 and the records about it (COMM, MMAP,
//! FORK, ..., or any record whose sample_id says pid 42); records without a pid
//! (FINISHED_ROUND, metadata) are not shown. `--comm` matches the thread's command as of
//! the record in perf's time order (COMM records and forks followed as perf meets them,
//! perf's `thread__comm_str`), `--event` the event a record's id names, `--time` its
//! time. Record types given apart narrow what is shown further.

use super::{task_of, Matcher, Selectors, ThreadComms};
use crate::error::{Error, Result};
use crate::ordered::Window;
use crate::record::RecordType;
use crate::{ContainerKind, Metadata, RecordRef};

/// Record types by perf's names (`SWITCH,SWITCH_CPU_WIDE`), as `perfdata dump --type`
/// and `perfdata strip --drop` take them.
pub fn parse_record_types(text: &str) -> Result<Vec<RecordType>> {
    text.split(',')
        .map(|name| {
            let name = name.trim();
            RecordType::all_known()
                .find(|t| t.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| Error::Select(format!("{name:?} is not a record type")))
        })
        .collect()
}

/// See the module documentation.
pub struct RecordFilter {
    shown: Shown,
    /// With a comm selector: the records waiting for perf's order, and whether each is
    /// shown.
    window: Option<Window<bool>>,
}

/// Which records are shown, followed record by record.
struct Shown {
    matcher: Matcher,
    types: Vec<RecordType>,
    /// Each thread's command as of the current record.
    comms: ThreadComms,
}

impl RecordFilter {
    /// Show what `select` selects among records of `types` (all types when empty).
    pub fn new(select: Selectors, types: Vec<RecordType>) -> Self {
        RecordFilter {
            shown: Shown {
                matcher: Matcher::new(select),
                types,
                comms: ThreadComms::default(),
            },
            window: None,
        }
    }

    /// Whether the filter shows every record.
    pub fn shows_all(&self) -> bool {
        self.shown.types.is_empty() && !self.shown.matcher.selectors().selects_samples()
    }

    /// Resolve the selectors against the recording: event names (an unknown one is an
    /// error naming the events there are), percent time slices (against SAMPLE_TIME).
    pub fn start(&mut self, meta: &Metadata) -> Result<()> {
        self.shown.matcher.resolve(meta)?;
        if !self.shown.matcher.selectors().comms.is_empty() {
            self.window = Some(Window::new(meta.container != ContainerKind::Directory));
        }
        Ok(())
    }

    /// Take the next record (records come in the input's order) and give `show` each
    /// record shown whose turn has come, in the input's order: with a comm selector the
    /// records wait until perf's time order reaches them (about two rounds of records;
    /// see [`crate::ordered`]), else `item` is decided at once.
    pub fn feed<E>(
        &mut self,
        item: &RecordRef<'_>,
        show: &mut impl FnMut(&RecordRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Some(window) = self.window.as_mut() else {
            return match self.shown.decide(item) {
                true => show(item),
                false => Ok(()),
            };
        };
        let decide = &mut |r: &RecordRef<'_>| Ok(self.shown.decide(r));
        if Window::<bool>::holds(item) {
            window.push(item, decide)?;
            return pop_shown(window, item.meta, show);
        }
        // A payload too large to hold is shown as it is read; what came before it is
        // decided and shown first.
        window.flush(item.meta, decide)?;
        pop_shown(window, item.meta, show)?;
        match self.shown.decide(item) {
            true => show(item),
            false => Ok(()),
        }
    }

    /// The end of the records: decide and show what still waits.
    pub fn finish<E>(
        &mut self,
        meta: &Metadata,
        show: &mut impl FnMut(&RecordRef<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let Some(window) = self.window.as_mut() else {
            return Ok(());
        };
        window.flush(meta, &mut |r: &RecordRef<'_>| Ok(self.shown.decide(r)))?;
        pop_shown(window, meta, show)
    }

    /// Whether to show `item`, the records before it in perf's order having been seen
    /// (commands are followed through the records shown or not). [`RecordFilter::feed`]
    /// calls it in that order.
    pub fn shows(&mut self, item: &RecordRef<'_>) -> bool {
        self.shown.decide(item)
    }
}

/// Give `show` the decided records at the front of `window` that are shown.
fn pop_shown<E>(
    window: &mut Window<bool>,
    meta: &Metadata,
    show: &mut impl FnMut(&RecordRef<'_>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    while let Some(result) = window.pop(meta, |r, shown| if shown { show(r) } else { Ok(()) }) {
        result?;
    }
    Ok(())
}

impl Shown {
    /// Whether `item` is shown; the commands follow it.
    fn decide(&mut self, item: &RecordRef<'_>) -> bool {
        let ty = item.raw.record_type();
        self.comms.track(ty, item.raw.bytes, item.meta.endian);
        if !self.types.is_empty() && !self.types.contains(&ty) {
            return false;
        }
        if !self.matcher.selectors().selects_samples() {
            return true;
        }
        self.matcher.follow_events(item.meta);
        let at = item.locate();
        let (pid, tid) = match task_of(item) {
            Some(task) => (Some(task.pid), Some(task.tid)),
            None => (at.pid, at.tid),
        };
        self.matcher.matches(pid, tid, at, &self.comms)
    }
}
