//! [`DropSampleFields`]: remove fields from every SAMPLE of the events that have them
//! (`perfdata strip --drop-sample-fields REGS_USER,STACK_USER`), the attrs' sample_type
//! updated to match, so that a `--call-graph dwarf` recording can be shared without its
//! copies of user stacks.
//!
//! Only fields after the ones records are located by can go: IDENTIFIER, IP, TID, TIME,
//! ADDR, ID, STREAM_ID and CPU decide where perf finds a record's id (in samples and in
//! the sample_id trailers of other records) and stay.

use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::{Metadata, RecordRef};

use super::{Action, RecordEdit};
use crate::error::{Result, WriteError};

/// The fields that may be dropped.
fn droppable() -> SampleType {
    SampleType::PERIOD
        | SampleType::CALLCHAIN
        | SampleType::RAW
        | SampleType::BRANCH_STACK
        | SampleType::REGS_USER
        | SampleType::STACK_USER
        | SampleType::WEIGHT
        | SampleType::WEIGHT_STRUCT
        | SampleType::DATA_SRC
        | SampleType::TRANSACTION
        | SampleType::REGS_INTR
        | SampleType::PHYS_ADDR
        | SampleType::CGROUP
        | SampleType::DATA_PAGE_SIZE
        | SampleType::CODE_PAGE_SIZE
        | SampleType::AUX
}

/// Sample fields by perf's names (`REGS_USER,STACK_USER`).
pub fn parse_sample_fields(text: &str) -> Result<SampleType> {
    let mut out = SampleType::empty();
    for name in text.split(',').map(str::trim) {
        let bit = SampleType::from_name(&name.to_ascii_uppercase()).ok_or_else(|| {
            WriteError::unsupported(None, format!("{name:?} is not a sample field"))
        })?;
        if !droppable().contains(bit) {
            return Err(WriteError::unsupported(
                None,
                format!("{name} locates records (their id and time) and cannot be dropped"),
            ));
        }
        out |= bit;
    }
    Ok(out)
}

/// Remove `fields` from the samples of every event that has them.
pub struct DropSampleFields {
    fields: SampleType,
    /// Fields every event that loses some gains (see [`DropSampleFields::adding`]).
    add: SampleType,
    /// Per input event: the fields it loses.
    per_event: Vec<SampleType>,
}

impl DropSampleFields {
    /// An edit that drops `fields` from every event's sample_type and every SAMPLE.
    pub fn new(fields: SampleType) -> Self {
        DropSampleFields {
            fields,
            add: SampleType::empty(),
            per_event: Vec::new(),
        }
    }

    /// Also give the attr of every event that loses fields the fields `add`, for an
    /// edit that writes them into its samples (the unwind edit writes CALLCHAIN in
    /// place of REGS_USER and STACK_USER); this edit's own samples are not given them,
    /// so such an edit rewrites the samples itself and leaves this one the attrs.
    pub fn adding(mut self, add: SampleType) -> Self {
        self.add = add;
        self
    }

    /// Whether event `event` loses any field.
    pub fn loses(&self, event: usize) -> bool {
        !self.lost_by(event).is_empty()
    }

    fn lost_by(&self, event: usize) -> SampleType {
        self.per_event
            .get(event)
            .copied()
            .unwrap_or(SampleType::empty())
    }
}

/// The attr without `gone` and, if it lost any, with `add`: the register masks and stack
/// size of dropped fields cleared.
fn strip_attr(attr: &mut perfdata_core::attr::PerfEventAttr, gone: SampleType, add: SampleType) {
    if gone.is_empty() {
        return;
    }
    attr.sample_type.remove(gone);
    attr.sample_type |= add;
    if add.contains(SampleType::CALLCHAIN) {
        // The callchains written hold the user frames too.
        attr.flags
            .remove(perfdata_core::attr::AttrFlags::EXCLUDE_CALLCHAIN_USER);
    }
    if gone.contains(SampleType::REGS_USER) {
        attr.sample_regs_user = 0;
    }
    if gone.contains(SampleType::STACK_USER) {
        attr.sample_stack_user = 0;
    }
    if gone.contains(SampleType::REGS_INTR) {
        attr.sample_regs_intr = 0;
    }
}

