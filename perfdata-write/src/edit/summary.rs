//! What the edits of a conversion did: records kept and removed by type, samples by
//! event, bytes of records in and out.

use std::collections::BTreeMap;

use perfdata_core::record::RecordType;
use perfdata_core::Item;

/// Records of one kind that the edits kept (some perhaps replaced) or removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub kept: u64,
    pub removed: u64,
    /// Of the kept, those written changed (re-encoded, or as several records).
    pub replaced: u64,
}

/// What a stage of edits did. Bytes count whole records (header.size plus payload)
/// before any compression of the output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditSummary {
    /// By record type (perf's numbering order).
    pub records: BTreeMap<RecordType, Counts>,
    /// SAMPLE records by the index of their event in the input's attrs.
    pub samples: BTreeMap<usize, Counts>,
    /// The input's event names (as `perf script` prints them), by index.
    pub event_names: Vec<String>,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

impl EditSummary {
    /// Count `item`: written in `out_len` bytes, or removed (`None`); `replaced` when
    /// what was written is not the record as it came.
    pub(crate) fn count(&mut self, item: &Item<'_>, out_len: Option<usize>, replaced: bool) {
        let ty = item.raw.record_type();
        self.bytes_in += item.raw.total_len() as u64;
        self.bytes_out += out_len.unwrap_or(0) as u64;
        let bump = |c: &mut Counts| match out_len {
            Some(_) => {
                c.kept += 1;
                c.replaced += u64::from(replaced);
            }
            None => c.removed += 1,
        };
        bump(self.records.entry(ty).or_default());
        if ty == RecordType::Sample {
            if let Some(event) = item.locate().event {
                bump(self.samples.entry(event).or_default());
            }
        }
    }

    /// Records of `ty` removed.
    pub fn removed(&self, ty: RecordType) -> u64 {
        self.records.get(&ty).map_or(0, |c| c.removed)
    }

    /// Records of `ty` kept.
    pub fn kept(&self, ty: RecordType) -> u64 {
        self.records.get(&ty).map_or(0, |c| c.kept)
    }
}
