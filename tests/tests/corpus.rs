//! Every corpus file and fixture is read to its end, every record of a type perf defines
//! decodes into its typed model, and decode-then-encode gives back the exact bytes of
//! every record, feature section and attr. Feature sections also survive a trip through
//! big endian and serialise to JSON; a record of a perf-defined type with non-zero bytes
//! past its layout counts as not fitting it.

use std::collections::BTreeMap;
use std::path::Path;

use perfdata_core::attr::FileAttr;

use perfdata_core::feature::{FeatureContext, FeatureId, FeatureSection};
use perfdata_core::record::{HeaderFeature, RecordBody, RecordType};
use perfdata_core::{Endian, Metadata, PerfReader};
use perfdata_tests::{all_inputs, name, CORRUPT};

/// Records whose bytes do not fit their type's layout, by (file, type): each is explained
/// in the reading notes of docs/formats.md. Anything else left raw is a failure.
const KNOWN_MISFITS: &[(&str, &str)] = &[];

/// The warnings reading must give, by file: everything else reads without one.
const EXPECTED_WARNINGS: &[(&str, &str)] = &[
    // perf's own stderr text after the last record of the stream.
    (
        "mstange-sleep.compressed2.pipe.data",
        "at byte offset 31808 (0x7c40): 143 bytes after the last record are not a record (junk)",
    ),
    // simpleperf writes 128-byte attr entries whose size field says 120.
    (
        "jbeich-perf_with_arm_regs.data",
        "attr 0 says its size is 120 but attr_size gives 128",
    ),
];

/// Whether a type's number is one FORMAT-NOTES lists (kernel 1..=22, perf's 64..=86).
fn listed(ty: RecordType) -> bool {
    matches!(ty.as_u32(), 1..=22 | 64..=86)
}

#[derive(Default)]
struct Walk {
    records: u64,
    warnings: Vec<String>,
    by_type: BTreeMap<String, u64>,
    raw_listed: Vec<String>,
    mismatches: Vec<String>,
    features_checked: u64,
    error: Option<perfdata_core::Error>,
}

fn walk(path: &Path) -> Walk {
    let mut w = Walk::default();
    let mut reader = match PerfReader::open(path) {
        Ok(r) => r,
        Err(e) => {
            w.error = Some(e);
            return w;
        }
    };
    loop {
        let item = match reader.next_record() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                w.error = Some(e);
                break;
            }
        };
        let raw = item.raw;
        w.records += 1;
        *w.by_type.entry(raw.record_type().name()).or_default() += 1;
        let (record, err) = item.decode_or_raw();
        if listed(raw.record_type()) && record.extra.iter().any(|&b| b != 0) {
            w.raw_listed.push(format!(
                "{} at {}: {} bytes past its layout are not padding",
                raw.record_type(),
                raw.offset,
                record.extra.len()
            ));
        }
        if let (RecordBody::Raw(_), true) = (&record.body, listed(raw.record_type())) {
            w.raw_listed.push(format!(
                "{} at {}: {}",
                raw.record_type(),
                raw.offset,
                err.map(|e| e.to_string()).unwrap_or_default()
            ));
        }
        let mut expected = raw.bytes.to_vec();
        expected.extend_from_slice(raw.payload);
        match record.encode(item.meta.endian) {
            Ok(bytes) if bytes == expected => {}
            Ok(_) => w.mismatches.push(format!(
                "record {} at {} re-encodes differently",
                raw.record_type(),
                raw.offset
            )),
            Err(e) => w.mismatches.push(format!("record at {}: {e}", raw.offset)),
        }
        if raw.record_type() == RecordType::HeaderFeature {
            let hf: HeaderFeature =
                perfdata_core::decode(&raw.bytes[8..], item.meta.endian, (), raw.offset, "feature")
                    .expect("HEADER_FEATURE body decodes");
            if !hf.data.is_empty() {
                let id = FeatureId::from_bit(hf.feat_id as u32);
                check_feature(&mut w, item.meta, id, &hf.data, raw.offset + 16);
            }
        }
    }
    let meta = reader.meta();
    w.warnings = meta.warnings.iter().map(|w| w.to_string()).collect();
    if meta.header.is_some() {
        check_file_sections(&mut w, path, meta);
    }
    w
}

