//! Edits made on the owned tree and written back, checked with perf 6.1: a renamed
//! comm, samples and an event removed, a feature changed. A build-id and path remap on
//! the tree is checked beside the streaming one, in perfdata-cli/tests/buildid_oracle.rs.

use std::path::Path;

use perfdata_core::feature::{Feature, FeatureId, PerfString, SampleTime};
use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::{PerfData, PerfReader, ReadOptions};
use perfdata_tests::{fixtures_dir, perf_run, perf_stats};
use perfdata_write::edit::Remap;
use perfdata_write::{Conversion, Sink, TreeSource};

/// perf's output, which must be clean (exit 0, nothing on stderr) and non-empty.
fn perf_ok(args: &[&str], input: &Path) -> String {
    let run = perf_run(args, input);
    assert!(run.clean(), "perf {args:?} -i {}: {run:?}", input.display());
    assert!(
        !run.stdout.trim().is_empty(),
        "perf {args:?} printed nothing"
    );
    run.stdout
}

fn write(tree: &PerfData, out: &Path) {
    Conversion::new(TreeSource::new(tree))
        .write(Sink::path(out).unwrap())
        .unwrap();
}

#[test]
fn remap_refuses_a_tree_with_compressed_records() {
    let mut tree = PerfData::read(fixtures_dir().join("file-compressed.data")).unwrap();
    let err = Remap::new(vec![(vec![0], vec![1])], Vec::new())
        .apply(&mut tree)
        .unwrap_err()
        .to_string();
    assert!(err.contains("read it with ReadOptions::Contents"), "{err}");
}

