//! What PipeWriter refuses is what perf 6.1 cannot read: the same records in the same
//! order, written byte for byte without the writer, make perf fail; the writer stops at
//! the record that would break the stream. perf's own compressed pipe recording is the
//! source, and goes through the writer unchanged.

use std::path::Path;

use perfdata_core::feature::FeatureId;
use perfdata_core::header::PIPE_HEADER_SIZE;
use perfdata_core::raw::{frame, Frame};
use perfdata_core::record::RecordType;
use perfdata_core::Endian;
use perfdata_core::{u32_at, u64_at};
use perfdata_tests::{fixtures_dir, perf_run};
use perfdata_write::PipeWriter;

const LE: Endian = Endian::Little;

/// A record as the stream has it: its type, its bytes, its payload.
struct Rec {
    ty: RecordType,
    bytes: Vec<u8>,
    payload: Vec<u8>,
}

/// The input's 16-byte header and its records, framed as perf frames them.
fn records(input: &Path) -> (Vec<u8>, Vec<Rec>) {
    let data = std::fs::read(input).unwrap();
    let mut pos = PIPE_HEADER_SIZE as usize;
    let mut recs = Vec::new();
    while pos < data.len() {
        let Frame::Complete { size, payload } = frame(&data[pos..], LE) else {
            panic!("{} does not frame at {pos}", input.display());
        };
        recs.push(Rec {
            ty: RecordType::from_u32(u32_at(&data[pos..], 0, LE).unwrap()),
            bytes: data[pos..pos + size].to_vec(),
            payload: data[pos + size..pos + size + payload].to_vec(),
        });
        pos += size + payload;
    }
    (data[..PIPE_HEADER_SIZE as usize].to_vec(), recs)
}

/// The records through a PipeWriter: the stream, or the writer's refusal.
fn through_writer(recs: &[&Rec]) -> Result<Vec<u8>, String> {
    let mut w = PipeWriter::new(Vec::new(), LE).unwrap();
    for r in recs {
        w.write_record(&r.bytes, &r.payload)
            .map_err(|e| e.to_string())?;
    }
    Ok(w.finish().unwrap())
}

/// The writer refuses `recs`, saying `writer_says`; written byte for byte after the
/// header (as a careless writer would), perf fails on them, saying `perf_says`.
fn refused_and_unreadable(header: &[u8], recs: &[&Rec], writer_says: &str, perf_says: &str) {
    let err = through_writer(recs).unwrap_err();
    assert!(err.contains(writer_says), "{err}");
    let mut bytes = header.to_vec();
    for r in recs {
        bytes.extend_from_slice(&r.bytes);
        bytes.extend_from_slice(&r.payload);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("refused.data");
    std::fs::write(&out, bytes).unwrap();
    let run = perf_run(&["script"], &out);
    assert_ne!(run.status, Some(0), "perf read it: {run:?}");
    assert!(run.stderr.contains(perf_says), "{run:?}");
}

fn is_compressed_feature(r: &Rec) -> bool {
    r.ty == RecordType::HeaderFeature
        && u64_at(&r.bytes, 8, LE) == Some(u64::from(FeatureId::Compressed.bit()))
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn perf_fails_where_the_pipe_writer_refuses() {
    let input = fixtures_dir().join("pipe-compressed.data");
    let (header, recs) = records(&input);
    // perf's own stream goes through unchanged, and perf reads it.
    let all: Vec<&Rec> = recs.iter().collect();
    assert_eq!(
        through_writer(&all).unwrap(),
        std::fs::read(&input).unwrap()
    );
    let run = perf_run(&["script"], &input);
    assert!(run.clean() && run.stdout.lines().count() > 100, "{run:?}");

    // Without its COMPRESSED feature, the compressed records cannot be read.
    assert_eq!(recs.iter().filter(|r| is_compressed_feature(r)).count(), 1);
    let no_feature: Vec<&Rec> = recs.iter().filter(|r| !is_compressed_feature(r)).collect();
    refused_and_unreadable(
        &header,
        &no_feature,
        "a COMPRESSED record before the COMPRESSED feature",
        "Couldn't decompress data",
    );

    // The ATTR record after the first records that name an event: perf cannot tell
    // their event. perf's stream has ID_INDEX first after the features.
    let (attrs, rest): (Vec<&Rec>, Vec<&Rec>) =
        recs.iter().partition(|r| r.ty == RecordType::HeaderAttr);
    assert_eq!(attrs.len(), 1);
    let first_data = rest
        .iter()
        .position(|r| r.ty == RecordType::IdIndex)
        .unwrap();
    let mut late_attr = rest.clone();
    late_attr.insert(first_data + 1, attrs[0]);
    refused_and_unreadable(
        &header,
        &late_attr,
        "a ID_INDEX record before any ATTR record",
        "failed to process type: 69",
    );
}