fn check_feature(w: &mut Walk, meta: &Metadata, id: FeatureId, bytes: &[u8], offset: u64) {
    w.features_checked += 1;
    let ctx = meta.feature_context();
    match FeatureSection::decode(id, bytes, &ctx, offset) {
        Ok(section) => {
            if section.encode(meta.endian).ok().as_deref() != Some(bytes) {
                w.mismatches
                    .push(format!("feature {id} re-encodes differently"));
            }
            let be = FeatureContext {
                endian: Endian::Big,
                ..ctx
            };
            let big = section.encode(Endian::Big).unwrap_or_default();
            match FeatureSection::decode(id, &big, &be, 0) {
                Ok(back) if back == section => {}
                Ok(_) => w
                    .mismatches
                    .push(format!("feature {id}: big-endian copy decodes differently")),
                Err(e) => w
                    .mismatches
                    .push(format!("feature {id}: big-endian copy: {e}")),
            }
            if let Err(e) = serde_json::to_string(&section) {
                w.mismatches.push(format!("feature {id}: JSON: {e}"));
            }
            // A known id decodes into its own model, an unknown one stays raw.
            let expected = (!matches!(id, FeatureId::Unknown(_))).then_some(id);
            if section.feature.id() != expected {
                w.mismatches.push(format!(
                    "feature {id} decoded as the model of {:?}",
                    section.feature.id()
                ));
            }
        }
        Err(e) => w.mismatches.push(format!("feature {id}: {e}")),
    }
}

/// File mode: every attr entry and every feature section, from the file's own bytes.
fn check_file_sections(w: &mut Walk, path: &Path, meta: &Metadata) {
    let file = if path.is_dir() {
        path.join("data")
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).expect("input is readable");
    let header = meta.header.as_ref().expect("file mode has a header");
    for i in 0..header.attrs.size / header.attr_size {
        let at = (header.attrs.offset + i * header.attr_size) as usize;
        let entry = &bytes[at..at + header.attr_size as usize];
        let attr_len = (header.attr_size - 16) as usize;
        let fa: FileAttr =
            perfdata_core::decode(entry, meta.endian, (attr_len,), at as u64, "attr")
                .expect("attr decodes");
        if perfdata_core::encode(&fa, meta.endian, ()).unwrap() != entry {
            w.mismatches
                .push(format!("attr {i} re-encodes differently"));
        }
    }
    for (id, sec) in &meta.feature_sections {
        let section = &bytes[sec.offset as usize..sec.end() as usize];
        check_feature(w, meta, *id, section, sec.offset);
    }
}

#[test]
fn every_input_reads_to_its_end_and_round_trips() {
    let inputs = all_inputs();
    let mut failures = Vec::new();
    let mut total_records = 0;
    for path in &inputs {
        let n = name(path);
        let w = walk(path);
        total_records += w.records;
        println!(
            "{n}: {} records, {} features checked, types {:?}",
            w.records, w.features_checked, w.by_type
        );
        if n == CORRUPT.0 {
            match &w.error {
                Some(e) if e.offset() == Some(CORRUPT.1) => {
                    println!("  stops as it must: {e}")
                }
                other => failures.push(format!(
                    "{n}: expected an error at {}, got {other:?}",
                    CORRUPT.1
                )),
            }
            continue;
        }
        if let Some(e) = &w.error {
            failures.push(format!("{n}: {e}"));
        }
        let expected: Vec<&str> = EXPECTED_WARNINGS
            .iter()
            .filter(|(f, _)| *f == n)
            .map(|(_, w)| *w)
            .collect();
        let matches = w.warnings.len() == expected.len()
            && w.warnings
                .iter()
                .zip(&expected)
                .all(|(got, want)| got.contains(want));
        if !matches {
            failures.push(format!(
                "{n}: warnings {:?}, expected {expected:?}",
                w.warnings
            ));
        }
        for raw in &w.raw_listed {
            let ty = raw.split_whitespace().next().unwrap_or("");
            if !KNOWN_MISFITS.contains(&(n.as_str(), ty)) {
                failures.push(format!("{n}: left raw: {raw}"));
            }
        }
        for m in &w.mismatches {
            failures.push(format!("{n}: {m}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The fixtures alone hold about 5,000 records, with the corpus about 61,000: far
    // fewer means inputs went unread.
    let floor = if perfdata_tests::corpus_dir().is_some() {
        50_000
    } else {
        4_000
    };
    assert!(
        total_records > floor,
        "suspiciously few records: {total_records}"
    );
}
