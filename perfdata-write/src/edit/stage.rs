//! [`EditStage`]: the edits of one conversion, run on each record, with what they did.
//!
//! When an edit follows side-band state ([`RecordEdit::time_ordered`]: a comm
//! selector), the records wait in a [`Window`] while the edits see them in perf's time
//! order, and leave it, decided, in the order they came: about two rounds of records
//! are held (see [`perfdata_core::ordered`]).

use perfdata_core::ordered::Window;
use perfdata_core::raw::OwnedRecord;
use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Metadata, RecordRef};

use super::{summary, Action, EditSummary, RecordEdit};
use crate::error::{Result, WriteError};

/// What [`EditStage::apply`] made of a record.
pub(crate) enum Applied {
    /// Decided: write it (after the records [`EditStage::pop_ready`] gives) as this says.
    Now(Action),
    /// Held until its turn in perf's order: it comes out of [`EditStage::pop_ready`].
    Held,
}

/// The edits and the counts of what they did.
struct Chain {
    edits: Vec<Box<dyn RecordEdit>>,
    counter: summary::Counter,
}

/// The edits of one conversion, run in order on each record, with what they did.
pub struct EditStage {
    chain: Chain,
    started: bool,
    /// A pipe stream's header records, held until the first data record: the edits
    /// start when every attr is known, and then see these too.
    held: Vec<OwnedRecord>,
    /// Records waiting for the edits' decisions in perf's order, when an edit asks for
    /// that order.
    window: Option<Window<Action>>,
    event_names: Vec<String>,
}

/// Records that describe the recording rather than belong to its data: a pipe stream
/// sends them before the first data record, and edits start after them.
fn is_header_record(ty: RecordType) -> bool {
    matches!(
        ty,
        RecordType::HeaderAttr
            | RecordType::HeaderFeature
            | RecordType::HeaderTracingData
            | RecordType::HeaderEventType
    )
}

impl EditStage {
    /// A stage that runs `edits` on each record in order.
    pub fn new(edits: Vec<Box<dyn RecordEdit>>) -> Self {
        EditStage {
            chain: Chain {
                edits,
                counter: summary::Counter::default(),
            },
            started: false,
            held: Vec::new(),
            window: None,
            event_names: Vec::new(),
        }
    }

    fn ensure_started(&mut self, meta: &Metadata) -> Result<()> {
        if !self.started {
            self.started = true;
            for e in &mut self.chain.edits {
                e.start(meta)?;
            }
            if self.chain.edits.iter().any(|e| e.time_ordered()) {
                // A directory's streams are read side by side: their rounds do not
                // bound the times still to come.
                self.window = Some(Window::new(meta.container != ContainerKind::Directory));
            }
        }
        Ok(())
    }

    /// Whether a record held for perf's order is decided and next in the input's
    /// order: [`EditStage::pop_ready`] gives it.
    pub(crate) fn has_ready(&self) -> bool {
        self.window.as_ref().is_some_and(Window::ready)
    }

    /// Run the edits on one record (records come in the input's order).
    pub(crate) fn apply(&mut self, item: &RecordRef<'_>) -> Result<Applied> {
        // A reader that also returns compressed containers returns their records next:
        // writing both would double them, and the records are what edits see.
        if item.raw.is_compressed() {
            return Ok(Applied::Now(Action::Drop));
        }
        if !self.started {
            if is_header_record(item.raw.record_type()) {
                self.held.push(item.raw.to_owned_record());
                return Ok(Applied::Now(Action::Drop));
            }
            self.ensure_started(item.meta)?;
            if !self.held.is_empty() {
                return self.apply_with_held(item);
            }
        }
        let Some(window) = self.window.as_mut() else {
            return Ok(Applied::Now(self.chain.run(item)?));
        };
        let decide = &mut |r: &RecordRef<'_>| self.chain.run(r);
        if Window::<Action>::holds(item) {
            window.push(item, decide)?;
            return Ok(Applied::Held);
        }
        // A payload too large to hold streams through as it is read: whatever is held
        // before it is decided first (its turn comes early).
        window.flush(item.meta, decide)?;
        Ok(Applied::Now(self.chain.run(item)?))
    }

