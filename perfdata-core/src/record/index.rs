//! The events of a recording, and how the event a record belongs to is found from it
//! (by its id).

use binrw::Endian;

use super::format::EventFormat;
use super::layout::SampleLayout;
use crate::attr::PerfEventAttr;
use crate::codec::u64_at;

/// The events of a recording, and how to find which one a record belongs to.
///
/// This is perf's `evlist__event2evsel`: with one event every record is its; otherwise the
/// id is read at the first event's id position (SAMPLE) or trailer position (others) and
/// looked up; an id of 0 (synthesized records) or one not found maps to the first event.
#[derive(Debug, Clone, Default)]
pub struct EventIndex {
    /// Per event: its format and where its fields are, worked out once.
    layouts: Vec<SampleLayout>,
    by_id: IdTable,
    /// The first event's id positions, which perf uses for every record.
    id_pos: Option<usize>,
    is_pos: Option<usize>,
}

impl EventIndex {
    /// An index of no event.
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `events` (attr and ids each), in their order.
    pub fn of<'a>(events: impl IntoIterator<Item = (&'a PerfEventAttr, &'a [u64])>) -> Self {
        let mut index = EventIndex::new();
        for (attr, ids) in events {
            index.push(attr, ids);
        }
        index
    }

    /// Add an event with its ids; returns its index.
    pub fn push(&mut self, attr: &PerfEventAttr, ids: &[u64]) -> usize {
        let idx = self.layouts.len();
        let f = EventFormat::from_attr(attr);
        if idx == 0 {
            self.id_pos = f.id_pos();
            self.is_pos = f.is_pos();
        }
        self.layouts.push(SampleLayout::new(f));
        self.by_id.add(ids, idx);
        idx
    }

    /// Add more ids to an existing event.
    pub fn add_ids(&mut self, idx: usize, ids: &[u64]) {
        self.by_id.add(ids, idx);
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.layouts.len()
    }

    /// Whether there is no event.
    pub fn is_empty(&self) -> bool {
        self.layouts.is_empty()
    }

    /// The format of event `idx`.
    pub fn format(&self, idx: usize) -> Option<&EventFormat> {
        self.layouts.get(idx).map(|l| l.format())
    }

    /// Where the fields of event `idx` are: in a SAMPLE, in a trailer.
    #[inline]
    pub fn layout(&self, idx: usize) -> Option<&SampleLayout> {
        self.layouts.get(idx)
    }

    /// Which event has this id.
    pub fn event_of_id(&self, id: u64) -> Option<usize> {
        self.by_id.get(id)
    }

    /// The id a record names its event by, read where the first event's layout puts it
    /// (perf's `id_pos` words into a SAMPLE, `is_pos` words back from a trailer's end):
    /// `None` when that layout has no id or the record no room for it.
    pub fn record_id(&self, record: &[u8], is_sample: bool, endian: Endian) -> Option<u64> {
        let words = record.len().saturating_sub(8) / 8;
        let at = if is_sample {
            self.id_pos.filter(|&p| p < words).map(|p| 8 + 8 * p)
        } else {
            self.is_pos
                .filter(|&p| p <= words)
                .map(|p| record.len() - 8 * p)
        };
        u64_at(record, at?, endian)
    }

    /// The event a record belongs to, from its bytes (header included). `None` only when
    /// there are no events at all.
    pub fn event_of(&self, record: &[u8], is_sample: bool, endian: Endian) -> Option<usize> {
        let first = self.layouts.first()?.format();
        if self.layouts.len() == 1 {
            return Some(0);
        }
        if !is_sample && !first.sample_id_all {
            return Some(0);
        }
        // No id position: no event; no room for the id: the first.
        let pos = if is_sample { self.id_pos } else { self.is_pos };
        pos?;
        let Some(id) = self.record_id(record, is_sample, endian) else {
            return Some(0);
        };
        if id == 0 {
            return Some(0);
        }
        Some(self.event_of_id(id).unwrap_or(0))
    }
}

