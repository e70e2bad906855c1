//! What every writing target asserts of its output.

use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};

#[allow(dead_code)]
/// The SAMPLE records of `bytes` when the reader reads it to the end without an error.
pub fn samples(bytes: Vec<u8>) -> Option<u64> {
    let mut reader = PerfReader::from_vec(bytes, ReadOptions::default()).ok()?;
    let mut n = 0;
    loop {
        match reader.next_record() {
            Ok(Some(item)) => n += u64::from(item.raw.record_type() == RecordType::Sample),
            Ok(None) => return Some(n),
            Err(_) => return None,
        }
    }
}

/// `out` reads back to the end without an error and holds `expected` samples.
#[allow(dead_code)]
pub fn assert_reads_back(out: Vec<u8>, expected: u64, what: &str) {
    let mut reader = PerfReader::from_vec(out, ReadOptions::default())
        .unwrap_or_else(|e| panic!("{what}: the output does not open: {e}"));
    let mut n = 0;
    loop {
        match reader.next_record() {
            Ok(Some(item)) => n += u64::from(item.raw.record_type() == RecordType::Sample),
            Ok(None) => break,
            Err(e) => panic!("{what}: the output fails to read: {e}"),
        }
    }
    assert_eq!(n, expected, "{what}: samples written");
}
