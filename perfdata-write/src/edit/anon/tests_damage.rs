//! Anonymize on damaged recordings: each way the outside attack of issue #24 found
//! secrets copied into an output that exited 0 (kept as bytes not understood), rebuilt
//! from the recordings that carry secrets; none may be left, and what was left out is
//! named.

use std::io::Cursor;

use perfdata_core::{PerfReader, ReadOptions};

use super::tests::{anonymize_bytes, expanded, fixture, holds, names};
use super::*;
use crate::convert::testing as convert;
use crate::convert::{Compression, ConvertOptions};

// The fixtures' raw bytes, read where a test plants damage (little-endian files).
fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The records of a little-endian file's data section: offset, type and size.
fn records(b: &[u8]) -> Vec<(usize, u32, usize)> {
    let (off, size) = (le_u64(b, 40) as usize, le_u64(b, 48) as usize);
    let mut out = Vec::new();
    let mut at = off;
    while at < off + size {
        let size = le_u16(b, at + 6) as usize;
        out.push((at, le_u32(b, at), size));
        at += size;
    }
    out
}

fn anonymize(input: Vec<u8>) -> (Vec<u8>, AnonymizeCounts) {
    anonymize_bytes(input, Anonymize::new(names(), false)).unwrap()
}

#[test]
fn records_of_unknown_types_are_dropped() {
    let input = std::fs::read(fixture("anon-secret.data")).unwrap();
    let comms: Vec<usize> = records(&input)
        .into_iter()
        .filter(|r| r.1 == 3)
        .map(|r| r.0)
        .collect();
    assert_eq!(comms.len(), 4);
    // 0, past perf's last type, and simpleperf's.
    for ty in [0u32, 87, 32768] {
        let mut b = input.clone();
        for &at in &comms {
            b[at..at + 4].copy_from_slice(&ty.to_le_bytes());
        }
        assert!(holds(&b, "zqxsecretworker"));
        let (out, c) = anonymize(b.clone());
        assert!(!holds(&out, "zqx"), "type {ty}");
        let key = (
            format!("UNKNOWN_{ty}"),
            "a record type anonymize does not know".to_string(),
        );
        assert_eq!(c.dropped_records.get(&key), Some(&4), "{:?}", c.warnings());
        // Strict: the run fails, naming the record.
        let strict = Anonymize::new(names(), false).strict(true);
        let e = anonymize_bytes(b, strict).unwrap_err().to_string();
        assert!(e.contains(&format!("offset {}", comms[0])), "{e}");
        assert!(e.contains(&format!("UNKNOWN_{ty}")), "{e}");
    }
}

#[test]
fn samples_whose_id_matches_no_attr_are_dropped() {
    // cpu-clock (attr 0, no RAW) and sched_switch, told apart by IDENTIFIER: a
    // sched_switch sample with another id would be read with cpu-clock's layout, RAW and
    // all taken for bytes past it. One names `memfd:sealed-91` in its next_comm.
    let input = std::fs::read(fixture("file-sample-identifier.data")).unwrap();
    let name = "memfd:sealed";
    let samples: Vec<(usize, usize)> = records(&input)
        .into_iter()
        .filter(|r| r.1 == 9 && holds(&input[r.0..r.0 + r.2], name))
        .map(|r| (r.0, r.2))
        .collect();
    assert_eq!(samples.len(), 1);
    let mut b = input.clone();
    let at = samples[0].0 + 8; // IDENTIFIER, the first word
    b[at..at + 8].copy_from_slice(&0xdead_beefu64.to_le_bytes());
    let (out, c) = anonymize(b);
    assert!(!holds(&out, name));
    let key = ("SAMPLE".to_string(), "its id matches no attr".to_string());
    assert_eq!(c.dropped_records.get(&key), Some(&1), "{:?}", c.warnings());
    // With an id of the other event, the RAW data is bytes past cpu-clock's layout: the
    // sample is not what its type says.
    let mut b = input.clone();
    let cpu_clock = records(&input)
        .into_iter()
        .find(|r| r.1 == 9 && r.2 < 64)
        .map(|r| le_u64(&input, r.0 + 8))
        .unwrap();
    b[at..at + 8].copy_from_slice(&cpu_clock.to_le_bytes());
    let (out, c) = anonymize(b);
    assert!(!holds(&out, name));
    let key = ("SAMPLE".to_string(), "bytes past its layout".to_string());
    assert_eq!(c.dropped_records.get(&key), Some(&1), "{:?}", c.warnings());
}

