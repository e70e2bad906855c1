//! Rewriting without changes: every file perf laid out its own way comes back byte for
//! byte; the others come back record for record. Byte-order round trips are identical.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use perfdata_core::attr::PerfEventAttr;
use perfdata_core::feature::FeatureId;
use perfdata_core::record::RecordType;
use perfdata_core::{Endian, PerfReader, ReadOptions};
use perfdata_tests::{all_inputs, corpus_files, fixture_files, name, CORRUPT};
use perfdata_write::compress::CompressFormat;
use perfdata_write::convert::ConvertOptions;
use perfdata_write::{Conversion, Sink};

/// Inputs whose layout is not perf's canonical one, and why. Their rewrite is compared
/// record for record instead of byte for byte.
const NOT_CANONICAL: &[(&str, &str)] = &[
    (
        "KDAB-perf.data.true.v1",
        "version-1 magic PERFFILE, rewritten as PERFILE2",
    ),
    (
        "google-perf.data.branch_stack_hw_index",
        "perf inject put the data at offset 4096",
    ),
    (
        "google-perf.data.weight_struct",
        "quipper: event_types section and 4 bytes after the last feature",
    ),
    (
        "jbeich-etm-perf_etm.data",
        "simpleperf: feature payloads not in bit order",
    ),
    (
        "jbeich-lbr-perf_lbr.data",
        "simpleperf: feature payloads not in bit order",
    ),
    (
        "jbeich-perf_with_add_counter.data",
        "simpleperf: feature payloads not in bit order",
    ),
    (
        "jbeich-perf_with_tracepoint_event.data",
        "simpleperf: feature payloads not in bit order",
    ),
    (
        "mstange-sleep.compressed2.pipe.data",
        "perf's stderr text after the last record is junk, not data",
    ),
];

/// Inputs that cannot change byte order, and why.
const NO_BYTE_SWAP: &[(&str, &str)] = &[
    (
        "jbeich-etm-perf_etm.data",
        "simpleperf feature bits 128+ have no known layout",
    ),
    (
        "jbeich-lbr-perf_lbr.data",
        "simpleperf feature bits 128+ have no known layout",
    ),
    (
        "jbeich-perf_with_add_counter.data",
        "simpleperf feature bits 128+ have no known layout",
    ),
    (
        "jbeich-perf_with_arm_regs.data",
        "simpleperf feature bits 128+ have no known layout",
    ),
    (
        "jbeich-perf_with_tracepoint_event.data",
        "simpleperf feature bits 128+ have no known layout",
    ),
];

fn listed(list: &[(&str, &str)], n: &str) -> bool {
    list.iter().any(|(f, _)| *f == n)
}

