//! A walk over a large mapped file: its pages are mapped ahead and given back behind by
//! a helper thread (`perfdata-core/src/input.rs`), and what the process holds of the
//! mapping stays bounded whatever the file's size; the records are those of a walk
//! record by record.

use std::path::Path;

use perfdata_core::{PerfReader, Piece};
use perfdata_synth::{write_workload, SynthSpec, SynthWriter};

/// Resident KiB of the mapping of `path` in this process (from /proc/self/smaps), or
/// `None` where it is not mapped.
fn mapped_kib(path: &Path) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let name = path.to_str()?;
    let mut lines = smaps.lines();
    let mut total = None;
    while let Some(line) = lines.next() {
        if !line.ends_with(name) {
            continue;
        }
        for field in lines.by_ref() {
            if let Some(kb) = field.strip_prefix("Rss:") {
                let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().ok()?;
                *total.get_or_insert(0) += kb;
                break;
            }
        }
    }
    total
}

#[test]
fn a_large_file_is_walked_with_bounded_mapped_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.data");
    let spec = SynthSpec {
        size: Some(48 << 20),
        callchain: Some(8),
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build().unwrap();
    let file = std::fs::File::create(&path).unwrap();
    let writer = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
    let (out, samples) = write_workload(&workload, writer).unwrap();
    drop(out);
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 48 << 20, "{len}");

    // Record by record, for the reference.
    let mut reader = PerfReader::open(&path).unwrap();
    let mut expected = Vec::new();
    while let Some(item) = reader.next_record().unwrap() {
        expected.push((item.raw.offset, item.raw.record_type()));
    }
    drop(reader);

    // The fast walk, measuring the mapping's resident size every MiB.
    let mut reader = PerfReader::open(&path).unwrap();
    let (mut got, mut peak, mut measured, mut next_check) = (Vec::new(), 0, 0, 0);
    reader
        .for_each(|piece| {
            if let Piece::Record(item) = piece {
                got.push((item.raw.offset, item.raw.record_type()));
                if item.raw.offset >= next_check {
                    next_check = item.raw.offset + (1 << 20);
                    if let Some(kib) = mapped_kib(&path) {
                        peak = peak.max(kib);
                        measured += 1;
                    }
                }
            }
            Ok::<_, perfdata_core::Error>(false)
        })
        .unwrap();
    assert_eq!(got, expected);
    let sampled = expected
        .iter()
        .filter(|(_, t)| *t == perfdata_core::record::RecordType::Sample)
        .count();
    assert_eq!(sampled as u64, samples);
    // Measured all along the walk; at most 7 chunks of 4 MiB mapped at once (two
    // releases queued and one being done behind the walk, its chunk, and up to three
    // ahead): under a third of the file.
    assert!(measured > 40, "{measured} measurements");
    assert!(peak <= 28 << 10, "{peak} KiB of a {len}-byte file mapped");
    assert!(peak > 0);
}
