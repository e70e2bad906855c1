//! Record edits: a stage of the [`crate::convert`] pipeline where each record
//! is kept, dropped or replaced, in one streaming pass; a
//! [`Conversion`](crate::Conversion) runs them ([`Conversion::edit`](crate::Conversion::edit)).
//!
//! An edit ([`RecordEdit`]) sees each record as the reader frames it (raw bytes, with
//! [`RecordRef::locate`] for its event, time, pid, tid and cpu without decoding) and the
//! metadata as of that record; it may also change the metadata the output describes
//! (attrs, features). Edits compose: each sees the record as the previous one left it.
//! The rest is the conversion's: any input the reader takes (file, pipe, stdin,
//! directory), any output the writers make, compressed records expanded so that edits
//! see every record exactly once and compressed again as they were (same record type,
//! same level) unless [`Compression::Decompress`](crate::convert::Compression) is asked
//! for, and derived features (SAMPLE_TIME, COMPRESSED, AUXTRACE) recomputed.
//! Memory does not grow with the input: records stream through.
//!
//! [`Strip`] removes samples by pid, tid, comm, cpu, event and time, with the side-band
//! of what it removed (`perfdata strip`). [`Remap`] replaces build ids and path
//! prefixes; [`Anonymize`] replaces names with stable pseudonyms (`perfdata anonymize`).

mod anon;
mod binaries;
mod fields;
mod inherit;
mod pseudonym;
mod remap;
mod stage;
mod strip;
mod summary;

use perfdata_core::raw::{OwnedRecord, RawRecord};
use perfdata_core::{Metadata, RecordRef};

use crate::error::Result;

pub use anon::{Anonymize, AnonymizeCounts};
pub use fields::{parse_sample_fields, DropSampleFields};
pub use perfdata_core::select::{
    parse_cpu_list, parse_id_list, parse_time_ranges, Glob, Selectors, TimeRange, TimeSpec,
};
pub use pseudonym::{pseudonym, random_salt, Pseudonyms, DEFAULT_KEEP_PATHS};
pub use remap::{parse_build_id, parse_id_pair, parse_map_file, parse_path_pair, Remap};
pub(crate) use stage::Applied;
pub use stage::EditStage;
pub use strip::{strip_edits, Selection, Strip};
pub use summary::{Counts, EditSummary};

/// What an edit does with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write it as it is.
    Keep,
    /// Leave it out.
    Drop,
    /// Write these records instead (none, one or several; headers included, in the
    /// input's byte order).
    Replace(Vec<OwnedRecord>),
}

impl Action {
    /// Replace `raw` by `bytes` (a whole record, its header's size set), keeping where
    /// it came from.
    pub fn replace(raw: &RawRecord<'_>, bytes: Vec<u8>) -> Action {
        Action::Replace(vec![Self::record_like(raw, bytes)])
    }

    /// A record of `bytes` from where `raw` came from.
    pub fn record_like(raw: &RawRecord<'_>, bytes: Vec<u8>) -> OwnedRecord {
        OwnedRecord {
            bytes,
            payload: Vec::new(),
            rest: 0,
            offset: raw.offset,
            origin: raw.origin,
            stream: raw.stream,
        }
    }
}

/// One edit of a record stream.
pub trait RecordEdit {
    /// Called once, when the input's attrs are known and before anything is laid out:
    /// the place to resolve names and refuse a selection that cannot apply.
    fn start(&mut self, _meta: &Metadata) -> Result<()> {
        Ok(())
    }

    /// What to do with one record.
    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action>;

    /// Whether the edit's decisions follow state that side-band records change (a
    /// thread's comm, its maps): then every edit of the stage sees the records in perf's
    /// time order ([`perfdata_core::ordered`]), while the output keeps the input's
    /// order. The answer depends on the edit's options, not on the input.
    fn time_ordered(&self) -> bool {
        false
    }

    /// Change the metadata the output describes (attrs, ids, features). Called on a
    /// copy of the input's metadata, after [`RecordEdit::start`].
    fn edit_meta(&self, _meta: &mut Metadata) -> Result<()> {
        Ok(())
    }

    /// The end of the input. An error here (a selection that matched nothing) leaves
    /// the output unfinished, so an atomic output is never committed.
    fn finish(&mut self, _meta: &Metadata) -> Result<()> {
        Ok(())
    }
}

/// A pipe stream's HEADER_FEATURE record of feature `id` with its section changed by
/// `change` (which says whether it changed anything); other records are kept.
pub fn edit_feature_record(
    item: &RecordRef<'_>,
    id: perfdata_core::feature::FeatureId,
    change: impl FnOnce(&mut perfdata_core::feature::Feature) -> bool,
) -> Result<Action> {
    use perfdata_core::record::RecordBody;
    let is_it = item
        .view::<perfdata_core::record::FeatureRecordView>()
        .is_ok_and(|v| v.feat_id() == u64::from(id.bit()));
    if !is_it {
        return Ok(Action::Keep);
    }
    let mut record = item.decode()?;
    let RecordBody::HeaderFeature(hf) = &mut record.body else {
        return Ok(Action::Keep);
    };
    let ctx = item.meta.feature_context();
    let mut section =
        perfdata_core::feature::FeatureSection::decode(id, &hf.data, &ctx, item.raw.offset + 16)?;
    if !change(&mut section.feature) {
        return Ok(Action::Keep);
    }
    // The error names the feature and the check its model failed after the edit.
    hf.data = section.encode(item.meta.endian)?;
    Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
}

/// An edit made of a function of each record.
pub struct FnEdit<F>(pub F);

impl<F: FnMut(&RecordRef<'_>) -> Result<Action>> RecordEdit for FnEdit<F> {
    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        (self.0)(item)
    }
}

/// The index of the event a HEADER_ATTR record declares: by its first id, else by an
/// equal attr (the reader has folded every attr by the time edits see the record).
pub fn header_attr_event(item: &RecordRef<'_>) -> Result<Option<usize>> {
    let record = item.decode()?;
    let perfdata_core::record::RecordBody::HeaderAttr(ha) = record.body else {
        return Ok(None);
    };
    let by_id = ha
        .ids
        .first()
        .and_then(|&id| item.meta.events().event_of_id(id));
    Ok(by_id.or_else(|| item.meta.attrs().iter().position(|ev| ev.attr == ha.attr)))
}

#[cfg(test)]
mod tests;
