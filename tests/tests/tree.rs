//! The owned tree holds the same records the streaming reader yields, decoded.

use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::stats::Stats;
use perfdata_core::{PerfData, PerfReader, ReadOptions};
use perfdata_tests::fixtures_dir;

#[test]
fn tree_holds_every_record_decoded() {
    for name in [
        "file-cpu-clock.data",
        "pipe-tracepoint.data",
        "file-compressed.data",
        "dir-threads.data",
    ] {
        let path = fixtures_dir().join(name);
        let (stats, result) = Stats::collect(&mut PerfReader::open(&path).unwrap());
        result.unwrap();
        let compressed = stats
            .records
            .get(&RecordType::Compressed)
            .copied()
            .unwrap_or(0);

        // As stored: compressed records kept whole.
        let stored = PerfData::read(&path).unwrap();
        // Expanded: the records inside them instead.
        let expanded = PerfData::read_with(
            &path,
            ReadOptions {
                decompress: true,
                keep_containers: false,
            },
        )
        .unwrap();
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
            stats.records[&RecordType::Sample],
            "{name}"
        );
        if compressed > 0 {
            assert!(stored.records.len() < expanded.records.len(), "{name}");
        } else {
            assert_eq!(stored.records, expanded.records, "{name}");
        }
        assert!(stored
            .records
            .iter()
            .all(|e| !matches!(e.record.body, RecordBody::Raw(_))));
        assert_eq!(stored.meta.attrs.len(), expanded.meta.attrs.len());
        assert!(!stored.meta.features.is_empty(), "{name}");
    }
}
