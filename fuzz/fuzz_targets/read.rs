//! Any bytes: reading never panics, every record that decodes encodes back to the bytes
//! it came from, and `for_each` (the fast walk) gives the records, warnings and error
//! `next_record` gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfdata_core::{PerfReader, Piece, ReadOptions};

/// A record as seen by a walk: offset, type, bytes, payload length, bytes to stream.
type Seen = (u64, u32, Vec<u8>, usize, u64);

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = PerfReader::from_vec(data.to_vec(), ReadOptions::default()) else {
        return;
    };
    let mut by_next: Vec<Seen> = Vec::new();
    let end_next = loop {
        match reader.next_record() {
            Ok(Some(item)) => {
                let (record, err) = item.decode_or_raw();
                let mut original = item.raw.bytes.to_vec();
                original.extend_from_slice(item.raw.payload);
                if err.is_none() {
                    assert_eq!(record.encode(item.meta.endian).unwrap(), original);
                }
                let raw = &item.raw;
                by_next.push((
                    raw.offset,
                    raw.header.type_,
                    raw.bytes.to_vec(),
                    raw.payload.len(),
                    raw.rest,
                ));
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e.to_string()),
        }
    };
    let warnings_next: Vec<String> = reader
        .meta()
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();

    let mut reader = PerfReader::from_vec(data.to_vec(), ReadOptions::default()).unwrap();
    let mut by_each: Vec<Seen> = Vec::new();
    let end_each = reader
        .for_each(|piece| {
            if let Piece::Record(item) = piece {
                let raw = &item.raw;
                by_each.push((
                    raw.offset,
                    raw.header.type_,
                    raw.bytes.to_vec(),
                    raw.payload.len(),
                    raw.rest,
                ));
            }
            Ok::<_, perfdata_core::Error>(false)
        })
        .map_err(|e| e.to_string());
    let warnings_each: Vec<String> = reader
        .meta()
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    assert_eq!(by_next, by_each);
    assert_eq!(end_next, end_each);
    assert_eq!(warnings_next, warnings_each);
});