/// Convert `input` (a path, or bytes in memory) to bytes.
fn convert_bytes(input: Input, opts: &ConvertOptions) -> Result<Vec<u8>, String> {
    let source = match input {
        Input::Path(p) => perfdata_write::Input::open(p).map_err(|e| e.to_string())?,
        Input::Bytes(b) => {
            let ro = ReadOptions::Contents;
            perfdata_write::Input::from_reader(
                PerfReader::from_vec(b, ro).map_err(|e| e.to_string())?,
            )
        }
    };
    let mut out = Cursor::new(Vec::new());
    Conversion::new(source)
        .options(*opts)
        .write(Sink::seekable(&mut out, None))
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

enum Input<'a> {
    Path(&'a Path),
    Bytes(Vec<u8>),
}

/// Encoded feature sections by id.
type Sections = Vec<(FeatureId, Vec<u8>)>;

/// What an unchanged rewrite must keep, whatever the layout: every record as bytes
/// (header + payload), every event's attr (all its fields) and ids, and the features that
/// are not derived from the layout.
#[derive(Debug, PartialEq)]
struct Contents {
    records: Vec<Vec<u8>>,
    events: Vec<(PerfEventAttr, Vec<u64>)>,
    features: Sections,
}

fn contents(bytes: Vec<u8>) -> Contents {
    let ro = ReadOptions::Containers;
    let mut reader = PerfReader::from_vec(bytes, ro).expect("opens");
    let mut records = Vec::new();
    while let Some(item) = reader.next_record().expect("reads") {
        let mut r = item.raw.bytes.to_vec();
        r.extend_from_slice(item.raw.payload);
        records.push(r);
    }
    let meta = reader.meta();
    let events = meta
        .attrs()
        .iter()
        .map(|e| (e.attr.clone(), e.ids.clone()))
        .collect();
    let mut features: Sections = meta
        .features
        .values()
        .filter(|s| s.id != FeatureId::AuxTrace)
        .map(|s| (s.id, s.encode(meta.endian).unwrap()))
        .collect();
    features.sort_by_key(|(id, _)| id.bit());
    Contents {
        records,
        events,
        features,
    }
}

/// The compressed record type an input uses, if any.
fn compression_format(path: &Path) -> Option<CompressFormat> {
    let ro = ReadOptions::Containers;
    let mut reader = PerfReader::open_with(path, ro).expect("opens");
    while let Some(item) = reader.next_record().expect("reads") {
        match item.raw.record_type() {
            RecordType::Compressed => return Some(CompressFormat::Compressed),
            RecordType::Compressed2 => return Some(CompressFormat::Compressed2),
            _ => {}
        }
    }
    None
}

fn inputs() -> Vec<PathBuf> {
    all_inputs()
        .into_iter()
        .filter(|p| name(p) != CORRUPT.0 && !p.is_dir())
        .collect()
}

#[test]
fn identity_rewrite_is_byte_identical_or_record_identical() {
    let mut failures = Vec::new();
    let (mut identical, mut record_equal) = (Vec::new(), Vec::new());
    for path in inputs() {
        let n = name(&path);
        let original = std::fs::read(&path).unwrap();
        let out = match convert_bytes(Input::Path(&path), &ConvertOptions::default()) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{n}: {e}"));
                continue;
            }
        };
        if listed(NOT_CANONICAL, &n) {
            assert_ne!(
                out, original,
                "{n} is listed as not canonical but came back identical"
            );
            let (a, b) = (contents(original), contents(out));
            if a.records != b.records {
                failures.push(format!(
                    "{n}: records differ ({} vs {})",
                    a.records.len(),
                    b.records.len()
                ));
            }
            if a.events.is_empty() || a.events != b.events {
                failures.push(format!(
                    "{n}: attrs or ids differ: {:?} vs {:?}",
                    a.events, b.events
                ));
            }
            if a.features != b.features {
                failures.push(format!("{n}: features differ"));
            }
            record_equal.push(n);
        } else if out != original {
            let at = out.iter().zip(&original).position(|(a, b)| a != b);
            failures.push(format!(
                "{n}: rewrite differs (first at byte {at:?}, {} vs {} bytes)",
                out.len(),
                original.len()
            ));
        } else {
            identical.push(n);
        }
    }
    println!("byte-identical: {identical:?}");
    println!("record-identical (not canonical): {record_equal:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn little_big_little_is_byte_identical() {
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for path in inputs() {
        let n = name(&path);
        let big = ConvertOptions {
            endian: Some(Endian::Big),
            ..Default::default()
        };
        let little = ConvertOptions {
            endian: Some(Endian::Little),
            ..Default::default()
        };
        let be = convert_bytes(Input::Path(&path), &big);
        if listed(NO_BYTE_SWAP, &n) {
            assert!(be.is_err(), "{n} is listed as not swappable but converted");
            continue;
        }
        let be = match be {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{n}: to big endian: {e}"));
                continue;
            }
        };
        assert_eq!(&be[..8], b"2ELIFREP", "{n}: big-endian magic");
        let le = match convert_bytes(Input::Bytes(be), &little) {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{n}: back to little endian: {e}"));
                continue;
            }
        };
        // A byte-order change re-compresses compressed records, so the reference is the
        // same re-compression without the detour through big endian.
        let reference = ConvertOptions {
            keep_format: compression_format(&path),
            ..little
        };
        let same = convert_bytes(Input::Path(&path), &reference).expect("identity");
        if le != same {
            let at = le.iter().zip(&same).position(|(a, b)| a != b);
            failures.push(format!("{n}: LE->BE->LE differs at byte {at:?}"));
        }
        checked.push(n);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every input but those listed went through big endian and back.
    let expected: Vec<String> = inputs()
        .iter()
        .map(|p| name(p))
        .filter(|n| !listed(NO_BYTE_SWAP, n))
        .collect();
    assert_eq!(checked, expected);
    let fixtures = fixture_files().iter().filter(|p| p.is_file()).count();
    assert_eq!(checked.len(), corpus_checked() + fixtures);
}

/// How many corpus inputs the byte-order round trip covers: the 40 files of the corpus
/// but the corrupt one and the five simpleperf files of `NO_BYTE_SWAP`; none when
/// PERFDATA_CORPUS is unset (`cfg(no_corpus)`). With it set, a corpus that went missing
/// fails here instead of shrinking the test to the fixtures.
fn corpus_checked() -> usize {
    if cfg!(no_corpus) {
        return 0;
    }
    assert!(
        NO_BYTE_SWAP
            .iter()
            .all(|(f, _)| corpus_files().iter().any(|p| name(p) == *f)),
        "every input listed in NO_BYTE_SWAP is in the corpus"
    );
    40 - 1 - NO_BYTE_SWAP.len()
}