#[test]
fn a_wrong_data_size_reads_no_feature_from_the_records() {
    // 8 bytes short: the feature index is read from the last record and the index,
    // and sections from inside the data (CPUDESC a piece of an MMAP2's file name).
    let input = std::fs::read(fixture("anon-secret.data")).unwrap();
    for delta in [-8i64, -56, 8, 16] {
        let mut b = input.clone();
        let size = le_u64(&b, 48).wrapping_add_signed(delta);
        b[48..56].copy_from_slice(&size.to_le_bytes());
        let Ok((out, c)) = anonymize_bytes(b, Anonymize::new(names(), false)) else {
            assert_ne!(delta, -8, "this one reads");
            continue; // refused: nothing written
        };
        let w = c.warnings();
        assert!(!holds(&out, "zqx"), "data size {delta:+}: {w:?}");
        let why = "the feature index does not add up";
        let dropped = &c.dropped_features;
        assert!(dropped.len() > 3, "data size {delta:+}: {w:?}");
        assert!(dropped.iter().all(|(_, d)| d == why), "{delta:+}: {w:?}");
    }
}

#[test]
fn a_changed_feature_bitmap_hands_no_section_to_another_feature() {
    let input = std::fs::read(fixture("anon-secret.data")).unwrap();
    // Bit 1 set: BUILD_ID's paths become TRACING_DATA, kept as bytes. Bit 3 cleared:
    // HOSTNAME's section becomes OSRELEASE, a string kept as it is.
    for (bit, set) in [(1usize, true), (3, false), (2, false)] {
        let mut b = input.clone();
        let byte = 72 + bit / 8;
        assert_eq!(b[byte] >> (bit % 8) & 1 == 1, !set);
        b[byte] ^= 1 << (bit % 8);
        let (out, c) = anonymize(b);
        assert!(!holds(&out, "zqx"), "bit {bit}: {:?}", c.warnings());
        let why = "the feature index does not add up";
        assert!(
            c.dropped_features.iter().all(|(_, w)| w == why) && c.dropped_features.len() > 15,
            "{:?}",
            c.warnings()
        );
    }
}

#[test]
fn unknown_records_inside_compressed_records_are_dropped() {
    // A compressed record a byte short turns what follows (a user stack) into records
    // of no known type inside the decompressed stream. Here: every sample of the dwarf
    // recording (its stack holds the environment) given such a type (a kernel one,
    // which compression takes), then compressed.
    let mut input = std::fs::read(fixture("anon/secret-dwarf.data")).unwrap();
    for (at, ty, _) in records(&input) {
        if ty == 9 {
            input[at..at + 4].copy_from_slice(&40u32.to_le_bytes());
        }
    }
    let reader = PerfReader::from_vec(input, ReadOptions::Contents).unwrap();
    let opts = ConvertOptions {
        compression: Compression::Compress {
            level: 1,
            format: crate::compress::CompressFormat::Compressed,
        },
        ..Default::default()
    };
    let target = opts.target_for(reader.meta().container);
    let (z, _) = convert::to_target(reader, target, Cursor::new(Vec::new()), &opts).unwrap();
    let z = z.into_inner();
    assert!(!holds(&z, "zqxenvsecretvalue") && holds(&expanded(&z), "zqxenvsecretvalue"));
    let (out, c) = anonymize(z);
    assert!(!holds(&expanded(&out), "zqx"), "{:?}", c.warnings());
    let key = (
        "UNKNOWN_40".to_string(),
        "a record type anonymize does not know".to_string(),
    );
    assert_eq!(c.dropped_records.get(&key), Some(&6), "{:?}", c.warnings());
}

#[test]
fn an_intel_pt_address_filter_is_zeroed() {
    use perfdata_core::record::AuxtraceInfo;
    let anon = Anonymize::new(names(), false);
    // 16 numbers, FILTER_STR_LEN 19, the filter in 3 words, cap_event_trace.
    let mut priv_: Vec<u64> = (1..=16).collect();
    priv_.push(19);
    let filter = b"filter main @ /zqx\0\0\0\0\0\0";
    priv_.extend(
        filter
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
    );
    priv_.push(1);
    let mut info = AuxtraceInfo {
        type_: 1,
        reserved: 7,
        priv_: priv_.clone(),
    };
    assert_eq!(anon.auxtrace_info(&mut info), Fate::Write);
    assert_eq!(info.priv_[..17], priv_[..17]);
    assert_eq!(info.priv_[17..20], [0, 0, 0]);
    assert_eq!((info.priv_[20], info.reserved), (1, 0));
    let mut other = AuxtraceInfo {
        type_: 99,
        reserved: 0,
        priv_,
    };
    assert!(matches!(anon.auxtrace_info(&mut other), Fate::Unvouched(_)));
}

#[test]
fn a_stream_feature_given_another_id_hands_it_no_name() {
    // The pipe's HOSTNAME record with its feature id one bit off: NRCPUS would take
    // "zqxs" for a count, COMPRESSED "/usr" for a ratio; BUILD_ID, TRACING_DATA, CMDLINE
    // and STAT do not parse it or leave bytes past their layout.
    let input = std::fs::read(fixture("anon/secret-pipe-z.data")).unwrap();
    let mut at = 16;
    let hostname = loop {
        let (ty, size) = (le_u32(&input, at), le_u16(&input, at + 6) as usize);
        if ty == 80 && le_u64(&input, at + 8) == 3 {
            break at;
        }
        at += size;
    };
    for id in [7u64, 2, 1, 11, 19, 27, 35] {
        let mut b = input.clone();
        b[hostname + 8..hostname + 16].copy_from_slice(&id.to_le_bytes());
        let (out, c) = anonymize(b);
        assert!(
            !holds(&expanded(&out), "zqx"),
            "id {id}: {:?}",
            c.warnings()
        );
    }
    // Out of the order perf sends them in: left out.
    let mut b = input.clone();
    b[hostname + 8..hostname + 16].copy_from_slice(&40u64.to_le_bytes());
    let (_, c) = anonymize(b);
    let key = (
        "FEATURE".to_string(),
        "a feature out of the order perf sends them in".to_string(),
    );
    assert!(
        c.dropped_records.get(&key).is_some_and(|&n| n > 10),
        "{:?}",
        c.warnings()
    );
}

