//! The file writer's obvious API gives a correct file or a clear error: a copy loop over
//! the reader comes back byte for byte, derived features are the writer's, and what
//! would make an invalid file is refused.

use std::io::Cursor;
use std::path::PathBuf;

use perfdata_core::feature::{Feature, FeatureId, FeatureSection, SampleTime};
use perfdata_core::record::RecordType;
use perfdata_core::{Metadata, PerfReader, ReadOptions};

use super::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

type Out = Cursor<Vec<u8>>;

/// Copy every record `keep` accepts (by its index) through the obvious API: a writer
/// made from the metadata, `write_record`, `finish` with the input's features.
fn copy(
    name: &str,
    opts: ReadOptions,
    keep: impl Fn(usize) -> bool,
    features: impl Fn(&Metadata) -> Vec<FeatureSection>,
) -> Result<Vec<u8>> {
    let mut reader = PerfReader::open_with(fixture(name), opts)?;
    let mut w = FileWriter::for_meta(Cursor::new(Vec::new()), reader.meta())?;
    let mut n = 0;
    while let Some(item) = reader.next_record()? {
        if keep(n) {
            w.write_record(item.raw.bytes, item.raw.payload)?;
        }
        n += 1;
    }
    let out: Out = w.finish(features(reader.meta()))?;
    Ok(out.into_inner())
}

fn all_features(meta: &Metadata) -> Vec<FeatureSection> {
    meta.features.values().cloned().collect()
}

/// The input's features but one.
fn without(id: FeatureId) -> impl Fn(&Metadata) -> Vec<FeatureSection> {
    move |meta| {
        let mut f = all_features(meta);
        f.retain(|s| s.id != id);
        f
    }
}

/// The first and last sample time, and the SAMPLE_TIME feature, of a written file, as
/// the reader sees them.
fn times(bytes: Vec<u8>) -> (Option<(u64, u64)>, Option<SampleTime>) {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).unwrap();
    let mut span: Option<(u64, u64)> = None;
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() == RecordType::Sample {
            let t = item.locate().time.unwrap();
            span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
    }
    let stated = match r.meta().feature(FeatureId::SampleTime) {
        Some(Feature::SampleTime(t)) => Some(*t),
        _ => None,
    };
    (span, stated)
}

/// Every record (bytes and payload), every event, every feature, of a file.
type Contents = (Vec<Vec<u8>>, Vec<AttrEntry>, Vec<(FeatureId, Vec<u8>)>);

fn contents(bytes: Vec<u8>) -> Contents {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Containers).unwrap();
    let mut records = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        records.push([item.raw.bytes, item.raw.payload].concat());
    }
    let meta = r.meta();
    let features = meta
        .features
        .values()
        .map(|s| (s.id, s.encode(meta.endian).unwrap()))
        .collect();
    let events = AttrEntry::all(meta);
    (records, events, features)
}

/// `a` and `b` hold the same records, attrs and features (but `skip`).
fn same_contents(a: Vec<u8>, b: Vec<u8>, skip: Option<FeatureId>) {
    let (mut a, mut b) = (contents(a), contents(b));
    a.2.retain(|(id, _)| Some(*id) != skip);
    b.2.retain(|(id, _)| Some(*id) != skip);
    assert!(
        a.0.len() > 2 && a.0 == b.0,
        "records: {} vs {}",
        a.0.len(),
        b.0.len()
    );
    assert!(!a.1.is_empty());
    for (x, y) in a.1.iter().zip(&b.1) {
        assert_eq!((&x.attr, &x.ids), (&y.attr, &y.ids), "attrs");
    }
    assert!(a.2.len() > 5 && a.2 == b.2, "features");
}

#[test]
fn a_copy_loop_gives_the_recording_back() {
    // perf's own layout (zero index entries it reserved) is the convert pipeline's to
    // keep; the copy has every record, attr and feature of its input.
    let original = std::fs::read(fixture("file-cpu-clock.data")).unwrap();
    let copied = copy(
        "file-cpu-clock.data",
        ReadOptions::default(),
        |_| true,
        all_features,
    )
    .unwrap();
    same_contents(original, copied, None);
}

#[test]
fn sample_time_is_the_writers() {
    // The input's SAMPLE_TIME is given, but the first samples are left out: the file
    // says the span of the samples it holds.
    let bytes = copy(
        "file-cpu-clock.data",
        ReadOptions::default(),
        |n| n > 40,
        all_features,
    )
    .unwrap();
    let (span, stated) = times(bytes);
    let (first, last) = span.expect("samples kept");
    assert_eq!(stated, Some(SampleTime { first, last }));
    let (whole, _) = times(std::fs::read(fixture("file-cpu-clock.data")).unwrap());
    assert!(
        whole.unwrap().0 < first,
        "samples were left out at the start"
    );
}

#[test]
fn sample_time_counts_the_samples_inside_compressed_records() {
    let original = std::fs::read(fixture("file-compressed.data")).unwrap();
    let bytes = copy(
        "file-compressed.data",
        ReadOptions::Containers,
        |_| true,
        without(FeatureId::SampleTime),
    )
    .unwrap();
    let (span, stated) = times(bytes.clone());
    let (first, last) = span.expect("samples");
    assert_eq!(stated, Some(SampleTime { first, last }));
    // perf 6.1's -z file says 0 and 0; the copy says the samples' span.
    same_contents(original, bytes, Some(FeatureId::SampleTime));
}

#[test]
fn compressed_records_need_the_compressed_feature() {
    let err = copy(
        "file-compressed.data",
        ReadOptions::Containers,
        |_| true,
        without(FeatureId::Compressed),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("COMPRESSED records written without the COMPRESSED feature"),
        "{err}"
    );
}