/// Event ids and the event each belongs to, sorted by id.
///
/// Looked up for almost every record, so it must be cheap: a recording has a few ids per
/// event and cpu (tens, at most thousands), which a linear scan of a short vector or a
/// binary search finds faster than a SipHash map (which took a fifth of `strip`'s time).
#[derive(Debug, Clone, Default)]
struct IdTable {
    ids: Vec<u64>,
    events: Vec<usize>,
}

impl IdTable {
    /// Below this many ids a linear scan beats a binary search.
    const SCAN: usize = 16;

    /// Add `ids` for event `idx`; an id already known keeps its first event, as perf's
    /// lookup finds the first.
    fn add(&mut self, ids: &[u64], idx: usize) {
        for &id in ids {
            if let Err(at) = self.ids.binary_search(&id) {
                self.ids.insert(at, id);
                self.events.insert(at, idx);
            }
        }
    }

    fn get(&self, id: u64) -> Option<usize> {
        let at = if self.ids.len() <= Self::SCAN {
            self.ids.iter().position(|&i| i == id)?
        } else {
            self.ids.binary_search(&id).ok()?
        };
        Some(self.events[at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::SampleType;

    fn attr(st: SampleType, id_all: bool) -> PerfEventAttr {
        let mut a = PerfEventAttr {
            sample_type: st,
            ..Default::default()
        };
        a.flags.set(crate::attr::AttrFlags::SAMPLE_ID_ALL, id_all);
        a
    }

    #[test]
    fn positions_follow_perf() {
        let f = EventFormat::from_attr(&attr(
            SampleType::IP | SampleType::TID | SampleType::TIME | SampleType::ID | SampleType::CPU,
            true,
        ));
        assert_eq!(f.id_pos(), Some(3));
        assert_eq!(f.is_pos(), Some(2));
        assert_eq!(f.sample_id_len(), 32);
        let l = SampleLayout::new(f);
        let s = l.sample();
        assert_eq!(
            (s.tid, s.time, s.id, s.cpu),
            (Some(16), Some(24), Some(32), Some(40))
        );
        let t = l.trailer();
        assert_eq!(
            (t.tid, t.time, t.id, t.cpu, t.len),
            (Some(0), Some(8), Some(16), Some(24), 32)
        );
        let g = EventFormat::from_attr(&attr(SampleType::IDENTIFIER | SampleType::IP, true));
        assert_eq!((g.id_pos(), g.is_pos()), (Some(0), Some(1)));
    }

    #[test]
    fn finds_event_by_identifier() {
        let st = SampleType::IDENTIFIER | SampleType::IP;
        let mut idx = EventIndex::new();
        idx.push(&attr(st, true), &[10, 11]);
        idx.push(&attr(st, true), &[20]);
        let mut sample = vec![0u8; 8];
        sample.extend_from_slice(&20u64.to_le_bytes());
        sample.extend_from_slice(&0xffffu64.to_le_bytes());
        assert_eq!(idx.event_of(&sample, true, Endian::Little), Some(1));
        let mut comm = vec![0u8; 24];
        comm.extend_from_slice(&11u64.to_le_bytes());
        assert_eq!(idx.event_of(&comm, false, Endian::Little), Some(0));
    }

    #[test]
    fn id_table_scans_and_searches_and_keeps_the_first_event() {
        for n in [3u64, 40] {
            let mut t = IdTable::default();
            // Ids added out of order, one of them twice (for another event).
            let ids: Vec<u64> = (0..n).rev().map(|i| 1000 + 7 * i).collect();
            t.add(&ids, 0);
            t.add(&[1000, 5], 1);
            assert_eq!(t.get(1000), Some(0), "first event wins, n={n}");
            assert_eq!(t.get(5), Some(1));
            assert_eq!(t.get(1000 + 7 * (n - 1)), Some(0));
            assert_eq!(t.get(1001), None);
            assert_eq!(t.get(u64::MAX), None);
        }
    }
}