    /// The first data record of a stream, after its header records.
    fn apply_with_held(&mut self, item: &RecordRef<'_>) -> Result<Applied> {
        let held = std::mem::take(&mut self.held);
        if let Some(window) = self.window.as_mut() {
            let decide = &mut |r: &RecordRef<'_>| self.chain.run(r);
            for rec in &held {
                window.push(
                    &RecordRef::new(rec.as_raw(item.meta.endian), item.meta),
                    decide,
                )?;
            }
            window.push(item, decide)?;
            return Ok(Applied::Held);
        }
        let mut out = Vec::new();
        for rec in held {
            let raw = rec.as_raw(item.meta.endian);
            let action = self.chain.run(&RecordRef::new(raw, item.meta))?;
            push_action(&mut out, rec.clone(), action);
        }
        let action = self.chain.run(item)?;
        push_action(&mut out, item.raw.to_owned_record(), action);
        Ok(Applied::Now(Action::Replace(out)))
    }

    /// The next held record whose decision is made, in the input's order: `f` gets it
    /// (read with `meta`) and what the edits made of it.
    pub(crate) fn pop_ready<R>(
        &mut self,
        meta: &Metadata,
        f: impl FnOnce(&RecordRef<'_>, Action) -> R,
    ) -> Option<R> {
        self.window.as_mut()?.pop(meta, f)
    }

    /// The end of the records: decide whatever is still held.
    pub(crate) fn flush(&mut self, meta: &Metadata) -> Result<()> {
        match self.window.as_mut() {
            Some(window) => window.flush(meta, &mut |r: &RecordRef<'_>| self.chain.run(r)),
            None => Ok(()),
        }
    }

    /// The metadata the output describes: the input's, as the edits change it.
    pub(crate) fn output_meta(&mut self, meta: &Metadata) -> Result<Metadata> {
        self.ensure_started(meta)?;
        let mut out = meta.clone();
        for e in &self.chain.edits {
            e.edit_meta(&mut out)?;
        }
        Ok(out)
    }

    pub(crate) fn finish(&mut self, meta: &Metadata) -> Result<()> {
        if !self.held.is_empty() {
            return Err(WriteError::unsupported(
                None,
                "the stream ends after its header records: there is nothing to edit",
            ));
        }
        self.ensure_started(meta)?;
        for e in &mut self.chain.edits {
            e.finish(meta)?;
        }
        self.event_names = (0..meta.attrs().len())
            .map(|i| meta.event_name(i))
            .collect();
        Ok(())
    }

    /// Whether the edits removed any SAMPLE record so far.
    pub(crate) fn removed_samples(&self) -> bool {
        self.chain.counter.removed_samples() > 0
    }

    pub(crate) fn into_summary(self) -> EditSummary {
        EditSummary {
            event_names: self.event_names,
            ..self.chain.counter.summary()
        }
    }
}

impl Chain {
    /// Run every edit on one record, counting what came of it.
    fn run(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        if let [edit] = &mut self.edits[..] {
            // One edit (strip, remap, anonymize alone): its action as it is, not moved
            // (a copy of the value just returned through memory waits for its stores).
            let result = edit.record(item);
            if let Ok(action) = &result {
                self.count(item, action);
            }
            return result;
        }
        // `None`: the record as it came; else what the edits so far made of it.
        let mut current: Option<Vec<OwnedRecord>> = None;
        for e in &mut self.edits {
            current = match current {
                None => match e.record(item)? {
                    Action::Keep => None,
                    Action::Drop => Some(Vec::new()),
                    Action::Replace(recs) => Some(recs),
                },
                Some(recs) => {
                    let mut next = Vec::with_capacity(recs.len());
                    for rec in recs {
                        let raw = rec.as_raw(item.meta.endian);
                        match e.record(&RecordRef::new(raw, item.meta))? {
                            Action::Keep => next.push(rec),
                            Action::Drop => {}
                            Action::Replace(more) => next.extend(more),
                        }
                    }
                    Some(next)
                }
            };
        }
        let action = match current {
            None => Action::Keep,
            Some(recs) if recs.is_empty() => Action::Drop,
            Some(recs) => Action::Replace(recs),
        };
        self.count(item, &action);
        Ok(action)
    }

    /// Count what the edits made of `item`.
    #[inline]
    fn count(&mut self, item: &RecordRef<'_>, action: &Action) {
        let out_len = match action {
            Action::Keep => Some(item.raw.total_len()),
            Action::Drop => None,
            Action::Replace(recs) => {
                Some(recs.iter().map(|r| r.bytes.len() + r.payload.len()).sum())
            }
        };
        let replaced = matches!(action, Action::Replace(_));
        self.counter.count(item, out_len, replaced);
    }
}

/// Append what `action` makes of `original` to `out`.
fn push_action(out: &mut Vec<OwnedRecord>, original: OwnedRecord, action: Action) {
    match action {
        Action::Keep => out.push(original),
        Action::Drop => {}
        Action::Replace(recs) => out.extend(recs),
    }
}