#[test]
fn pipe_only_records_are_refused_in_a_file() {
    // A pipe stream's HEADER_ATTR comes first: a copy of it into a file stops there.
    let err = copy(
        "pipe-cpu-clock.data",
        ReadOptions::default(),
        |_| true,
        all_features,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("a ATTR record in a file's data section: it is pipe-only"),
        "{err}"
    );
    for ty in [
        RecordType::HeaderAttr,
        RecordType::HeaderEventType,
        RecordType::HeaderTracingData,
        RecordType::HeaderFeature,
    ] {
        let mut w = FileWriter::new(Cursor::new(Vec::new()), Endian::Little, &[], &[]).unwrap();
        let mut record = ty.as_u32().to_le_bytes().to_vec();
        record.extend_from_slice(&[0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let err = w.write_record(&record, &[]).unwrap_err().to_string();
        assert!(err.contains("pipe-only"), "{ty}: {err}");
        // A file's own data records are copied as they were by conversions.
        let mut w = FileWriter::new(Cursor::new(Vec::new()), Endian::Little, &[], &[])
            .unwrap()
            .copying_file_data();
        w.write_record(&record, &[]).unwrap();
    }
}

#[test]
fn a_record_must_be_as_long_as_its_size_says() {
    let mut w = FileWriter::new(Cursor::new(Vec::new()), Endian::Little, &[], &[]).unwrap();
    // FINISHED_ROUND (68) is 8 bytes: given 16, with its size field saying 8.
    let mut record = vec![68, 0, 0, 0, 0, 0, 8, 0];
    record.extend_from_slice(&[0; 8]);
    let err = w.write_record(&record, &[]).unwrap_err().to_string();
    assert!(
        err.contains("a record of 16 bytes whose header says 8"),
        "{err}"
    );
    w.write_record(&record[..8], &[]).unwrap();
    assert_eq!(w.data_size(), 8);
}

/// An AUXTRACE record (48 bytes) saying `len` bytes of trace follow it.
fn auxtrace(len: u64) -> Vec<u8> {
    let mut r = vec![0u8; 48];
    r[..4].copy_from_slice(&71u32.to_le_bytes());
    r[6..8].copy_from_slice(&48u16.to_le_bytes());
    r[8..16].copy_from_slice(&len.to_le_bytes());
    r
}

#[test]
fn a_payload_may_follow_in_pieces_but_must_all_come() {
    let round = [68, 0, 0, 0, 0, 0, 8, 0];
    let new = || FileWriter::new(Cursor::new(Vec::new()), Endian::Little, &[], &[]).unwrap();
    // The record with its first 10 payload bytes; the next record, the features and
    // more payload than it says are refused until the other 90 have come.
    let mut w = new();
    w.write_record(&auxtrace(100), &[1; 10]).unwrap();
    let err = w.write_record(&round, &[]).unwrap_err().to_string();
    assert!(
        err.contains("a record written while 90 payload bytes of the AUXTRACE record"),
        "{err}"
    );
    let err = w.write_payload(&[2; 91]).unwrap_err().to_string();
    assert!(
        err.contains("91 payload bytes written where 90 were still to come"),
        "{err}"
    );
    w.write_payload(&[2; 40]).unwrap();
    w.write_payload(&[3; 50]).unwrap();
    w.write_record(&round, &[]).unwrap();
    let out: Out = w.finish(Vec::new()).unwrap();
    // The reader frames the AUXTRACE with its 100 bytes, then the FINISHED_ROUND.
    let mut r = PerfReader::from_vec(out.into_inner(), ReadOptions::Contents).unwrap();
    let first = r.next_record().unwrap().unwrap();
    assert_eq!(first.raw.record_type(), RecordType::Auxtrace);
    let mut payload = vec![1; 10];
    payload.extend_from_slice(&[2; 40]);
    payload.extend_from_slice(&[3; 50]);
    assert_eq!(first.raw.payload, &payload[..]);
    let second = r.next_record().unwrap().unwrap();
    assert_eq!(second.raw.record_type(), RecordType::FinishedRound);
    // Finishing while payload is owed is refused; so is payload no record asked for.
    let mut w = new();
    w.write_record(&auxtrace(100), &[]).unwrap();
    let err = w.finish(Vec::new()).unwrap_err().to_string();
    assert!(
        err.contains("the features written while 100 payload bytes"),
        "{err}"
    );
    let mut w = new();
    let err = w.write_payload(&[0; 4]).unwrap_err().to_string();
    assert!(
        err.contains("4 payload bytes written where 0 were still to come"),
        "{err}"
    );
}

#[test]
fn features_are_given_once() {
    let w = FileWriter::new(Cursor::new(Vec::new()), Endian::Little, &[], &[]).unwrap();
    let host = || {
        let name = perfdata_core::feature::PerfString::new("h");
        FeatureSection::new(FeatureId::Hostname, Feature::Hostname(name))
    };
    let err = w.finish(vec![host(), host()]).unwrap_err().to_string();
    assert!(err.contains("feature HOSTNAME given twice"), "{err}");
}

#[test]
fn attr_entries_come_from_the_metadata() {
    let reader = PerfReader::open(fixture("file-multi-event.data")).unwrap();
    let meta = reader.meta();
    let entries = AttrEntry::all(meta);
    assert_eq!(entries.len(), meta.attrs().len());
    assert!(entries.len() >= 2);
    for (e, ev) in entries.iter().zip(meta.attrs()) {
        assert_eq!(e.attr, ev.attr);
        assert_eq!(e.ids, ev.ids);
        assert!(!e.ids.is_empty());
    }
    let owned = AttrEntry::from(meta.attrs()[1].clone());
    assert_eq!(owned.ids, meta.attrs()[1].ids);
}
