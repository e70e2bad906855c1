//! The owned tree holds the same records the streaming reader yields, decoded.

use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::{PerfData, ReadOptions};
use perfdata_tests::fixtures_dir;
use perfdata_view::stats::Stats;

#[test]
fn tree_holds_every_record_decoded() {
    for name in [
        "file-cpu-clock.data",
        "pipe-tracepoint.data",
        "file-compressed.data",
        "dir-threads.data",
    ] {
        let path = fixtures_dir().join(name);
        let (stats, _, result) = Stats::of(&path).unwrap();
        result.unwrap();
        let compressed = stats
            .records()
            .get(&RecordType::Compressed)
            .copied()
            .unwrap_or(0);

        // As stored: compressed records kept whole.
        let stored = PerfData::read(&path).unwrap();
        // Expanded: the records inside them instead.
        let expanded = PerfData::read_with(&path, ReadOptions::Contents).unwrap();
        assert_eq!(
            expanded.records.len() as u64,
            stats.total - compressed,
            "{name}"
        );
        let samples = |t: &PerfData| {
            t.records
                .iter()
                .filter(|e| matches!(e.record.body, RecordBody::Sample(_)))
                .count() as u64
        };
        assert_eq!(
            samples(&expanded),
            stats.records()[&RecordType::Sample],
            "{name}"
        );
        // The containers an expanded tree keeps aside: each as perf counts it, each
        // record that came out of one counted once.
        let aside = expanded.read_containers();
        let from_containers = expanded
            .records
            .iter()
            .filter(|e| e.origin != perfdata_core::raw::Origin::Top)
            .count();
        if compressed > 0 && !path.is_dir() {
            assert_eq!(aside.len() as u64, compressed, "{name}");
            let held: usize = aside.iter().map(|c| c.contents).sum();
            assert_eq!(held, from_containers, "{name}");
            assert!(from_containers > 0, "{name}");
        } else {
            assert!(aside.is_empty(), "{name}");
        }
        if compressed > 0 {
            assert!(stored.records.len() < expanded.records.len(), "{name}");
            assert!(stored.read_containers().is_empty(), "{name}");
        } else {
            assert_eq!(stored.records, expanded.records, "{name}");
        }
        assert!(stored
            .records
            .iter()
            .all(|e| !matches!(e.record.body, RecordBody::Raw(_))));
        assert_eq!(stored.meta.attrs().len(), expanded.meta.attrs().len());
        assert!(!stored.meta.features.is_empty(), "{name}");
    }
}

/// The default reader returns every record once: the records inside compressed records,
/// never the containers too, so a loop that copies every record cannot double any.
#[test]
fn the_default_reader_returns_each_record_once() {
    for name in ["file-compressed.data", "dir-threads-compressed.data"] {
        let path = fixtures_dir().join(name);
        let (stats, _, result) = Stats::of(&path).unwrap();
        result.unwrap();
        let mut reader = perfdata_core::PerfReader::open(&path).unwrap();
        let (mut samples, mut containers, mut all) = (0u64, 0u64, 0u64);
        while let Some(item) = reader.next_record().unwrap() {
            all += 1;
            match item.raw.record_type() {
                RecordType::Sample => samples += 1,
                RecordType::Compressed | RecordType::Compressed2 => containers += 1,
                _ => {}
            }
        }
        let compressed = stats.records()[&RecordType::Compressed];
        assert!(compressed > 0, "{name}");
        assert_eq!(containers, 0, "{name}");
        assert_eq!(samples, stats.records()[&RecordType::Sample], "{name}");
        assert_eq!(all, stats.total - compressed, "{name}");
    }
}
