//! `PerfReader::for_each` (with its fast lane for the kernel's records) hands on exactly
//! what a loop over `next_record` does: the same records, bytes, payloads, warnings and
//! errors, on every fixture and corpus file, in each way of reading compressed records.

use std::path::Path;

use perfdata_core::{PerfReader, Piece, ReadOptions, RecordRef};
use perfdata_tests::{all_inputs, name};

/// One record as seen: where, what, and a hash of its bytes and payload.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    offset: u64,
    type_: u32,
    len: usize,
    payload: usize,
    rest: u64,
    stream: usize,
    origin: String,
    hash: u64,
    located: String,
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn seen(item: &RecordRef<'_>) -> Seen {
    let raw = &item.raw;
    Seen {
        offset: raw.offset,
        type_: raw.header.type_,
        len: raw.bytes.len(),
        payload: raw.payload.len(),
        rest: raw.rest,
        stream: raw.stream,
        origin: format!("{:?}", raw.origin),
        hash: fnv(raw.payload, fnv(raw.bytes, 0xcbf2_9ce4_8422_2325)),
        located: format!("{:?}", item.locate()),
    }
}

/// What a walk saw: the records, the streamed payload bytes, how it ended, the warnings.
#[derive(Debug, PartialEq, Eq)]
struct Walk {
    records: Vec<Seen>,
    streamed: u64,
    end: Result<(), String>,
    warnings: Vec<String>,
}

impl Walk {
    fn of(reader: &PerfReader, records: Vec<Seen>, streamed: u64, end: Result<(), String>) -> Self {
        let warnings = reader
            .meta()
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect();
        Walk {
            records,
            streamed,
            end,
            warnings,
        }
    }
}

fn by_next_record(path: &Path, opts: ReadOptions) -> Option<Walk> {
    let mut reader = PerfReader::open_with(path, opts).ok()?;
    let mut records = Vec::new();
    let mut streamed = 0;
    let end = loop {
        match reader.next_record() {
            Ok(Some(item)) => records.push(seen(&item)),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
        }
        while let Ok(Some(chunk)) = reader.payload_chunk() {
            streamed += chunk.len() as u64;
        }
    };
    Some(Walk::of(&reader, records, streamed, end))
}

fn by_for_each(path: &Path, opts: ReadOptions) -> Option<Walk> {
    let mut reader = PerfReader::open_with(path, opts).ok()?;
    let mut records = Vec::new();
    let mut streamed = 0;
    let end = reader
        .for_each(|piece| {
            match piece {
                Piece::Record(item) => records.push(seen(item)),
                Piece::Payload(chunk) => streamed += chunk.len() as u64,
            }
            Ok::<_, perfdata_core::Error>(true)
        })
        .map_err(|e| e.to_string());
    Some(Walk::of(&reader, records, streamed, end))
}

#[test]
fn for_each_gives_what_next_record_gives_on_every_input() {
    let mut compared = 0;
    let mut records = 0;
    for path in all_inputs() {
        for opts in [
            ReadOptions::Containers,
            ReadOptions::Contents,
            ReadOptions::ContainersAndContents,
        ] {
            let (Some(a), Some(b)) = (by_next_record(&path, opts), by_for_each(&path, opts)) else {
                continue;
            };
            assert_eq!(a.end, b.end, "{} {opts:?}", name(&path));
            assert_eq!(a.warnings, b.warnings, "{} {opts:?}", name(&path));
            assert_eq!(a.streamed, b.streamed, "{} {opts:?}", name(&path));
            assert_eq!(a.records.len(), b.records.len(), "{} {opts:?}", name(&path));
            for (x, y) in a.records.iter().zip(&b.records) {
                assert_eq!(x, y, "{} {opts:?}", name(&path));
            }
            compared += 1;
            records += a.records.len();
        }
    }
    eprintln!("{compared} walks compared, {records} records");
    // The fixtures alone: 28 inputs read three ways, 20,036 records.
    assert!(compared >= 80, "{compared} walks compared");
    assert!(records > 20_000, "{records} records compared");
}
