//! Records larger than [`MAX_BUFFERED`]: every source frames their `header.size` bytes,
//! hands out their payload in chunks of at most [`PAYLOAD_CHUNK`] bytes, and skips what
//! is not taken.

use std::io::Cursor;

use binrw::Endian;

use super::test_record as rec;
use super::{Decompressor, RecordSource, SliceRecords, StreamRecords, MAX_BUFFERED, PAYLOAD_CHUNK};

/// More than a source buffers, and not a multiple of a chunk.
const BIG: u64 = MAX_BUFFERED + 3 * PAYLOAD_CHUNK as u64 + 12_345;

/// Payload byte `i`: not a repetition of the chunk size, so a misplaced chunk shows.
fn pattern(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// A little-endian AUXTRACE record (48 bytes) claiming `len` payload bytes, then them.
fn auxtrace(len: u64) -> Vec<u8> {
    let mut v = rec(71, 48);
    v[8..16].copy_from_slice(&len.to_le_bytes());
    v.extend((0..len).map(pattern));
    v
}

/// Records: a MMAP, the big AUXTRACE, a COMM.
fn stream() -> Vec<u8> {
    let mut data = rec(1, 40);
    data.extend_from_slice(&auxtrace(BIG));
    data.extend_from_slice(&rec(3, 32));
    data
}

/// Read every record; for the AUXTRACE, its payload when `read` (checked byte by byte
/// against the pattern), else nothing. The types and header sizes seen.
fn walk(src: &mut dyn RecordSource, read: bool) -> Vec<(u32, usize, u64)> {
    let mut seen = Vec::new();
    while let Some(r) = src.next_record().unwrap() {
        seen.push((r.header.type_, r.bytes.len(), r.rest));
        if r.rest > 0 && read {
            assert!(r.payload.is_empty());
            let mut at = 0u64;
            loop {
                let chunk = src.payload_chunk().unwrap();
                if chunk.is_empty() {
                    break;
                }
                assert!(chunk.len() <= PAYLOAD_CHUNK);
                assert!(chunk.iter().zip(at..).all(|(b, i)| *b == pattern(i)));
                at += chunk.len() as u64;
            }
            assert_eq!(at, BIG);
            assert_eq!(src.payload_left(), 0);
        }
    }
    seen
}

fn expected() -> Vec<(u32, usize, u64)> {
    vec![(1, 40, 0), (71, 48, BIG), (3, 32, 0)]
}

#[test]
fn slice_records_stream_or_skip_a_large_payload() {
    let data = stream();
    for read in [false, true] {
        let mut s = SliceRecords::new(&data[..], 0, Endian::Little, 0);
        assert_eq!(walk(&mut s, read), expected());
    }
}

#[test]
fn stream_records_stream_or_skip_a_large_payload_without_buffering_it() {
    for read in [false, true] {
        let mut s = StreamRecords::new(Cursor::new(stream()), 0, Endian::Little, 0);
        assert_eq!(walk(&mut s, read), expected());
        assert!(
            s.buffer().len() <= 2 * PAYLOAD_CHUNK,
            "{}",
            s.buffer().len()
        );
    }
}

#[test]
fn stream_records_report_a_payload_cut_short() {
    let mut data = stream();
    data.truncate(40 + 48 + 1000);
    let mut s = StreamRecords::new(Cursor::new(data), 0, Endian::Little, 0);
    assert_eq!(s.next_record().unwrap().unwrap().header.type_, 1);
    assert_eq!(s.next_record().unwrap().unwrap().rest, BIG);
    let e = s.next_record().unwrap_err().to_string();
    assert!(e.contains("offset 40") && e.contains("AUXTRACE"), "{e}");
}

/// The records compressed as one zstd stream, cut into COMPRESSED records.
fn compressed_records() -> Vec<Vec<u8>> {
    let z = zstd::bulk::compress(&stream(), 3).unwrap();
    z.chunks(60_000)
        .map(|piece| {
            let mut r = rec(81, 8);
            r[6..8].copy_from_slice(&((8 + piece.len()) as u16).to_le_bytes());
            r.extend_from_slice(piece);
            r
        })
        .collect()
}

#[test]
fn decompressor_streams_or_skips_a_large_payload_across_compressed_records() {
    let records = compressed_records();
    assert!(records.len() < 20, "{} compressed records", records.len());
    for read in [false, true] {
        let mut d = Decompressor::new(Endian::Little, 0).unwrap();
        let mut seen = Vec::new();
        let mut payload = 0u64;
        for (i, r) in records.iter().enumerate() {
            d.feed(r, i as u64 * 65_536).unwrap();
            // Memory stays bounded whatever the records expand to: the small records
            // and zstd calls of 128 KiB (each record here expands to megabytes of the
            // payload; the feed held 16 MiB of them ahead before issue #24).
            let bounded = |d: &Decompressor| {
                let held = d.buffer().len();
                assert!(held <= 256 * 1024, "{held} bytes held");
            };
            bounded(&d);
            loop {
                bounded(&d);
                if read && d.payload_left() > 0 {
                    let chunk = d.payload_chunk().unwrap();
                    assert!(chunk.iter().zip(payload..).all(|(b, i)| *b == pattern(i)));
                    payload += chunk.len() as u64;
                    if chunk.is_empty() {
                        break;
                    }
                    continue;
                }
                match d.next_record().unwrap() {
                    Some(r) => seen.push((r.header.type_, r.bytes.len(), r.rest)),
                    None => break,
                }
            }
        }
        assert_eq!(seen, expected());
        assert_eq!(payload, if read { BIG } else { 0 });
        assert_eq!((d.pending(), d.payload_left()), (0, 0));
    }
}

#[test]
fn frame_within_streams_a_payload_over_its_limit() {
    use super::{frame, frame_within, Frame, MIN_STREAM_BUFFER};
    let two_mib = 2 << 20;
    let big = auxtrace(two_mib);
    // Under MAX_BUFFERED, `frame` holds it whole; within 1 MiB its payload streams.
    assert!(matches!(
        frame(&big, Endian::Little),
        Frame::Complete { size: 48, payload } if payload as u64 == two_mib
    ));
    for have in [48, 4096, big.len()] {
        assert!(matches!(
            frame_within(&big[..have], Endian::Little, MIN_STREAM_BUFFER),
            Frame::Large { size: 48, payload } if payload == two_mib
        ));
    }
    // Before the record's own 48 bytes are there, it waits for them (not the payload).
    assert!(matches!(
        frame_within(&big[..30], Endian::Little, MIN_STREAM_BUFFER),
        Frame::Incomplete { needed: 48 }
    ));
    assert!(matches!(
        frame_within(&big[..30], Endian::Little, MAX_BUFFERED),
        Frame::Incomplete { needed } if needed == 48 + two_mib
    ));
    // A small payload, and a record without one, are held whole.
    let small = auxtrace(100);
    assert!(matches!(
        frame_within(&small, Endian::Little, MIN_STREAM_BUFFER),
        Frame::Complete {
            size: 48,
            payload: 100
        }
    ));
    assert!(matches!(
        frame_within(&rec(3, 32), Endian::Little, MIN_STREAM_BUFFER),
        Frame::Complete {
            size: 32,
            payload: 0
        }
    ));
}

#[test]
fn a_decompressor_read_beside_others_holds_its_share_only() {
    use super::MIN_STREAM_BUFFER;
    // MMAP, a 2 MiB AUXTRACE, COMM: one compressed record expands to all of it.
    let two_mib = 2 << 20;
    let mut data = rec(1, 40);
    data.extend_from_slice(&auxtrace(two_mib));
    data.extend_from_slice(&rec(3, 32));
    let z = zstd::bulk::compress(&data, 3).unwrap();
    assert!(z.len() < 60_000, "{}", z.len());
    let mut r = rec(81, 8);
    r[6..8].copy_from_slice(&((8 + z.len()) as u16).to_le_bytes());
    r.extend_from_slice(&z);
    let mut d = Decompressor::new(Endian::Little, 0)
        .unwrap()
        .with_limit(MIN_STREAM_BUFFER);
    d.feed(&r, 0).unwrap();
    let mut seen = Vec::new();
    while let Some(r) = d.next_record().unwrap() {
        seen.push((r.header.type_, r.bytes.len(), r.rest));
        // At most its limit and one zstd call's output are held.
        assert!(d.buffer().len() <= (MIN_STREAM_BUFFER as usize) + 256 * 1024);
    }
    assert_eq!(seen, vec![(1, 40, 0), (71, 48, two_mib), (3, 32, 0)]);
}
