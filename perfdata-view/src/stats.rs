//! Record counts as `perf report --stats` gives them.
//!
//! perf counts every record it processes, by type: the records inside COMPRESSED
//! records and the COMPRESSED records themselves, and in pipe mode the ATTR, FEATURE and
//! TRACING_DATA records too. Per event it counts SAMPLE records and the number of
//! samples LOST_SAMPLES records say were lost. A sample that carries a READ of its group
//! counts once for each member whose counter moved since the previous sample (perf's
//! `deliver_sample_group`).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use perfdata_core::names::{attr_name, event_name};
use perfdata_core::record::RecordType;
use perfdata_core::Result;
use perfdata_core::{ContainerKind, Metadata};
use perfdata_core::{PerfReader, Piece, RecordRef};

/// Per-event counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EventCounts {
    /// The event's name as `perf report --stats` of perf 6.1 prints it: in pipe mode
    /// derived from the attr (perf names the event before EVENT_DESC or EVENT_UPDATE
    /// arrive), in file mode [`Metadata::event_name`](perfdata_core::Metadata::event_name).
    pub name: String,
    /// SAMPLE records of this event.
    pub samples: u64,
    /// Sum of the `lost` field of this event's LOST_SAMPLES records.
    pub lost_samples: u64,
}

/// Counts of a whole recording.
///
/// ```
/// use perfdata_core::record::RecordType;
/// use perfdata_view::stats::Stats;
///
/// let (stats, _reader, result) = Stats::of(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// result?;
/// assert_eq!(stats.total, 294);
/// assert_eq!(stats.records()[&RecordType::Sample], 279);
/// # Ok::<(), perfdata_core::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records by type: the kernel's and perf's types (below [`COUNTED_TYPES`]) by
    /// number, without hashing per record; others in `other_types`.
    by_type: Vec<u64>,
    other_types: BTreeMap<u32, u64>,
    /// All records (perf's TOTAL).
    pub total: u64,
    /// Samples per event, in attr order.
    pub events: Vec<EventCounts>,
    /// Last READ value seen per id, to tell which group members moved.
    read_values: HashMap<u64, u64>,
}

/// Record types counted in an array (perf's own end below 128).
const COUNTED_TYPES: usize = 128;

impl Stats {
    /// Count one record.
    #[inline]
    pub fn add(&mut self, item: &RecordRef<'_>) {
        let type_ = item.raw.header.type_;
        match self.by_type.get_mut(type_ as usize) {
            Some(n) => *n += 1,
            None if (type_ as usize) < COUNTED_TYPES => {
                self.by_type.resize(COUNTED_TYPES, 0);
                self.by_type[type_ as usize] = 1;
            }
            None => *self.other_types.entry(type_).or_default() += 1,
        }
        self.total += 1;
        let ty = item.raw.record_type();
        if matches!(ty, RecordType::Sample | RecordType::LostSamples) {
            // Only the event is needed: the id alone is read (or nothing, with one
            // event).
            let is_sample = ty == RecordType::Sample;
            if !is_sample && !ty.has_sample_id_trailer() {
                return;
            }
            let Some(event) =
                item.meta
                    .events()
                    .event_of(item.raw.bytes, is_sample, item.meta.endian)
            else {
                return;
            };
            let reads = item.meta.events().format(event).is_some_and(|f| {
                f.sample_type
                    .contains(perfdata_core::attr::SampleType::READ)
            });
            if ty == RecordType::Sample && reads {
                self.add_read_sample(item);
                return;
            }
            let counts = self.counts(event);
            if ty == RecordType::Sample {
                counts.samples += 1;
            } else {
                counts.lost_samples += item
                    .view::<perfdata_core::record::LostSamplesView>()
                    .map_or(0, |v| v.lost());
            }
        }
    }

    /// The counts of event `event`, growing the list to it.
    fn counts(&mut self, event: usize) -> &mut EventCounts {
        if self.events.len() <= event {
            self.events.resize(event + 1, EventCounts::default());
        }
        &mut self.events[event]
    }