#[test]
fn a_bpf_program_info_whose_bytes_moved_is_dropped() {
    use perfdata_core::feature::{Feature, FeatureId};
    let meta = crate::convert::testing::open(fixture("anon/secret-bpf.data"))
        .unwrap()
        .meta()
        .clone();
    let Some(Feature::BpfProgInfo(info)) = meta.feature(FeatureId::BpfProgInfo) else {
        panic!("BPF_PROG_INFO");
    };
    let endian = meta.endian;
    let mut p = info.programs[0].clone();
    assert!(super::bpf::program(&mut p.clone(), endian, &names()).is_some());
    // Five bytes gone before the name: "zqxbp" stands in the map_ids offset.
    p.info.drain(59..64);
    p.info.extend_from_slice(&[0; 5]);
    assert_eq!(&p.info[59..64], b"zqxbp");
    assert_eq!(super::bpf::program(&mut p, endian, &names()), None);
}

/// `input` anonymised with `--strict`: the error's text, or `None` when it went through.
fn strict_error(input: Vec<u8>) -> Option<String> {
    let strict = Anonymize::new(names(), false).strict(true);
    anonymize_bytes(input, strict).err().map(|e| e.to_string())
}

#[test]
fn strict_fails_on_an_input_cut_short() {
    // A file cut at 20,000 of its 22,256 data bytes: a SAMPLE cut in two, the features
    // after the data lost. The reader keeps the whole records and warns; strict fails.
    let mut cut = std::fs::read(fixture("file-callgraph-fp.data")).unwrap();
    cut.truncate(20_000);
    let whole = std::fs::read(fixture("file-callgraph-fp.data")).unwrap();
    assert!(strict_error(whole).is_none(), "the whole file goes through");
    let (out, _) = anonymize(cut.clone());
    let samples = |b: Vec<u8>| {
        let mut r = PerfReader::from_vec(b, ReadOptions::Contents).unwrap();
        let mut n = 0;
        while let Some(item) = r.next_record().unwrap() {
            n += usize::from(item.raw.record_type() == perfdata_core::record::RecordType::Sample);
        }
        n
    };
    let kept = samples(out);
    assert_eq!(
        kept,
        samples(cut.clone()),
        "without strict: the whole records"
    );
    assert!(kept > 100, "{kept}");
    let e = strict_error(cut).expect("strict fails");
    assert!(
        e.contains("offset 48 ") && e.contains("the 20 features"),
        "{e}"
    );
    assert!(
        e.contains("anonymize --strict: the input is not whole"),
        "{e}"
    );
    // A stream cut inside its last record: a pipe, and a compressed pipe, whose
    // decompressed stream ends in a record too.
    for name in ["pipe-cpu-clock.data", "anon/secret-pipe-z.data"] {
        let mut b = std::fs::read(fixture(name)).unwrap();
        assert!(strict_error(b.clone()).is_none(), "{name} whole");
        b.truncate(b.len() - 20);
        assert!(anonymize_bytes(b.clone(), Anonymize::new(names(), false)).is_ok());
        let e = strict_error(b).expect("strict fails");
        assert!(e.contains("the input ends inside a record"), "{name}: {e}");
    }
    // A compressed file whose last feature (PMU_CAPS) lost a byte.
    let mut b = std::fs::read(fixture("file-compressed.data")).unwrap();
    b.pop();
    let e = strict_error(b).expect("strict fails");
    assert!(
        e.contains("feature PMU_CAPS") && e.contains("the feature is lost"),
        "{e}"
    );
}

#[test]
fn strict_takes_a_note_that_loses_nothing() {
    // An attr whose size field says 120 in room for 128, as simpleperf writes: the
    // reader notes it and reads the attr whole.
    let mut b = std::fs::read(fixture("file-cpu-clock.data")).unwrap();
    let attrs = le_u64(&b, 24) as usize;
    assert_eq!(le_u32(&b, attrs + 4), 128);
    b[attrs + 4..attrs + 8].copy_from_slice(&120u32.to_le_bytes());
    let meta = PerfReader::from_vec(b.clone(), ReadOptions::Contents)
        .unwrap()
        .meta()
        .clone();
    assert_eq!(meta.warnings.len(), 1, "{:?}", meta.warnings);
    assert_eq!(strict_error(b), None);
}
