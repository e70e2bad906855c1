//! What the edits of a conversion did: records kept and removed by type, samples by
//! event, bytes of records in and out.

use std::collections::BTreeMap;

use perfdata_core::record::RecordType;
use perfdata_core::RecordRef;

/// Records of one kind that the edits kept (some perhaps replaced) or removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Records kept.
    pub kept: u64,
    /// Records removed.
    pub removed: u64,
    /// Of the kept, those written changed (re-encoded, or as several records).
    pub replaced: u64,
}

impl Counts {
    fn bump(&mut self, out_len: Option<usize>, replaced: bool) {
        match out_len {
            Some(_) => {
                self.kept += 1;
                self.replaced += u64::from(replaced);
            }
            None => self.removed += 1,
        }
    }
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
    /// Bytes of the input.
    pub bytes_in: u64,
    /// Bytes written.
    pub bytes_out: u64,
}

/// Counting as records go by: arrays indexed by type number and event, folded into
/// the [`EditSummary`] maps at the end (a map lookup per record costs as much as the
/// rest of an edit).
#[derive(Debug, Default)]
pub(crate) struct Counter {
    by_type: Vec<Counts>,
    other_types: BTreeMap<u32, Counts>,
    by_event: Vec<Counts>,
    bytes_in: u64,
    bytes_out: u64,
}

/// Types numbered below this are counted in the array.
const DIRECT: usize = 128;

impl Counter {
    /// Count `item`: written in `out_len` bytes, or removed (`None`); `replaced` when
    /// what was written is not the record as it came.
    pub(crate) fn count(&mut self, item: &RecordRef<'_>, out_len: Option<usize>, replaced: bool) {
        self.bytes_in += item.raw.total_len() as u64;
        self.bytes_out += out_len.unwrap_or(0) as u64;
        let n = item.raw.header.type_;
        if (n as usize) < DIRECT {
            if self.by_type.is_empty() {
                self.by_type.resize(DIRECT, Counts::default());
            }
            self.by_type[n as usize].bump(out_len, replaced);
        } else {
            self.other_types
                .entry(n)
                .or_default()
                .bump(out_len, replaced);
        }
        if item.raw.record_type() == RecordType::Sample {
            // The edits located the record already: its event is cached.
            if let Some(e) = item.locate().event {
                if self.by_event.len() <= e {
                    self.by_event.resize(e + 1, Counts::default());
                }
                self.by_event[e].bump(out_len, replaced);
            }
        }
    }

    /// Samples removed so far.
    pub(crate) fn removed_samples(&self) -> u64 {
        self.by_type.get(9).map_or(0, |c| c.removed)
    }

    pub(crate) fn summary(&self) -> EditSummary {
        let used = |c: &&Counts| c.kept + c.removed > 0;
        let mut records: BTreeMap<RecordType, Counts> = self
            .by_type
            .iter()
            .enumerate()
            .filter(|(_, c)| used(c))
            .map(|(n, c)| (RecordType::from_u32(n as u32), *c))
            .collect();
        records.extend(
            self.other_types
                .iter()
                .map(|(&n, c)| (RecordType::from_u32(n), *c)),
        );
        EditSummary {
            records,
            samples: self
                .by_event
                .iter()
                .enumerate()
                .filter(|(_, c)| used(c))
                .map(|(e, c)| (e, *c))
                .collect(),
            event_names: Vec::new(),
            bytes_in: self.bytes_in,
            bytes_out: self.bytes_out,
        }
    }
}

impl EditSummary {
    /// Records of `ty` removed.
    pub fn removed(&self, ty: RecordType) -> u64 {
        self.records.get(&ty).map_or(0, |c| c.removed)
    }

    /// Records of `ty` kept.
    pub fn kept(&self, ty: RecordType) -> u64 {
        self.records.get(&ty).map_or(0, |c| c.kept)
    }
}