/// The sample without `gone`.
fn strip_sample(s: &mut perfdata_core::record::Sample, gone: SampleType) {
    let has = |b| gone.contains(b);
    macro_rules! clear {
        ($($bit:ident => $field:ident),* $(,)?) => {
            $(if has(SampleType::$bit) { s.$field = None; })*
        };
    }
    clear!(
        PERIOD => period, CALLCHAIN => callchain, RAW => raw, BRANCH_STACK => branch_stack,
        REGS_USER => regs_user, STACK_USER => stack_user, DATA_SRC => data_src,
        TRANSACTION => transaction, REGS_INTR => regs_intr, PHYS_ADDR => phys_addr,
        CGROUP => cgroup, DATA_PAGE_SIZE => data_page_size,
        CODE_PAGE_SIZE => code_page_size, AUX => aux,
    );
    if gone.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT) {
        s.weight = None;
    }
}

impl DropSampleFields {
    /// EVENT_DESC's attrs without the dropped fields; whether any had them.
    fn edit_desc(&self, feature: &mut Feature) -> bool {
        let Feature::EventDesc(desc) = feature else {
            return false;
        };
        // By each attr's own fields, not its place: an edit before this one (a strip)
        // may have removed events from the list.
        let mut any = false;
        for e in desc.events.iter_mut() {
            let gone = e.attr.sample_type & self.fields;
            any |= !gone.is_empty();
            strip_attr(&mut e.attr, gone, self.add);
        }
        any
    }
}

impl RecordEdit for DropSampleFields {
    fn start(&mut self, meta: &Metadata) -> Result<()> {
        // However the edit was made: without these fields no record can be located.
        let fixed = self.fields - droppable();
        if !fixed.is_empty() {
            return Err(WriteError::unsupported(
                None,
                format!("{fixed:?} locates records (their id and time) and cannot be dropped"),
            ));
        }
        self.per_event = meta
            .attrs()
            .iter()
            .map(|ev| ev.attr.sample_type & self.fields)
            .collect();
        if self.per_event.iter().all(|f| f.is_empty()) {
            let names: Vec<String> = (0..meta.attrs().len())
                .map(|i| {
                    format!(
                        "{} ({:?})",
                        meta.event_name(i),
                        meta.attrs()[i].attr.sample_type
                    )
                })
                .collect();
            return Err(WriteError::unsupported(
                None,
                format!(
                    "no event samples {:?}; the events: {}",
                    self.fields,
                    names.join(", ")
                ),
            ));
        }
        Ok(())
    }

    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        match item.raw.record_type() {
            RecordType::Sample => {
                let Some(event) = item.locate().event else {
                    return Ok(Action::Keep);
                };
                let gone = self.lost_by(event);
                if gone.is_empty() {
                    return Ok(Action::Keep);
                }
                let mut record = item.decode()?;
                if let RecordBody::Sample(s) = &mut record.body {
                    strip_sample(s, gone);
                }
                Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
            }
            RecordType::HeaderAttr => {
                let Some(event) = super::header_attr_event(item)? else {
                    return Ok(Action::Keep);
                };
                let gone = self.lost_by(event);
                if gone.is_empty() {
                    return Ok(Action::Keep);
                }
                let mut record = item.decode()?;
                if let RecordBody::HeaderAttr(ha) = &mut record.body {
                    strip_attr(&mut ha.attr, gone, self.add);
                }
                Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
            }
            RecordType::HeaderFeature => {
                super::edit_feature_record(item, FeatureId::EventDesc, |f| self.edit_desc(f))
            }
            _ => Ok(Action::Keep),
        }
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        // By each attr's own fields, as edit_desc.
        meta.edit_attrs(|attrs| {
            for ev in attrs.iter_mut() {
                let gone = ev.attr.sample_type & self.fields;
                strip_attr(&mut ev.attr, gone, self.add);
            }
        });
        if let Some(section) = meta.features.get_mut(&FeatureId::EventDesc) {
            self.edit_desc(&mut section.feature);
        }
        Ok(())
    }
}