/// `perf script -F comm` lines, counted by comm.
fn comms(input: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for line in perf_ok(&["script", "-F", "comm"], input).lines() {
        *out.entry(line.trim().to_string()).or_insert(0) += 1;
    }
    out
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn a_renamed_comm_is_what_perf_shows() {
    let dir = tempfile::tempdir().unwrap();
    // Compressed too: the COMM records are inside compressed records, compressed again.
    for file in [
        "file-cpu-clock.data",
        "file-compressed.data",
        "pipe-cpu-clock.data",
    ] {
        let input = fixtures_dir().join(file);
        let mut tree = PerfData::read_with(&input, ReadOptions::Contents).unwrap();
        let mut renamed = 0;
        for e in &mut tree.records {
            if let RecordBody::Comm(c) = &mut e.record.body {
                if c.comm.as_str_lossy() == "perfdata-spin" {
                    c.comm = perfdata_core::record::PaddedString::new("renamed");
                    renamed += 1;
                }
            }
        }
        assert!(renamed > 0, "{file}");
        let out = dir.path().join(file);
        write(&tree, &out);
        let (before, after) = (comms(&input), comms(&out));
        let spin = before["perfdata-spin"];
        assert!(spin > 10, "{file}: {before:?}");
        assert_eq!(after.get("renamed"), Some(&spin), "{file}: {after:?}");
        assert_eq!(after.get("perfdata-spin"), None, "{file}");
        assert_eq!(
            after.values().sum::<usize>(),
            before.values().sum::<usize>()
        );
    }
}

/// The samples' span (as the reader finds them) and the SAMPLE_TIME feature of a file.
fn sample_times(path: &Path) -> (Option<(u64, u64)>, Option<SampleTime>) {
    let tree = PerfData::read_with(path, ReadOptions::Contents).unwrap();
    let stated = match tree.meta.feature(FeatureId::SampleTime) {
        Some(Feature::SampleTime(t)) => Some(*t),
        _ => None,
    };
    (tree.read_sample_span(), stated)
}

/// SAMPLE events `perf report --stats` counts, which must read the file cleanly.
fn perf_samples(path: &Path) -> u64 {
    let stats = perf_stats(path);
    assert!(stats.clean, "perf report --stats -i {}", path.display());
    stats.records["SAMPLE"]
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn removed_samples_move_sample_time() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("file-cpu-clock.data");
    let mut tree = PerfData::read(&input).unwrap();
    let samples = |t: &PerfData| {
        t.records
            .iter()
            .filter(|e| e.record.record_type() == RecordType::Sample)
            .count() as u64
    };
    let all = samples(&tree);
    // The first and last ten samples go.
    let at: Vec<usize> = (0..tree.records.len())
        .filter(|&i| tree.records[i].record.record_type() == RecordType::Sample)
        .collect();
    let gone: Vec<usize> = at[..10]
        .iter()
        .chain(&at[at.len() - 10..])
        .copied()
        .collect();
    let mut i = 0;
    tree.records.retain(|_| {
        i += 1;
        !gone.contains(&(i - 1))
    });
    assert_eq!(samples(&tree), all - 20);
    let out = dir.path().join("out.data");
    write(&tree, &out);
    assert_eq!(perf_samples(&input), all);
    assert_eq!(perf_samples(&out), all - 20);
    let (span, stated) = sample_times(&out);
    let (first, last) = span.unwrap();
    assert_eq!(stated, Some(SampleTime { first, last }));
    let (span_in, _) = sample_times(&input);
    assert!(span_in.unwrap().0 < first && last < span_in.unwrap().1);
    let header = perf_ok(&["report", "--header-only"], &out);
    let secs = |ns: u64| format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000);
    assert!(
        header.contains(&format!("# time of first sample : {}", secs(first))),
        "{header}"
    );
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn a_removed_event_takes_its_ids_and_id_index_entries() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("file-multi-event.data");
    let mut tree = PerfData::read(&input).unwrap();
    assert!(tree.meta.attrs().len() >= 2);
    let before = perf_ok(&["script", "-F", "event"], &input);
    // Its samples, and any record whose trailer names one of its ids (found by the
    // index of the events the records were written with).
    let events = tree.meta.events().clone();
    let gone = tree.meta.edit_attrs(|attrs| attrs.pop()).unwrap();
    let kept_name = tree.meta.attrs()[0].name.clone().unwrap();
    let gone_name = gone.name.clone().unwrap();
    let endian = tree.meta.endian;
    tree.records.retain(|e| {
        let bytes = e.record.encode(endian).unwrap();
        let raw = perfdata_core::raw::OwnedRecord {
            bytes,
            payload: Vec::new(),
            offset: 0,
            origin: perfdata_core::raw::Origin::Top,
            stream: 0,
            rest: 0,
        };
        let at = perfdata_core::raw::locate(&raw.as_raw(endian), &events, endian);
        at.id.is_none_or(|id| !gone.ids.contains(&id))
    });
    // EVENT_DESC describes the events that are left.
    let left = tree.meta.attrs().len();
    if let Some(Feature::EventDesc(desc)) = tree
        .meta
        .features
        .get_mut(&FeatureId::EventDesc)
        .map(|s| &mut s.feature)
    {
        desc.events.truncate(left);
    }
    let out = dir.path().join("out.data");
    write(&tree, &out);

    let mut r = PerfReader::open(&out).unwrap();
    let mut index_ids = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        if let RecordBody::IdIndex(ix) = item.decode().unwrap().body {
            index_ids.extend(ix.entries.iter().map(|e| e.id));
        }
    }
    let kept_ids: Vec<u64> = r
        .meta()
        .attrs()
        .iter()
        .flat_map(|a| a.ids.clone())
        .collect();
    assert_eq!(r.meta().attrs().len(), tree.meta.attrs().len());
    // Every id left, and only those, is indexed.
    index_ids.sort();
    assert_eq!(index_ids, kept_ids);
    assert!(gone.ids.iter().all(|id| !kept_ids.contains(id)));

    let after = perf_ok(&["script", "-F", "event"], &out);
    let count = |text: &str, name: &str| {
        text.lines()
            .filter(|l| l.trim() == format!("{name}:"))
            .count()
    };
    assert!(count(&before, &gone_name) > 0, "{before}");
    assert_eq!(count(&after, &gone_name), 0);
    assert_eq!(count(&after, &kept_name), count(&before, &kept_name));
    assert!(count(&after, &kept_name) > 0);
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn a_changed_feature_is_what_perf_shows() {
    let dir = tempfile::tempdir().unwrap();
    // A compressed file's compressed records are written back as they were.
    for file in [
        "file-cpu-clock.data",
        "pipe-cpu-clock.data",
        "file-compressed.data",
    ] {
        let input = fixtures_dir().join(file);
        let mut tree = PerfData::read_with(&input, ReadOptions::Contents).unwrap();
        let host = tree.meta.features.get_mut(&FeatureId::Hostname).unwrap();
        host.feature = Feature::Hostname(PerfString::new("renamed-host"));
        let out = dir.path().join(file);
        write(&tree, &out);
        let header = perf_ok(&["report", "--header-only"], &out);
        assert!(
            header.contains("# hostname : renamed-host"),
            "{file}: {header}"
        );
        // Everything else is as it was.
        let script = |p: &Path| perf_ok(&["script", "-F", "comm,tid,time,ip,period"], p);
        assert_eq!(script(&out), script(&input), "{file}");
        assert_eq!(containers(&out), containers(&input), "{file}");
    }
    assert!(!containers(&fixtures_dir().join("file-compressed.data")).is_empty());
}

/// The compressed records of a recording, as stored.
fn containers(path: &Path) -> Vec<Vec<u8>> {
    let mut r = PerfReader::open_with(path, ReadOptions::Containers).unwrap();
    let mut out = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.is_compressed() {
            out.push(item.raw.bytes.to_vec());
        }
    }
    out
}