    /// perf's `deliver_sample_value` for each value of a sample's READ: the sample goes to
    /// the event of the value's id when the value changed since the last one seen.
    fn add_read_sample(&mut self, item: &RecordRef<'_>) {
        let Ok(record) = item.decode() else {
            return;
        };
        let perfdata_core::record::RecordBody::Sample(sample) = record.body else {
            return;
        };
        let values: Vec<(u64, u64)> = match sample.read {
            Some(perfdata_core::record::ReadData::Group { values, .. }) => values
                .iter()
                .map(|v| (v.id.unwrap_or(0), v.value))
                .collect(),
            Some(perfdata_core::record::ReadData::Single { value, id, .. }) => {
                vec![(id.unwrap_or(0), value)]
            }
            None => Vec::new(),
        };
        for (id, value) in values {
            let Some(event) = item.meta.events().event_of_id(id) else {
                continue;
            };
            if self.read_values.insert(id, value).unwrap_or(0) == value {
                continue;
            }
            self.counts(event).samples += 1;
        }
    }

    /// Open `path` as perf counts it (each compressed record, then the records inside
    /// it) and count every record. On an error, the counts so far come back with it.
    pub fn of(path: impl AsRef<std::path::Path>) -> Result<(Self, PerfReader, Result<()>)> {
        let mut reader =
            PerfReader::open_with(path, perfdata_core::ReadOptions::ContainersAndContents)?;
        let (stats, result) = Self::collect(&mut reader);
        Ok((stats, reader, result))
    }

    /// Count every record `reader` returns (perf counts compressed records and their
    /// contents: open it with `ReadOptions::ContainersAndContents`, or use
    /// [`Stats::of`]). On an error, the counts so far come back with it.
    pub fn collect(reader: &mut PerfReader) -> (Self, Result<()>) {
        let mut stats = Stats::default();
        let result = reader.for_each(|piece| {
            if let Piece::Record(item) = piece {
                stats.add(item);
            }
            Ok(false)
        });
        let meta = reader.meta();
        stats.events.resize(
            meta.attrs().len().max(stats.events.len()),
            EventCounts::default(),
        );
        for (i, ev) in stats.events.iter_mut().enumerate() {
            ev.name = perf_stats_name(meta, i);
        }
        (stats, result)
    }

    /// Records by type, the types seen.
    pub fn records(&self) -> BTreeMap<RecordType, u64> {
        let small = self.by_type.iter().enumerate().map(|(t, n)| (t as u32, *n));
        small
            .chain(self.other_types.iter().map(|(t, n)| (*t, *n)))
            .filter(|(_, n)| *n > 0)
            .map(|(t, n)| (RecordType::from_u32(t), n))
            .collect()
    }

    /// Counts keyed by perf's record names ("SAMPLE", "MMAP2", "ATTR", ...).
    pub fn by_name(&self) -> BTreeMap<String, u64> {
        self.records().iter().map(|(t, n)| (t.name(), *n)).collect()
    }

    /// `perfdata stats --json`: `{"records": {NAME: count}, "total", "events": [{name,
    /// samples, lost_samples}]}`, numbers exact ([`crate::json::write_pretty`] makes
    /// them safe).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "records": self.by_name(),
            "total": self.total,
            "events": self.events,
        })
    }
}

/// The name `perf report --stats` of perf 6.1 prints. In pipe mode perf computes (and
/// caches) each event's name from its attr as soon as the HEADER_ATTR record arrives,
/// so the EVENT_DESC and EVENT_UPDATE names that follow never show; in file mode it
/// prints the recorded name.
fn perf_stats_name(meta: &Metadata, idx: usize) -> String {
    match (meta.container, meta.attrs().get(idx)) {
        (ContainerKind::Pipe, Some(ev)) => attr_name(&ev.attr, meta),
        _ => event_name(meta, idx),
    }
}
